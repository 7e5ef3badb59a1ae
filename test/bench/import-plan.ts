/**
 * Benchmark: the plan phase of import-csv alone (read, validate, plan into a fresh
 * journal; nothing sent), the figure the CSV planning target (200,000 rows/s) is about.
 * Prints figures; asserts nothing.
 *
 *   npm run bench -- import-plan
 *     ROWS=1000000      rows of the file (import.ts's file: a key, a quoted description, dates, tags)
 *     REPEAT=3          measured runs (each in a child process of its own)
 *     AGAINST=DIR       also run the source tree at DIR (a `git worktree` of another commit),
 *                       alternating with this one run by run, and print the ratios
 *     PLAN_THREAD=0     plan on one thread; DRY=1 a dry run instead
 *
 * Each run is a bundle of its source tree (as the CLI runs: the planning thread loads its
 * bundled file, not TypeScript) in a fresh process. Beside wall time it prints CPU time:
 * the whole process's (every thread, the garbage collector's helpers included), the
 * calling thread's alone and (on Linux) the planning thread's, each per row. On a shared machine wall time says little; the
 * calling thread's CPU time per row is what bounds an idle core when the journal's
 * inserts run on the second thread.
 */
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { writeImportCsv } from "./_import-csv.ts"
import type { PlanFigures } from "./_plan-child.ts"
import { bundleTree, root } from "./_source-tree.ts"

const ROWS = Number(process.env.ROWS ?? 1_000_000)
const REPEAT = Number(process.env.REPEAT ?? 3)
const here = path.dirname(fileURLToPath(import.meta.url))
const trees = [root, ...(process.env.AGAINST === undefined ? [] : [path.resolve(process.env.AGAINST)])]

const perRow = (s: number, rows: number) => `${((s * 1e6) / rows).toFixed(2)} µs`
/** The planning thread's CPU seconds: what no live thread accounts for (it has ended). */
const planning = (f: PlanFigures) => (f.helpersCpuS === undefined ? undefined : f.cpuS - f.mainCpuS - f.helpersCpuS)
const median = (xs: ReadonlyArray<number>) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!

const main = async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "ws-bench-plan-"))
  try {
    const csv = path.join(dir, "big.csv")
    writeImportCsv(csv, ROWS)
    console.log(`CSV: ${ROWS.toLocaleString("en-US")} rows, ${(fs.statSync(csv).size / 1024 / 1024).toFixed(0)} MB; ${os.cpus().length} cores, load average ${os.loadavg()[0]!.toFixed(1)}`)
    const outs = await Promise.all(trees.map(async (tree, i) => {
      const out = path.join(dir, `build-${i}`)
      await bundleTree(tree, out, path.join(here, "_plan-child.ts"), { "plan-writer.worker": "src/store/plan-writer.worker.ts" })
      return out
    }))
    const runs: Array<Array<PlanFigures>> = trees.map(() => [])
    for (let r = 0; r < REPEAT; r++) {
      for (let t = 0; t < trees.length; t++) {
        const text = execFileSync(process.execPath, [path.join(outs[t]!, "child.mjs")], {
          env: { ...process.env, CSV: csv },
          encoding: "utf8",
          stdio: ["ignore", "pipe", "inherit"]
        })
        const f = JSON.parse(text.trim().split("\n").at(-1)!) as PlanFigures
        runs[t]!.push(f)
        console.log(
          `${trees[t] === root ? "this tree" : trees[t]}: ${Math.round(f.rows / f.wallS).toLocaleString("en-US")} rows/s wall (${f.wallS.toFixed(2)} s); ` +
            `cpu ${f.cpuS.toFixed(2)} s (${perRow(f.cpuS, f.rows)}/row), calling thread ${f.mainCpuS.toFixed(2)} s (${perRow(f.mainCpuS, f.rows)}/row)` +
            (f.helpersCpuS === undefined ? "" : `, planning thread ${perRow(planning(f)!, f.rows)}/row, other threads ${perRow(f.helpersCpuS, f.rows)}/row`) +
            `; ops ${JSON.stringify(f.ops)}`
        )
      }
    }
    const med = runs.map((fs) => ({
      wall: median(fs.map((f) => f.wallS)),
      cpu: median(fs.map((f) => f.cpuS)),
      main: median(fs.map((f) => f.mainCpuS)),
      planning: fs[0]!.helpersCpuS === undefined ? undefined : median(fs.map((f) => planning(f)!)),
      rows: fs[0]!.rows
    }))
    med.forEach((m, t) =>
      console.log(
        `median of ${REPEAT}, ${trees[t] === root ? "this tree" : trees[t]}: ${Math.round(m.rows / m.wall).toLocaleString("en-US")} rows/s wall; ` +
          `cpu ${perRow(m.cpu, m.rows)}/row; calling thread ${perRow(m.main, m.rows)}/row (${Math.round(m.rows / m.main).toLocaleString("en-US")} rows per cpu second)` +
          (m.planning === undefined ? "" : `; planning thread ${perRow(m.planning, m.rows)}/row`)
      )
    )
    if (runs.length === 2) {
      // Each run of this tree against the other tree's run right after it (the load of a
      // shared machine drifts; neighbours see about the same), the median of those ratios.
      const [a, b] = runs as [Array<PlanFigures>, Array<PlanFigures>]
      const ratio = (of: (f: PlanFigures) => number | undefined) => {
        const rs = a.map((f, i) => of(f)! / of(b[i]!)!)
        return `${median(rs).toFixed(2)} (${rs.map((r) => r.toFixed(2)).join(", ")})`
      }
      console.log(
        `this tree / other, median of run-by-run ratios: wall ${ratio((f) => f.wallS)}; cpu ${ratio((f) => f.cpuS)}; ` +
          `calling thread ${ratio((f) => f.mainCpuS)}` +
          (a[0]!.helpersCpuS === undefined || b[0]!.helpersCpuS === undefined ? "" : `; planning thread ${ratio(planning)}`)
      )
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true })
  }
}

main().catch((e) => {
  console.error(e)
  process.exit(1)
})
