import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import type { EmulatorHandle } from "../../src/emulator/index.ts"
import { stableRecordScan } from "../../src/streams/stable-scan.ts"
import { emulatorLayer } from "../support/effect.ts"
import { clientFor, countBy, emulatorWithFaultReset, listedIds, runWith } from "./helpers.ts"

const scan = (emu: EmulatorHandle, workspaceId: string, concurrency: number, limit?: number) =>
  runWith(clientFor(emu), Effect.gen(function*() {
    const s = yield* stableRecordScan(workspaceId, { concurrency, limit })
    const items = yield* Stream.runCollect(s.records)
    return { ids: [...items].map((r) => r.id), report: yield* s.report }
  }))

const throughout = (before: ReadonlyArray<string>, after: ReadonlyArray<string>) => {
  const end = new Set(after)
  return before.filter((id) => end.has(id))
}

// No TestClock: the client's retries and timeouts run on real time against a real server.
layer(emulatorLayer({ seed: { workspaces: 3, recordsPerWorkspace: 400 } }), { timeout: 30_000, excludeTestServices: true })("stable scan under moves", (it) => {
  it.effect("R-REST-PAGE-01 R-REST-PAGE-04: records moved behind the scan while others are created and deleted: every record that existed throughout is present exactly once", () =>
    Effect.gen(function*() {
      const emu = yield* emulatorWithFaultReset
      const ws = emu.workspaces[0]!
      const before = listedIds(emu, ws)
      emu.faults.configure({ churn: { insertsPerPage: 2, deletesPerPage: 1, movesPerPage: 2 } })
      const { ids, report } = yield* scan(emu, ws, 4)
      emu.faults.reset()
      const counts = countBy(ids)
      const stayed = throughout(before, listedIds(emu, ws))
      expect(stayed.length).toBeGreaterThan(300)
      expect(stayed.filter((id) => counts.get(id) !== 1).slice(0, 5)).toEqual([])
      expect([...counts.values()].every((n) => n === 1)).toBe(true)
      expect(report.unique).toBe(ids.length)
      // In the reference order a move changes places: a verification pass found the movers.
      if (emu.variant === "reference") expect(report.foundByRepair).toBeGreaterThan(0)
      expect(report.verificationPasses).toBeLessThanOrEqual(3)
    }))

  it.effect("R-REST-PAGE-04: moves alone (the count never changes): nothing that existed throughout is missing", () =>
    Effect.gen(function*() {
      const emu = yield* emulatorWithFaultReset
      const ws = emu.workspaces[1]!
      const before = listedIds(emu, ws)
      emu.faults.configure({ churn: { insertsPerPage: 0, deletesPerPage: 0, movesPerPage: 3 } })
      const { ids } = yield* scan(emu, ws, 1, 50)
      emu.faults.reset()
      const got = new Set(ids)
      expect(before.filter((id) => !got.has(id)).slice(0, 5)).toEqual([])
      expect(ids.length).toBe(got.size)
    }))
})
