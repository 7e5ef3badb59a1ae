/**
 * Every local path built from a server-supplied name stays inside its directory (CLI
 * contract, copy-files: "writes it under PATH with a safe file name (never outside
 * PATH)"). Files with hostile names are put into a workspace, copied workspace -> dir by
 * the real binary, and then the whole sandbox around the target is inspected: nothing
 * outside the target, only plain files directly in it, and a manifest whose paths are
 * relative, unique (also case- and normalization-insensitively) and safe on Windows too.
 */
import { createHash } from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"
import { Readable } from "node:stream"
import { expect, layer } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { resolveInside, safeLocalName } from "../../src/connectors/files/safe-name.ts"
import type { EmulatorHandle } from "../../src/emulator/index.ts"
import { insertFile, storageKeyFor } from "../../src/emulator/uploads/files.ts"
import { runCli } from "../support/cli.ts"
import { Emulator, emulatorLayer, tempDir } from "../support/effect.ts"
import { type Canary, canaryUser } from "./support.ts"

/** The file's emulator and the user whose tokens the copies use. */
interface Names {
  readonly emu: EmulatorHandle
  readonly owner: Canary
}
class NamesSetup extends Context.Service<NamesSetup, Names>()("test/security/NamesSetup") {}

const setupLayer = Layer.provideMerge(
  Layer.effect(NamesSetup, Effect.map(Emulator, (emu) => ({ emu, owner: canaryUser(emu, "names") }))),
  emulatorLayer({ seed: "empty" })
)

const sha = (b: Uint8Array) => createHash("sha256").update(b).digest("hex")

/** A CONFIRMED file with `name` and `bytes`, stored as the service would store it. */
const seedFileP = async ({ emu, owner }: Names, workspaceId: string, name: string, bytes: Buffer) => {
  const row = insertFile(emu.ctx, {
    name,
    size: bytes.length,
    type: "application/octet-stream",
    extension: path.extname(name).slice(1),
    orgId: emu.org,
    workspaceId,
    status: "CONFIRMED",
    userId: owner.userId
  })
  await emu.ctx.objects.put(storageKeyFor(row.uid), Readable.from([bytes]))
  return row
}

/** The same through the public presigned flow (GET /uploads, PUT to storage, confirm). */
const presignFileP = async ({ emu, owner }: Names, workspaceId: string, name: string, bytes: Buffer) => {
  const auth = {
    "svc-token-id": owner.tokenId,
    "svc-token-secret": owner.tokenSecret,
    "svc-org-id": emu.org,
    "svc-workspace-id": workspaceId
  }
  const q = new URLSearchParams({ filename: name, size: String(bytes.length) })
  const presigned = await fetch(`${emu.baseUrl}/uploads?${q}`, { headers: auth })
  expect(presigned.status, await presigned.clone().text()).toBe(200)
  const p = (await presigned.json()) as { url: string; headers: Record<string, string>; fields: Record<string, string> }
  const put = await fetch(p.url, { method: "PUT", headers: p.headers, body: bytes })
  expect(put.status).toBeLessThan(300)
  const uid = p.fields["X-Key"]!
  const confirm = await fetch(`${emu.baseUrl}/uploads/${encodeURIComponent(uid)}/confirm`, { method: "PUT", headers: auth })
  expect(confirm.status, await confirm.clone().text()).toBe(200)
}

const seedFile = (n: Names, workspaceId: string, name: string, bytes: Buffer) => Effect.promise(() => seedFileP(n, workspaceId, name, bytes))
const presignFile = (n: Names, workspaceId: string, name: string, bytes: Buffer) => Effect.promise(() => presignFileP(n, workspaceId, name, bytes))

const copyToDir = ({ emu, owner }: Names, workspaceId: string, target: string, journal: string) =>
  Effect.promise(() =>
    runCli([
      "copy-files", "--rest-url", emu.restUrl, "--base-url", emu.baseUrl, "--token", owner.token, "--token-id", owner.tokenId,
      "--token-secret", owner.tokenSecret, "--org", emu.org, "--from", `workspace:${workspaceId}`, "--to", `dir:${target}`,
      "--journal", journal, "--json"
    ])
  )

/** Every entry under `dir`, as lstat sees it (links are not followed). */
const entriesUnder = (dir: string): Array<{ path: string; kind: "file" | "dir" | "link" | "other" }> => {
  const out: Array<{ path: string; kind: "file" | "dir" | "link" | "other" }> = []
  for (const name of fs.readdirSync(dir)) {
    const full = path.join(dir, name)
    const st = fs.lstatSync(full)
    const kind = st.isSymbolicLink() ? "link" : st.isDirectory() ? "dir" : st.isFile() ? "file" : "other"
    out.push({ path: full, kind })
    if (kind === "dir") out.push(...entriesUnder(full))
  }
  return out
}

const WINDOWS_DEVICE = /^(con|prn|aux|nul|com[0-9¹²³]|lpt[0-9¹²³])$/i
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/

/** The checks every manifest path must pass. */
const expectSafeManifestPath = (p: string) => {
  expect(typeof p).toBe("string")
  expect(p.length).toBeGreaterThan(0)
  expect(path.isAbsolute(p) || path.win32.isAbsolute(p), `absolute: ${JSON.stringify(p)}`).toBe(false)
  expect(p.includes("/") || p.includes("\\"), `separator in ${JSON.stringify(p)}`).toBe(false)
  expect(p === "." || p === "..", `dot path ${JSON.stringify(p)}`).toBe(false)
  expect(CONTROL.test(p), `control character in ${JSON.stringify(p)}`).toBe(false)
  expect(/[<>:"|?*]/.test(p), `Windows-reserved character in ${JSON.stringify(p)}`).toBe(false)
  expect(/[. ]$/.test(p), `trailing dot or space in ${JSON.stringify(p)}`).toBe(false)
  expect(WINDOWS_DEVICE.test(p.split(".")[0]!.trim()), `device name ${JSON.stringify(p)}`).toBe(false)
  expect(Buffer.byteLength(p, "utf8"), `too long: ${p.length} chars`).toBeLessThanOrEqual(255)
  expect(p.normalize("NFC")).toBe(p)
}

// The CLI runs as a child process against the emulator: real time (`excludeTestServices`).
layer(setupLayer, { timeout: 30_000, excludeTestServices: true })("server-supplied names stay inside the target directory", (it) => {
  it.effect("R-FILE-SERVE-01: hostile names (traversal, absolute, backslashes, devices, 1000 chars, controls, unicode and case twins) are written as safe files directly inside the target", () =>
    Effect.gen(function*() {
      const n = yield* NamesSetup
      const { emu } = n
      const sandbox = yield* tempDir("ws-sec-")
      const target = path.join(sandbox, "a", "b", "target")
      const ws = emu.admin.createWorkspace({ name: "hostile names" }).id
      const hostile = [
        "../../x",
        "../../../../../../../../x",
        "../escape.txt",
        `${sandbox}/absolute-escape.txt`,
        "/etc/passwd",
        "..\\..\\x",
        "..\\..\\..\\windows-escape.txt",
        "C:\\Windows\\system32\\evil.dll",
        "\\\\server\\share\\unc.txt",
        "a/b/c/nested.txt",
        "./dot-slash.txt",
        "CON",
        "con.txt",
        "NUL",
        "aux.tar.gz",
        "COM1",
        "LPT9.log",
        "a".repeat(1000),
        `${"b".repeat(1000)}.txt`,
        `${"é".repeat(600)}.pdf`,
        `${"日本".repeat(200)}.txt`,
        "nul\u0000byte.txt",
        "ctl\u0001\u0007\u001b[31m\u001f\u007f\u0085.txt",
        "line\nbreak\r.txt",
        "tab\there.txt",
        "Cafe\u0301.txt",
        "Caf\u00e9.txt",
        "Report.TXT",
        "report.txt",
        "REPORT.txt",
        "trailing dot.",
        "trailing space ",
        "...hidden",
        "..foo",
        "manifest.ndjson",
        "MANIFEST.NDJSON",
        ".worksync-tmp",
        "\u202egnp.exe",
        "\uff0e\uff0e\uff0fx.txt",
        "%2e%2e%2fpercent.txt",
        "..%2F..%2Fpercent-upper.txt",
        "question?.txt",
        "star*.txt",
        "quote\".txt",
        "pipe|.txt",
        "colon:stream.txt"
      ]
      // Guard before any write: the pure naming steps already keep every name inside a
      // scratch root (so a broken build cannot write to /etc while this test runs).
      for (const name of hostile) expect(resolveInside(target, safeLocalName(name)), JSON.stringify(name)).not.toBeNull()

      const contents = new Map<string, Buffer>()
      for (const [i, name] of hostile.entries()) {
        const bytes = Buffer.from(`#${i} ${JSON.stringify(name)}\n`)
        contents.set(name, bytes)
        yield* seedFile(n, ws, name, bytes)
      }
      // Two more through the public presigned flow.
      for (const name of ["../../via-presign.txt", "..\\..\\via-presign-win.txt"]) {
        const bytes = Buffer.from(`presigned ${name}\n`)
        contents.set(name, bytes)
        yield* presignFile(n, ws, name, bytes)
      }

      const r = yield* copyToDir(n, ws, target, path.join(yield* tempDir("ws-sec-"), "j.sqlite"))
      expect(r.code, r.stderr).toBe(0)
      expect(JSON.parse(r.stdout)).toMatchObject({ files: contents.size, copied: contents.size, failed: 0 })

      // Nothing was created anywhere in the sandbox but the target and its parents.
      const outside = entriesUnder(sandbox).filter((e) => e.path !== path.join(sandbox, "a") && e.path !== path.join(sandbox, "a", "b") &&
        e.path !== target && !e.path.startsWith(target + path.sep))
      expect(outside.map((e) => e.path)).toEqual([])
      expect(fs.existsSync(path.join(path.dirname(target), "x"))).toBe(false)
      // Inside: plain files only, each a direct child (the scratch directory is gone).
      const inside = entriesUnder(target)
      expect(inside.filter((e) => e.kind !== "file").map((e) => e.path)).toEqual([])
      for (const e of inside) expect(path.dirname(e.path)).toBe(target)

      const manifest = fs.readFileSync(path.join(target, "manifest.ndjson"), "utf8").trimEnd().split("\n").map((l) => JSON.parse(l) as {
        name: string; path: string; sha256: string; size: number
      })
      expect(manifest).toHaveLength(contents.size)
      expect(manifest.map((m) => m.name).sort()).toEqual([...contents.keys()].sort())
      for (const m of manifest) {
        expectSafeManifestPath(m.path)
        const file = path.join(target, m.path)
        expect(fs.realpathSync(file)).toBe(path.join(fs.realpathSync(target), m.path))
        const bytes = fs.readFileSync(file)
        expect(sha(bytes)).toBe(m.sha256)
        expect(bytes.equals(contents.get(m.name)!), `content of ${JSON.stringify(m.name)}`).toBe(true)
      }
      // Unique even on case-insensitive, normalizing filesystems; none shadows the manifest.
      const keys = manifest.map((m) => m.path.normalize("NFC").toLowerCase())
      expect(new Set(keys).size).toBe(keys.length)
      expect(keys).not.toContain("manifest.ndjson")
      expect(keys).not.toContain(".worksync-tmp")
      // The directory holds exactly the manifest and the listed files.
      expect(inside.map((e) => path.basename(e.path)).sort()).toEqual(["manifest.ndjson", ...manifest.map((m) => m.path)].sort())
    }))

  const dotCase = (n: Names, names: ReadonlyArray<string>) => Effect.gen(function*() {
    const { emu } = n
    const sandbox = yield* tempDir("ws-sec-")
    const target = path.join(sandbox, "target")
    const ws = emu.admin.createWorkspace({ name: `dot names ${names.length}` }).id
    for (const [i, name] of names.entries()) yield* seedFile(n, ws, name, Buffer.from(`dots ${i}`))
    const journal = path.join(yield* tempDir("ws-sec-"), "j.sqlite")
    const r = yield* copyToDir(n, ws, target, journal)
    // Whatever the outcome per file, nothing may land outside the target.
    expect(entriesUnder(sandbox).filter((e) => e.path !== target && !e.path.startsWith(target + path.sep))).toEqual([])
    const manifestFile = path.join(target, "manifest.ndjson")
    const lines = fs.existsSync(manifestFile)
      ? fs.readFileSync(manifestFile, "utf8").trimEnd().split("\n").filter((l) => l !== "").map((l) => JSON.parse(l) as { path: string })
      : []
    for (const l of lines) expectSafeManifestPath(l.path)
    for (const e of entriesUnder(target)) {
      expect(e.kind).toBe("file")
      expect(path.dirname(e.path)).toBe(target)
    }
    return { r, lines, ws, target, journal }
  })

  it.effect("R-FILE-SERVE-01: names that are only dots and blanks never become `.`/`..` path steps; a rerun copies nothing twice", () =>
    Effect.gen(function*() {
      const n = yield* NamesSetup
      const { r, lines, ws, target, journal } = yield* dotCase(n, ["...", " ", ". .", ".. ", "....", "  .  "])
      expect(r.code, r.stderr).toBe(0)
      expect(lines).toHaveLength(6)
      const again = yield* copyToDir(n, ws, target, journal)
      expect(again.code).toBe(0)
      expect(JSON.parse(again.stdout)).toMatchObject({ copied: 0, skipped: 6 })
    }))

  it.effect("R-FILE-SERVE-07: files named `.` and `..` cannot be addressed by the download URL: refused by name, never fetched from a normalized URL, nothing written", () =>
    Effect.gen(function*() {
      const n = yield* NamesSetup
      // The safety half (nothing outside, safe manifest paths) is checked inside dotCase.
      const { r, lines } = yield* dotCase(n, [".", ".."])
      // URL normalization would turn the download URL into `/uploads/{uid}/` or `/uploads`:
      // the copy must not request those (they answer 404/401), but say why it cannot copy.
      expect(r.stderr).not.toMatch(/HTTP 40[14]/)
      expect(r.code, r.stderr).toBe(1)
      expect(r.stderr).toMatch(/dot segment cannot be addressed/)
      expect(lines).toHaveLength(0)
    }))

  it.effect("server names never reach the terminal raw: no escape, carriage-return or other control characters on stderr, and no forged `worksync:` line", () =>
    Effect.gen(function*() {
      const n = yield* NamesSetup
      const { emu, owner } = n
      const target = path.join(yield* tempDir("ws-sec-"), "target")
      const ws = emu.admin.createWorkspace({ name: "terminal names" }).id
      const forged = "worksync: forged line"
      yield* seedFile(n, ws, "\u001b]0;pwned\u0007\u001b[2J\u001b[31mred.txt", Buffer.from("esc"))
      yield* seedFile(n, ws, `ok\r${forged}.txt`, Buffer.from("cr"))
      yield* seedFile(n, ws, `two\n${forged}\n.txt`, Buffer.from("lf"))
      yield* seedFile(n, ws, "c1\u009b31m\u0085.txt", Buffer.from("c1"))
      // A file whose stored bytes do not match its size fails, so its name also reaches
      // the per-file failure line and the final error line.
      const bad = insertFile(emu.ctx, {
        name: `bad\n${forged}\u001b[0m.txt`, size: 99, type: "text/plain", extension: "txt", orgId: emu.org, workspaceId: ws,
        status: "CONFIRMED", userId: owner.userId
      })
      yield* Effect.promise(() => emu.ctx.objects.put(storageKeyFor(bad.uid), Readable.from([Buffer.from("short")])))
      // A PENDING file is listed by name as not copied.
      insertFile(emu.ctx, {
        name: `pending\n${forged}\u001b[1m.zip`, size: 3, type: "application/zip", extension: "zip", orgId: emu.org, workspaceId: ws,
        status: "PENDING", userId: owner.userId
      })
      const journals = [path.join(yield* tempDir("ws-sec-"), "j.sqlite"), path.join(yield* tempDir("ws-sec-"), "j.sqlite")] as const
      const runs = yield* Effect.all([
        copyToDir(n, ws, target, journals[0]),
        Effect.promise(() =>
          runCli([
            "copy-files", "--rest-url", emu.restUrl, "--base-url", emu.baseUrl, "--token", owner.token, "--token-id", owner.tokenId,
            "--token-secret", owner.tokenSecret, "--org", emu.org, "--from", `workspace:${ws}`, "--to", `dir:${target}-v`,
            "--journal", journals[1], "--verbose"
          ])
        )
      ], { concurrency: "unbounded" })
      for (const r of runs) {
        expect(r.code, r.stderr).toBe(1)
        // Only newlines may separate lines; names must be shown escaped, never raw.
        // eslint-disable-next-line no-control-regex
        const controls = [...r.stderr.matchAll(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/g)].map((m) => m[0].codePointAt(0)!.toString(16))
        expect(controls, r.stderr).toEqual([])
        expect(r.stderr.split("\n").filter((l) => l.startsWith(forged)), r.stderr).toEqual([])
        expect(r.stderr.split("\n").filter((l) => l.startsWith("worksync:")), r.stderr).toHaveLength(1)
      }
    }))

  it.effect("R-FILE-SERVE-01: a symbolic link already at a file's name in the target is not written through", () =>
    Effect.gen(function*() {
      const n = yield* NamesSetup
      const { emu } = n
      const sandbox = yield* tempDir("ws-sec-")
      const target = path.join(sandbox, "target")
      fs.mkdirSync(target)
      const victim = path.join(sandbox, "victim.txt")
      fs.writeFileSync(victim, "untouched")
      fs.symlinkSync(victim, path.join(target, "linked.txt"))
      fs.symlinkSync(sandbox, path.join(target, "dirlink"))
      const ws = emu.admin.createWorkspace({ name: "link names" }).id
      yield* seedFile(n, ws, "linked.txt", Buffer.from("from the service"))
      yield* seedFile(n, ws, "dirlink/inner.txt", Buffer.from("through a dir link?"))
      const r = yield* copyToDir(n, ws, target, path.join(yield* tempDir("ws-sec-"), "j.sqlite"))
      expect(r.code, r.stderr).toBe(0)
      expect(fs.readFileSync(victim, "utf8")).toBe("untouched")
      expect(fs.readdirSync(sandbox).sort()).toEqual(["target", "victim.txt"])
      const manifest = fs.readFileSync(path.join(target, "manifest.ndjson"), "utf8").trimEnd().split("\n").map((l) => JSON.parse(l) as { path: string })
      for (const m of manifest) {
        expectSafeManifestPath(m.path)
        expect(fs.lstatSync(path.join(target, m.path)).isFile()).toBe(true)
      }
    }))
})
