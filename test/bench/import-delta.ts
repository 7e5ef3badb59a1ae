/**
 * Benchmark: a delta pass of import-csv against the first import of the same file, through
 * the emulator: 100,000 rows imported, then the same export with 1% of the rows changed
 * (their title) imported again with the same journal. Prints wall and CPU time and the
 * requests each sent; asserts nothing.
 *
 *   npm run bench -- import-delta            (ROWS=20000 for a quicker run; CHANGED=0.05 for 5%)
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { clientLayer } from "../../src/client/layer.ts"
import { RestClient } from "../../src/client/rest-client.ts"
import { importCsv } from "../../src/connectors/csv/import.ts"
import type { ImportResult } from "../../src/connectors/csv/result.ts"
import { type EmulatorHandle, startEmulator } from "../../src/emulator/index.ts"
import { Journal } from "../../src/store/journal.ts"
import { renameTitles, writeImportCsv } from "./_import-csv.ts"

const ROWS = Number(process.env.ROWS ?? 100_000)
const CHANGED = Number(process.env.CHANGED ?? 0.01)
const CONCURRENCY = 16
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "ws-bench-import-delta-"))
const csv = path.join(dir, "export.csv")
const journalFile = path.join(dir, "journal.sqlite")

const cpuSeconds = (from: NodeJS.CpuUsage) => {
  const d = process.cpuUsage(from)
  return (d.user + d.system) / 1e6
}

/** One import of `csv` into the journal, timed, with the requests the emulator saw. */
const timedImport = async (emulator: EmulatorHandle, ws: string) => {
  emulator.resetStats()
  const t0 = performance.now()
  const c0 = process.cpuUsage()
  const result: ImportResult = await Effect.runPromise(
    Effect.gen(function*() {
      return yield* importCsv(yield* RestClient, yield* Journal, { workspaceId: ws, csv: { file: csv }, mapping: { preset: "generic" }, concurrency: CONCURRENCY })
    }).pipe(
      Effect.provide(
        Layer.merge(
          Journal.layer(journalFile),
          clientLayer({
            restUrl: emulator.restUrl,
            baseUrl: emulator.baseUrl,
            token: emulator.token,
            org: emulator.org,
            // The emulator sets the pace, not the client's start-slow limiter (made for a real service).
            limiter: { maxInFlight: CONCURRENCY, initialRps: 10_000, adaptive: false }
          })
        )
      )
    )
  )
  const seconds = (performance.now() - t0) / 1000
  // The emulator runs in this process: the CPU time is both sides'.
  return { result, seconds, cpu: cpuSeconds(c0), stats: emulator.stats() }
}

const line = (name: string, r: Awaited<ReturnType<typeof timedImport>>) => {
  const writes = ["create-record", "update-record", "move-record", "delete-record", "create-list", "create-tag"]
    .map((w) => [w, r.stats.byRoute[w] ?? 0] as const)
    .filter(([, n]) => n > 0)
    .map(([w, n]) => `${w} ${n.toLocaleString("en-US")}`)
    .join(", ")
  console.log(
    `${name}: ${r.seconds.toFixed(1)} s (${r.cpu.toFixed(1)} s cpu, emulator included), ${r.stats.total.toLocaleString("en-US")} requests (${writes || "no writes"}); created ${r.result.created}, updated ${r.result.updated}, pass ${r.result.pass}`
  )
}

const main = async () => {
  writeImportCsv(csv, ROWS)
  const emulator = await startEmulator({ seed: "empty" })
  try {
    const ws = emulator.workspaces[0]!
    console.log(`${ROWS.toLocaleString("en-US")} rows; the delta pass changes ${(CHANGED * 100).toFixed(1)}% of them (titles)`)
    const first = await timedImport(emulator, ws)
    line("first import", first)
    const changed = renameTitles(csv, CHANGED)
    const delta = await timedImport(emulator, ws)
    line(`delta pass (${changed.toLocaleString("en-US")} rows changed)`, delta)
    const reads = delta.stats.byRoute["get-record"] ?? 0
    console.log(
      `delta vs first: ${(delta.seconds / first.seconds * 100).toFixed(1)}% of the time, ${(delta.stats.total / first.stats.total * 100).toFixed(1)}% of the requests (get-record ${reads.toLocaleString("en-US")}: each changed row's record read before its update)`
    )
  } finally {
    await emulator.close()
    fs.rmSync(dir, { recursive: true, force: true })
  }
}

main().catch((e) => {
  console.error(e)
  process.exit(1)
})
