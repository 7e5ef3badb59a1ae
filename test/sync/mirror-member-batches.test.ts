/**
 * The mirror's reads of records again look up and write the snapshot together
 * (sync/mirror/member-batches.ts): the lookups asked in one turn of the event loop are one
 * `memberVersions` read, the changes one `changeMembers` transaction, by run; a batch
 * that fails fails each of its asks.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as path from "node:path"
import { openSnapshot, type RecordEntry, scopeOf, type SnapshotStoreService } from "../../src/store/snapshot.ts"
import { makeMemberBatches } from "../../src/sync/mirror/member-batches.ts"
import { tempDir } from "../support/effect.ts"
import { activityOf, detailOf, summaryOf } from "../store/snapshot-fixtures.ts"

const version = (id: string, v: number): RecordEntry => {
  const detail = detailOf(id, v)
  return { kind: "version", workspaceId: "w1", summary: summaryOf(detail), detail, activity: activityOf(id, 1) }
}

/** The store, with each `changeMembers` and `memberVersions` call's run and ids kept. */
const counted = (store: SnapshotStoreService) => {
  const calls: Array<{ runId: number; ids: Array<string> }> = []
  const lookups: Array<{ runId: number; ids: ReadonlyArray<string> }> = []
  const wrapped: SnapshotStoreService = {
    ...store,
    changeMembers: (runId, changes) => {
      calls.push({ runId, ids: changes.map((c) => c.id) })
      return store.changeMembers(runId, changes)
    },
    memberVersions: (runId, ids) => {
      lookups.push({ runId, ids })
      return store.memberVersions(runId, ids)
    }
  }
  return { store: wrapped, calls, lookups }
}

describe("the mirror's lookups and changes of records, batched", () => {
  it.live("the lookups of one turn are one read, by run; each gets its record's version", () =>
    Effect.gen(function*() {
      const snapshot = yield* openSnapshot(path.join(yield* tempDir("ws-member-batches-"), "snap.sqlite"))
      const run = yield* snapshot.beginRun(scopeOf([]), true)
      const other = yield* snapshot.beginRun(scopeOf(["w2"]), true)
      yield* snapshot.putRecords(run, [version("a", 0), version("b", 0)])
      yield* snapshot.putRecords(other, [version("a", 1)])
      const { lookups, store } = counted(snapshot)
      const members = makeMemberBatches(store)

      const found = yield* Effect.all([
        members.version(run, "a"),
        members.version(run, "zz"),
        members.version(other, "a"),
        members.version(run, "b"),
        members.version(run, "a")
      ], { concurrency: "unbounded" })
      expect(lookups).toEqual([{ runId: run, ids: ["a", "zz", "b"] }, { runId: other, ids: ["a"] }])
      expect(found).toEqual([
        yield* snapshot.memberVersion(run, "a"),
        undefined,
        yield* snapshot.memberVersion(other, "a"),
        yield* snapshot.memberVersion(run, "b"),
        yield* snapshot.memberVersion(run, "a")
      ])
      expect(found[0]?.vid).not.toBe(found[2]?.vid)
    }).pipe(Effect.scoped))

  it.live("the changes of one turn are one commit, by run; a failed batch fails each of its changes", () =>
    Effect.gen(function*() {
      const snapshot = yield* openSnapshot(path.join(yield* tempDir("ws-member-batches-"), "snap.sqlite"))
      const run = yield* snapshot.beginRun(scopeOf([]), true)
      const other = yield* snapshot.beginRun(scopeOf(["w2"]), true)
      yield* snapshot.putRecords(run, [version("a", 0), version("b", 0), version("c", 0)])
      const { calls, store } = counted(snapshot)
      const { change } = makeMemberBatches(store)

      yield* Effect.all([
        change(run, { id: "a", change: () => version("a", 1) }),
        change(run, { id: "b", change: () => "remove" }),
        change(other, { id: "c", change: () => version("c", 1) }),
        change(run, { id: "c", change: () => undefined })
      ], { concurrency: "unbounded" })
      expect(calls).toEqual([{ runId: run, ids: ["a", "b", "c"] }, { runId: other, ids: ["c"] }])
      expect(JSON.parse((yield* snapshot.memberDetail(run, "a"))!)).toMatchObject({ title: "Record a v1" })
      expect(yield* snapshot.memberVersion(run, "b")).toBeUndefined()
      expect(JSON.parse((yield* snapshot.memberDetail(other, "c"))!)).toMatchObject({ title: "Record c v1" })

      // One change that throws: every change of its batch fails, none is written.
      calls.length = 0
      const outcomes = yield* Effect.all([
        Effect.result(change(run, { id: "a", change: () => version("a", 2) })),
        Effect.result(change(run, {
          id: "c",
          change: () => {
            throw new Error("no")
          }
        }))
      ], { concurrency: "unbounded" })
      expect(calls).toEqual([{ runId: run, ids: ["a", "c"] }])
      expect(outcomes.map((o) => o._tag)).toEqual(["Failure", "Failure"])
      expect(JSON.parse((yield* snapshot.memberDetail(run, "a"))!)).toMatchObject({ title: "Record a v1" })

      // Asked one after the other: a commit each.
      calls.length = 0
      yield* change(run, { id: "a", change: () => version("a", 3) })
      yield* change(run, { id: "c", change: () => version("c", 3) })
      expect(calls).toEqual([{ runId: run, ids: ["a"] }, { runId: run, ids: ["c"] }])
    }).pipe(Effect.scoped))
})
