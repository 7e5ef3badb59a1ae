/**
 * Benchmark: export of 1,000,000 records to ndjson (target <= 10 s) and to csv
 * (target <= 5 s, peak RSS <= 250 MB). Prints figures; asserts nothing.
 *
 *   npm run bench -- export [records=1000000]
 *     REPEAT=1          measured exports of each format (each in a child process of its own)
 *     AGAINST=DIR       also export with the source tree at DIR (a `git worktree` of another
 *                       commit), alternating with this one run by run
 *     SNAPSHOT=FILE     export this snapshot (filled before by this benchmark) instead of
 *                       filling a fresh one; it is kept
 *
 * Each export is a bundle of its source tree, as the CLI runs (its threads load their
 * bundled file, not TypeScript), in a fresh process, so its peak RSS is its own. It prints
 * the wall time, the process's CPU time (user + system, every thread) and its peak RSS.
 */
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import type { ExportFigures } from "./_export-child.ts"
import { bundleTree, root } from "./_source-tree.ts"
import { fillSnapshot } from "./diff-fill.ts"

const REPEAT = Number(process.env.REPEAT ?? 1)
const here = path.dirname(fileURLToPath(import.meta.url))
const trees = [root, ...(process.env.AGAINST === undefined ? [] : [path.resolve(process.env.AGAINST)])]

/** Whether two files hold the same bytes, read a megabyte at a time. */
const sameBytes = (a: string, b: string): boolean => {
  const [fa, fb] = [fs.openSync(a, "r"), fs.openSync(b, "r")]
  try {
    const [ba, bb] = [Buffer.alloc(1 << 20), Buffer.alloc(1 << 20)]
    for (;;) {
      const [na, nb] = [fs.readSync(fa, ba), fs.readSync(fb, bb)]
      if (na !== nb || !ba.subarray(0, na).equals(bb.subarray(0, nb))) return false
      if (na === 0) return true
    }
  } finally {
    fs.closeSync(fa)
    fs.closeSync(fb)
  }
}

const median = (xs: ReadonlyArray<number>) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
const seconds = (ms: number) => (ms / 1000).toFixed(2)
const nameOf = (tree: string) => (tree === root ? "this tree" : tree)

const main = async () => {
  // `records=N` as the header shows it, or a bare N.
  const n = Number((process.argv[2] ?? "1000000").replace(/^records=/, ""))
  if (!Number.isInteger(n) || n <= 0) throw new Error(`records must be a positive whole number, not ${process.argv[2]}`)
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "ws-bench-export-"))
  try {
    let file = process.env.SNAPSHOT
    if (file === undefined) {
      file = path.join(dir, "snapshot.sqlite")
      const t0 = performance.now()
      fillSnapshot(file, n, 0.01)
      console.log(`filled ${n} records x 2 runs in ${((performance.now() - t0) / 1000).toFixed(1)} s`)
    }
    console.log(`${os.cpus().length} cores, load average ${os.loadavg()[0]!.toFixed(1)}`)
    const outs = await Promise.all(trees.map(async (tree, i) => {
      const out = path.join(dir, `build-${i}`)
      await bundleTree(tree, out, path.join(here, "_export-child.ts"), { "export.worker": "src/connectors/export.worker.ts" })
      return out
    }))
    for (const format of ["ndjson", "csv"] as const) {
      const runs: Array<Array<ExportFigures>> = trees.map(() => [])
      for (let r = 0; r < REPEAT; r++) {
        for (let t = 0; t < trees.length; t++) {
          const outDir = path.join(dir, `${format}-${t}`)
          const text = execFileSync(process.execPath, [path.join(outs[t]!, "child.mjs")], {
            env: { ...process.env, SNAPSHOT: file, OUT: outDir, FORMAT: format },
            encoding: "utf8",
            stdio: ["ignore", "pipe", "inherit"]
          })
          const f = JSON.parse(text.trim().split("\n").at(-1)!) as ExportFigures
          runs[t]!.push(f)
          console.log(
            `${trees.length > 1 ? `${nameOf(trees[t]!)}: ` : ""}export ${format}: ${f.rows} records in ${seconds(f.ms)} s (CPU ${seconds(f.cpuMs)} s)${
              format === "ndjson" ? " (target <= 10 s)" : " (target <= 5 s)"
            }, ${(f.bytes / 1e6).toFixed(0)} MB written, peak RSS ${f.maxRssMb} MB`
          )
        }
      }
      if (REPEAT > 1) {
        runs.forEach((figures, t) => {
          const min = (xs: Array<number>) => Math.min(...xs)
          const wall = figures.map((f) => f.ms), cpu = figures.map((f) => f.cpuMs), rss = figures.map((f) => f.maxRssMb)
          console.log(
            `${format}, ${nameOf(trees[t]!)}, ${REPEAT} runs: wall min ${seconds(min(wall))} / median ${seconds(median(wall))} s, ` +
              `CPU min ${seconds(min(cpu))} / median ${seconds(median(cpu))} s, peak RSS ${min(rss)}-${Math.max(...rss)} MB`
          )
        })
      }
      // The trees' files must be the same bytes.
      if (trees.length > 1) {
        for (const name of ["records", "activity", "files", "workspaces"]) {
          const same = sameBytes(path.join(dir, `${format}-0`, `${name}.${format}`), path.join(dir, `${format}-1`, `${name}.${format}`))
          console.log(`${name}.${format}: ${same ? "the same bytes" : "DIFFERS"} from both trees`)
        }
      }
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true })
  }
}

await main()
