/**
 * Benchmarks of the backup's reading side against the emulator (prints figures,
 * asserts nothing):
 *
 * 1. Stable scan of 3 workspaces x 20,000 record summaries with 20 ms latency per
 *    request: wall time with fan-out (pages and workspaces concurrent) vs concurrency 1.
 * 2. The same scan against an emulator rate limit: requests per second achieved vs the
 *    limit, and the share of requests answered 429 (target >= 90% of the limit with
 *    <= 2% 429), with the adaptive limiter alone and with its ceiling at or just
 *    under the limit.
 * 3. Incremental backup: requests of a full first backup (details and activity) of
 *    3 x 2,000 records vs a second backup after 1% of the records changed.
 *
 * The emulator of parts 1 and 2 runs in its own process; counts come from the
 * client's limiter (requests sent, 429s received).
 *
 *   npx tsx test/bench/backup.ts [recordsPerWorkspace=20000] [rateLimit=25]
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import type { ConnectionInput, LimiterSettings } from "../../src/client/config.ts"
import { clientLayer } from "../../src/client/layer.ts"
import { Limiter } from "../../src/client/limiter.ts"
import { RestClient } from "../../src/client/rest-client.ts"
import { type EmulatorHandle, startEmulator } from "../../src/emulator/index.ts"
import { stableRecordScan } from "../../src/streams/stable-scan.ts"
import { SnapshotStore } from "../../src/store/snapshot.ts"
import { backup } from "../../src/sync/backup.ts"
import { type EmulatorProcess, spawnEmulator } from "./_emulator-process.ts"

const perWorkspace = Number(process.argv[2] ?? 20_000)
const rateLimit = Number(process.argv[3] ?? 25)

const connection = (emu: EmulatorHandle, overrides: Partial<ConnectionInput>): ConnectionInput => ({
  restUrl: emu.restUrl,
  baseUrl: emu.baseUrl,
  token: emu.token,
  org: emu.org,
  ...overrides
})

/** Scans every workspace; returns summaries read, wall time and the limiter's counts. */
const scanAll = (emu: EmulatorProcess, limiter: Partial<LimiterSettings>, concurrency: number) =>
  Effect.runPromise(
    Effect.gen(function*() {
      const started = performance.now()
      const counts = yield* Effect.forEach(
        emu.workspaces,
        (ws) => Effect.flatMap(stableRecordScan(ws, { concurrency }), (scan) => Stream.runCount(scan.records)),
        { concurrency }
      )
      const ms = performance.now() - started
      const stats = yield* (yield* Limiter).stats
      return { records: counts.reduce((a, b) => a + b, 0), ms, requests: stats.sent, limited: stats.rateLimited }
    }).pipe(Effect.provide(clientLayer({ restUrl: emu.restUrl, baseUrl: emu.baseUrl, token: emu.token, org: emu.org, limiter })))
  )

const seconds = (ms: number) => `${(ms / 1000).toFixed(2)} s`
const seed = `3x${perWorkspace}`

// 1. Fan-out vs sequential under latency.
{
  const emu = await spawnEmulator(["--seed", seed, "--latency", "20"])
  console.log(`emulator (own process) seeded with 3 x ${perWorkspace} records; 20 ms latency per request`)
  const fan = await scanAll(emu, { maxInFlight: 16, initialRps: 100 }, 8)
  const seq = await scanAll(emu, { maxInFlight: 1, initialRps: 100 }, 1)
  console.log(`scan with fan-out (8 pages per workspace, 3 workspaces, 16 in flight): ${fan.records} records, ${fan.requests} requests, ${seconds(fan.ms)}`)
  console.log(`scan with concurrency 1: ${seq.records} records, ${seq.requests} requests, ${seconds(seq.ms)}`)
  console.log(`speed-up: ${(seq.ms / fan.ms).toFixed(1)}x`)
  emu.stop()
}

// 2. Against a rate limit.
for (const [label, limiter] of [
  ["adaptive limiter, no ceiling", { maxInFlight: 16, initialRps: 20 }],
  [`limiter ceiling set to the limit (${rateLimit} rps)`, { maxInFlight: 16, initialRps: rateLimit, maxRps: rateLimit }],
  // Every 429 pauses all requests for its Retry-After (whole seconds): a ceiling just
  // under the limit avoids them.
  [`limiter ceiling at 95% of the limit`, { maxInFlight: 16, initialRps: rateLimit * 0.95, maxRps: rateLimit * 0.95 }]
] as const) {
  const emu = await spawnEmulator(["--seed", seed, "--latency", "20", "--rate-limit", String(rateLimit)])
  const r = await scanAll(emu, limiter, 8)
  const ok = r.requests - r.limited
  const rps = ok / (r.ms / 1000)
  // The emulator's bucket starts full (a burst of `rateLimit` requests): without that
  // first burst the figure is the sustained rate.
  const sustained = (ok - rateLimit) / (r.ms / 1000)
  console.log(
    `rate limit ${rateLimit} rps, ${label}: ${r.records} records in ${seconds(r.ms)}, ${r.requests} requests, ` +
      `${rps.toFixed(1)} answered rps = ${((rps / rateLimit) * 100).toFixed(1)}% of the limit ` +
      `(sustained, without the initial burst: ${((sustained / rateLimit) * 100).toFixed(1)}%), ` +
      `${r.limited} answered 429 = ${((r.limited / r.requests) * 100).toFixed(2)}%`
  )
  emu.stop()
}

// 3. Incremental backup: requests of the first and of a second run after 1% changed.
{
  const records = 2_000
  const emu = await startEmulator({ seed: { workspaces: 3, recordsPerWorkspace: records } })
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "ws-bench-backup-"))
  const layer = Layer.merge(
    clientLayer(connection(emu, { limiter: { maxInFlight: 16, initialRps: 500 } })),
    SnapshotStore.layer(path.join(dir, "s.sqlite"))
  )
  const run = (full = false) => Effect.runPromise(Effect.provide(backup({ full }), layer))
  emu.resetStats()
  let t = performance.now()
  const first = await run()
  const firstStats = emu.stats()
  console.log(`first backup of 3 x ${records} records: ${firstStats.total} requests in ${seconds(performance.now() - t)} (${JSON.stringify(firstStats.byRoute)})`)
  // Change 1% of the records through the service.
  const changed = Math.round(first.records / 100)
  const ids = emu.workspaces.flatMap((ws) =>
    (emu.ctx.db.prepare("SELECT id FROM records WHERE workspace_id = ? AND deleted_at IS NULL ORDER BY id").pluck().all(ws) as Array<string>)
      .map((id) => ({ ws, id })))
  const pick = ids.filter((_, i) => i % Math.floor(ids.length / changed) === 0).slice(0, changed)
  await Effect.runPromise(
    Effect.flatMap(RestClient, (c) =>
      Effect.forEach(pick, ({ id, ws }) => c.updateRecord({ workspaceId: ws, recordId: id, title: `changed ${id}` }), { concurrency: 8 })
    ).pipe(Effect.provide(clientLayer(connection(emu, { limiter: { maxInFlight: 8, initialRps: 500 } }))))
  )
  emu.resetStats()
  t = performance.now()
  const second = await run()
  const secondStats = emu.stats()
  console.log(
    `second backup after ${changed} records (1%) changed: ${secondStats.total} requests in ${seconds(performance.now() - t)} ` +
      `(${JSON.stringify(secondStats.byRoute)}); changes ${JSON.stringify(second.changes)}; ` +
      `${((secondStats.total / firstStats.total) * 100).toFixed(1)}% of the first run's requests`
  )
  await emu.close()
  fs.rmSync(dir, { recursive: true, force: true })
}
