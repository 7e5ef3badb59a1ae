#!/usr/bin/env node
// The CLI ships as a CommonJS bundle, dist/cli.cjs (built by `npm install` through
// `prepare`): cron starts it often, and the bundle starts several times faster than the
// sources. It is compiled here with V8's code cache (dist/cli.cjs.cache), which skips
// most of the compile at each start. The cache is an optimisation only: when it is
// missing, stale or rejected by V8, the bundle compiles as usual and this run writes a
// fresh cache on exit (atomically; a read-only install simply runs without one).
import { readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs"
import { createRequire } from "node:module"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { setFlagsFromString } from "node:v8"
import { Script } from "node:vm"

// V8's heap as a batch command wants it (docs/growth.md, "What the commands hold"). Its
// defaults suit a long-lived server: a young generation of up to 64 MB, and an old
// generation let grow to 4 times what was live at the last full collection before the
// next. A command holds 20 to 40 MB of live objects; much of a 250-360 MB peak was that
// slack. Neither setting caps the heap: the old generation still grows as far as
// what is live needs (V8's own limit is unchanged), only collections come sooner.
// A setting the user gives (on node's command line or in NODE_OPTIONS) wins.
const given = [...process.execArgv, ...(process.env.NODE_OPTIONS ?? "").split(/\s+/)]
  .map((a) => a.replaceAll("_", "-").replace(/^--(no-)?/, "").replace(/=.*/, ""))
const mine = (flags) => flags.every((f) => !given.includes(f))
// The old generation's next collection at 1.5 times what the last one left live. V8
// reads this at each collection, so it can be set here.
if (mine(["heap-growing-percent"])) setFlagsFromString("--heap-growing-percent=50")
// Semi-spaces of at most 8 MB (V8's default here is 32 MB, a young generation of 64 MB):
// their size is fixed when the heap is made, so the process starts again with the flag,
// as the same process (execve keeps its id, open files and signal dispositions) before
// anything is read or written; V8's code cache below is not tied to this flag. Not for
// import-csv: its planning allocates a few objects a row for a million rows, and with
// 8 MB semi-spaces it costs 11-27% more CPU (bench import-plan; 16 MB: 11-19%).
const args = process.argv.slice(2)
const semiSpaces = !args.includes("import-csv") &&
  mine(["max-semi-space-size", "min-semi-space-size", "max-heap-size", "semi-space-growth-factor"])
// Two arenas of glibc's allocator, not one for each thread that allocates (up to eight a
// core), each keeping what was freed in it: SQLite's connections, a planning or export
// thread and node's own threads each filled one. The allocator reads the variable at the
// process's start, so it is set for the process started again; a value the user gives
// wins. Other C libraries ignore it. (import-csv's delta pass of 300,000 rows: 243 MB
// against 252 MB, docs/growth.md "Scratch files' page caches and the C allocator's arenas".)
const arenas = process.platform === "linux" && process.env.MALLOC_ARENA_MAX === undefined
// Where execve is missing (Windows), the command runs on with V8's default. Help and the
// version are printed without either: starting node again costs about 40 ms of CPU idle,
// 120 ms under load. Nor a command started with an IPC channel (a pool worker's job, which
// reports its plan through it): node has taken the channel's descriptor out of the
// environment, so the process started again would have none.
const quick = args.length === 0 || args.some((a) => a === "--help" || a === "-h" || a === "--version")
if (
  typeof process.execve === "function" && process.platform !== "win32" && !quick && process.channel === undefined &&
  (semiSpaces || arenas)
) {
  try {
    process.execve(
      process.execPath,
      [process.execPath, ...(semiSpaces ? ["--max-semi-space-size=8"] : []), ...process.execArgv, ...process.argv.slice(1)],
      arenas ? { ...process.env, MALLOC_ARENA_MAX: "2" } : process.env
    )
  } catch {
    // not started again: V8's default young generation, the allocator's default arenas
  }
}

const dist = join(dirname(fileURLToPath(import.meta.url)), "..", "dist")
const bundle = join(dist, "cli.cjs")
const cacheFile = `${bundle}.cache`

const source = readFileSync(bundle, "utf8")
// V8 checks the cache against the Node version and flags but only the length of the
// source, so the cache also names the bundle it was made from (size and build time).
const stat = statSync(bundle)
const key = Buffer.from(`${stat.size}:${stat.mtimeMs}:${process.version}:${process.arch}\n`)

let cachedData
try {
  const file = readFileSync(cacheFile)
  if (file.length > key.length && file.subarray(0, key.length).equals(key)) cachedData = file.subarray(key.length)
} catch {
  // no cache yet
}

// Node's CommonJS wrapper less __filename and __dirname, which the bundle, written as
// ES modules, never had (undici checks for them to decide how to extend error stacks).
const script = new Script(`(function (exports, require, module) {${source}\n})`, {
  filename: bundle,
  ...(cachedData === undefined ? {} : { cachedData })
})

if (cachedData === undefined || script.cachedDataRejected === true) {
  // On exit the cache also holds every function this run compiled.
  process.once("exit", () => {
    const tmp = `${cacheFile}.${process.pid}.tmp`
    try {
      writeFileSync(tmp, Buffer.concat([key, script.createCachedData()]))
      renameSync(tmp, cacheFile)
    } catch {
      // not writable: later starts compile as this one did
      try {
        rmSync(tmp, { force: true })
      } catch {
        // nothing was written
      }
    }
  })
}

// `filename` tells the bundle where it is (it finds the planning thread's file next to it).
const module = { exports: {}, filename: bundle }
script.runInThisContext()(module.exports, createRequire(bundle), module)
