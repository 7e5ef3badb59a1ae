/**
 * One measured export of export.ts, run in a child process from a bundle of a source tree
 * (this one, or the one compared with): exports the latest complete run of the
 * snapshot at $SNAPSHOT to $OUT in $FORMAT and prints its figures as one JSON line.
 */
import * as Effect from "effect/Effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { exportRun, type ExportFormat } from "../../src/connectors/export.ts"
import { openSnapshot } from "../../src/store/snapshot.ts"

export interface ExportFigures {
  readonly ms: number
  /** CPU of the whole process (user + system, every thread). */
  readonly cpuMs: number
  readonly maxRssMb: number
  readonly rows: number
  readonly bytes: number
}

const file = process.env.SNAPSHOT!
const outDir = process.env.OUT!
const format = process.env.FORMAT as ExportFormat
const started = performance.now()
const result = await Effect.runPromise(
  Effect.scoped(Effect.flatMap(openSnapshot(file, { mustExist: true }), (store) => exportRun(store, { outDir, format })))
)
const cpu = process.cpuUsage()
const figures: ExportFigures = {
  ms: Math.round(performance.now() - started),
  cpuMs: Math.round((cpu.user + cpu.system) / 1000),
  maxRssMb: Math.round(process.resourceUsage().maxRSS / 1024),
  rows: result.files.find((f) => f.name === "records")!.rows,
  bytes: fs.statSync(path.join(outDir, `records.${format}`)).size
}
process.stdout.write(`${JSON.stringify(figures)}\n`)
