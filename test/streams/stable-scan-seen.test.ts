/**
 * The stable scan with its seen ids in a scratch file (StableScanOptions `seenIds`,
 * store/scratch-keys.ts), as a restore's read of the target runs it: the same guarantees
 * under churn as with the set in the heap, every id emitted noted in the file, and the
 * file emptied for each run of the stream.
 */
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import { scratchKeys } from "../../src/store/scratch-keys.ts"
import { stableRecordScan } from "../../src/streams/stable-scan.ts"
import { emulatorLayer } from "../support/effect.ts"
import { clientFor, countBy, emulatorWithFaultReset, listedIds, runWith } from "./helpers.ts"

/** A scratch file of keys for the test, emptied each time the scan asks for its seen ids, as a restore's read does. */
const seenIdsFile = Effect.gen(function*() {
  const keys = yield* scratchKeys("scan-test")
  let made = 0
  const seenIds = () => {
    made++
    keys.clear()
    return keys
  }
  return { keys, seenIds, made: () => made }
})

layer(emulatorLayer({ seed: { workspaces: 2, recordsPerWorkspace: 400 } }), { timeout: 30_000, excludeTestServices: true })("stable scan, seen ids in a file", (it) => {
  it.effect("R-REST-PAGE-01: insertions and deletions during the scan: every record that existed throughout once, each id emitted noted in the file", () =>
    Effect.gen(function*() {
      const emu = yield* emulatorWithFaultReset
      const ws = emu.workspaces[0]!
      const { keys, seenIds, made } = yield* seenIdsFile
      const before = listedIds(emu, ws)
      emu.faults.configure({ churn: { insertsPerPage: 3, deletesPerPage: 1 } })
      const { ids, report } = yield* runWith(clientFor(emu), Effect.gen(function*() {
        const s = yield* stableRecordScan(ws, { concurrency: 3, seenIds })
        const items = yield* Stream.runCollect(s.records)
        return { ids: [...items].map((r) => r.id), report: yield* s.report }
      }))
      const after = new Set(listedIds(emu, ws))
      const counts = countBy(ids)
      expect(before.filter((id) => after.has(id)).filter((id) => counts.get(id) !== 1)).toEqual([])
      expect([...counts.values()].every((n) => n === 1)).toBe(true)
      // Insertions shift pages right: repeats were told from the file and dropped.
      expect(report.duplicates).toBeGreaterThan(0)
      expect(made()).toBe(1)
      expect([...keys.keys()]).toEqual([...ids].sort())
      expect(report.unique).toBe(ids.length)
    }))

  it.effect("each run of the scan's stream starts from an empty set: a second run emits every record again", () =>
    Effect.gen(function*() {
      const emu = yield* emulatorWithFaultReset
      const ws = emu.workspaces[1]!
      const { keys, seenIds } = yield* seenIdsFile
      const runs = yield* runWith(clientFor(emu), Effect.gen(function*() {
        const s = yield* stableRecordScan(ws, { seenIds })
        const first = [...yield* Stream.runCollect(s.records)].map((r) => r.id)
        const second = [...yield* Stream.runCollect(s.records)].map((r) => r.id)
        return { first, second }
      }))
      expect(runs.first).toEqual(listedIds(emu, ws))
      expect(runs.second).toEqual(runs.first)
      expect(keys.count()).toBe(runs.first.length)
    }))
})
