import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import type { EmulatorHandle } from "../../src/emulator/index.ts"
import { listRecordsStream } from "../../src/streams/records.ts"
import { stableRecordScan } from "../../src/streams/stable-scan.ts"
import { emulatorLayer } from "../support/effect.ts"
import { clientFor, collect, countBy, emulatorWithFaultReset, listedIds, runWith } from "./helpers.ts"

const scan = (emu: EmulatorHandle, workspaceId: string, concurrency: number) =>
  runWith(clientFor(emu), Effect.gen(function*() {
    const s = yield* stableRecordScan(workspaceId, { concurrency })
    const items = yield* Stream.runCollect(s.records)
    return { ids: [...items].map((r) => r.id), report: yield* s.report }
  }))

/** Ids present both before and after: the records that existed for the whole scan. */
const throughout = (before: ReadonlyArray<string>, after: ReadonlyArray<string>) => {
  const end = new Set(after)
  return before.filter((id) => end.has(id))
}

// No TestClock: the client's retries and timeouts run on real time against a real server.
layer(emulatorLayer({ seed: { workspaces: 4, recordsPerWorkspace: 400 } }), { timeout: 30_000, excludeTestServices: true })("stable scan under churn", (it) => {
  it.effect("R-REST-PAGE-01 R-REST-PAGE-04: deletions at the front during the scan: every record that existed throughout is present exactly once", () =>
    Effect.gen(function*() {
      const emu = yield* emulatorWithFaultReset
      const ws = emu.workspaces[0]!
      const before = listedIds(emu, ws)
      // 5 deletions per list-records call: more than the windows' overlap, so gaps open.
      emu.faults.configure({ churn: { insertsPerPage: 0, deletesPerPage: 5 } })
      const { ids, report } = yield* scan(emu, ws, 4)
      const after = listedIds(emu, ws)
      const counts = countBy(ids)
      const stayed = throughout(before, after)
      expect(stayed.length).toBeGreaterThan(200)
      expect(stayed.filter((id) => counts.get(id) !== 1)).toEqual([])
      expect([...counts.values()].every((n) => n === 1)).toBe(true)
      expect(report.countBefore).toBe(before.length)
      expect(report.countAfter).toBe(after.length)
      expect(report.gapsRepaired).toBeGreaterThan(0)
    }))

  it.effect("control: plain offset paging under the same churn loses records that existed throughout", () =>
    Effect.gen(function*() {
      const emu = yield* emulatorWithFaultReset
      const ws = emu.workspaces[1]!
      const before = listedIds(emu, ws)
      emu.faults.configure({ churn: { insertsPerPage: 0, deletesPerPage: 2 } })
      const ids = yield* collect(clientFor(emu), listRecordsStream({ workspaceId: ws }, { concurrency: 1 }))
      const got = new Set(ids.map((r) => r.id))
      const missing = throughout(before, listedIds(emu, ws)).filter((id) => !got.has(id))
      expect(missing.length).toBeGreaterThan(0)
    }))

  it.effect("R-REST-PAGE-01: insertions and deletions together: no record that existed throughout is missing or repeated", () =>
    Effect.gen(function*() {
      const emu = yield* emulatorWithFaultReset
      const ws = emu.workspaces[2]!
      const before = listedIds(emu, ws)
      emu.faults.configure({ churn: { insertsPerPage: 3, deletesPerPage: 1 } })
      const { ids, report } = yield* scan(emu, ws, 3)
      const after = listedIds(emu, ws)
      const counts = countBy(ids)
      expect(throughout(before, after).filter((id) => counts.get(id) !== 1)).toEqual([])
      expect([...counts.values()].every((n) => n === 1)).toBe(true)
      // Insertions shift pages right: the scan saw repeats and dropped them.
      expect(report.duplicates).toBeGreaterThan(0)
    }))

  it.effect("without churn the scan equals the workspace and needs no re-reads", () =>
    Effect.gen(function*() {
      const emu = yield* emulatorWithFaultReset
      const ws = emu.workspaces[3]!
      const { ids, report } = yield* scan(emu, ws, 4)
      expect(ids).toEqual(listedIds(emu, ws))
      expect(report).toMatchObject({ gapsRepaired: 0, rereadPages: 0, duplicates: 0, verificationPasses: 0 })
    }))
})

// A listing longer than the stall budget (50 pages in a row without a new id): a
// verification pass brings no new id on almost every page, as expected.
layer(emulatorLayer({ seed: { workspaces: 1, recordsPerWorkspace: 5_200 } }), { timeout: 60_000, excludeTestServices: true })("stable scan of a long listing", (it) => {
  it.effect("R-REST-PAGE-04: a deletion during the first pass of 53 pages: the verification pass reads them all and the scan completes, not stopped as a stall", () =>
    Effect.gen(function*() {
      const emu = yield* emulatorWithFaultReset
      const ws = emu.workspaces[0]!
      // One deletion, after the first page: the pages after it shift, a verification follows.
      emu.faults.configure({ churn: { insertsPerPage: 0, deletesPerPage: 1, pages: 1 } })
      const { ids, report } = yield* scan(emu, ws, 4)
      const listed = listedIds(emu, ws)
      expect(report.verificationPasses).toBeGreaterThan(0)
      expect(report.pageSize * 50).toBeLessThan(listed.length)
      const got = new Set(ids)
      expect(listed.filter((id) => !got.has(id)).slice(0, 5)).toEqual([])
      expect(got.size).toBe(ids.length)
    }))
})
