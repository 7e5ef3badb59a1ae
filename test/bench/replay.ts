/**
 * Benchmark: replay of 5,000 planned creates against the emulator with a rate limit.
 * Targets: achieved rate >= 90% of the limit, <= 2% of requests answered 429.
 * Prints figures; asserts nothing.
 *
 *   npm run bench -- replay        (CREATES=2000 LIMIT=200 to vary)
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { clientLayer } from "../../src/client/layer.ts"
import { Limiter } from "../../src/client/limiter.ts"
import { RestClient } from "../../src/client/rest-client.ts"
import { startEmulator } from "../../src/emulator/index.ts"
import { Journal } from "../../src/store/journal.ts"
import { OP_KINDS, PHASES } from "../../src/sync/plan.ts"
import { replay } from "../../src/sync/replay.ts"
import { makeRecordExecutors } from "../../src/sync/replay-records.ts"

const CREATES = Number(process.env.CREATES ?? 5000)
const LIMIT = Number(process.env.LIMIT ?? 200)

const runOnce = async (label: string, limiter: Record<string, unknown>) => {
  const emulator = await startEmulator({ seed: "empty", faults: { rateLimit: LIMIT } })
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "ws-bench-replay-"))
  try {
    const ws = emulator.workspaces[0]!
    const layer = Layer.merge(
      Journal.layer(path.join(dir, "journal.sqlite")),
      clientLayer({ restUrl: emulator.restUrl, baseUrl: emulator.baseUrl, token: emulator.token, org: emulator.org, limiter })
    )
    const out = await Effect.runPromise(
      Effect.gen(function*() {
        const journal = yield* Journal
        yield* journal.addOps(
          Array.from({ length: CREATES }, (_, i) => ({
            key: `bench:${i}`,
            kind: OP_KINDS.recordCreate,
            payload: { workspaceId: ws, title: `Bench record ${i}` }
          }))
        )
        // Let the token bucket fill as it would after planning a real import.
        yield* Effect.sleep(1000)
        emulator.resetStats()
        const t0 = performance.now()
        const report = yield* replay(journal, makeRecordExecutors(yield* RestClient), { phases: PHASES, concurrency: 16 })
        const seconds = (performance.now() - t0) / 1000
        const limiterStats = yield* Effect.flatMap(Limiter, (l) => l.stats)
        return { report, seconds, limiterStats }
      }).pipe(Effect.provide(layer))
    )
    const stats = emulator.stats()
    const total = stats.total
    const limited = stats.byStatus["429"] ?? 0
    const rate = out.report.sent / out.seconds
    console.log(
      `${label}: ${out.report.sent} creates in ${out.seconds.toFixed(1)} s = ${rate.toFixed(1)}/s ` +
        `(${((rate / LIMIT) * 100).toFixed(1)}% of the ${LIMIT}/s limit); ${limited} of ${total} requests answered 429 ` +
        `(${((limited / Math.max(1, total)) * 100).toFixed(2)}%); final client rate ${out.limiterStats.currentRps.toFixed(0)}/s`
    )
  } finally {
    await emulator.close()
    fs.rmSync(dir, { recursive: true, force: true })
  }
}

const main = async () => {
  console.log(`replay of ${CREATES} creates, emulator rate limit ${LIMIT} requests/s (token bucket, burst ${LIMIT})`)
  await runOnce("default adaptive limiter", { maxInFlight: 16 })
  await runOnce("limiter capped at the known limit", { maxInFlight: 16, maxRps: LIMIT })
}

main().catch((e) => {
  console.error(e)
  process.exit(1)
})
