/**
 * SnapshotStore.pruneRuns (src/store/snapshot.ts), which the scheduled backup's retention
 * uses: what it keeps, what it removes, and that its orphan deletes are set-based.
 */
import * as Effect from "effect/Effect"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { openSnapshot, scopeOf, type SnapshotStoreService } from "../../src/store/snapshot.ts"
import { activityOf, detailOf, fileOf, summaryOf } from "../store/snapshot-fixtures.ts"
import { tempDir } from "../support/effect.ts"
import { sqliteOf } from "../support/sqlite-store.ts"

/** A store on a fresh file, in a directory removed with the test's scope. */
const withStore = <A>(f: (store: SnapshotStoreService) => Effect.Effect<A, unknown>) =>
  Effect.flatMap(tempDir("ws-prune-"), (dir) => Effect.scoped(Effect.flatMap(openSnapshot(path.join(dir, "snap.sqlite")), f)))

const version = (id: string, v: number, activity = 0) => {
  const detail = detailOf(id, v)
  return { kind: "version" as const, workspaceId: "w1", summary: summaryOf(detail), detail, activity: activityOf(id, activity) }
}

/** One run of `scope` holding record `a` at version `v` (with activity) and file `f1` at `v`. */
const backupRun = (store: SnapshotStoreService, scope: string, v: number, end: "complete" | "failed" | "running" = "complete") =>
  Effect.gen(function*() {
    const id = yield* store.beginRun(scope, false)
    yield* store.putRecords(id, [version("a", v, 2), version("b", 0)])
    yield* store.putFiles(id, "w1", [fileOf("f1", v)])
    yield* store.putWorkspaces(id, [{ id: "w1" }])
    if (end === "complete") yield* store.completeRun(id, {})
    if (end === "failed") yield* store.failRun(id, "HTTP 500", {})
    return id
  })

const count = (store: SnapshotStoreService, sql: string) => (sqliteOf(store).prepare(sql).get() as { n: number }).n

describe("SnapshotStore.pruneRuns", () => {
  it.effect("keeps the last N complete runs per scope, drops older runs and the versions only they held, with their activity", () =>
    Effect.gen(function*() {
      const out = yield* withStore((store) =>
        Effect.gen(function*() {
          const all = scopeOf([])
          const one = scopeOf(["w1"])
          for (let v = 0; v < 4; v++) yield* backupRun(store, all, v)
          yield* backupRun(store, one, 9)
          const failedLate = yield* backupRun(store, all, 5, "failed")
          const result = yield* store.pruneRuns({ keep: 2 })
          const runs = (yield* store.listRuns).map((r) => [r.id, r.status])
          const versionsOfA = count(store, "SELECT count(*) AS n FROM records WHERE id = 'a'")
          const activity = count(store, "SELECT count(*) AS n FROM activity")
          const dangling = count(
            store,
            "SELECT count(*) AS n FROM run_records m WHERE NOT EXISTS (SELECT 1 FROM records r WHERE r.vid = m.vid)"
          )
          const orphanActivity = count(
            store,
            "SELECT count(*) AS n FROM activity a WHERE NOT EXISTS (SELECT 1 FROM records r WHERE r.vid = a.vid)"
          )
          const latest = yield* store.latestComplete
          const counts = latest === undefined ? undefined : yield* store.counts(latest.id)
          return { result, runs, versionsOfA, activity, dangling, orphanActivity, failedLate, latest, counts }
        })
      )
      // Runs 1..4 complete (scope *), 5 complete (scope w1), 6 failed (scope *, after the kept ones).
      expect(out.result.removedRuns).toEqual([1, 2])
      expect(out.result.keptComplete).toEqual([3, 4, 5])
      expect(out.runs).toEqual([[3, "complete"], [4, "complete"], [5, "complete"], [out.failedLate, "failed"]])
      // a@0 and a@1 (with their activity) and f1@0, f1@1 were only in runs 1 and 2.
      expect(out.result.removedVersions).toBe(4)
      expect(out.dangling).toBe(0)
      expect(out.orphanActivity).toBe(0)
      // a@2, a@3 (scope *), a@9 (scope w1), a@5 (the failed run after them): 2 activity items each.
      expect(out.versionsOfA).toBe(4)
      expect(out.activity).toBe(8)
      expect(out.latest?.id).toBe(out.failedLate - 1)
      expect(out.counts).toMatchObject({ records: 2, files: 1, workspaces: 1 })
    }))

  it.effect("never removes the latest complete state (keep below 1 counts as 1), running runs, or any run of a scope with no complete run", () =>
    Effect.gen(function*() {
      const out = yield* withStore((store) =>
        Effect.gen(function*() {
          yield* backupRun(store, scopeOf([]), 0)
          yield* backupRun(store, scopeOf([]), 1)
          yield* backupRun(store, scopeOf(["w2"]), 2, "failed")
          const zero = yield* store.pruneRuns({ keep: 0 })
          const afterZero = (yield* store.listRuns).map((r) => r.id)
          const nan = yield* store.pruneRuns({ keep: Number.NaN })
          const records = (sqliteOf(store).prepare("SELECT id, vid FROM run_records WHERE run_id = 2 ORDER BY id").all() as Array<{ id: string }>)
            .map((r) => r.id)
          return { zero, afterZero, nan, records }
        })
      )
      expect(out.zero.removedRuns).toEqual([1])
      expect(out.zero.keptComplete).toEqual([2])
      expect(out.afterZero).toEqual([2, 3])
      expect(out.nan).toEqual({ removedRuns: [], keptComplete: [2], removedVersions: 0 })
      expect(out.records).toEqual(["a", "b"])
    }))

  it.effect("a run still marked running is kept even when older than the kept complete runs", () =>
    Effect.gen(function*() {
      const out = yield* withStore((store) =>
        Effect.gen(function*() {
          const running = yield* store.beginRun(scopeOf([]), false)
          yield* store.putRecords(running, [version("a", 7)])
          // Written directly: beginRun would mark it failed (a killed process).
          const later = (sqliteOf(store).prepare("INSERT INTO runs (scope, started, status, full) VALUES (?, ?, 'complete', 0) RETURNING id")
            .get(scopeOf([]), new Date().toISOString()) as { id: number }).id
          const result = yield* store.pruneRuns({ keep: 1 })
          return { running, later, result, runs: (yield* store.listRuns).map((r) => r.id) }
        })
      )
      expect(out.result.removedRuns).toEqual([])
      expect(out.runs).toEqual([out.running, out.later])
    }))

  it.effect("its orphan deletes read each membership table once (no correlated scan per stored version)", () =>
    Effect.gen(function*() {
      const plans = yield* withStore((store) =>
        Effect.gen(function*() {
          yield* backupRun(store, scopeOf([]), 0)
          yield* backupRun(store, scopeOf([]), 1)
          // Every statement the prune prepares, then the plan SQLite chose for each delete.
          const statements: Array<string> = []
          const db = sqliteOf(store)
          const prepare = db.prepare.bind(db)
          db.prepare = ((sql: string) => {
            statements.push(sql)
            return prepare(sql)
          }) as typeof db.prepare
          const result = yield* store.pruneRuns({ keep: 1 })
          db.prepare = prepare as typeof db.prepare
          expect(result.removedRuns).toEqual([1])
          const orphanDeletes = statements.filter((sql) => /^\s*DELETE FROM (activity|records|files|lists|users|workspaces)\b/.test(sql))
          return orphanDeletes.map((sql) => ({
            sql,
            plan: (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all() as Array<{ detail: string }>).map((r) => r.detail).join(" | ")
          }))
        })
      )
      expect(plans).toHaveLength(6)
      for (const { plan } of plans) {
        expect(plan).toMatch(/LIST SUBQUERY/)
        expect(plan).not.toMatch(/CORRELATED/)
      }
    }))
})
