/**
 * Benchmark of `verify --rehearse` (prints figures, asserts nothing): a run of 10,000
 * records restored into a fresh in-process emulator with the real restore, then compared
 * record by record. Reports the wall time of each phase (integrity and hashes, the
 * restore, the comparison), the CPU time and the peak memory of the process, and the
 * checks' outcome.
 *
 * The run comes from an emulator seeded with one workspace of N records (three lists,
 * tags, assignees, due days, descriptions on a quarter of them), backed up first; only
 * the verification is timed.
 *
 *   npm run bench -- verify-rehearse [records=10000]
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { clientLayer } from "../../src/client/layer.ts"
import { startEmulator } from "../../src/emulator/index.ts"
import { SnapshotStore } from "../../src/store/snapshot.ts"
import { backup } from "../../src/sync/backup.ts"
import { verify } from "../../src/sync/verify.ts"

const records = Number(process.argv[2] ?? 10_000)
const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "ws-bench-verify-"))
const snapshot = path.join(dir, "snapshot.sqlite")
try {
  const source = await startEmulator({ seed: { workspaces: 1, recordsPerWorkspace: records } })
  const filled = performance.now()
  await Effect.runPromise(
    backup({}).pipe(
      Effect.provide(Layer.merge(
        clientLayer({ restUrl: source.restUrl, baseUrl: source.baseUrl, token: source.token, org: source.org, limiter: { maxInFlight: 16, initialRps: 2000 } }),
        SnapshotStore.layer(snapshot)
      ))
    )
  )
  await source.close()
  console.log(`backed up ${records} records in ${seconds(performance.now() - filled)} (not part of the figure)`)

  const marks: Array<{ at: number; line: string }> = []
  const cpuBefore = process.cpuUsage()
  const started = performance.now()
  const result = await Effect.runPromise(
    Effect.gen(function*() {
      const store = yield* SnapshotStore
      const run = (yield* store.latestComplete)!
      return yield* verify(store, {
        run,
        rehearse: true,
        log: (line) => Effect.sync(() => void marks.push({ at: performance.now(), line }))
      })
    }).pipe(Effect.provide(SnapshotStore.layer(snapshot, { mustExist: true })))
  )
  const total = performance.now() - started
  const cpu = process.cpuUsage(cpuBefore)
  const at = (prefix: string) => marks.find((m) => m.line.startsWith(prefix))?.at ?? started
  const restoring = at("rehearsal: restoring")
  const comparing = at("rehearsal: comparing")

  console.log(`verify --rehearse of ${records} records: ${seconds(total)} wall`)
  console.log(`  integrity and hashes: ${seconds(restoring - started)}`)
  console.log(`  restore into the fresh emulator (emulator start, users, restore): ${seconds(comparing - restoring)}`)
  console.log(`  comparison (the emulator read back, record by record): ${seconds(started + total - comparing)}`)
  console.log(`  CPU ${seconds((cpu.user + cpu.system) / 1000)} (client and emulator share this process), peak RSS ${(process.resourceUsage().maxRSS / 1024).toFixed(0)} MB`)
  for (const c of result.checks) {
    console.log(`  ${c.name}: ${c.ok ? "ok" : "FAILED"} (${c.checked} checked, ${c.failed} failed)${c.first === null ? "" : `; first: ${c.first}`}`)
  }
  for (const n of result.notCarried) console.log(`  not carried: ${n.count} ${n.what}`)
} finally {
  fs.rmSync(dir, { recursive: true, force: true })
}
