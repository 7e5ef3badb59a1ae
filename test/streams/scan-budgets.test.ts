import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as Stream from "effect/Stream"
import type { EmulatorHandle } from "../../src/emulator/index.ts"
import { stableRecordScan, type StableRecordScanOptions } from "../../src/streams/stable-scan.ts"
import { emulatorLayer } from "../support/effect.ts"
import { clientFor, countBy, emulatorWithFaultReset, listedIds, runWith } from "./helpers.ts"

const scan = (emu: EmulatorHandle, workspaceId: string, options: StableRecordScanOptions) =>
  runWith(clientFor(emu), Effect.result(Effect.gen(function*() {
    const s = yield* stableRecordScan(workspaceId, options)
    const items = yield* Stream.runCollect(s.records)
    return { ids: [...items].map((r) => r.id), report: yield* s.report }
  })))

const listCalls = (emu: EmulatorHandle) =>
  Object.entries(emu.stats().byRoute).filter(([route]) => route.includes("list-records")).reduce((n, [, c]) => n + c, 0)

// No TestClock: the client's retries and timeouts run on real time against a real server.
layer(emulatorLayer({ seed: { workspaces: 3, recordsPerWorkspace: 60 } }), { timeout: 30_000, excludeTestServices: true })("scan budgets", (it) => {
  it.effect("R-REST-PAGE-04: pages of one item under churn: the scan completes with every record that existed throughout, or fails with one line naming the budget", () =>
    Effect.gen(function*() {
      const emu = yield* emulatorWithFaultReset
      const ws = emu.workspaces[0]!
      const before = listedIds(emu, ws)
      emu.faults.configure({ churn: { insertsPerPage: 1, deletesPerPage: 1 } })
      const result = yield* scan(emu, ws, { limit: 1, concurrency: 2 })
      emu.faults.reset()
      if (Result.isSuccess(result)) {
        const after = new Set(listedIds(emu, ws))
        const counts = countBy(result.success.ids)
        expect(before.filter((id) => after.has(id) && counts.get(id) !== 1).slice(0, 5)).toEqual([])
      } else {
        expect(result.failure._tag).toBe("ScanUnstable")
        expect(result.failure.message).toMatch(new RegExp(`^list-records \\(workspace ${ws}\\): \\S+ budget exceeded: `))
        expect(result.failure.message.split("\n")).toHaveLength(1)
      }
    }))

  it.effect("R-REST-PAGE-04: pages of one item on a still workspace: the scan completes exactly", () =>
    Effect.gen(function*() {
      const emu = yield* emulatorWithFaultReset
      const ws = emu.workspaces[1]!
      const result = yield* scan(emu, ws, { limit: 1 })
      expect(Result.isSuccess(result) && result.success.ids).toEqual(listedIds(emu, ws))
    }))

  it.effect("R-REST-PAGE-01: endless churn that outruns every page: the scan fails with one line naming the budget, after a bounded number of reads", () =>
    Effect.gen(function*() {
      const emu = yield* emulatorWithFaultReset
      const ws = emu.workspaces[2]!
      emu.resetStats()
      emu.faults.configure({ churn: { insertsPerPage: 30, deletesPerPage: 0 } })
      const result = yield* scan(emu, ws, { limit: 10, concurrency: 2 })
      emu.faults.reset()
      expect(Result.isFailure(result)).toBe(true)
      if (Result.isFailure(result)) {
        expect(result.failure._tag).toBe("ScanUnstable")
        expect(result.failure.message).toMatch(new RegExp(`^list-records \\(workspace ${ws}\\): \\S+ budget exceeded: `))
      }
      expect(listCalls(emu)).toBeLessThan(2000)
    }))
})
