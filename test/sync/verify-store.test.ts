/**
 * verify's snapshot checks on both backends (a SQLite file, a PostgreSQL schema), through
 * the store's service: a sound snapshot passes `integrity` and `hashes`; a version whose
 * stored text changed fails `hashes`, a membership whose version is gone fails
 * `integrity`; a verification is recorded and shown by runs_summary (the latest wins);
 * dropping a run drops its verifications.
 */
import { describe, expect, it } from "@effect/vitest"
import Database from "better-sqlite3"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import * as path from "node:path"
import { openSnapshot, type RecordEntry, scopeOf, type SnapshotStoreService } from "../../src/store/snapshot.ts"
import { verify } from "../../src/sync/verify.ts"
import { tempDir } from "../support/effect.ts"
import { freshSchema, pgClient } from "../support/postgres.ts"
import { activityOf, detailOf, fileOf, summaryOf } from "../store/snapshot-fixtures.ts"

interface Backend {
  readonly name: string
  readonly location: Effect.Effect<string, never, Scope.Scope>
  /** Runs a write behind the store's back (damage, as a disk or a hand would do it). */
  readonly exec: (location: string, sql: string, params: ReadonlyArray<string | number>) => Effect.Effect<void, unknown, Scope.Scope>
}

const BACKENDS: ReadonlyArray<Backend> = [
  {
    name: "sqlite",
    location: Effect.map(tempDir("ws-verify-"), (dir) => path.join(dir, "snap.sqlite")),
    exec: (location, sql, params) =>
      Effect.sync(() => {
        const db = new Database(location)
        db.prepare(sql).run(...params)
        db.close()
      })
  },
  {
    name: "postgres",
    location: freshSchema,
    exec: (location, sql, params) =>
      Effect.gen(function*() {
        const url = new URL(location)
        const schema = url.searchParams.get("schema")!
        url.searchParams.delete("schema")
        const client = yield* pgClient(url.href)
        yield* Effect.promise(() => client.query(`SET search_path TO ${schema}`))
        let i = 0
        yield* Effect.promise(() => client.query(sql.replace(/\?/g, () => `$${++i}`), [...params]))
      })
  }
]

const version = (id: string, v: number, activity = 0): RecordEntry => {
  const detail = detailOf(id, v)
  return { kind: "version", workspaceId: "w1", summary: summaryOf(detail), detail, activity: activityOf(id, activity) }
}

/** Two complete runs: three records with activity, a list, a user and a file. */
const fill = (store: SnapshotStoreService) =>
  Effect.gen(function*() {
    const runs: Array<number> = []
    for (const v of [0, 1]) {
      const run = yield* store.beginRun(scopeOf([]), true)
      yield* store.putWorkspaces(run, [{ id: "w1" }])
      yield* store.putUsers(run, [{ id: "u1" }])
      yield* store.putLists(run, "w1", [{ id: "l1" }])
      yield* store.putRecords(run, [version("r1", v, 3), version("r2", 0, 1), version("r3", v)])
      yield* store.putFiles(run, "w1", [fileOf("f1")])
      yield* store.completeRun(run, {})
      runs.push(run)
    }
    return runs
  })

for (const backend of BACKENDS) {
  describe(`verify's snapshot checks on ${backend.name}`, () => {
    it.live("a sound snapshot passes; the outcome is recorded and runs_summary shows the latest", () =>
      Effect.gen(function*() {
        const location = yield* backend.location
        const store = yield* openSnapshot(location)
        const [first, second] = yield* fill(store)
        const run = (yield* store.getRun(second!))!
        const result = yield* verify(store, { run })
        expect(result.ok).toBe(true)
        // 5 record versions, and one version each of the workspace, user, list and file.
        expect(result.checks).toEqual([
          { name: "integrity", ok: true, checked: expect.any(Number), failed: 0, first: null },
          { name: "hashes", ok: true, checked: 9, failed: 0, first: null }
        ])
        expect(yield* store.integrityCheck).toEqual([])

        yield* store.addVerification({ runId: second!, verifiedAt: "2026-05-01T00:00:00.000Z", ok: false, checks: [] })
        yield* store.addVerification({ runId: second!, verifiedAt: "2026-05-02T00:00:00.000Z", ok: true, checks: result.checks })
        const rows = yield* store.select<{ run_id: number; last_verified_at: string | null; verified_ok: number | null }>("read", {
          sql: "SELECT run_id, last_verified_at, verified_ok FROM runs_summary ORDER BY run_id"
        })
        expect(rows).toEqual([
          { run_id: first, last_verified_at: null, verified_ok: null },
          { run_id: second, last_verified_at: "2026-05-02T00:00:00.000Z", verified_ok: 1 }
        ])
        const stored = yield* store.select<{ checks: string }>("read", { sql: "SELECT checks FROM verifications WHERE ok = 1" })
        expect(JSON.parse(stored[0]!.checks)).toEqual(result.checks)

        yield* store.dropRun(second!)
        expect(yield* store.select("read", { sql: "SELECT run_id FROM verifications" })).toEqual([])
      }))

    it.live("hashes fail on a version whose text changed; integrity on a membership whose version is gone", () =>
      Effect.gen(function*() {
        const location = yield* backend.location
        const runs = yield* Effect.scoped(Effect.flatMap(openSnapshot(location), fill))
        yield* backend.exec(location, "UPDATE records SET detail = replace(detail, 'Record r2 v0', 'Record r2 (edited)') WHERE id = ?", ["r2"])
        yield* backend.exec(location, "UPDATE lists SET item = replace(item, 'l1', 'l1 ') WHERE id = ?", ["l1"])
        yield* backend.exec(location, "DELETE FROM records WHERE id = ? AND detail LIKE ?", ["r3", "%v1%"])
        const store = yield* openSnapshot(location)
        const result = yield* verify(store, { run: (yield* store.getRun(runs[1]!))! })
        expect(result.ok).toBe(false)
        const [integrity, hashes] = result.checks
        expect(integrity).toMatchObject({ name: "integrity", ok: false, failed: 1 })
        expect(integrity!.first).toMatch(new RegExp(`^run ${runs[1]} holds record r3 as version \\d+, which is not stored$`))
        expect(hashes).toMatchObject({ name: "hashes", ok: false, checked: 8, failed: 2 })
        expect(hashes!.first).toMatch(/^record r2 \(version \d+\): its content hashes to \w+, the snapshot stored \w+$/)
      }))
  })
}
