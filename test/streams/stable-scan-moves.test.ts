import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import { insertList } from "../../src/emulator/core/lists.ts"
import { insertRecord, POSITION_STEP } from "../../src/emulator/core/writes.ts"
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
  it.effect("R-REST-PAGE-01 R-REST-PAGE-04: records moved behind the scan while others are created and deleted, through the first pass and into the verification: every record that existed throughout is present exactly once", () =>
    Effect.gen(function*() {
      const emu = yield* emulatorWithFaultReset
      const ws = emu.workspaces[0]!
      const before = listedIds(emu, ws)
      // After each of the first 8 list-records pages: the first pass (5 pages) and the
      // start of the verification pass that follows it.
      emu.faults.configure({ churn: { insertsPerPage: 2, deletesPerPage: 1, movesPerPage: 2, pages: 8 } })
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

  it.effect("R-REST-PAGE-04: moves alone (the count never changes) through the first pass and into the verification: nothing that existed throughout is missing", () =>
    Effect.gen(function*() {
      const emu = yield* emulatorWithFaultReset
      const ws = emu.workspaces[1]!
      const before = listedIds(emu, ws)
      // Pages of 50 read one at a time: the first pass reads 9, the verification pass 9 more.
      emu.faults.configure({ churn: { insertsPerPage: 0, deletesPerPage: 0, movesPerPage: 3, pages: 12 } })
      const { ids } = yield* scan(emu, ws, 1, 50)
      emu.faults.reset()
      const got = new Set(ids)
      expect(before.filter((id) => !got.has(id)).slice(0, 5)).toEqual([])
      expect(ids.length).toBe(got.size)
    }))

  it.effect("R-REST-PAGE-04: moves behind the reading that never stop: the scan ends exact or fails with one line naming the verification budget, never short", () =>
    Effect.gen(function*() {
      const emu = yield* emulatorWithFaultReset
      const ws = emu.workspaces[2]!
      const before = listedIds(emu, ws)
      emu.faults.configure({ churn: { insertsPerPage: 2, deletesPerPage: 1, movesPerPage: 2 } })
      const result = yield* Effect.result(scan(emu, ws, 4))
      emu.faults.reset()
      if (result._tag === "Success") {
        const counts = countBy(result.success.ids)
        expect(throughout(before, listedIds(emu, ws)).filter((id) => counts.get(id) !== 1).slice(0, 5)).toEqual([])
      } else {
        expect(result.failure._tag).toBe("ScanUnstable")
        expect(result.failure.message).toMatch(new RegExp(`^list-records \\(workspace ${ws}\\): \\S+ budget exceeded: `))
        expect(result.failure.message.split("\n")).toHaveLength(1)
      }
    }))
})

/**
 * Lists of a workspace laid out so that move-record (which puts a record at the end of
 * its new list) sends the last record of the order into its middle, then near its front:
 * list A holds 200 records (positions 1..200), B one record at 100.5 and C one at 10.5.
 * The reference order is by position: A1..A10, C1, A11..A100, B1, A101..A200.
 */
const layOut = (emu: EmulatorHandle, workspaceId: string) => {
  const createdAt = emu.ctx.clock.iso()
  const list = (title: string) => insertList(emu.ctx, workspaceId, title).id
  const [a, b, c] = [list("A"), list("B"), list("C")]
  const add = (listId: string, position: number, title: string) =>
    insertRecord(emu.ctx, { workspaceId, listId, title, position: position * POSITION_STEP, createdBy: null, createdAt }).id
  const inA = Array.from({ length: 200 }, (_, k) => add(a, k + 1, `A${k + 1}`))
  add(b, 100.5, "B1")
  add(c, 10.5, "C1")
  return { mover: inA[inA.length - 1]!, middle: b, front: c }
}

/** move-record sent by another user: answered 504 at once, committed on the `count`-th list-records request from now. */
const moveOnPage = (emu: EmulatorHandle, workspaceId: string, recordId: string, listId: string, count: number) =>
  Effect.promise(async () => {
    emu.faults.inject({ route: "move-record", kind: "late-commit", releaseOn: { route: "list-records", count } })
    const answer = await fetch(`${emu.restUrl}/v1/move-record`, {
      method: "POST",
      headers: { authorization: `Bearer ${emu.token}`, "content-type": "application/json" },
      body: JSON.stringify({ workspaceId, recordId, listId })
    })
    await answer.arrayBuffer()
    return answer.status
  })

// No TestClock: the client's retries and timeouts run on real time against a real server.
layer(emulatorLayer({ seed: "empty" }), { timeout: 30_000, excludeTestServices: true })("stable scan: one record moved twice", (it) => {
  it.effect("R-REST-RECORD-50 R-REST-PAGE-04: a record moved behind the reading in the first pass and again in the verification pass is found, or the scan fails; never a success without it", () =>
    Effect.gen(function*() {
      const emu = yield* emulatorWithFaultReset
      const ws = emu.workspaces[0]!
      const { mover, middle, front } = layOut(emu, ws)
      // Pages of 20 read one at a time (3 shared with the one before): the first pass reads
      // 12 windows (list-records requests 1 to 12), the verification pass starts at request 13.
      // Before request 8 (the first pass has read past the middle), the last record moves
      // into the middle; before request 15 (the verification pass has read past the front,
      // not yet the middle), it moves near the front: behind the reading both times.
      expect(yield* moveOnPage(emu, ws, mover, middle, 8)).toBe(504)
      expect(yield* moveOnPage(emu, ws, mover, front, 15)).toBe(504)
      const result = yield* Effect.result(scan(emu, ws, 1, 20))
      // Both moves happened during the scan (the alt order, newest first, does not change
      // with a move: the first pass shows no shift, and no second pass reads).
      if (emu.variant === "reference") expect(emu.faults.lateCommits.size).toBe(0)
      const listed = listedIds(emu, ws)
      expect(listed).toContain(mover)
      if (result._tag === "Success") {
        expect(result.success.ids).toContain(mover)
        expect(new Set(result.success.ids)).toEqual(new Set(listed))
        if (emu.variant === "reference") expect(result.success.report.verificationPasses).toBeGreaterThanOrEqual(2)
      } else {
        expect(result.failure._tag).toBe("ScanUnstable")
        expect(result.failure.message).toMatch(new RegExp(`^list-records \\(workspace ${ws}\\): verification budget exceeded: `))
      }
    }))
})
