/**
 * The named reads a migration makes of its source run (store/snapshot-reads.ts:
 * recordIdsAmong, workspaceRecordIds, activityOfRecords, recordsGoneBy, workspaceCounts),
 * checked the same way on a SQLite file and on a PostgreSQL schema: each is written once
 * for both, so a column name or a placeholder one backend reads otherwise shows here.
 */
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { openSnapshot, type RecordEntry, scopeOf, type SnapshotStoreService } from "../../src/store/snapshot.ts"
import { tempDir } from "../support/effect.ts"
import { freshSchema } from "../support/postgres.ts"
import { activityOf, detailOf, fileOf, summaryOf } from "./snapshot-fixtures.ts"

const BACKENDS: ReadonlyArray<{ readonly name: string; readonly location: Effect.Effect<string, never, Scope.Scope> }> = [
  { name: "sqlite", location: Effect.map(tempDir("ws-snap-"), (dir) => path.join(dir, "snap.sqlite")) },
  { name: "postgres", location: freshSchema }
]

const version = (id: string, workspaceId: string, activity = 0, v = 0): RecordEntry => {
  const detail = detailOf(id, v)
  return { kind: "version", workspaceId, summary: summaryOf(detail), detail, activity: activityOf(id, activity) }
}

/** A complete run of workspaces w1 and w2 holding `entries`, and `files` of w1. */
const completeRun = (store: SnapshotStoreService, entries: ReadonlyArray<RecordEntry>, files: ReadonlyArray<{ id: string }> = []) =>
  Effect.gen(function*() {
    const run = yield* store.beginRun(scopeOf([]), true)
    yield* store.putWorkspaces(run, [{ id: "w1" }, { id: "w2" }])
    yield* store.putRecords(run, entries)
    yield* store.putFiles(run, "w1", files)
    yield* store.completeRun(run, { records: entries.length })
    return run
  })

for (const backend of BACKENDS) {
  describe(`a migration's reads of its source run, on ${backend.name}`, () => {
    it.live("the workspace's record ids, the ids among a text's tokens, their comments, the counts, and the records gone since", () =>
      Effect.gen(function*() {
        const store = yield* openSnapshot(yield* backend.location)
        const first = yield* completeRun(store, [version("r2", "w1"), version("r1", "w1", 3), version("r3", "w2", 1)], [fileOf("f1")])
        // r2 changed: a second stored version of it.
        yield* completeRun(store, [version("r2", "w1", 0, 1), version("r1", "w1", 3), version("r3", "w2", 1)])
        const second = yield* completeRun(store, [version("r1", "w1", 3), version("r3", "w2", 1)])

        expect([...yield* Stream.runCollect(store.workspaceRecordIds(first, "w1"))]).toEqual(["r1", "r2"])
        expect([...yield* Stream.runCollect(store.workspaceRecordIds(second, "w1"))]).toEqual(["r1"])

        // More ids than one read asks for: the run's own among them, another workspace's not.
        const tokens = [...Array.from({ length: 1200 }, (_, i) => `x${i}`), "r2", "r3", "r1", "r1"]
        expect((yield* store.recordIdsAmong(first, "w1", tokens)).sort()).toEqual(["r1", "r2"])
        expect(yield* store.recordIdsAmong(first, "w1", [])).toEqual([])

        const activity = yield* store.activityOfRecords(first, "w1", ["r1", "r2", "r3"])
        expect(activity.map((a) => a.recordId)).toEqual(["r1", "r1", "r1"])
        expect(activity.map((a) => (JSON.parse(a.item) as { id: string }).id).sort()).toEqual(["r1-a0", "r1-a1", "r1-a2"])

        expect(yield* store.workspaceCounts(first, "w1")).toEqual({ records: 2, files: 1 })
        expect(yield* store.workspaceCounts(second, "w1")).toEqual({ records: 1, files: 0 })
        expect(yield* store.workspaceCounts(first, "w9")).toEqual({ records: 0, files: 0 })

        // r2, stored in two versions, is gone once, and from w1 only.
        expect([...yield* Stream.runCollect(store.recordsGoneBy(second, "w1"))]).toEqual(["r2"])
        expect([...yield* Stream.runCollect(store.recordsGoneBy(second, "w2"))]).toEqual([])
        expect([...yield* Stream.runCollect(store.recordsGoneBy(first, "w1"))]).toEqual([])
      }).pipe(Effect.scoped))
  })
}
