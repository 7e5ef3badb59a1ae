/**
 * Benchmark: export of 1,000,000 records to ndjson (target <= 10 s) and to csv
 * (target <= 5 s, peak RSS <= 250 MB). Each export runs in a fresh child process so its
 * peak RSS is its own. Prints figures (wall time, the child's CPU time user+system, peak RSS);
 * asserts nothing.
 *
 *   npx tsx test/bench/export.ts [records=1000000]
 */
import { execFileSync } from "node:child_process"
import * as Effect from "effect/Effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { exportRun, type ExportFormat } from "../../src/connectors/export.ts"
import { openSnapshot } from "../../src/store/snapshot.ts"
import { fillSnapshot } from "./diff-fill.ts"

const self = fileURLToPath(import.meta.url)

if (process.argv[2] === "--child") {
  const [file, outDir, format] = process.argv.slice(3) as [string, string, ExportFormat]
  const started = performance.now()
  const result = await Effect.runPromise(
    Effect.scoped(Effect.flatMap(openSnapshot(file, { mustExist: true }), (store) => exportRun(store, { outDir, format })))
  )
  const cpu = process.cpuUsage()
  process.stdout.write(JSON.stringify({
    ms: Math.round(performance.now() - started),
    cpuMs: Math.round((cpu.user + cpu.system) / 1000),
    maxRssMb: Math.round(process.resourceUsage().maxRSS / 1024),
    rows: result.files.find((f) => f.name === "records")!.rows,
    bytes: fs.statSync(path.join(outDir, `records.${format}`)).size
  }) + "\n")
} else {
  // `records=N` as the header shows it, or a bare N.
  const n = Number((process.argv[2] ?? "1000000").replace(/^records=/, ""))
  if (!Number.isInteger(n) || n <= 0) throw new Error(`records must be a positive whole number, not ${process.argv[2]}`)
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "ws-bench-export-"))
  const file = path.join(dir, "snapshot.sqlite")
  const t0 = performance.now()
  fillSnapshot(file, n, 0.01)
  console.log(`filled ${n} records x 2 runs in ${((performance.now() - t0) / 1000).toFixed(1)} s`)
  for (const format of ["ndjson", "csv"] as const) {
    const out = execFileSync(process.execPath, ["--import", "tsx", self, "--child", file, path.join(dir, format), format], { encoding: "utf8" })
    const r = JSON.parse(out) as Record<string, number>
    console.log(
      `export ${format}: ${r.rows} records in ${(r.ms! / 1000).toFixed(2)} s (CPU ${(r.cpuMs! / 1000).toFixed(2)} s)${
          format === "ndjson" ? " (target <= 10 s)" : " (target <= 5 s)"
        }, ` +
        `${(r.bytes! / 1e6).toFixed(0)} MB written, peak RSS ${r.maxRssMb} MB`
    )
  }
  fs.rmSync(dir, { recursive: true, force: true })
}
