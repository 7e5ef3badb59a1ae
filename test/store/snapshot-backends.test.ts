/**
 * One suite, every backend: the snapshot store's contract (SnapshotStoreService) checked
 * the same way on a SQLite file and on a PostgreSQL schema, as one test suite runs over
 * every storage backend. Backend-specific checks (pragmas, query plans, file modes) stay
 * in snapshot.test.ts; everything here reads through the service alone. The tests run on
 * the real clock: a second writer waits for the lock in real time.
 */
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import type * as Scope from "effect/Scope"
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { exportRun } from "../../src/connectors/export.ts"
import { changeStream } from "../../src/sync/changes.ts"
import { diffCounts, diffIds } from "../../src/sync/diff.ts"
import { openSnapshot, type RecordEntry, scopeOf, type SnapshotStoreService } from "../../src/store/snapshot.ts"
import { tempDir } from "../support/effect.ts"
import { freshSchema } from "../support/postgres.ts"
import { activityOf, detailOf, fileOf, summaryOf } from "./snapshot-fixtures.ts"

interface Backend {
  readonly name: string
  /** A new, empty store location for one test, removed with the test's scope. */
  readonly location: Effect.Effect<string, never, Scope.Scope>
}

const BACKENDS: ReadonlyArray<Backend> = [
  { name: "sqlite", location: Effect.map(tempDir("ws-snap-"), (dir) => path.join(dir, "snap.sqlite")) },
  { name: "postgres", location: freshSchema }
]

const version = (id: string, v: number, activity = 0, workspaceId = "w1"): RecordEntry => {
  const detail = detailOf(id, v)
  return { kind: "version", workspaceId, summary: summaryOf(detail), detail, activity: activityOf(id, activity) }
}

/** A complete run holding `entries` (and workspace w1). */
const completeRun = (store: SnapshotStoreService, entries: ReadonlyArray<RecordEntry>, files: ReadonlyArray<{ id: string }> = []) =>
  Effect.gen(function*() {
    const run = yield* store.beginRun(scopeOf([]), true)
    yield* store.putWorkspaces(run, [{ id: "w1" }])
    yield* store.putRecords(run, entries)
    yield* store.putFiles(run, "w1", files)
    yield* store.completeRun(run, { records: entries.length })
    return run
  })

const ids = (store: SnapshotStoreService, sql: string, params: ReadonlyArray<number | string> = []) =>
  Effect.map(store.select<{ id: string }>("test read", { sql, params }), (rows) => rows.map((r) => r.id))

for (const backend of BACKENDS) {
  describe(`snapshot store on ${backend.name}`, () => {
    const open = (options: { readonly mustExist?: boolean } = {}) =>
      Effect.flatMap(backend.location, (location) => Effect.map(openSnapshot(location, options), (store) => ({ store, location })))

    it.live("refuses to create a store for a reader (mustExist)", () =>
      Effect.gen(function*() {
        const location = yield* backend.location
        const error = yield* Effect.flip(openSnapshot(location, { mustExist: true }))
        expect(error._tag).toBe("StoreOpenError")
        expect(error.reason).toBe("not-found")
      }))

    it.live("runs: a killed run is marked failed by the next; complete and failed are final", () =>
      Effect.gen(function*() {
        const { store } = yield* open()
        const first = yield* store.beginRun("*", true)
        const second = yield* store.beginRun("*", false)
        expect((yield* store.getRun(first))?.status).toBe("failed")
        yield* store.completeRun(second, { n: 1 })
        const row = yield* store.getRun(second)
        expect(row).toMatchObject({ id: second, scope: "*", status: "complete", full: false, stats: { n: 1 } })
        expect(typeof row?.id).toBe("number")
        const third = yield* store.beginRun("*", true)
        yield* store.failRun(third, "boom", null)
        const refused = yield* Effect.flip(store.completeRun(third, {}))
        expect(refused.message).toContain("no longer running")
        expect((yield* store.latestComplete)?.id).toBe(second)
        expect((yield* store.previousComplete("*", third + 1))?.id).toBe(second)
        expect((yield* store.previousComplete("*", second))).toBeUndefined()
        expect((yield* store.listRuns).map((r) => r.status)).toEqual(["failed", "complete", "failed"])
      }))

    it.live("keeps one version per distinct content; keep entries reuse it", () =>
      Effect.gen(function*() {
        const { store } = yield* open()
        const r1 = yield* completeRun(store, [version("a", 0, 3), version("b", 0)])
        const a1 = yield* store.latestRecordVersion("a")
        expect(a1).toMatchObject({ updatedAt: detailOf("a", 0).updatedAt, commentCount: 0 })
        const r2 = yield* completeRun(store, [{ kind: "keep", id: "a", vid: a1!.vid }, version("b", 1)])
        const r3 = yield* completeRun(store, [version("a", 0, 3), version("b", 1)])
        expect((yield* store.latestRecordVersion("a"))?.vid).toBe(a1!.vid)
        expect(yield* store.memberVersion(r3, "a")).toEqual({ vid: a1!.vid, workspaceId: "w1", updatedAt: detailOf("a", 0).updatedAt })
        expect(yield* store.counts(r1)).toEqual({ workspaces: 1, records: 2, activities: 3, files: 0 })
        expect(yield* store.counts(r2)).toEqual({ workspaces: 1, records: 2, activities: 3, files: 0 })
        const versions = yield* store.select<{ id: string; n: number }>("count versions", {
          sql: "SELECT id, count(*) AS n FROM records GROUP BY id ORDER BY id"
        })
        expect(versions).toEqual([{ id: "a", n: 1 }, { id: "b", n: 2 }])
      }))

    it.live("a query's `?` inside a string literal, a quoted name or a comment is text; the others are its parameters", () =>
      Effect.gen(function*() {
        const { store } = yield* open()
        yield* completeRun(store, [version("a", 0), version("b", 0)])
        const rows = yield* store.select<{ id: string; q: string; "why?": string }>("read with question marks", {
          sql: `SELECT id, 'why?' AS q, 'it''s ?' AS "why?" FROM records -- any record?
                WHERE id = ? /* one id? */ AND id <> ? ORDER BY id`,
          params: ["a", "b"]
        })
        expect(rows).toEqual([{ id: "a", q: "why?", "why?": "it's ?" }])
      }))

    it.live("carries a version's activity over when asked to reuse it", () =>
      Effect.gen(function*() {
        const { store } = yield* open()
        yield* completeRun(store, [version("a", 0, 4)])
        const before = yield* store.latestRecordVersion("a")
        const detail = detailOf("a", 1)
        const run = yield* completeRun(store, [{
          kind: "version",
          workspaceId: "w1",
          summary: summaryOf(detail),
          detail,
          activity: { reuseFrom: before!.vid }
        }])
        expect((yield* store.counts(run)).activities).toBe(4)
        const items = yield* store.select<{ item: string }>("read activity", {
          sql: "SELECT a.item AS item FROM run_records rr JOIN activity a ON a.vid = rr.vid WHERE rr.run_id = ? ORDER BY a.seq",
          params: [run]
        })
        expect(items.map((r) => (JSON.parse(r.item) as { id: string }).id)).toEqual(["a-a0", "a-a1", "a-a2", "a-a3"])
      }))

    it.live("a batch ends as its entries written one at a time: repeated ids, repeated versions, shared activity", () =>
      Effect.gen(function*() {
        const { store } = yield* open()
        yield* completeRun(store, [version("a", 0, 2), version("b", 0, 3), version("f", 0)])
        const a0 = (yield* store.latestRecordVersion("a"))!
        const b0 = (yield* store.latestRecordVersion("b"))!
        const f0 = (yield* store.latestRecordVersion("f"))!
        const reuseB = (v: number): RecordEntry => {
          const detail = detailOf("b", v)
          return { kind: "version", workspaceId: "w1", summary: summaryOf(detail), detail, activity: { reuseFrom: b0.vid } }
        }
        // a's stored content again, its summary changed outside the content hash.
        const a0Detail = detailOf("a", 0)
        const aAgain: RecordEntry = {
          kind: "version",
          workspaceId: "w1",
          summary: { ...summaryOf(a0Detail), updatedAt: "2026-05-05T00:00:00.000Z" },
          detail: a0Detail,
          activity: activityOf("a", 2)
        }
        const run = yield* completeRun(store, [
          version("a", 1, 1),
          aAgain,
          { kind: "keep", id: "b", vid: b0.vid },
          reuseB(1),
          reuseB(2),
          reuseB(1),
          version("c", 0, 2),
          version("c", 0, 2),
          version("f", 1),
          { kind: "keep", id: "f", vid: f0.vid }
        ])
        const versions = yield* store.select<{ id: string; vid: number; activity_count: number }>("read versions", {
          sql: "SELECT id, vid, activity_count FROM records ORDER BY id, vid"
        })
        expect(versions.map((v) => [v.id, v.activity_count])).toEqual([
          ["a", 2], ["a", 1], ["b", 3], ["b", 3], ["b", 3], ["c", 2], ["f", 0], ["f", 0]
        ])
        const b1 = versions.filter((v) => v.id === "b")[1]!.vid
        expect(yield* store.memberVersion(run, "a")).toEqual({ vid: a0.vid, workspaceId: "w1", updatedAt: "2026-05-05T00:00:00.000Z" })
        expect((yield* store.memberVersion(run, "b"))?.vid).toBe(b1)
        expect((yield* store.memberVersion(run, "f"))?.vid).toBe(f0.vid)
        // Several at once, as the mirror looks up a batch: the same versions, an id not held absent.
        const several = yield* store.memberVersions(run, ["f", "a", "zz", "b"])
        expect([...several.keys()].sort()).toEqual(["a", "b", "f"])
        expect(several.get("a")).toEqual(yield* store.memberVersion(run, "a"))
        expect(several.get("b")).toEqual(yield* store.memberVersion(run, "b"))
        expect(several.get("f")).toEqual(yield* store.memberVersion(run, "f"))
        expect((yield* store.memberVersions(run, [])).size).toBe(0)
        expect(yield* store.counts(run)).toEqual({ workspaces: 1, records: 4, activities: 7, files: 0 })
        const activity = yield* store.select<{ vid: number; id: string }>("read activity", {
          sql: "SELECT vid, id FROM activity ORDER BY vid, seq"
        })
        expect(activity.length).toBe(2 + 3 + 1 + 3 + 3 + 2)
        expect(activity.filter((r) => r.vid === b1).map((r) => r.id)).toEqual(["b-a0", "b-a1", "b-a2"])
      }))

    it.live("diffs two runs set-based, the same ids and counts on every backend", () =>
      Effect.gen(function*() {
        const { store } = yield* open()
        const r1 = yield* completeRun(store, [version("a", 0), version("b", 0), version("c", 0)], [fileOf("f1"), fileOf("f2")])
        const r2 = yield* completeRun(store, [version("a", 0), version("b", 1), version("d", 0)], [fileOf("f1", 1), fileOf("f3")])
        expect(yield* diffIds(store, "records", r1, r2)).toEqual({ created: ["d"], updated: ["b"], deleted: ["c"] })
        expect(yield* diffIds(store, "files", r1, r2)).toEqual({ created: ["f3"], updated: ["f1"], deleted: ["f2"] })
        expect(yield* diffCounts(store, "records", r1, r2)).toEqual({ created: 1, updated: 1, deleted: 1 })
        expect(yield* diffCounts(store, "records", 0, r2)).toEqual({ created: 3, updated: 0, deleted: 0 })
        const changes = yield* Stream.runCollect(changeStream(store, "records", r1, r2))
        expect([...changes].map((c) => [c.id, c.kind, c.workspaceId])).toEqual([
          ["b", "updated", "w1"],
          ["c", "deleted", "w1"],
          ["d", "created", "w1"]
        ])
        const b = [...changes][0]!
        expect(b.before?.title).toBe("Record b v0")
        expect(b.after?.title).toBe("Record b v1")
      }))

    it.live("orders ids as bytes, as SQLite does (upper case before lower case)", () =>
      Effect.gen(function*() {
        const { store } = yield* open()
        const run = yield* completeRun(store, ["b", "B", "a", "Z", "_", "0"].map((id) => version(id, 0)))
        const expected = ["0", "B", "Z", "_", "a", "b"]
        expect(yield* ids(store, "SELECT id FROM run_records WHERE run_id = ? ORDER BY id", [run])).toEqual(expected)
        expect((yield* diffIds(store, "records", 0, run)).created).toEqual(expected)
        const paged = yield* ids(store, "SELECT id FROM run_records WHERE run_id = ? AND id > ? ORDER BY id", [run, "Z"])
        expect(paged).toEqual(["_", "a", "b"])
      }))

    it.live("membership: copy, remove members, drop a run", () =>
      Effect.gen(function*() {
        const { store } = yield* open()
        const r1 = yield* completeRun(store, [version("a", 0), version("b", 0), version("c", 0)], [fileOf("f1")])
        const r2 = yield* store.beginRun("*", false)
        yield* store.copyMembership(r1, r2)
        expect(yield* store.counts(r2)).toEqual(yield* store.counts(r1))
        expect(yield* store.removeMembers("records", r2, ["a", "c", "missing"])).toBe(2)
        expect(yield* store.removeMembers("records", r2, [])).toBe(0)
        expect(yield* ids(store, "SELECT id FROM run_records WHERE run_id = ? ORDER BY id", [r2])).toEqual(["b"])
        expect(yield* store.memberVersion(r2, "a")).toBeUndefined()
        yield* store.dropRun(r2)
        expect(yield* store.getRun(r2)).toBeUndefined()
        expect((yield* store.counts(r2)).records).toBe(0)
        expect((yield* store.counts(r1)).records).toBe(3)
      }))

    it.live("notes keep their order and their detail", () =>
      Effect.gen(function*() {
        const { store } = yield* open()
        const run = yield* store.beginRun("*", true)
        yield* store.note(run, { workspaceId: "w1", kind: "skipped", subject: "r1", detail: { why: "gone" } })
        yield* store.note(run, { workspaceId: null, kind: "cap" })
        expect(yield* store.notes(run)).toEqual([
          { workspaceId: "w1", kind: "skipped", subject: "r1", detail: { why: "gone" } },
          { workspaceId: null, kind: "cap", subject: null, detail: null }
        ])
      }))

    it.live("forgets runs with the versions, activity and file objects no remaining run holds", () =>
      Effect.gen(function*() {
        const { store } = yield* open()
        const r1 = yield* completeRun(store, [version("a", 0, 2), version("b", 0)], [fileOf("f1", 0)])
        const r2 = yield* completeRun(store, [version("a", 1, 2), version("b", 0)], [fileOf("f1", 0)])
        const r3 = yield* completeRun(store, [version("a", 2), version("b", 0)], [fileOf("f1", 1)])
        const [o1, o2] = ["1".repeat(64), "2".repeat(64)]
        yield* store.putFileObjects(r1, [{ fileId: "f1", sha256: o1, size: 10 }])
        yield* store.putFileObjects(r2, [{ fileId: "f1", sha256: o1, size: 10 }])
        // Written twice: the last object given for a file wins, an object's size is kept once.
        yield* store.putFileObjects(r3, [{ fileId: "f1", sha256: o1, size: 10 }, { fileId: "f1", sha256: o2, size: 12 }])
        const before = yield* store.storageBytes
        expect(before).toBeGreaterThan(0)
        const result = yield* store.forgetRuns([r2, r1, r1])
        expect(result).toEqual({ removedRuns: [r1, r2], removedVersions: 3, removedObjects: 1 })
        expect(yield* ids(store, "SELECT id FROM records ORDER BY id")).toEqual(["a", "b"])
        const activity = yield* store.select<{ n: number }>("count activity", { sql: "SELECT count(*) AS n FROM activity" })
        expect(activity).toEqual([{ n: 0 }])
        const objects = yield* store.select<{ sha256: string; size: number }>("read objects", {
          sql: "SELECT sha256, size FROM file_objects ORDER BY sha256"
        })
        expect(objects).toEqual([{ sha256: o2, size: 12 }])
        expect(yield* store.select("read run objects", { sql: "SELECT run_id, file_id, sha256 FROM run_file_objects" })).toEqual([
          { run_id: r3, file_id: "f1", sha256: o2 }
        ])
        expect(yield* store.forgetRuns([])).toEqual({ removedRuns: [], removedVersions: 0, removedObjects: 0 })
        yield* store.compact
        expect((yield* store.counts(r3)).records).toBe(2)
      }))

    it.live("streams a read in batches, every row once", () =>
      Effect.gen(function*() {
        const { store } = yield* open()
        const entries = Array.from({ length: 2500 }, (_, i) => version(`r${String(i).padStart(4, "0")}`, 0))
        const run = yield* completeRun(store, entries)
        const rows = yield* Stream.runCollect(store.stream<{ id: string }>("read all", {
          sql: "SELECT id FROM run_records WHERE run_id = ? ORDER BY id",
          params: [run]
        }))
        expect([...rows].map((r) => r.id)).toEqual(entries.map((e) => e.kind === "version" ? e.summary.id : ""))
      }))

    it.live("exports a run to the same files", () =>
      Effect.gen(function*() {
        const { store } = yield* open()
        yield* completeRun(store, [version("b", 0, 2), version("a", 1)], [fileOf("f1")])
        const outDir = yield* tempDir("ws-export-")
        const result = yield* exportRun(store, { outDir, format: "ndjson" })
        expect(result.files.map((f) => [f.name, f.rows])).toEqual([["records", 2], ["activity", 2], ["files", 1], ["workspaces", 1]])
        const records = fs.readFileSync(path.join(outDir, "records.ndjson"), "utf8").trim().split("\n").map((l) => JSON.parse(l) as { id: string })
        expect(records.map((r) => r.id)).toEqual(["a", "b"])
      }))

    it.live("answers the documented views", () =>
      Effect.gen(function*() {
        const { store } = yield* open()
        yield* completeRun(store, [version("a", 1, 2), version("b", 0)], [fileOf("f1")])
        const records = yield* store.select<Record<string, unknown>>("read latest_records", {
          sql: "SELECT id, title, list_title, done, archived, assignees, tags FROM latest_records ORDER BY id"
        })
        expect(records).toEqual([
          { id: "a", title: "Record a v1", list_title: "Inbox", done: 1, archived: 0, assignees: "ada@example.com", tags: "red,blue" },
          { id: "b", title: "Record b v0", list_title: "Inbox", done: 0, archived: 0, assignees: "ada@example.com", tags: "red,blue" }
        ])
        const files = yield* store.select("read latest_files", { sql: "SELECT id, name, size FROM latest_files" })
        expect(files).toEqual([{ id: "f1", name: "f1.txt", size: 10 }])
        const summary = yield* store.select("read runs_summary", { sql: "SELECT run_id, records, files, activities FROM runs_summary" })
        expect(summary).toEqual([{ run_id: 1, records: 2, files: 1, activities: 2 }])
      }))

    it.live("the named reads: a run's items, records, files and their objects, versions page by page, consistency", () =>
      Effect.gen(function*() {
        const { store } = yield* open()
        const r1 = yield* completeRun(store, [version("b", 0, 2), version("a", 0, 1)], [fileOf("f2"), fileOf("f1")])
        yield* store.putLists(r1, "w1", [{ id: "l1", title: "Inbox" } as { id: string }])
        yield* store.putUsers(r1, [{ id: "u1" }])
        const sha = "1".repeat(64)
        yield* store.putFileObjects(r1, [{ fileId: "f1", sha256: sha, size: 10 }])
        // The next run holds f1's same version (its object is known) and f2's next one (not known).
        const r2 = yield* completeRun(store, [version("a", 0, 1)], [fileOf("f1"), fileOf("f2", 1)])
        const texts = (s: Stream.Stream<string, unknown>) =>
          Effect.map(Stream.runCollect(s), (c) => Array.from(c, (t) => JSON.parse(t) as Record<string, unknown>))

        expect(yield* store.runMemberIds("records", r1)).toEqual(["a", "b"])
        expect((yield* texts(store.runItems("records", r1))).map((d) => [d.id, d.workspaceId])).toEqual([["a", "w1"], ["b", "w1"]])
        expect((yield* texts(store.runItems("files", r1, "w1"))).map((f) => f.id)).toEqual(["f1", "f2"])
        expect(yield* texts(store.runItems("records", r1, "w2"))).toEqual([])
        expect((yield* texts(store.runItems("lists", r1, "w1"))).map((l) => l.title)).toEqual(["Inbox"])
        expect((yield* texts(store.runItems("users", r1))).map((u) => u.id)).toEqual(["u1"])
        expect((yield* texts(store.runActivity(r1))).map((a) => a.recordId)).toEqual(["a", "b", "b"])
        expect(JSON.parse((yield* store.namedRecordDetails(r1, "w1", ["b", "zz", "b"])).join(""))).toMatchObject({ id: "b" })
        expect([yield* store.holdsRecords(r1, "w1"), yield* store.holdsRecords(r1, "w2")]).toEqual([true, false])
        expect(JSON.parse((yield* store.memberDetail(r1, "a"))!)).toMatchObject({ id: "a" })
        expect(yield* store.memberDetail(r2, "b")).toBeUndefined()
        expect(yield* store.recordsPerWorkspace(r1)).toEqual([{ id: "w1", n: 2 }])
        expect(yield* store.runRecordRefs(r1)).toEqual([{ id: "a", workspaceId: "w1" }, { id: "b", workspaceId: "w1" }])

        const objects = Array.from(yield* Stream.runCollect(store.runFileObjects(r1, "id")), ({ item, ...rest }) => rest)
        expect(objects).toEqual([
          { id: "f1", workspaceId: "w1", sha256: sha, size: 10 },
          { id: "f2", workspaceId: "w1", sha256: null, size: null }
        ])
        const known = (yield* store.runFilesKnownObjects(r2)).map(({ item, ...rest }) => rest)
        expect(known).toEqual([
          { id: "f1", workspaceId: "w1", known: sha, knownSize: 10 },
          { id: "f2", workspaceId: "w1", known: null, knownSize: null }
        ])
        expect(yield* store.storedObjects).toEqual([{ sha256: sha, size: 10 }])
        expect(yield* store.heldObjects).toEqual([sha])

        const first = yield* store.recordVersionsAfter(0, 1)
        expect(first.map((v) => v.id)).toEqual(["b"])
        expect((yield* store.recordVersionsAfter(first[0]!.vid, 10)).map((v) => v.id)).toEqual(["a"])
        expect((yield* store.activityOfVersions(0, first[0]!.vid)).map((a) => a.vid)).toEqual([first[0]!.vid, first[0]!.vid])
        expect((yield* store.plainVersionsAfter("files", 0, 10)).map((v) => v.id)).toEqual(["f2", "f1", "f2"])
        const rules = Array.from(yield* Stream.runCollect(store.consistencyProblems))
        expect(rules.length).toBeGreaterThan(10)
        expect(rules.flat()).toEqual([])
      }))

    it.live("the named reads of one workspace: the workspaces whose records a run holds, a workspace's files with their objects", () =>
      Effect.gen(function*() {
        const { store } = yield* open()
        const run = yield* store.beginRun(scopeOf([]), true)
        // w3 is held without records; w2's records come after w1's in id order but not in insertion order.
        yield* store.putWorkspaces(run, [{ id: "w3" }, { id: "w2" }, { id: "w1" }])
        yield* store.putRecords(run, [version("b", 0, 0, "w2"), version("a", 0, 0, "w2"), version("c", 0, 0, "w1")])
        yield* store.putFiles(run, "w2", [fileOf("f3"), fileOf("f1")])
        yield* store.putFiles(run, "w1", [fileOf("f2")])
        const sha = "2".repeat(64)
        yield* store.putFileObjects(run, [{ fileId: "f3", sha256: sha, size: 10 }])
        yield* store.completeRun(run, { records: 3 })

        expect(yield* store.recordWorkspaces(run)).toEqual(["w1", "w2"])
        const empty = yield* store.beginRun(scopeOf([]), true)
        yield* store.putWorkspaces(empty, [{ id: "w1" }])
        expect(yield* store.recordWorkspaces(empty)).toEqual([])

        const filesOf = (workspaceId: string) =>
          Effect.map(
            store.workspaceFileObjects(run, workspaceId),
            (rows) => rows.map(({ item, ...rest }) => ({ ...rest, name: (JSON.parse(item) as { name: string }).name }))
          )
        expect(yield* filesOf("w2")).toEqual([
          { id: "f1", workspaceId: "w2", sha256: null, size: null, name: "f1.txt" },
          { id: "f3", workspaceId: "w2", sha256: sha, size: 10, name: "f3.txt" }
        ])
        expect((yield* filesOf("w1")).map((f) => f.id)).toEqual(["f2"])
        expect(yield* filesOf("w3")).toEqual([])
      }))

    it.live("one writer at a time: a second writer is told the store is busy", () =>
      Effect.gen(function*() {
        const { location, store } = yield* open()
        yield* store.lockWriter
        const other = yield* openSnapshot(location)
        const busy = yield* Effect.flip(Effect.scoped(other.lockWriter))
        expect(busy._tag).toBe("StoreBusy")
        expect(busy.message).toContain("in use")
      }))

    it.live("the writer lock is free again once its holder's scope closes", () =>
      Effect.gen(function*() {
        const { location, store } = yield* open()
        yield* Effect.scoped(store.lockWriter)
        const other = yield* openSnapshot(location)
        yield* Effect.scoped(other.lockWriter)
      }))
  })
}
