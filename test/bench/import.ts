/**
 * Benchmark: parse + validate + plan (journal writes included) of 1,000,000 CSV rows.
 * Target: >= 150,000 rows/s with constant memory. Prints figures; asserts nothing. CPU
 * seconds are printed beside wall time: on a shared machine they vary less.
 *
 *   npm run bench -- import            (ROWS=200000 for a quicker run; PLAN_THREAD=0 for one thread)
 *
 * Garbage collection is about a fifth of the CPU time; a larger young generation
 * (NODE_OPTIONS=--max-semi-space-size=64, a start-up flag) cuts it: the flags in use
 * are printed with the figures.
 */
import * as Effect from "effect/Effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { RestClient } from "../../src/client/rest-client.ts"
import { clientLayer } from "../../src/client/layer.ts"
import { planCsvImport } from "../../src/connectors/csv/plan.ts"
import { openCsv } from "../../src/connectors/csv/read.ts"
import { makeExtractor } from "../../src/connectors/csv/rows.ts"
import { resolveMapping } from "../../src/connectors/csv/mapping.ts"
import { startEmulator } from "../../src/emulator/index.ts"
import { Journal } from "../../src/store/journal.ts"
import { writeImportCsv } from "./_import-csv.ts"

const ROWS = Number(process.env.ROWS ?? 1_000_000)
/** PLAN_THREAD=0 plans on the main thread only (the default for this file size is a second thread). */
const PLAN_THREAD = process.env.PLAN_THREAD === undefined ? undefined : process.env.PLAN_THREAD !== "0"
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "ws-bench-import-"))
const csv = path.join(dir, "big.csv")

const generate = () => writeImportCsv(csv, ROWS)

/** V8 / node flags of this run (the tsx loader's own left out). */
const nodeFlags = () =>
  [...process.execArgv, ...(process.env.NODE_OPTIONS ?? "").split(" ")]
    .filter((a) => a !== "" && !a.includes("tsx") && a !== "--require" && a !== "--import")
    .join(" ") || "none"

const mb = (n: number) => `${(n / 1024 / 1024).toFixed(0)} MB`

/** CPU seconds (user + system) since `from`: steadier than wall time on a shared machine. */
const cpuSince = (from: NodeJS.CpuUsage) => {
  const d = process.cpuUsage(from)
  return `${((d.user + d.system) / 1e6).toFixed(1)} s cpu`
}

const main = async () => {
  generate()
  console.log(`CSV: ${ROWS.toLocaleString("en-US")} rows, ${mb(fs.statSync(csv).size)}; node flags: ${nodeFlags()}`)

  // 1. Parse + validate only (no journal).
  {
    const t0 = performance.now()
    const c0 = process.cpuUsage()
    const reader = await openCsv({ file: csv }, 2000)
    const m = resolveMapping(reader.header, { preset: "generic" })
    if (m._tag === "Failure") throw new Error(m.failure.message)
    const extract = makeExtractor(reader.header, m.success.mapping, m.success.transforms)
    let n = 0
    let bad = 0
    for await (const batch of reader.batches) {
      for (const r of batch) {
        n++
        if (extract(r).row._tag === "Failure") bad++
      }
    }
    const s = (performance.now() - t0) / 1000
    console.log(`parse + validate:        ${Math.round(n / s).toLocaleString("en-US")} rows/s (${s.toFixed(1)} s, ${cpuSince(c0)}, ${bad} invalid)`)
  }

  // 2. Parse + validate + plan into the journal (what import-csv does before sending).
  const emulator = await startEmulator({ seed: "empty" })
  try {
    const ws = emulator.workspaces[0]!
    const journalFile = path.join(dir, "journal.sqlite")
    let peakRss = 0
    const samples: Array<string> = []
    let read = 0
    const planOnce = (onRowsRead?: (n: number) => Effect.Effect<void>) =>
      Effect.runPromise(
        Effect.gen(function*() {
          const journal = yield* Journal
          const client = yield* RestClient
          return yield* planCsvImport(client, journal, {
            workspaceId: ws,
            csv: { file: csv },
            mapping: { preset: "generic" },
            ...(PLAN_THREAD === undefined ? {} : { planThread: PLAN_THREAD }),
            ...(onRowsRead === undefined ? {} : { onRowsRead })
          })
        }).pipe(
          Effect.provide(Journal.layer(journalFile)),
          Effect.provide(clientLayer({ restUrl: emulator.restUrl, baseUrl: emulator.baseUrl, token: emulator.token, org: emulator.org }))
        )
      )
    const t0 = performance.now()
    const c0 = process.cpuUsage()
    const result = await planOnce((n) =>
      Effect.sync(() => {
        const before = read
        read += n
        const rss = process.memoryUsage().rss
        peakRss = Math.max(peakRss, rss)
        if (Math.floor(before / (ROWS / 4)) !== Math.floor(read / (ROWS / 4))) {
          samples.push(`${read.toLocaleString("en-US")} rows: rss ${mb(rss)}`)
        }
      })
    )
    const s = (performance.now() - t0) / 1000
    const thread = PLAN_THREAD === false ? "one thread" : "inserts on a second thread"
    console.log(`parse + validate + plan: ${Math.round(result.rows / s).toLocaleString("en-US")} rows/s (${s.toFixed(1)} s, ${cpuSince(c0)}; ${thread}), ops ${JSON.stringify(result.plan?.ops)}`)
    console.log(`memory: peak rss ${mb(peakRss)}; ${samples.join("; ")}`)
    console.log(`journal: ${mb(fs.statSync(journalFile).size)}`)

    // 3. The same file planned again into the same journal (a scheduled rerun, or a resume):
    // every row is found planned, nothing is new.
    const t1 = performance.now()
    const c1 = process.cpuUsage()
    const again = await planOnce()
    const s1 = (performance.now() - t1) / 1000
    console.log(`plan the same file again: ${Math.round(again.rows / s1).toLocaleString("en-US")} rows/s (${s1.toFixed(1)} s, ${cpuSince(c1)}), new ops ${JSON.stringify(again.plan?.ops)}`)

    // 4. A dry run against a fresh journal: the whole file counted, nothing written but a
    // scratch file of the keys seen (memory stays flat).
    let dryPeak = 0
    const t2 = performance.now()
    const c2 = process.cpuUsage()
    const dry = await Effect.runPromise(
      Effect.gen(function*() {
        return yield* planCsvImport(yield* RestClient, { dryRunJournalFile: undefined }, {
          workspaceId: ws,
          csv: { file: csv },
          mapping: { preset: "generic" },
          dryRun: true,
          onRowsRead: () => Effect.sync(() => (dryPeak = Math.max(dryPeak, process.memoryUsage().rss)))
        })
      }).pipe(Effect.provide(clientLayer({ restUrl: emulator.restUrl, baseUrl: emulator.baseUrl, token: emulator.token, org: emulator.org })))
    )
    const s2 = (performance.now() - t2) / 1000
    console.log(`dry run: ${Math.round(dry.rows / s2).toLocaleString("en-US")} rows/s (${s2.toFixed(1)} s, ${cpuSince(c2)}), peak rss ${mb(dryPeak)}, new ops ${JSON.stringify(dry.plan?.ops)}`)
  } finally {
    await emulator.close()
    fs.rmSync(dir, { recursive: true, force: true })
  }
}

main().catch((e) => {
  console.error(e)
  process.exit(1)
})
