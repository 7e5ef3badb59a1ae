/**
 * A token never appears in any output, log, error message, snapshot or journal (CLI
 * contract, "Connection"). Every command runs as the real binary against an emulator,
 * with distinctive credentials, once with the right ones and once with wrong ones (so
 * the error paths run too), with --json and --verbose; then stdout, stderr and the raw
 * bytes of every file the command left behind (SQLite main, -wal, -shm and -journal
 * files, rejects, manifests, exports) are searched for the secrets and any 12-character
 * piece of them.
 */
import Database from "better-sqlite3"
import { expect, layer } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as fs from "node:fs"
import * as path from "node:path"
import type { EmulatorHandle } from "../../src/emulator/index.ts"
import { type CliResult, runCli } from "../support/cli.ts"
import { Emulator, emulatorLayer, tempDir } from "../support/effect.ts"
import { type Canary, canaryUser, leaksIn, leaksInFiles, wrongCanary } from "./support.ts"

/** The file's emulator, the users and secrets, and the helpers built on them. */
const setupFor = (emu: EmulatorHandle) => {
  const canary: Canary = canaryUser(emu, "leak")
  const wrong = wrongCanary()
  // The token id is not secret (it is the rate-limit key); token and secrets are.
  const secrets: ReadonlyArray<string> = [canary.token, canary.tokenSecret, wrong.token, wrong.tokenSecret, emu.token, emu.tokenSecret]

  const flags = (c: { token: string; tokenSecret: string }) => [
    "--rest-url", emu.restUrl, "--base-url", emu.baseUrl, "--token", c.token, "--token-id", canary.tokenId,
    "--token-secret", c.tokenSecret, "--org", emu.org
  ]
  const envOf = (c: { token: string; tokenSecret: string }) => ({
    WORKSYNC_REST_URL: emu.restUrl,
    WORKSYNC_BASE_URL: emu.baseUrl,
    WORKSYNC_TOKEN: c.token,
    WORKSYNC_TOKEN_ID: canary.tokenId,
    WORKSYNC_TOKEN_SECRET: c.tokenSecret,
    WORKSYNC_ORG: emu.org
  })

  const expectClean = (r: CliResult, dir: string) => {
    expect(leaksIn(r.stdout, secrets), "stdout").toEqual([])
    expect(leaksIn(r.stderr, secrets), "stderr").toEqual([])
    expect(leaksInFiles(dir, secrets), "files written").toEqual([])
  }
  return { emu, canary, wrong, secrets, flags, envOf, expectClean }
}
class LeakSetup extends Context.Service<LeakSetup, ReturnType<typeof setupFor>>()("test/security/LeakSetup") {}

const setupLayer = Layer.provideMerge(Layer.effect(LeakSetup, Effect.map(Emulator, setupFor)), emulatorLayer({ seed: "demo" }))

const writeCsv = (dir: string) => {
  const csv = path.join(dir, "in.csv")
  // One good row, one that fails validation (goes to the rejects file).
  fs.writeFileSync(csv, "Name,Due\nFirst canary row,2024-05-01\nBroken row,not-a-date\n")
  return csv
}

// The CLI runs as child processes against the emulator: real time (`excludeTestServices`).
layer(setupLayer, { timeout: 30_000, excludeTestServices: true })("tokens never leak (CLI contract: Connection)", (it) => {
  it.effect("the byte scan finds a secret in a SQLite -wal file, in UTF-16 text and as a fragment (so a clean scan means something)", () =>
    Effect.gen(function*() {
      const { canary } = yield* LeakSetup
      const dir = yield* tempDir("ws-sec-")
      const db = new Database(path.join(dir, "probe.sqlite"))
      db.pragma("journal_mode = WAL")
      db.exec("CREATE TABLE t (v TEXT)")
      db.prepare("INSERT INTO t VALUES (?)").run(`prefix ${canary.token.slice(3, 20)} suffix`)
      // Still open: the row lives only in probe.sqlite-wal.
      expect(fs.existsSync(path.join(dir, "probe.sqlite-wal"))).toBe(true)
      expect(leaksInFiles(dir, [canary.token]).length).toBeGreaterThan(0)
      db.close()
      const dir16 = yield* tempDir("ws-sec-")
      fs.writeFileSync(path.join(dir16, "u16.bin"), Buffer.from(`x${canary.tokenSecret}x`, "utf16le"))
      expect(leaksInFiles(dir16, [canary.tokenSecret]).length).toBeGreaterThan(0)
      expect(leaksIn(`masked ${canary.token.slice(0, -6)}******`, [canary.token]).length).toBeGreaterThan(0)
    }))

  it.effect("backup, diff and export with the right token (flags and env, --json --verbose): nothing in output, snapshot or exports", () =>
    Effect.gen(function*() {
      const { emu, canary, flags, envOf, expectClean } = yield* LeakSetup
      const dir = yield* tempDir("ws-sec-")
      const snapshot = path.join(dir, "snap.sqlite")
      const first = yield* Effect.promise(() => runCli(["backup", ...flags(canary), "--snapshot", snapshot, "--json", "--verbose"]))
      expect(first.code, first.stderr).toBe(0)
      expectClean(first, dir)
      emu.admin.touchRecords(2)
      const second = yield* Effect.promise(() => runCli(["backup", "--snapshot", snapshot, "--json", "--verbose"], { env: envOf(canary) }))
      expect(second.code, second.stderr).toBe(0)
      expect(JSON.parse(second.stdout).changes.updated).toBe(2)
      // diff and export take no connection flags; the env still holds the token.
      const [d, nd, csv] = yield* Effect.promise(() => Promise.all([
        runCli(["diff", "--snapshot", snapshot, "--json", "--verbose"], { env: envOf(canary) }),
        runCli(["export", "--snapshot", snapshot, "--out", path.join(dir, "nd"), "--verbose"], { env: envOf(canary) }),
        runCli(["export", "--snapshot", snapshot, "--out", path.join(dir, "csv"), "--format", "csv", "--json", "--verbose"], {
          env: envOf(canary)
        })
      ]))
      for (const r of [second, d, nd, csv]) {
        expect(r.code, r.stderr).toBe(0)
        expectClean(r, dir)
      }
      expect(fs.readdirSync(path.join(dir, "nd")).sort()).toEqual([
        "activity.ndjson", "files.ndjson", "records.ndjson", "workspaces.ndjson"
      ])
    }))

  it.effect("backup with a wrong token (flags and env): the 401 line and the snapshot hold no token", () =>
    Effect.gen(function*() {
      const { wrong, flags, envOf, expectClean } = yield* LeakSetup
      const dir = yield* tempDir("ws-sec-")
      const snapshot = path.join(dir, "snap.sqlite")
      const [byFlag, byEnv] = yield* Effect.promise(() => Promise.all([
        runCli(["backup", ...flags(wrong), "--snapshot", snapshot, "--json", "--verbose"]),
        runCli(["backup", "--snapshot", path.join(dir, "env.sqlite"), "--json", "--verbose"], { env: envOf(wrong) })
      ]))
      for (const r of [byFlag, byEnv]) {
        expect(r.code, r.stderr).toBe(1)
        expect(r.stderr, r.stderr).toMatch(/401/)
        expectClean(r, dir)
      }
    }))

  it.effect("import-csv with the right token and a wrong one: no token in output, journal or rejects", () =>
    Effect.gen(function*() {
      const { emu, canary, wrong, flags, envOf, expectClean } = yield* LeakSetup
      const dir = yield* tempDir("ws-sec-")
      const csv = writeCsv(dir)
      const common = ["--workspace", emu.workspaces[0]!, "--csv", csv, "--map", "title=Name", "--map", "duedAt=Due", "--json", "--verbose"]
      const [right, bad, badEnv, dry] = yield* Effect.promise(() => Promise.all([
        runCli([
          "import-csv", ...flags(canary), ...common, "--journal", path.join(dir, "j.sqlite"), "--rejects", path.join(dir, "rejects.csv")
        ]),
        runCli([
          "import-csv", ...flags(wrong), ...common, "--journal", path.join(dir, "jw.sqlite"), "--rejects", path.join(dir, "rw.csv")
        ]),
        runCli(["import-csv", ...common, "--journal", path.join(dir, "je.sqlite"), "--rejects", path.join(dir, "re.csv")], {
          env: envOf(wrong)
        }),
        // A dry run reads the same flags and must not echo them either.
        runCli(["import-csv", ...flags(canary), ...common, "--journal", path.join(dir, "jd.sqlite"), "--dry-run"])
      ]))
      expect(right.code, right.stderr).toBe(2)
      expect(JSON.parse(right.stdout)).toEqual({ rows: 2, created: 1, skipped: 0, rejected: 1, updated: 0, pass: 1 })
      expect(fs.readFileSync(path.join(dir, "rejects.csv"), "utf8")).toContain("Broken row")
      for (const r of [bad, badEnv]) {
        expect(r.code, r.stderr).toBe(1)
        expect(r.stderr, r.stderr).toMatch(/401/)
      }
      for (const r of [right, bad, badEnv, dry]) expectClean(r, dir)
    }))

  it.effect("copy-files workspace -> dir, dir -> workspace and workspace -> workspace (--to-*), right and wrong credentials: no token in output, journal or manifest", () =>
    Effect.gen(function*() {
      const { emu, canary, wrong, secrets, flags, envOf } = yield* LeakSetup
      const dir = yield* tempDir("ws-sec-")
      const src = path.join(dir, "src")
      fs.mkdirSync(src)
      fs.writeFileSync(path.join(src, "a.txt"), "alpha")
      fs.writeFileSync(path.join(src, "b.bin"), Buffer.alloc(3000, 7))
      const target = emu.admin.createWorkspace({ name: "leak target" }).id
      emu.admin.setWorkspaceLevel(target, canary.userId, "ADMIN")
      const second = canaryUser(emu, "leak-second")
      emu.admin.setWorkspaceLevel(target, second.userId, "ADMIN")
      const allSecrets = [...secrets, second.token, second.tokenSecret]
      const ws = emu.workspaces[0]!
      const j = (n: string) => path.join(dir, `${n}.sqlite`)
      // Two groups of three, so six processes do not fight over two cores at once.
      const [toDir, fromDir, cross] = yield* Effect.promise(() => Promise.all([
        runCli(["copy-files", ...flags(canary), "--from", `workspace:${ws}`, "--to", `dir:${path.join(dir, "out")}`, "--journal", j("j1"), "--json", "--verbose"]),
        runCli(["copy-files", ...flags(canary), "--from", `dir:${src}`, "--to", `workspace:${target}`, "--journal", j("j2"), "--json", "--verbose"]),
        runCli([
          "copy-files", ...flags(canary), "--from", `workspace:${ws}`, "--to", `workspace:${target}`, "--journal", j("j3"),
          "--to-token", second.token, "--to-token-id", second.tokenId, "--to-token-secret", second.tokenSecret, "--json", "--verbose"
        ])
      ]))
      const failing = yield* Effect.promise(() => Promise.all([
        runCli(["copy-files", ...flags(wrong), "--from", `workspace:${ws}`, "--to", `dir:${path.join(dir, "out-w")}`, "--journal", j("w1"), "--json", "--verbose"]),
        runCli(["copy-files", "--from", `dir:${src}`, "--to", `workspace:${target}`, "--journal", j("w2"), "--json", "--verbose"], { env: envOf(wrong) }),
        runCli([
          "copy-files", ...flags(canary), "--from", `dir:${src}`, "--to", `workspace:${target}`, "--journal", j("w3"),
          "--to-token", wrong.token, "--to-token-secret", wrong.tokenSecret, "--json", "--verbose"
        ])
      ]))
      const runs = [toDir!, fromDir!]
      for (const r of [...runs, cross!]) expect(r.code, r.stderr).toBe(0)
      for (const r of failing) {
        expect(r.code, r.stderr).toBe(1)
        expect(r.stderr, r.stderr).toMatch(/401/)
      }
      for (const r of [...runs, cross!, ...failing]) {
        expect(leaksIn(r.stdout, allSecrets), "stdout").toEqual([])
        expect(leaksIn(r.stderr, allSecrets), "stderr").toEqual([])
      }
      expect(fs.existsSync(path.join(dir, "out", "manifest.ndjson"))).toBe(true)
      expect(leaksInFiles(dir, allSecrets)).toEqual([])
    }))

  it.effect("a broken config file (bad JSON, wrong types) is reported without any piece of the token or secret it holds", () =>
    Effect.gen(function*() {
      const { emu } = yield* LeakSetup
      const dir = yield* tempDir("ws-sec-")
      const hex = () => Array.from({ length: 32 }, () => "0123456789abcdef"[Math.floor(Math.random() * 16)]).join("")
      const token = `pat_${hex()}`
      const secret = hex()
      const head = `{"profiles": {"p": {"restUrl": "${emu.restUrl}", "baseUrl": "${emu.baseUrl}", `
      const files = {
        unquotedToken: `${head}"token": ${token}}}}`,
        unquotedSecret: `${head}"token": "${token}", "tokenSecret": ${secret}}}}`,
        trailingComma: `${head}"token": "${token}", "tokenSecret": "${secret}",}}}`,
        truncated: `${head}"token": "${token}", "tokenSecret": "${secret}`,
        tokenAsArray: `${head}"token": ["${token}"]}}}`,
        secretAsObject: `${head}"token": "${token}", "tokenSecret": {"value": "${secret}"}}}}`
      }
      // Pieces as short as 6 characters of the random parts count as a leak here.
      const pieces = [token.slice(4), secret].flatMap((s) => Array.from({ length: s.length - 5 }, (_, i) => s.slice(i, i + 6)))
      const runs = yield* Effect.promise(() => Promise.all(Object.entries(files).map(async ([name, text]) => {
        const file = path.join(dir, `${name}.json`)
        fs.writeFileSync(file, text, { mode: 0o600 })
        return { name, r: await runCli(["backup", "--config", file, "--profile", "p", "--snapshot", path.join(dir, `${name}.sqlite`)]) }
      })))
      for (const { name, r } of runs) {
        expect(r.code, `${name}: ${r.stderr}`).toBe(64)
        expect(r.stderr, name).toMatch(/^worksync: .*\.json/)
      }
      const leaked = runs.filter(({ r }) => pieces.some((p) => r.stderr.includes(p) || r.stdout.includes(p)))
      expect(leaked.map(({ name, r }) => `${name}: ${r.stderr.trim()}`)).toEqual([])
    }))

  it.effect("a journal's -wal file is searched while the copy is still writing it", () =>
    Effect.gen(function*() {
      const { emu, canary, secrets, flags } = yield* LeakSetup
      // Interrupt a copy mid-way so the journal's write-ahead log is left on disk.
      const dir = yield* tempDir("ws-sec-")
      const src = path.join(dir, "src")
      fs.mkdirSync(src)
      for (let i = 0; i < 12; i++) fs.writeFileSync(path.join(src, `f${i}.bin`), Buffer.alloc(40_000 + i, i))
      const target = emu.admin.createWorkspace({ name: "wal target" }).id
      emu.admin.setWorkspaceLevel(target, canary.userId, "ADMIN")
      const { spawn } = yield* Effect.promise(() => import("node:child_process"))
      const child = spawn(process.execPath, [
        "bin/worksync.js", "copy-files", ...flags(canary), "--from", `dir:${src}`, "--to", `workspace:${target}`,
        "--journal", path.join(dir, "j.sqlite"), "--concurrency", "1", "--verbose"
      ], { stdio: ["ignore", "pipe", "pipe"] })
      let stderr = ""
      child.stderr.setEncoding("utf8").on("data", (d: string) => {
        stderr += d
        if (/copied f\d/.test(stderr) && child.exitCode === null) child.kill("SIGKILL")
      })
      yield* Effect.promise(() => new Promise<void>((resolve) => child.once("close", () => resolve())))
      const names = fs.readdirSync(dir)
      expect(names).toContain("j.sqlite-wal")
      expect(leaksIn(stderr, secrets)).toEqual([])
      expect(leaksInFiles(dir, secrets)).toEqual([])
    }))
})
