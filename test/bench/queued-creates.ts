/**
 * Benchmark: replay of RECORDS (default 10,000) planned creates kept in list order in
 * LISTS (default 3) lists, as restore, migrate and import-csv plan them: the lists'
 * list.ensure ops, then per record a create `inListOrder` (one executor group per list:
 * its creates go one at a time) and a marker that waits for it (restore's version
 * marker). Against the emulator in this process, no rate limit, concurrency 8. Prints the
 * replay's wall time and the process's CPU time (the emulator's included); asserts
 * nothing.
 *
 *   npm run bench -- queued-creates        (RECORDS=5000 LISTS=3 to vary)
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { clientLayer } from "../../src/client/layer.ts"
import { RestClient } from "../../src/client/rest-client.ts"
import { startEmulator } from "../../src/emulator/index.ts"
import { Journal } from "../../src/store/journal.ts"
import { OP_KINDS, PHASES } from "../../src/sync/plan.ts"
import { replay } from "../../src/sync/replay.ts"
import { makeRecordExecutors } from "../../src/sync/replay-records.ts"

const RECORDS = Number(process.env.RECORDS ?? 10_000)
const LISTS = Number(process.env.LISTS ?? 3)

const main = async () => {
  const emulator = await startEmulator({ seed: "empty" })
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "ws-bench-queued-creates-"))
  try {
    const ws = emulator.workspaces[0]!
    const layer = Layer.merge(
      Journal.layer(path.join(dir, "journal.sqlite")),
      clientLayer({ restUrl: emulator.restUrl, baseUrl: emulator.baseUrl, token: emulator.token, org: emulator.org })
    )
    const out = await Effect.runPromise(
      Effect.gen(function*() {
        const journal = yield* Journal
        const lists = Array.from({ length: LISTS }, (_, l) => ({
          key: `list:${l}`,
          kind: OP_KINDS.listEnsure,
          payload: { workspaceId: ws, title: `Bench list ${l}` }
        }))
        const records = Array.from({ length: RECORDS }, (_, i) => [
          {
            key: `create:${i}`,
            kind: OP_KINDS.recordCreate,
            payload: { workspaceId: ws, title: `Bench record ${i}`, listTitle: `Bench list ${i % LISTS}`, inListOrder: true }
          },
          { key: `marker:${i}`, kind: OP_KINDS.marker, payload: { hash: String(i) }, dependsOn: `create:${i}` }
        ]).flat()
        yield* journal.addOps([...lists, ...records])
        const cpu0 = process.cpuUsage()
        const t0 = performance.now()
        const report = yield* replay(journal, makeRecordExecutors(yield* RestClient), { phases: PHASES, concurrency: 8 })
        const wall = (performance.now() - t0) / 1000
        const cpu = process.cpuUsage(cpu0)
        return { report, wall, cpu: (cpu.user + cpu.system) / 1e6 }
      }).pipe(Effect.provide(layer))
    )
    console.log(
      `replay of ${RECORDS} creates in ${LISTS} lists (and a marker each): ${out.report.sent} ops sent, ` +
        `${out.report.failed} failed, in ${out.wall.toFixed(1)} s wall, ${out.cpu.toFixed(1)} s CPU ` +
        `(${((out.wall * 1e6) / RECORDS).toFixed(0)} µs per record)`
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
