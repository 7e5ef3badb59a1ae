/**
 * Benchmark: an import of 400 rows at a 50 requests/s limit, without faults, then with
 * 5% 500s, 1% dropped connections and 8% of write answers dropped after the commit, and
 * that again with bursts of 429s. A create that met a 500 or a drop waits out its settle
 * window (the import's default, the 30 s request timeout) parked, while the other rows go
 * on. Target: each faulted run at most 2x the fault-free time plus one settle window.
 * Prints figures, and whether every row was created exactly once; asserts nothing.
 *
 *   npm run bench -- import-faults        (ROWS=400 LIMIT=50 WINDOW_MS=30000 SEED=7 to vary)
 *
 * The import runs in this process as `import-csv` runs it (the CLI's connection defaults,
 * 8 ops at a time, the settle window at the request timeout), against the emulator started
 * here: CPU time of both counts against the same process.
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { DEFAULT_REQUEST_TIMEOUT_MS } from "../../src/client/config.ts"
import { clientLayer } from "../../src/client/layer.ts"
import { RestClient } from "../../src/client/rest-client.ts"
import { importCsv } from "../../src/connectors/csv/import.ts"
import type { ImportResult } from "../../src/connectors/csv/result.ts"
import { type EmulatorHandle, type FaultOptions, startEmulator } from "../../src/emulator/index.ts"
import { Journal, JournalDb } from "../../src/store/journal.ts"
import { OP_KINDS } from "../../src/sync/plan.ts"

const ROWS = Number(process.env.ROWS ?? 400)
const LIMIT = Number(process.env.LIMIT ?? 50)
const WINDOW_MS = Number(process.env.WINDOW_MS ?? DEFAULT_REQUEST_TIMEOUT_MS)
const SEED = Number(process.env.SEED ?? 7)
const LISTS = ["To do", "In progress", "Review", "Done"]

/** The faults of the issue's measurement. */
const FAULTS: FaultOptions = { failRate: 0.05, dropRate: 0.01, ambiguousWriteRate: 0.08, seed: SEED }

/**
 * Bursts of 429s: every `everyMs`, for `lengthMs`, the limit drops to `rps` requests/s
 * (most requests refused, with the Retry-After the bucket gives), then comes back.
 */
const BURSTS = { everyMs: 10_000, lengthMs: 2_000, rps: 2 }

interface Outcome {
  readonly seconds: number
  readonly result: ImportResult
}

const writeCsv = (file: string) => {
  const lines = ["title,list"]
  for (let i = 0; i < ROWS; i++) lines.push(`Issue ${i + 1},${LISTS[i % LISTS.length]}`)
  fs.writeFileSync(file, lines.join("\n") + "\n")
}

const importOnce = (emulator: EmulatorHandle, ws: string, csv: string, journal: string): Promise<Outcome> =>
  Effect.runPromise(
    Effect.gen(function*() {
      const t0 = performance.now()
      const result = yield* importCsv(yield* RestClient, yield* Journal, {
        workspaceId: ws,
        csv: { file: csv },
        mapping: { preset: "generic" },
        concurrency: 8,
        settleWindowMs: WINDOW_MS
      })
      return { seconds: (performance.now() - t0) / 1000, result }
    }).pipe(
      Effect.provide(Layer.merge(
        Journal.layer(journal),
        clientLayer({ restUrl: emulator.restUrl, baseUrl: emulator.baseUrl, token: emulator.token, org: emulator.org })
      ))
    )
  )

/** Each title's live records in the workspace: every row exactly once means 1 for each. */
const exactlyOnce = (emulator: EmulatorHandle, ws: string) => {
  const rows = emulator.ctx.db
    .prepare("SELECT title, COUNT(*) AS n FROM records WHERE workspace_id = ? AND deleted_at IS NULL GROUP BY title")
    .all(ws) as Array<{ title: string; n: number }>
  const counts = new Map(rows.map((r) => [r.title, r.n]))
  let missing = 0
  let duplicated = 0
  for (let i = 0; i < ROWS; i++) {
    const n = counts.get(`Issue ${i + 1}`) ?? 0
    if (n === 0) missing++
    if (n > 1) duplicated += n - 1
  }
  return { ok: missing === 0 && duplicated === 0, missing, duplicated }
}

/** Creates by how many sends they took (1: first time; 2: resent once after a window; ...). */
const sendsPerCreate = (journal: string) => {
  const j = new JournalDb(journal)
  try {
    const rows = j.db
      .prepare("SELECT attempts, COUNT(*) AS n FROM ops WHERE kind = ? GROUP BY attempts ORDER BY attempts")
      .all(OP_KINDS.recordCreate) as Array<{ attempts: number; n: number }>
    return rows.map((r) => `${r.attempts}: ${r.n}`).join(", ")
  } finally {
    j.close()
  }
}

const runVariant = async (label: string, faults: FaultOptions, bursts: boolean): Promise<number> => {
  const emulator = await startEmulator({ seed: "empty", faults: { rateLimit: LIMIT } })
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "ws-bench-import-faults-"))
  let timer: NodeJS.Timeout | undefined
  try {
    const ws = emulator.admin.createWorkspace({ name: label }).id
    const csv = path.join(dir, "in.csv")
    const journal = path.join(dir, "journal.sqlite")
    writeCsv(csv)
    emulator.faults.configure(faults)
    if (bursts) {
      timer = setInterval(() => {
        emulator.faults.configure({ rateLimit: BURSTS.rps })
        setTimeout(() => emulator.faults.configure({ rateLimit: LIMIT }), BURSTS.lengthMs).unref()
      }, BURSTS.everyMs)
    }
    const first = await importOnce(emulator, ws, csv, journal)
    const r = first.result
    const finished = r.failed + r.unknown + r.blocked === 0
    const stats = emulator.stats()
    const once = exactlyOnce(emulator, ws)
    console.log(
      `${label}: ${first.seconds.toFixed(1)} s, ${(ROWS / first.seconds).toFixed(1)} rows/s; ` +
        `${finished ? "finished" : `not finished (failed ${r.failed}, unknown ${r.unknown}, blocked ${r.blocked})`}; ` +
        `every row exactly once: ${once.ok ? "yes" : `no (missing ${once.missing}, duplicated ${once.duplicated})`}; ` +
        `adopted ${r.adopted.length}`
    )
    console.log(
      `  requests ${stats.total}: ${Object.entries(stats.byStatus).map(([s, n]) => `${s} ${n}`).join(", ")}; ` +
        `creates by sends ${sendsPerCreate(journal)}`
    )
    if (!finished) {
      if (timer !== undefined) clearInterval(timer)
      emulator.faults.reset()
      emulator.faults.configure({ rateLimit: LIMIT })
      const again = await importOnce(emulator, ws, csv, journal)
      const after = exactlyOnce(emulator, ws)
      console.log(`  rerun without faults: ${again.seconds.toFixed(1)} s; every row exactly once: ${after.ok ? "yes" : `no (missing ${after.missing}, duplicated ${after.duplicated})`}`)
    }
    return first.seconds
  } finally {
    if (timer !== undefined) clearInterval(timer)
    await emulator.close()
    fs.rmSync(dir, { recursive: true, force: true })
  }
}

const main = async () => {
  console.log(
    `import of ${ROWS} rows into ${LISTS.length} lists, emulator limit ${LIMIT} requests/s, settle window ${WINDOW_MS / 1000} s, ` +
      `fault seed ${SEED}; load average ${os.loadavg().map((l) => l.toFixed(1)).join(" ")} on ${os.cpus().length} cores`
  )
  const clean = await runVariant("no faults", {}, false)
  const target = 2 * clean + WINDOW_MS / 1000
  console.log(`  target for the faulted runs: at most ${target.toFixed(1)} s (2 x ${clean.toFixed(1)} s + ${WINDOW_MS / 1000} s)`)
  const faulted = await runVariant("5% 500s, 1% drops, 8% answers lost after commit", FAULTS, false)
  const burst = await runVariant(
    `the same, and every ${BURSTS.everyMs / 1000} s a ${BURSTS.lengthMs / 1000} s burst of 429s (limit ${BURSTS.rps}/s)`,
    FAULTS,
    true
  )
  for (const [label, s] of [["faulted", faulted], ["faulted with 429 bursts", burst]] as const) {
    console.log(`${label}: ${s.toFixed(1)} s = ${(s / clean).toFixed(1)}x the fault-free run; ${s <= target ? "within" : "over"} the target`)
  }
}

main().catch((e) => {
  console.error(e)
  process.exit(1)
})
