import Database from "better-sqlite3"
import { type ChildProcess, spawn } from "node:child_process"
import { createHash } from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import type { EmulatorHandle } from "../../src/emulator/index.ts"
import { storageCredentialLog, storageKeyFor } from "../../src/emulator/uploads/files.ts"
import { Emulator, emulatorLayer, tempDir } from "../support/effect.ts"
import { connectionEnv } from "../support/cli.ts"
import { seedConfirmedFiles } from "../connectors/files/_helpers.ts"

const BIN = process.env.WORKSYNC_CLI_BIN ?? "bin/worksync.js"

const tmp = () => tempDir("ws-copy-cli-")

const env = (emu: EmulatorHandle) => ({ ...process.env, ...connectionEnv(emu, { app: true }) })

interface Ran {
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
  readonly stdout: string
  readonly stderr: string
}

const start = (emu: EmulatorHandle, args: ReadonlyArray<string>, extraEnv: Record<string, string> = {}): { child: ChildProcess; done: Promise<Ran> } => {
  const child = spawn(process.execPath, [BIN, ...args], { env: { ...env(emu), ...extraEnv }, stdio: ["ignore", "pipe", "pipe"] })
  let stdout = ""
  let stderr = ""
  child.stdout!.on("data", (d) => (stdout += d))
  child.stderr!.on("data", (d) => (stderr += d))
  const done = new Promise<Ran>((resolve) => child.on("close", (code, signal) => resolve({ code, signal, stdout, stderr })))
  return { child, done }
}
const run = (emu: EmulatorHandle, args: ReadonlyArray<string>, extraEnv?: Record<string, string>) =>
  Effect.promise(() => start(emu, args, extraEnv).done)

const secrets = (emu: EmulatorHandle) => [emu.token, emu.tokenSecret, emu.tokenId]
const noSecrets = (emu: EmulatorHandle, r: Ran) => {
  for (const s of secrets(emu)) {
    expect(r.stdout).not.toContain(s)
    expect(r.stderr).not.toContain(s)
  }
}
const fileHasNoSecret = (emu: EmulatorHandle, file: string) => {
  const bytes = fs.readFileSync(file)
  for (const s of secrets(emu)) expect(bytes.includes(Buffer.from(s))).toBe(false)
}

const sha = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex")
const storedSha = async (emu: EmulatorHandle, uid: string) => {
  const hash = createHash("sha256")
  for await (const chunk of emu.ctx.objects.read(storageKeyFor(uid))) hash.update(chunk as Buffer)
  return hash.digest("hex")
}

interface Row {
  uid: string
  name: string
  size: number
  status: string
}
const filesOf = (emu: EmulatorHandle, ws: string): Array<Row> =>
  emu.ctx.db.prepare("SELECT uid, name, size, status FROM files WHERE workspace_id = ? ORDER BY created_at, id").all(ws) as Array<Row>

// The CLI runs as a child process against the emulator: real time (`excludeTestServices`).
layer(emulatorLayer({ seed: "demo" }), { timeout: 30_000, excludeTestServices: true })("worksync copy-files", (it) => {
  it.effect("R-FILE-SERVE-01, R-FILE-STATUS-07: workspace to dir prints the contract's JSON, writes the manifest, and a rerun copies nothing", () =>
    Effect.gen(function*() {
      const emu = yield* Emulator
      const out = path.join(yield* tmp(), "out")
      const journal = path.join(yield* tmp(), "j.sqlite")
      const ws = emu.workspaces[0]!
      const confirmed = filesOf(emu, ws).filter((f) => f.status === "CONFIRMED")
      const r = yield* run(emu, ["copy-files", "--from", `workspace:${ws}`, "--to", `dir:${out}`, "--journal", journal, "--json"])
      noSecrets(emu, r)
      expect(r.code).toBe(0)
      const bytes = confirmed.reduce((n, f) => n + f.size, 0)
      expect(JSON.parse(r.stdout)).toEqual({ files: confirmed.length, copied: confirmed.length, skipped: 0, failed: 0, bytes, deleted: 0 })
      expect(r.stderr).toMatch(/PENDING/)
      const manifest = fs.readFileSync(path.join(out, "manifest.ndjson"), "utf8").trim().split("\n").map((l) => JSON.parse(l))
      expect(manifest).toHaveLength(confirmed.length)
      expect(Object.keys(manifest[0])).toEqual(["id", "uid", "name", "path", "size", "sha256"])
      for (const line of manifest) {
        expect(sha(fs.readFileSync(path.join(out, line.path)))).toBe(line.sha256)
        expect(line.sha256).toBe(yield* Effect.promise(() => storedSha(emu, line.uid)))
      }
      fileHasNoSecret(emu, journal)
      fileHasNoSecret(emu, path.join(out, "manifest.ndjson"))

      const again = yield* run(emu, ["copy-files", "--from", `workspace:${ws}`, "--to", `dir:${out}`, "--journal", journal, "--json", "-q"])
      expect(again.code).toBe(0)
      expect(JSON.parse(again.stdout)).toEqual({ files: confirmed.length, copied: 0, skipped: confirmed.length, failed: 0, bytes: 0, deleted: 0 })
      expect(again.stderr).toBe("")
    }))

  it.effect("R-UPLOAD-PRESIGN-13: workspace to workspace on a second account (--to-* flags) pipes each file across, CONFIRMED, no credential at storage", () =>
    Effect.gen(function*() {
      const emu = yield* Emulator
      const [from] = emu.workspaces
      const target = emu.admin.createWorkspace({ name: "copy target" }).id
      const other = emu.admin.createUser({ email: "second@example.com", firstName: "Second", lastName: "Account", workspaces: { [target]: "ADMIN" } })
      const sources = filesOf(emu, from!).filter((f) => f.status === "CONFIRMED")
      const r = yield* run(emu, [
        "copy-files", "--from", `workspace:${from}`, "--to", `workspace:${target}`, "--journal", path.join(yield* tmp(), "j.sqlite"),
        "--to-token", other.token, "--to-token-id", other.tokenId, "--to-token-secret", other.tokenSecret, "--json", "--concurrency", "3"
      ])
      expect(r.stdout).not.toContain(other.token)
      expect(r.stderr).not.toContain(other.tokenSecret)
      expect(r.code).toBe(0)
      expect(JSON.parse(r.stdout)).toMatchObject({ files: sources.length, copied: sources.length, failed: 0 })
      const copies = filesOf(emu, target)
      expect(copies.map((c) => c.name).sort()).toEqual(sources.map((s) => s.name).sort())
      expect(copies.every((c) => c.status === "CONFIRMED")).toBe(true)
      const owners = emu.ctx.db.prepare("SELECT DISTINCT user_id FROM files WHERE workspace_id = ?").all(target) as Array<{ user_id: string }>
      expect(owners).toEqual([{ user_id: other.userId }])
      const sourceShas = (yield* Effect.promise(() => Promise.all(sources.map((s) => storedSha(emu, s.uid))))).sort()
      const copyShas = (yield* Effect.promise(() => Promise.all(copies.map((c) => storedSha(emu, c.uid))))).sort()
      expect(copyShas).toEqual(sourceShas)
      expect(storageCredentialLog(emu.ctx)).toEqual([])
    }))

  const killAndResume = (emu: EmulatorHandle, strategy: "presign" | "auto", count: number, concurrency: number, killAfter: number) =>
    Effect.gen(function*() {
      const src = yield* tmp()
      const contents = new Map<string, Buffer>()
      for (let i = 0; i < count; i++) {
        const name = `file ${String(i).padStart(2, "0")}.bin`
        const bytes = Buffer.alloc(64 * 1024 + i, i)
        contents.set(name, bytes)
        fs.writeFileSync(path.join(src, name), bytes)
      }
      const target = emu.admin.createWorkspace({ name: `kill target ${strategy}` }).id
      const journal = path.join(yield* tmp(), "j.sqlite")
      const args = [
        "copy-files", "--from", `dir:${src}`, "--to", `workspace:${target}`, "--journal", journal,
        "--concurrency", String(concurrency), "--upload-strategy", strategy, "--json"
      ]
      emu.faults.configure({ latencyMs: 40 })
      yield* Effect.gen(function*() {
        const first = start(emu, args)
        // Kill once some files are done (reading the journal as another process would). No
        // deadline of its own: a busy machine only makes the wait longer, and the test's timeout
        // ends a wait for what never comes. A command that exits first ends the wait: the
        // checks below then say it was not killed.
        while (first.child.exitCode === null && first.child.signalCode === null) {
          yield* Effect.promise(() => new Promise((r) => setTimeout(r, 25)))
          if (!fs.existsSync(journal)) continue
          let done = 0
          try {
            const db = new Database(journal, { readonly: true, fileMustExist: true })
            try {
              done = (db.prepare("SELECT COUNT(*) AS n FROM ops WHERE state = 'done'").get() as { n: number }).n
            } finally {
              db.close()
            }
          } catch {
            continue
          }
          if (done >= killAfter) break
        }
        first.child.kill("SIGKILL")
        const killed = yield* Effect.promise(() => first.done)
        expect(killed.signal).toBe("SIGKILL")
      }).pipe(Effect.ensuring(Effect.sync(() => emu.faults.configure({ latencyMs: 0 }))))
      const partial = filesOf(emu, target).filter((f) => f.status === "CONFIRMED").length
      expect(partial).toBeGreaterThanOrEqual(killAfter)
      expect(partial).toBeLessThan(count)

      const second = yield* run(emu, args)
      expect(second.code).toBe(0)
      const summary = JSON.parse(second.stdout)
      expect(summary.files).toBe(count)
      expect(summary.failed).toBe(0)
      expect(summary.copied + summary.skipped).toBe(count)
      expect(summary.skipped).toBeGreaterThanOrEqual(killAfter)

      // Every file exactly once (in-flight ones were settled, not sent twice), byte-identical.
      const confirmed = filesOf(emu, target).filter((f) => f.status === "CONFIRMED")
      expect(confirmed.map((f) => f.name).sort()).toEqual([...contents.keys()].sort())
      for (const f of confirmed) expect(yield* Effect.promise(() => storedSha(emu, f.uid))).toBe(sha(contents.get(f.name)!))

      const third = yield* run(emu, args)
      expect(JSON.parse(third.stdout)).toMatchObject({ copied: 0, skipped: count })
    })

  it.effect("SIGKILL mid-copy (presigned uploads), then a rerun resumes: every file exactly once, byte-identical", () =>
    Effect.flatMap(Emulator, (emu) => killAndResume(emu, "presign", 24, 2, 4)))

  it.effect("SIGKILL mid-copy (uploadFiles batches), then a rerun resumes: every file exactly once, byte-identical", () =>
    Effect.flatMap(Emulator, (emu) => killAndResume(emu, "auto", 40, 1, 10)))

  it.effect("R-LIMIT-04: a file over 4.8 GB fails with one line naming it and exit 1; the others are copied", () =>
    Effect.gen(function*() {
      const emu = yield* Emulator
      const src = yield* tmp()
      const big = path.join(src, "too big.iso")
      fs.closeSync(fs.openSync(big, "w"))
      fs.truncateSync(big, 5 * 1024 ** 3)
      fs.writeFileSync(path.join(src, "fine.txt"), "fine")
      const r = yield* run(emu, ["copy-files", "--from", `dir:${src}`, "--to", `workspace:${emu.workspaces[1]}`, "--journal", path.join(yield* tmp(), "j.sqlite"), "--json", "-q"])
      expect(r.code).toBe(1)
      expect(JSON.parse(r.stdout)).toMatchObject({ files: 2, copied: 1, failed: 1 })
      const lines = r.stderr.trim().split("\n")
      expect(lines).toHaveLength(1)
      expect(lines[0]).toMatch(/too big\.iso.*4\.8 GB/)
      expect(lines[0]).not.toMatch(/\n\s+at /)
    }))

  it.effect("dir to dir keeps bytes, flattens paths to safe names, filters by glob", () =>
    Effect.gen(function*() {
      const emu = yield* Emulator
      const src = yield* tmp()
      fs.mkdirSync(path.join(src, "a", "b"), { recursive: true })
      fs.writeFileSync(path.join(src, "a", "b", "deep.txt"), "deep")
      fs.writeFileSync(path.join(src, "top.txt"), "top")
      fs.writeFileSync(path.join(src, "skip.log"), "no")
      const out = path.join(yield* tmp(), "copy")
      const r = yield* run(emu, ["copy-files", "--from", `dir:${src}`, "--to", `dir:${out}`, "--journal", path.join(yield* tmp(), "j.sqlite"), "--include", "**/*.txt", "--json", "-q"])
      expect(r.code).toBe(0)
      expect(JSON.parse(r.stdout)).toEqual({ files: 2, copied: 2, skipped: 0, failed: 0, bytes: 7, deleted: 0 })
      expect(fs.readdirSync(out).sort()).toEqual(["a_b_deep.txt", "manifest.ndjson", "top.txt"])
      expect(fs.readFileSync(path.join(out, "a_b_deep.txt"), "utf8")).toBe("deep")
    }))

  it.effect("bad invocations exit 64 with one line", () =>
    Effect.gen(function*() {
      const emu = yield* Emulator
      const bad = yield* run(emu, ["copy-files", "--from", "ftp:x", "--to", "dir:/tmp/x", "--journal", path.join(yield* tmp(), "j.sqlite")])
      expect(bad.code).toBe(64)
      expect(bad.stderr.trim().split("\n")).toHaveLength(1)
      expect(bad.stderr).toMatch(/--from/)
      const missing = yield* run(emu, ["copy-files", "--from", "dir:/no/such/dir", "--to", `workspace:${emu.workspaces[1]}`, "--journal", path.join(yield* tmp(), "j.sqlite")])
      expect(missing.code).toBe(64)
      expect(missing.stderr).toMatch(/no such directory/)
      const noUrl = yield* run(emu, 
        ["copy-files", "--from", `workspace:${emu.workspaces[0]}`, "--to", "dir:" + (yield* tmp()), "--journal", path.join(yield* tmp(), "j.sqlite")],
        { WORKSYNC_BASE_URL: "" }
      )
      expect(noUrl.code).toBe(64)
      expect(noUrl.stderr).toMatch(/--base-url/)
    }))

  it.effect("R-REST-ERR-04: an unknown source workspace is a usage error (exit 64) with one line naming it, like backup and import-csv", () =>
    Effect.gen(function*() {
      const emu = yield* Emulator
      const out = yield* tmp()
      const r = yield* run(emu, ["copy-files", "--from", "workspace:no-such-workspace", "--to", `dir:${out}`, "--journal", path.join(yield* tmp(), "j.sqlite")])
      noSecrets(emu, r)
      expect(r.code).toBe(64)
      expect(r.stderr.trim().split("\n")).toEqual([
        // Not found is 422 NOT_FOUND in one reading of the documents, 404 in the other.
        expect.stringMatching(/^worksync: --from workspace:no-such-workspace: list-files: not found \(HTTP (422|404), NOT_FOUND\)/)
      ])
      // Nothing copied (the target's manifest may already be open).
      expect(fs.readdirSync(out).filter((f) => f !== "manifest.ndjson")).toEqual([])
    }))

  it.effect("R-FILE-SERVE-01: files deleted at the source while they are copied: a line each, --json counts them as deleted, not failed, exit 0; the rerun does nothing", () =>
    Effect.gen(function*() {
      const emu = yield* Emulator
      const ws = emu.admin.createWorkspace({ name: "Deleted meanwhile" }).id
      const uids = seedConfirmedFiles(emu, ws, 5)
      // When the first download reaches the serving URL, f1 and f3 are deleted (before it is answered).
      emu.faults.fileDeletes.script({ on: "serve", uids: [uids[1]!, uids[3]!] })
      const out = path.join(yield* tmp(), "out")
      const journal = path.join(yield* tmp(), "j.sqlite")
      const args = ["copy-files", "--from", `workspace:${ws}`, "--to", `dir:${out}`, "--journal", journal, "--json"]
      const r = yield* run(emu, args)
      noSecrets(emu, r)
      expect(r.code).toBe(0)
      const bytes = filesOf(emu, ws).reduce((n, f) => n + f.size, 0)
      expect(JSON.parse(r.stdout)).toEqual({ files: 5, copied: 3, skipped: 0, failed: 0, bytes, deleted: 2 })
      const lines = r.stderr.trim().split("\n")
      expect(lines.filter((l) => l.startsWith("deleted at the source")).sort()).toEqual([
        "deleted at the source during the copy, not copied: f1.txt",
        "deleted at the source during the copy, not copied: f3.txt"
      ])
      expect(lines.filter((l) => l.startsWith("failed"))).toEqual([])
      expect(lines.at(-1)).toMatch(/^copy-files: 5 file\(s\): 3 copied \(.*\), 0 already copied, 0 failed, 2 deleted at the source meanwhile$/)

      const again = yield* run(emu, [...args, "-q"])
      expect(again.code).toBe(0)
      expect(JSON.parse(again.stdout)).toEqual({ files: 3, copied: 0, skipped: 3, failed: 0, bytes: 0, deleted: 0 })
      expect(again.stderr).toBe("")
    }))

  it.effect("R-FILE-SERVE-01: a file whose download answers 404 while it is still listed is failed, exit 1, with one line saying so", () =>
    Effect.gen(function*() {
      const emu = yield* Emulator
      const ws = emu.admin.createWorkspace({ name: "Object lost" }).id
      const uids = seedConfirmedFiles(emu, ws, 3)
      // Storage lost f1's object: the file is still listed, its download answers 404.
      emu.faults.fileDeletes.script({ on: "serve", uids: [uids[1]!], what: "object" })
      const r = yield* run(emu, ["copy-files", "--from", `workspace:${ws}`, "--to", `dir:${path.join(yield* tmp(), "out")}`, "--journal", path.join(yield* tmp(), "j.sqlite"), "--json", "-q"])
      expect(r.code).toBe(1)
      expect(JSON.parse(r.stdout)).toMatchObject({ files: 3, copied: 2, failed: 1, deleted: 0 })
      expect(r.stderr.trim().split("\n")).toEqual([
        expect.stringMatching(/^worksync: copy-files: 1 of 3 file\(s\) failed \(first: f1\.txt: not found at the source \(.*404.*\); the file is still listed at the source\); rerun with the same --journal to retry them$/)
      ])
    }))

  // Two copies of 258 files: the timeout leaves room for a loaded machine.
  it.effect("R-REST-PAGE-08: 258 files, files created under older timestamps and deleted at the head of the listing while it is read: exit 1 with one line naming the unverified listing, every file it read copied; the rerun exits 0 and copies the rest, none twice", () =>
    Effect.gen(function*() {
      const emu = yield* Emulator
      const ws = emu.admin.createWorkspace({ name: "Head churn" }).id
      const seeded = seedConfirmedFiles(emu, ws, 258)
      const out = path.join(yield* tmp(), "out")
      const journal = path.join(yield* tmp(), "j.sqlite")
      const args = ["copy-files", "--from", `workspace:${ws}`, "--to", `dir:${out}`, "--journal", journal, "--json", "-q"]
      const manifestUids = () => fs.readFileSync(path.join(out, "manifest.ndjson"), "utf8").trim().split("\n").map((l) => JSON.parse(l).uid as string)

      emu.faults.configure({ fileChurn: { insertsPerPage: 2, deletesPerPage: 1, backdated: true } })
      const first = yield* run(emu, args).pipe(Effect.ensuring(Effect.sync(() => emu.faults.configure({ fileChurn: undefined }))))
      noSecrets(emu, first)
      expect(first.code).toBe(1)
      const j1 = JSON.parse(first.stdout)
      // Files deleted at the head before their turn fail: the listing read to confirm they
      // were deleted keeps changing too. The line says what those failures are.
      expect(first.stderr.trim().split("\n")).toEqual([
        expect.stringMatching(new RegExp(`^worksync: copy-files: the file listing of workspace ${ws} could not be verified complete \\(verification budget exceeded: [^\\n]*\\); of the \\d+ file\\(s\\) it read, \\d+ copied, 0 already copied, ${j1.failed} failed \\(\\d+ of them not found at the source, perhaps deleted meanwhile: no listing verified complete confirms it\\); rerun with the same --journal to copy any it missed and retry those that failed$`))
      ])
      expect(j1.copied + j1.failed + j1.deleted).toBe(j1.files)
      // Every file that stayed throughout the run was read and copied.
      const afterFirst = new Set(filesOf(emu, ws).map((f) => f.uid))
      const copiedFirst = new Set(manifestUids())
      expect(copiedFirst.size).toBe(j1.copied)
      expect(seeded.filter((uid) => afterFirst.has(uid) && !copiedFirst.has(uid)).slice(0, 5)).toEqual([])

      const second = yield* run(emu, args)
      expect(second.code).toBe(0)
      expect(second.stderr).toBe("")
      const j2 = JSON.parse(second.stdout)
      expect(j2.failed).toBe(0)
      const all = manifestUids()
      expect(new Set(all).size).toBe(all.length)
      const inManifest = new Set(all)
      expect(filesOf(emu, ws).filter((f) => !inManifest.has(f.uid)).map((f) => f.name).slice(0, 5)).toEqual([])
      expect(j2.copied).toBe(all.length - j1.copied)
    }), 120_000)
})
