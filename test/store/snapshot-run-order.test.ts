/**
 * `runRecordDetails`, on every backend: a run's record details of one workspace in list
 * order (by list id, then position, a record without a numeric position after the
 * others, then id), the order a restore plans and creates each list's records in.
 */
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import type * as Scope from "effect/Scope"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { openSnapshot, type RecordEntry, scopeOf } from "../../src/store/snapshot.ts"
import { tempDir } from "../support/effect.ts"
import { freshSchema } from "../support/postgres.ts"
import { activityOf, detailOf, summaryOf } from "./snapshot-fixtures.ts"

const BACKENDS: ReadonlyArray<{ readonly name: string; readonly location: Effect.Effect<string, never, Scope.Scope> }> = [
  { name: "sqlite", location: Effect.map(tempDir("ws-snap-order-"), (dir) => path.join(dir, "snap.sqlite")) },
  { name: "postgres", location: freshSchema }
]

const entry = (id: string, list: string, position: unknown, workspaceId = "w1"): RecordEntry => {
  const detail = detailOf(id, 0, { todoList: { id: list, title: `List ${list}` }, position })
  return { kind: "version", workspaceId, summary: summaryOf(detail), detail, activity: activityOf(id, 0) }
}

for (const backend of BACKENDS) {
  describe(`runRecordDetails on ${backend.name}`, () => {
    it.live("reads a run's records of one workspace by list, then position (numbers before the rest), then id", () =>
      Effect.scoped(Effect.gen(function*() {
        const store = yield* openSnapshot(yield* backend.location)
        const run = yield* store.beginRun(scopeOf([]), true)
        yield* store.putRecords(run, [
          entry("r1", "lb", 3),
          entry("r2", "la", 20),
          entry("r3", "lb", 1.5),
          entry("r4", "la", 5),
          entry("r5", "lb", null),
          entry("r6", "lb", 1.5),
          entry("r7", "la", 100),
          entry("r8", "la", 5, "w2")
        ])
        yield* store.completeRun(run, {})
        const ids = (yield* Stream.runCollect(store.runRecordDetails(run, "w1"))).map((d) => (JSON.parse(d) as { id: string }).id)
        // Numbers compare as numbers (100 after 20), ties by id, no position last.
        expect(ids).toEqual(["r4", "r2", "r7", "r3", "r6", "r1", "r5"])
      })))
  })
}
