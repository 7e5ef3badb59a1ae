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
import { Script } from "node:vm"

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
