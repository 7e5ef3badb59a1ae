/**
 * `prune` (src/sync/prune.ts) on real SQLite files and a real files directory: what it
 * forgets and removes, what it never touches, that a crash after its transaction leaves
 * only unreferenced objects for the next prune, and that its orphan deletes are set-based.
 * The retention rules themselves are retention.test.ts's.
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { type ObjectStoreApi, openObjectStore } from "../../src/store/object-store.ts"
import { openSnapshot, scopeOf, SnapshotStore, type SnapshotStoreService } from "../../src/store/snapshot.ts"
import { prune, type PruneOptions } from "../../src/sync/prune.ts"
import { activityOf, detailOf, fileOf, summaryOf } from "../store/snapshot-fixtures.ts"
import { tempDir } from "../support/effect.ts"
import { sqliteOf } from "../support/sqlite-store.ts"

interface Fixture {
  readonly store: SnapshotStoreService
  readonly objects: ObjectStoreApi
  readonly dir: string
}

/** A store on a fresh file and a files directory, in a directory removed with the test's scope. */
const withFixture = <A>(f: (fx: Fixture) => Effect.Effect<A, unknown, SnapshotStore>) =>
  Effect.flatMap(tempDir("ws-prune-"), (dir) =>
    Effect.scoped(Effect.gen(function*() {
      const store = yield* openSnapshot(path.join(dir, "snap.sqlite"))
      const objects = yield* openObjectStore(path.join(dir, "files"))
      return yield* f({ store, objects, dir }).pipe(Effect.provide(Layer.succeed(SnapshotStore, store)))
    })))

const run = (options: PruneOptions) => prune(options)

const version = (id: string, v: number, activity = 0) => {
  const detail = detailOf(id, v)
  return { kind: "version" as const, workspaceId: "w1", summary: summaryOf(detail), detail, activity: activityOf(id, activity) }
}

/** One run of `scope` holding record `a` at version `v` (with activity), `b`, and file `f1` at `v` with its bytes. */
const backupRun = (fx: Fixture, scope: string, v: number, end: "complete" | "failed" | "running" = "complete") =>
  Effect.gen(function*() {
    const { store, objects } = fx
    const id = yield* store.beginRun(scope, false)
    yield* store.putRecords(id, [version("a", v, 2), version("b", 0)])
    yield* store.putFiles(id, "w1", [fileOf("f1", v)])
    yield* store.putWorkspaces(id, [{ id: "w1" }])
    const bytes = yield* objects.put(Stream.make(Buffer.from(`bytes of f1 at ${v}`)))
    yield* store.putFileObjects(id, [{ fileId: "f1", sha256: bytes.sha256, size: bytes.size }])
    if (end === "complete") yield* store.completeRun(id, {})
    if (end === "failed") yield* store.failRun(id, "HTTP 500", {})
    return { id, sha256: bytes.sha256 }
  })

/** Started times written directly: runs made in one test start within a second. */
const setStarted = (store: SnapshotStoreService, id: number, iso: string) =>
  sqliteOf(store).prepare("UPDATE runs SET started = ? WHERE id = ?").run(iso, id)

const count = (store: SnapshotStoreService, sql: string) => (sqliteOf(store).prepare(sql).get() as { n: number }).n

describe("prune", () => {
  it.effect("forgets the runs no rule keeps, with the versions, activity, file rows and objects only they held; failed runs stay", () =>
    withFixture((fx) =>
      Effect.gen(function*() {
        const { store, objects } = fx
        const all = scopeOf([])
        const made = []
        for (let v = 0; v < 4; v++) made.push(yield* backupRun(fx, all, v))
        const other = yield* backupRun(fx, scopeOf(["w1"]), 9)
        const failedEarly = yield* backupRun(fx, all, 7, "failed")
        made.forEach((m, i) => setStarted(store, m.id, `2024-05-0${i + 1}T10:00:00.000Z`))
        setStarted(store, failedEarly.id, "2024-04-01T10:00:00.000Z")
        const report = yield* run({ policy: { keepLast: 2 }, files: objects })
        expect(report.runs.map((r) => [r.runId, r.keep])).toEqual([[1, false], [2, false], [3, true], [4, true], [5, true], [6, true]])
        expect(report.runs.find((r) => r.runId === failedEarly.id)!.reasons).toEqual(["failed run, left alone"])
        expect(report).toMatchObject({ forgotten: 2, kept: 4, dryRun: false })
        expect((yield* store.listRuns).map((r) => r.id)).toEqual([3, 4, 5, 6])
        // a@0, a@1 and f1@0, f1@1 were only in runs 1 and 2.
        expect(report.removedVersions).toBe(4)
        expect(count(store, "SELECT count(*) AS n FROM records WHERE id = 'a'")).toBe(4)
        expect(count(store, "SELECT count(*) AS n FROM activity")).toBe(8)
        expect(count(store, "SELECT count(*) AS n FROM run_records m WHERE NOT EXISTS (SELECT 1 FROM records r WHERE r.vid = m.vid)")).toBe(0)
        // The objects of runs 1 and 2 are gone from DIR and from file_objects; the others stay.
        expect(report.removedObjects).toBe(2)
        const left = (yield* objects.list).map((o) => o.sha256).sort()
        expect(left).toEqual([made[2]!.sha256, made[3]!.sha256, other.sha256, failedEarly.sha256].sort())
        expect(count(store, "SELECT count(*) AS n FROM file_objects")).toBe(4)
        expect(report.bytesAfter).toBeLessThan(report.bytesBefore)
      })))

  it.effect("a dry run lists the decision and changes nothing; an empty policy is refused", () =>
    withFixture((fx) =>
      Effect.gen(function*() {
        const { store, objects, dir } = fx
        for (let v = 0; v < 3; v++) yield* backupRun(fx, scopeOf([]), v)
        const file = path.join(dir, "snap.sqlite")
        const before = fs.readFileSync(file)
        const report = yield* run({ policy: { keepLast: 1 }, files: objects, dryRun: true })
        expect(report.runs.map((r) => r.keep)).toEqual([false, false, true])
        expect(report).toMatchObject({ forgotten: 2, kept: 1, dryRun: true, removedObjects: 0, removedVersions: 0 })
        expect(report.bytesAfter).toBe(report.bytesBefore)
        expect((yield* store.listRuns)).toHaveLength(3)
        expect(yield* objects.list).toHaveLength(3)
        expect(fs.readFileSync(file).equals(before)).toBe(true)
        const empty = yield* Effect.flip(run({ policy: { keepLast: 0 } }))
        expect(empty._tag).toBe("EmptyPolicy")
      })))

  it.effect("a run still marked running is left alone even when older than every kept run", () =>
    withFixture((fx) =>
      Effect.gen(function*() {
        const { store } = fx
        const running = yield* store.beginRun(scopeOf([]), false)
        yield* store.putRecords(running, [version("a", 7)])
        // Written directly: beginRun would mark it failed (a killed process).
        const later = (sqliteOf(store).prepare("INSERT INTO runs (scope, started, status, full) VALUES (?, ?, 'complete', 0) RETURNING id")
          .get(scopeOf([]), new Date().toISOString()) as { id: number }).id
        const report = yield* run({ policy: { keepLast: 1 } })
        expect(report.forgotten).toBe(0)
        expect((yield* store.listRuns).map((r) => r.id)).toEqual([running, later])
        expect(count(store, "SELECT count(*) AS n FROM run_records")).toBe(1)
      })))

  it.effect("killed after its transaction (objects not yet removed): nothing kept is lost, and the next prune removes the leftovers", () =>
    withFixture((fx) =>
      Effect.gen(function*() {
        const { store, objects } = fx
        const made = []
        for (let v = 0; v < 3; v++) made.push(yield* backupRun(fx, scopeOf([]), v))
        // A killed backup's object: stored, never recorded by a run.
        const stray = yield* objects.put(Stream.make(Buffer.from("a killed backup stored this")))
        fs.writeFileSync(path.join(objects.dir, "tmp", "cut-short.part"), "half")
        // The transaction of a prune that then died before touching DIR.
        yield* store.forgetRuns([made[0]!.id, made[1]!.id])
        expect(yield* objects.list).toHaveLength(4)
        const report = yield* run({ policy: { keepLast: 1 }, files: objects })
        expect(report.forgotten).toBe(0)
        expect(report.removedObjects).toBe(3)
        expect((yield* objects.list).map((o) => o.sha256)).toEqual([made[2]!.sha256])
        expect(yield* objects.has(stray.sha256)).toBe(false)
        expect(fs.readdirSync(path.join(objects.dir, "tmp"))).toEqual([])
        const kept = yield* Stream.runCollect(objects.open(made[2]!.sha256))
        expect(Buffer.concat([...kept]).toString()).toBe("bytes of f1 at 2")
      })))

  it.effect("its orphan deletes read each membership table once (no correlated scan per stored version)", () =>
    withFixture((fx) =>
      Effect.gen(function*() {
        const { store } = fx
        yield* backupRun(fx, scopeOf([]), 0)
        yield* backupRun(fx, scopeOf([]), 1)
        // Every statement the prune prepares, then the plan SQLite chose for each delete.
        const statements: Array<string> = []
        const db = sqliteOf(store)
        const prepare = db.prepare.bind(db)
        db.prepare = ((sql: string) => {
          statements.push(sql)
          return prepare(sql)
        }) as typeof db.prepare
        const report = yield* run({ policy: { keepLast: 1 } })
        db.prepare = prepare as typeof db.prepare
        expect(report.forgotten).toBe(1)
        const orphanDeletes = statements.filter((sql) => /^\s*DELETE FROM (activity|records|files|lists|users|workspaces|file_objects)\b/.test(sql))
        const plans = orphanDeletes.map((sql) =>
          (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all() as Array<{ detail: string }>).map((r) => r.detail).join(" | ")
        )
        expect(plans).toHaveLength(7)
        for (const plan of plans) {
          expect(plan).toMatch(/LIST SUBQUERY/)
          expect(plan).not.toMatch(/CORRELATED/)
        }
      })))
})
