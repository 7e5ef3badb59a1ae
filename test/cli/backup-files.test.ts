/**
 * `worksync backup --files DIR` as cron runs it: the real binary against the emulator,
 * real files. The bytes of every CONFIRMED file end up in DIR once per distinct content,
 * each run records which objects it holds, a second run downloads nothing, a damaged
 * object is found, a file that cannot be downloaded fails the run by name, and a run
 * killed midway is finished by the next.
 */
import { expect, layer } from "@effect/vitest"
import Database from "better-sqlite3"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { spawn } from "node:child_process"
import { createHash } from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"
import { Readable } from "node:stream"
import type { EmulatorHandle } from "../../src/emulator/index.ts"
import { insertFile, storageCredentialLog, storageKeyFor } from "../../src/emulator/uploads/files.ts"
import { cleanEnv, connectionEnv } from "../support/cli.ts"
import { freshSchema, pgClient, query as pgQuery } from "../support/postgres.ts"
import { Emulator, emulatorLayer } from "../support/effect.ts"
import { cli, WorkDir, workDirLayer } from "./cli-effect.ts"

const sha = (b: Uint8Array) => createHash("sha256").update(b).digest("hex")
const BIN = new URL("../../bin/worksync.js", import.meta.url).pathname

/** The bytes the service holds for a file. */
const storedBytes = async (emu: EmulatorHandle, uid: string) => {
  const parts: Array<Buffer> = []
  for await (const chunk of emu.ctx.objects.read(storageKeyFor(uid))) parts.push(chunk as Buffer)
  return Buffer.concat(parts)
}

/** A CONFIRMED file holding `bytes`, stored as the service stores an upload. */
const seedFile = async (emu: EmulatorHandle, workspaceId: string, name: string, bytes: Buffer, declared = bytes.length) => {
  const row = insertFile(emu.ctx, {
    name,
    size: declared,
    type: "application/octet-stream",
    extension: path.extname(name).slice(1) || "bin",
    orgId: emu.org,
    workspaceId,
    status: "CONFIRMED"
  })
  await emu.ctx.objects.put(storageKeyFor(row.uid), Readable.from([bytes]))
  return row
}

interface FileRow {
  readonly id: string
  readonly uid: string
  readonly name: string
  readonly size: number
}
const confirmedFiles = (emu: EmulatorHandle): Array<FileRow> =>
  emu.ctx.db.prepare("SELECT id, uid, name, size FROM files WHERE status = 'CONFIRMED' AND workspace_id IS NOT NULL ORDER BY id").all() as Array<FileRow>

/** Every object under DIR: name, and the sha256 of its bytes. */
const objectsIn = (dir: string) => {
  const root = path.join(dir, "objects")
  if (!fs.existsSync(root)) return []
  return fs.readdirSync(root).filter((p) => /^[0-9a-f]{2}$/.test(p)).flatMap((p) =>
    fs.readdirSync(path.join(root, p)).map((name) => ({ name, actual: sha(fs.readFileSync(path.join(root, p, name))) }))
  )
}

const query = <A>(snapshot: string, sql: string, ...params: Array<unknown>): Array<A> => {
  const db = new Database(snapshot, { readonly: true })
  try {
    return db.prepare(sql).all(...params) as Array<A>
  } finally {
    db.close()
  }
}

/** Downloads the service answered, counted by the emulator: GET /uploads/{uid}/{name}. */
const downloads = (emu: EmulatorHandle) =>
  Object.entries(emu.stats().byRoute).filter(([route]) => /^\/uploads\/[^/]+\/[^/]+$/.test(route) && !route.endsWith("/confirm"))
    .reduce((n, [, count]) => n + count, 0)

// Real time: the CLI runs as a child process (`excludeTestServices`). Later tests extend
// what earlier ones left in the shared directory and emulator.
layer(Layer.merge(emulatorLayer({ seed: "demo" }), workDirLayer("ws-cli-files-")), { timeout: 120_000, excludeTestServices: true })(
  "worksync backup --files",
  (it) => {
    it.effect("R-FILE-SERVE-01, R-FILE-SERVE-02, R-FILE-STATUS-07: every CONFIRMED file's bytes once per content; a second run downloads nothing", () =>
      Effect.gen(function*() {
        const emu = yield* Emulator
        const dir = yield* WorkDir
        // The same bytes in both workspaces (and twice in the first): one object.
        const shared = Buffer.from("the same attachment, in two workspaces\n".repeat(200))
        yield* Effect.promise(() => seedFile(emu, emu.workspaces[0]!, "shared.txt", shared))
        yield* Effect.promise(() => seedFile(emu, emu.workspaces[0]!, "shared copy.txt", shared))
        yield* Effect.promise(() => seedFile(emu, emu.workspaces[1]!, "shared.txt", shared))
        const files = confirmedFiles(emu)
        const contents = new Map<string, number>()
        for (const f of files) contents.set(sha(yield* Effect.promise(() => storedBytes(emu, f.uid))), f.size)
        const snapshot = path.join(dir, "main.sqlite")
        const filesDir = path.join(dir, "files")
        emu.resetStats()

        const first = yield* cli(["backup", "--snapshot", snapshot, "--files", filesDir, "--json"], { env: connectionEnv(emu) })
        expect(first.code).toBe(0)
        const r1 = JSON.parse(first.stdout)
        expect(Object.keys(r1).sort()).toEqual(["activities", "changes", "fileBytes", "files", "records", "runId", "workspaces"])
        const distinctBytes = [...contents.values()].reduce((n, s) => n + s, 0)
        expect(r1.fileBytes).toEqual({ stored: contents.size, reused: files.length - contents.size, bytes: distinctBytes })
        expect(first.stderr).toMatch(/file bytes: \d+ new objects/)

        // Every object is named by the sha256 of its bytes, one per distinct content.
        const objects = objectsIn(filesDir)
        expect(objects.every((o) => o.name === o.actual)).toBe(true)
        expect(objects.map((o) => o.name).sort()).toEqual([...contents.keys()].sort())
        // The run holds, for each CONFIRMED file, the object of the bytes the service serves.
        const held = query<{ file_id: string; sha256: string }>(snapshot, "SELECT file_id, sha256 FROM run_file_objects WHERE run_id = 1")
        expect(held).toHaveLength(files.length)
        for (const f of files) {
          expect(held.find((h) => h.file_id === f.id)?.sha256).toBe(sha(yield* Effect.promise(() => storedBytes(emu, f.uid))))
        }
        expect(query(snapshot, "SELECT count(*) AS n FROM file_objects")).toEqual([{ n: contents.size }])
        expect(downloads(emu)).toBe(files.length)
        // No service credential reached storage, and none is in DIR or the output.
        expect(storageCredentialLog(emu.ctx)).toEqual([])
        for (const secret of [emu.token, emu.tokenSecret]) {
          expect(first.stdout + first.stderr).not.toContain(secret)
          expect(fs.readFileSync(snapshot).includes(Buffer.from(secret))).toBe(false)
        }

        const second = yield* cli(["backup", "--snapshot", snapshot, "--files", filesDir, "--json"], { env: connectionEnv(emu) })
        expect(second.code).toBe(0)
        expect(JSON.parse(second.stdout).fileBytes).toEqual({ stored: 0, reused: files.length, bytes: 0 })
        expect(downloads(emu)).toBe(files.length)
        expect(query(snapshot, "SELECT count(*) AS n FROM run_file_objects WHERE run_id = 2")).toEqual([{ n: files.length }])
        expect(objectsIn(filesDir)).toHaveLength(contents.size)

        // Without --files, a backup records no objects.
        const plain = yield* cli(["backup", "--snapshot", snapshot, "--json"], { env: connectionEnv(emu) })
        expect(plain.code).toBe(0)
        expect(JSON.parse(plain.stdout).fileBytes).toBeUndefined()
        expect(query(snapshot, "SELECT count(*) AS n FROM run_file_objects WHERE run_id = 3")).toEqual([{ n: 0 }])
      }), 120_000)

    it.effect("export --files lays the run's files out per workspace with copy-files' manifest; server names stay inside", () =>
      Effect.gen(function*() {
        const emu = yield* Emulator
        const dir = yield* WorkDir
        const hostile = yield* Effect.promise(() => seedFile(emu, emu.workspaces[0]!, "../../escape.txt", Buffer.from("not outside")))
        const snapshot = path.join(dir, "export.sqlite")
        const filesDir = path.join(dir, "files")
        const b = yield* cli(["backup", "--snapshot", snapshot, "--files", filesDir, "--json"], { env: connectionEnv(emu) })
        expect(b.code).toBe(0)
        const out = path.join(dir, "export")
        fs.mkdirSync(path.join(out, "files", "stale"), { recursive: true })
        const ex = yield* cli(["export", "--snapshot", snapshot, "--out", out, "--files", filesDir, "--json"])
        expect(ex.code).toBe(0)
        const files = confirmedFiles(emu)
        const bytes = files.reduce((n, f) => n + f.size, 0)
        expect(JSON.parse(ex.stdout).fileBytes).toEqual({ written: files.length, bytes })
        // The previous layout is replaced, never mixed in.
        expect(fs.readdirSync(path.join(out, "files")).sort()).toEqual([...emu.workspaces].sort())
        expect(fs.existsSync(path.join(out, "files.partial"))).toBe(false)
        for (const ws of emu.workspaces) {
          const root = path.join(out, "files", ws)
          const manifest = fs.readFileSync(path.join(root, "manifest.ndjson"), "utf8").trim().split("\n").map((l) => JSON.parse(l))
          const mine = emu.ctx.db.prepare("SELECT id, uid, name, size FROM files WHERE status = 'CONFIRMED' AND workspace_id = ?").all(ws) as Array<FileRow>
          expect(manifest.map((m) => m.id).sort()).toEqual(mine.map((f) => f.id).sort())
          for (const line of manifest) {
            expect(Object.keys(line)).toEqual(["id", "uid", "name", "path", "size", "sha256"])
            expect(line.path).not.toMatch(/[/\\]/)
            const written = fs.readFileSync(path.join(root, line.path))
            const row = mine.find((f) => f.id === line.id)!
            expect(line).toMatchObject({ uid: row.uid, name: row.name, size: row.size })
            expect(sha(written)).toBe(line.sha256)
            expect(line.sha256).toBe(sha(yield* Effect.promise(() => storedBytes(emu, row.uid))))
          }
        }
        expect(fs.existsSync(path.join(dir, "escape.txt"))).toBe(false)
        const hostileLine = fs.readFileSync(path.join(out, "files", emu.workspaces[0]!, "manifest.ndjson"), "utf8")
          .trim().split("\n").map((l) => JSON.parse(l)).find((m) => m.id === hostile.id)
        expect(hostileLine.path).toBe(".._.._escape.txt")
        emu.ctx.db.prepare("DELETE FROM files WHERE id = ?").run(hostile.id)
      }), 120_000)

    it.effect("an object cut short under DIR is downloaded again; a damaged one is found when read (export --files)", () =>
      Effect.gen(function*() {
        const emu = yield* Emulator
        const dir = yield* WorkDir
        const snapshot = path.join(dir, "main.sqlite")
        const filesDir = path.join(dir, "files")
        const [victim, other] = objectsIn(filesDir).map((o) => o.name).filter((n) => n !== sha(Buffer.alloc(0)))
        const objectFile = (name: string) => path.join(filesDir, "objects", name.slice(0, 2), name)
        const whole = fs.readFileSync(objectFile(victim!))
        fs.writeFileSync(objectFile(victim!), whole.subarray(0, Math.floor(whole.length / 2)))
        emu.resetStats()
        const repaired = yield* cli(["backup", "--snapshot", snapshot, "--files", filesDir, "--json"], { env: connectionEnv(emu) })
        expect(repaired.code).toBe(0)
        expect(JSON.parse(repaired.stdout).fileBytes).toMatchObject({ stored: 1, bytes: whole.length })
        expect(fs.readFileSync(objectFile(victim!)).equals(whole)).toBe(true)
        expect(downloads(emu)).toBeGreaterThanOrEqual(1)

        // Same size, other bytes: only reading sees it, and names it.
        const damaged = Buffer.from(fs.readFileSync(objectFile(other!)))
        damaged[0] = damaged[0]! ^ 0xff
        fs.writeFileSync(objectFile(other!), damaged)
        const out = path.join(dir, "export-damaged")
        const ex = yield* cli(["export", "--snapshot", snapshot, "--out", out, "--files", filesDir])
        expect(ex.code).toBe(1)
        expect(ex.stderr).toContain(`object ${other} is corrupt`)
        expect(ex.stderr.trim().split("\n").filter((l) => l.startsWith("worksync:"))).toHaveLength(1)
        fs.writeFileSync(objectFile(other!), damaged.map((b, i) => (i === 0 ? b ^ 0xff : b)))
      }), 120_000)

    it.effect("a file that cannot be downloaded: exit 1 naming it; the run is complete and holds every other file's bytes", () =>
      Effect.gen(function*() {
        const emu = yield* Emulator
        const dir = yield* WorkDir
        const snapshot = path.join(dir, "broken.sqlite")
        const filesDir = path.join(dir, "files-broken")
        // Declared 4096 bytes, stored 5: every attempt ends short.
        const bad = yield* Effect.promise(() => seedFile(emu, emu.workspaces[1]!, "cut short.bin", Buffer.from("short"), 4096))
        const r = yield* cli(["backup", "--snapshot", snapshot, "--files", filesDir, "--json"], { env: connectionEnv(emu) })
        expect(r.code).toBe(1)
        const lines = r.stderr.trim().split("\n").filter((l) => l.startsWith("worksync:"))
        expect(lines).toHaveLength(1)
        expect(lines[0]).toContain(`file ${bad.id} ("cut short.bin")`)
        expect(lines[0]).toMatch(/4096/)
        const runs = query<{ id: number; status: string }>(snapshot, "SELECT id, status FROM runs")
        expect(runs).toEqual([{ id: 1, status: "complete" }])
        const held = query<{ file_id: string }>(snapshot, "SELECT file_id FROM run_file_objects WHERE run_id = 1").map((h) => h.file_id)
        const expected = confirmedFiles(emu).map((f) => f.id).filter((id) => id !== bad.id)
        expect(held.sort()).toEqual(expected.sort())
        expect(query(snapshot, "SELECT kind, subject FROM run_notes WHERE kind = 'file-skipped'")).toEqual([
          { kind: "file-skipped", subject: `file ${bad.id} ("cut short.bin")` }
        ])
        expect(fs.readdirSync(path.join(filesDir, "tmp"))).toEqual([])
        emu.ctx.db.prepare("DELETE FROM files WHERE id = ?").run(bad.id)
      }), 120_000)

    it.effect("SIGKILL midway (once some objects exist): no partial write is an object, and the rerun stores the rest", () =>
      Effect.gen(function*() {
        const emu = yield* Emulator
        const dir = yield* WorkDir
        const ws = emu.admin.createWorkspace({ name: "many files" }).id
        for (let i = 0; i < 40; i++) {
          const bytes = Buffer.alloc(128 * 1024, i + 1)
          bytes.write(`file ${i}`)
          yield* Effect.promise(() => seedFile(emu, ws, `part-${i}.bin`, bytes))
        }
        const snapshot = path.join(dir, "killed.sqlite")
        const filesDir = path.join(dir, "files-killed")
        // Each download waits a little, so the run is surely midway when killed.
        emu.faults.inject({ route: /^\/uploads\/[^/]+\/part-/, kind: "latency", latencyMs: 150, times: 10_000 })
        const child = spawn(process.execPath, [BIN, "backup", "--snapshot", snapshot, "--files", filesDir, "--workspace", ws, "--json"], {
          env: { ...cleanEnv(), ...connectionEnv(emu) },
          stdio: ["ignore", "pipe", "pipe"]
        })
        const exited = new Promise<NodeJS.Signals | null>((resolve) => child.on("exit", (_code, signal) => resolve(signal)))
        // Kill by progress: once five objects are stored.
        while (objectsIn(filesDir).length < 5 && child.exitCode === null) yield* Effect.promise(() => new Promise((r) => setTimeout(r, 10)))
        child.kill("SIGKILL")
        expect(yield* Effect.promise(() => exited)).toBe("SIGKILL")
        emu.faults.reset()
        const before = objectsIn(filesDir)
        expect(before.length).toBeGreaterThanOrEqual(5)
        expect(before.length).toBeLessThan(40)
        expect(before.every((o) => o.name === o.actual)).toBe(true)

        const rerun = yield* cli(["backup", "--snapshot", snapshot, "--files", filesDir, "--workspace", ws, "--json"], { env: connectionEnv(emu) })
        expect(rerun.code).toBe(0)
        const r = JSON.parse(rerun.stdout)
        expect(r.fileBytes.stored + r.fileBytes.reused).toBe(40)
        expect(r.fileBytes.stored).toBe(40 - before.length)
        const after = objectsIn(filesDir)
        expect(after).toHaveLength(40)
        expect(after.every((o) => o.name === o.actual)).toBe(true)
        expect(fs.readdirSync(path.join(filesDir, "tmp"))).toEqual([])
        expect(query(snapshot, "SELECT id, status FROM runs ORDER BY id")).toEqual([
          { id: 1, status: "failed" },
          { id: 2, status: "complete" }
        ])
        expect(query(snapshot, "SELECT count(*) AS n FROM run_file_objects WHERE run_id = 2")).toEqual([{ n: 40 }])
      }), 120_000)

    it.effect("on a PostgreSQL snapshot: the same objects, runs record them, and prune removes what only a forgotten run held", () =>
      Effect.gen(function*() {
        const emu = yield* Emulator
        const dir = yield* WorkDir
        const snapshot = yield* freshSchema
        const filesDir = path.join(dir, "files-pg")
        const first = yield* cli(["backup", "--snapshot", snapshot, "--files", filesDir, "--json"], { env: connectionEnv(emu) })
        expect(first.code, first.stderr).toBe(0)
        const files = confirmedFiles(emu)
        const objects = objectsIn(filesDir)
        expect(JSON.parse(first.stdout).fileBytes).toMatchObject({ stored: objects.length, reused: files.length - objects.length })
        expect(objects.every((o) => o.name === o.actual)).toBe(true)
        const client = yield* pgClient(snapshot.replace(/\?schema=.*$/, ""))
        const held = yield* pgQuery<{ file_id: string; sha256: string }>(client, "SELECT file_id, sha256 FROM worksync.run_file_objects WHERE run_id = 1")
        expect(held).toHaveLength(files.length)
        expect(new Set(held.map((h) => h.sha256))).toEqual(new Set(objects.map((o) => o.name)))

        // A file replaced between the runs: its old object is held by run 1 only.
        const victim = files.find((f) => f.name === "notes.txt")!
        const replaced = Buffer.from("new notes, new bytes")
        emu.ctx.db.prepare("UPDATE files SET size = ? WHERE id = ?").run(replaced.length, victim.id)
        yield* Effect.promise(() => emu.ctx.objects.put(storageKeyFor(victim.uid), Readable.from([replaced])))
        const second = yield* cli(["backup", "--snapshot", snapshot, "--files", filesDir, "--json"], { env: connectionEnv(emu) })
        expect(second.code, second.stderr).toBe(0)
        expect(JSON.parse(second.stdout).fileBytes).toEqual({ stored: 1, reused: files.length - 1, bytes: replaced.length })
        const old = held.find((h) => h.file_id === victim.id)!.sha256
        const pruned = yield* cli(["prune", "--snapshot", snapshot, "--files", filesDir, "--keep-last", "1", "--json"])
        expect(pruned.code, pruned.stderr).toBe(0)
        expect(JSON.parse(pruned.stdout)).toMatchObject({ forgotten: 1, kept: 1 })
        const left = objectsIn(filesDir).map((o) => o.name)
        expect(left).not.toContain(old)
        expect(left).toContain(sha(replaced))
        expect(yield* pgQuery(client, "SELECT count(*)::int AS n FROM worksync.file_objects")).toEqual([{ n: left.length }])
      }), 120_000)

    it.effect("exit 64 with one line: --files without a base URL, or a DIR that is a file", () =>
      Effect.gen(function*() {
        const emu = yield* Emulator
        const dir = yield* WorkDir
        const env: Record<string, string> = { ...connectionEnv(emu) }
        delete env.WORKSYNC_BASE_URL
        const noBase = yield* cli(["backup", "--snapshot", path.join(dir, "x.sqlite"), "--files", path.join(dir, "fx")], { env })
        expect(noBase.code).toBe(64)
        expect(noBase.stderr).toMatch(/missing the GraphQL\/app base URL/)
        const file = path.join(dir, "not-a-dir")
        fs.writeFileSync(file, "x")
        const notDir = yield* cli(["backup", "--snapshot", path.join(dir, "y.sqlite"), "--files", file], { env: connectionEnv(emu) })
        expect(notDir.code).toBe(64)
        expect(notDir.stderr.trim().split("\n").filter((l) => l.startsWith("worksync:"))).toEqual([
          expect.stringMatching(/^worksync: --files .*not-a-dir: cannot use it as the files directory/)
        ])
      }), 120_000)
  }
)
