import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import * as path from "node:path"
import { changesBetween, changeStream } from "../../src/sync/changes.ts"
import { SnapshotStore } from "../../src/store/snapshot.ts"
import { diffCounts, diffRuns, selectRuns } from "../../src/sync/diff.ts"
import { openSnapshot, type RecordEntry, type SnapshotStoreService } from "../../src/store/snapshot.ts"
import { detailOf, fileOf, summaryOf } from "../store/snapshot-fixtures.ts"
import { tempDir } from "../support/effect.ts"

const tempFile = Effect.map(tempDir("ws-diff-"), (dir) => path.join(dir, "snap.sqlite"))
/** Opens the snapshot for `f` alone: closed again before the test reads it another way. */
const withStore = <A>(file: string, f: (store: SnapshotStoreService) => Effect.Effect<A, unknown>) =>
  Effect.scoped(Effect.flatMap(openSnapshot(file), f))

const entry = (id: string, v: number): RecordEntry => {
  const detail = detailOf(id, v)
  return { kind: "version", workspaceId: "w1", summary: summaryOf(detail), detail, activity: [] }
}

/** Writes one complete run holding `records` (id -> version) and `files` (id -> version). */
const writeRun = (store: SnapshotStoreService, records: Record<string, number>, files: Record<string, number>, status: "complete" | "failed" = "complete") =>
  Effect.gen(function*() {
    const run = yield* store.beginRun("*", false)
    yield* store.putRecords(run, Object.entries(records).map(([id, v]) => entry(id, v)))
    yield* store.putFiles(run, "w1", Object.entries(files).map(([id, v]) => fileOf(id, v)))
    if (status === "complete") yield* store.completeRun(run, {})
    else yield* store.failRun(run, "boom", null)
    return run
  })

describe("diff between runs", () => {
  it.effect("reports exactly the created, updated and deleted ids, sorted", () =>
    Effect.gen(function*() {
      const file = yield* tempFile
      const out = yield* withStore(file, (store) =>
        Effect.gen(function*() {
          const r1 = yield* writeRun(store, { a: 0, b: 0, c: 0, d: 0 }, { f1: 0, f2: 0 })
          // b updated, c deleted, e and 0 created, a and d unchanged; f1 updated, f2 deleted, f3 created
          const r2 = yield* writeRun(store, { a: 0, b: 1, d: 0, e: 0, "0": 0 }, { f1: 1, f3: 0 })
          return { r1, r2, diff: yield* diffRuns(store, r1, r2), counts: yield* diffCounts(store, "records", r1, r2) }
        })
      )
      expect(out.diff).toEqual({
        records: { created: ["0", "e"], updated: ["b"], deleted: ["c"] },
        files: { created: ["f3"], updated: ["f1"], deleted: ["f2"] }
      })
      expect(out.counts).toEqual({ created: 2, updated: 1, deleted: 1 })
    }))

  it.effect("defaults: to is the latest complete run, from the complete run of the same scope before it; failed runs are skipped", () =>
    Effect.gen(function*() {
      const file = yield* tempFile
      const out = yield* withStore(file, (store) =>
        Effect.gen(function*() {
          const r1 = yield* writeRun(store, { a: 0, b: 0 }, {})
          // An interrupted run that saw only `a`: it must not make `b` look deleted.
          yield* writeRun(store, { a: 1 }, {}, "failed")
          const r3 = yield* writeRun(store, { a: 1, b: 0 }, {})
          const sel = yield* selectRuns(store, {})
          return { r1, r3, sel, diff: yield* diffRuns(store, sel!.from?.id, sel!.to.id) }
        })
      )
      expect(out.sel!.from!.id).toBe(out.r1)
      expect(out.sel!.to.id).toBe(out.r3)
      expect(out.diff.records).toEqual({ created: [], updated: ["a"], deleted: [] })
      // The library's change stream uses the same defaults.
      const changes = yield* Effect.provide(Stream.runCollect(changesBetween()), Layer.fresh(SnapshotStore.layer(file)))
      expect(changes.map((c) => [c.entity, c.kind, c.id])).toEqual([["record", "updated", "a"]])
    }))

  it.effect("without an earlier run everything in the run is created", () =>
    Effect.gen(function*() {
      const file = yield* tempFile
      const diff = yield* withStore(file, (store) =>
        Effect.gen(function*() {
          const r1 = yield* writeRun(store, { b: 0, a: 0 }, { f: 0 })
          return yield* diffRuns(store, undefined, r1)
        })
      )
      expect(diff.records.created).toEqual(["a", "b"])
      expect(diff.files.created).toEqual(["f"])
    }))

  it.effect("the change stream carries each change with its content before and after, across page boundaries", () =>
    Effect.gen(function*() {
      const file = yield* tempFile
      const n = 2500
      const out = yield* withStore(file, (store) =>
        Effect.gen(function*() {
          const before: Record<string, number> = {}
          const after: Record<string, number> = {}
          for (let i = 0; i < n; i++) {
            const id = `r${String(i).padStart(5, "0")}`
            if (i % 10 !== 0) before[id] = 0 // every 10th is created
            if (i % 7 !== 0) after[id] = i % 3 === 0 ? 1 : 0 // every 7th deleted, every 3rd updated
          }
          const r1 = yield* writeRun(store, before, {})
          const r2 = yield* writeRun(store, after, {})
          const changes = yield* Stream.runCollect(changeStream(store, "records", r1, r2))
          return { changes, diff: yield* diffRuns(store, r1, r2) }
        })
      )
      const ids = (kind: string) => out.changes.filter((c) => c.kind === kind).map((c) => c.id).sort()
      expect(ids("created")).toEqual(out.diff.records.created)
      expect(ids("updated")).toEqual(out.diff.records.updated)
      expect(ids("deleted")).toEqual(out.diff.records.deleted)
      expect(out.changes.map((c) => c.id)).toEqual([...out.changes.map((c) => c.id)].sort())
      const updated = out.changes.find((c) => c.kind === "updated")!
      expect(updated.before!.title).toMatch(/v0$/)
      expect(updated.after!.title).toMatch(/v1$/)
      expect(updated.after!.workspaceId).toBe("w1")
      const deleted = out.changes.find((c) => c.kind === "deleted")!
      expect(deleted.after).toBeNull()
      expect(deleted.before!.id).toBe(deleted.id)
    }))
})
