/**
 * What `worksync --help` loads: the CLI's static import graph (scripts/cli-graph.mjs,
 * an esbuild metafile) holds the command definitions only; stores, sync, connectors,
 * the client and CSV/glob libraries load when a command runs.
 *
 * The shipped CLI is one CommonJS bundle compiled with a V8 code cache (bin/worksync.js):
 * a missing, stale or rejected cache must never change what the CLI does.
 */
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { describe, expect, it } from "vitest"

it("the start-up graph of the CLI bundle holds no store, sync, connector, client, csv-parse or picomatch module", () => {
  const r = spawnSync(process.execPath, ["scripts/cli-graph.mjs", "--all"], { encoding: "utf8", timeout: 60_000 })
  expect(r.stdout).toMatch(/static graph of /)
  expect(r.stdout).toMatch(/src\/cli\/commands\/import-csv\.ts/)
  expect(r.stdout).not.toMatch(/src\/(store|sync|connectors|client|streams|emulator)\//)
  expect(r.stdout).not.toMatch(/node_modules\/(csv-parse|csv-stringify|picomatch|undici)\//)
  expect(r.status).toBe(0)
}, 60_000)

it("a backup to a SQLite file evaluates no PostgreSQL driver: @effect/sql-pg and pg load only for a PostgreSQL location", () => {
  const r = spawnSync(process.execPath, ["scripts/cli-graph.mjs", "--all", "--entry", "src/cli/run/backup.ts"], { encoding: "utf8", timeout: 60_000 })
  expect(r.stdout).toMatch(/src\/store\/snapshot-sqlite\.ts/)
  expect(r.stdout).not.toMatch(/node_modules\/(@effect\/sql-pg|pg|pg-pool)\//)
  expect(r.stdout).not.toMatch(/src\/store\/(snapshot-postgres|postgres)\.ts/)
  expect(r.status).toBe(0)
}, 60_000)

it("worksync --help does not load better-sqlite3 (the store is evaluated only when a command runs)", () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "worksync-startup-"))
  try {
    // Records every non-builtin module the process requires.
    const hook = path.join(dir, "hook.cjs")
    fs.writeFileSync(
      hook,
      `const M = require("node:module"); const load = M._load;
M._load = function (request, ...rest) { if (!M.isBuiltin(request)) process.stderr.write("required " + request + "\\n"); return load.call(this, request, ...rest) }`
    )
    const r = spawnSync(process.execPath, ["-r", hook, "bin/worksync.js", "--help"], { encoding: "utf8", timeout: 20_000 })
    expect(r.status).toBe(0)
    expect(r.stdout).toMatch(/USAGE/)
    expect(r.stderr).not.toMatch(/better-sqlite3/)
  } finally {
    fs.rmSync(dir, { recursive: true, force: true })
  }
})

it("the CLI bundle is ASCII, its dependencies' license notices in a file beside it", () => {
  // One character past ASCII makes V8 keep the whole source as a two-byte string, which
  // every start pays for in decoding and in checking the code cache against it.
  const bundle = fs.readFileSync("dist/cli.cjs")
  const at = bundle.findIndex((byte) => byte > 0x7f)
  expect(at === -1 ? "" : bundle.subarray(Math.max(0, at - 60), at + 20).toString("utf8")).toBe("")
  expect(bundle.toString("latin1")).toContain("For license information please see cli.cjs.LEGAL.txt")
  expect(fs.readFileSync("dist/cli.cjs.LEGAL.txt", "utf8")).toMatch(/MIT/)
})

describe("code cache of the CLI bundle", () => {
  /** A copy of the shipped CLI (launcher and bundle) in a temp dir, so its cache can be tampered with. */
  const install = () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "worksync-cache-"))
    fs.mkdirSync(path.join(dir, "bin"))
    fs.mkdirSync(path.join(dir, "dist"))
    fs.copyFileSync("bin/worksync.js", path.join(dir, "bin", "worksync.js"))
    fs.writeFileSync(path.join(dir, "package.json"), JSON.stringify({ type: "module" }))
    fs.copyFileSync("dist/cli.cjs", path.join(dir, "dist", "cli.cjs"))
    return dir
  }
  const help = (dir: string) =>
    spawnSync(process.execPath, [path.join(dir, "bin", "worksync.js"), "--help"], { encoding: "utf8", timeout: 20_000 })
  const expected = spawnSync(process.execPath, ["bin/worksync.js", "--help"], { encoding: "utf8", timeout: 20_000 }).stdout

  it("without a cache the CLI prints the same help and writes a cache for the next start", () => {
    const dir = install()
    try {
      const cache = path.join(dir, "dist", "cli.cjs.cache")
      const first = help(dir)
      expect(first.status).toBe(0)
      expect(first.stdout).toBe(expected)
      expect(fs.statSync(cache).size).toBeGreaterThan(1000)
      const second = help(dir)
      expect(second.status).toBe(0)
      expect(second.stdout).toBe(expected)
      expect(fs.readdirSync(path.join(dir, "dist")).filter((f) => f.endsWith(".tmp"))).toEqual([])
    } finally {
      fs.rmSync(dir, { recursive: true, force: true })
    }
  })

  it("a cache for another bundle, or one V8 rejects, is ignored and replaced", () => {
    const dir = install()
    try {
      const cache = path.join(dir, "dist", "cli.cjs.cache")
      fs.writeFileSync(cache, "0:0:v0:none\n" + "x".repeat(5000))
      const stale = help(dir)
      expect(stale.status).toBe(0)
      expect(stale.stdout).toBe(expected)
      const good = fs.readFileSync(cache)
      const key = good.subarray(0, good.indexOf(10) + 1)
      expect(key.toString()).toMatch(/^\d+:[\d.]+:v\d/)

      // Right key, garbage data: V8's own check rejects it.
      fs.writeFileSync(cache, Buffer.concat([key, Buffer.alloc(good.length - key.length, 7)]))
      const rejected = help(dir)
      expect(rejected.status).toBe(0)
      expect(rejected.stdout).toBe(expected)
      expect(fs.readFileSync(cache).subarray(key.length, key.length + 64)).not.toEqual(Buffer.alloc(64, 7))
    } finally {
      fs.rmSync(dir, { recursive: true, force: true })
    }
  })
})
