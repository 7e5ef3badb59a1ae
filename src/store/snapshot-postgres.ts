/**
 * The snapshot store on PostgreSQL (`--snapshot postgres://...`): the same tables and
 * meanings as the SQLite backend (snapshot-schema-postgres.ts), shared by processes on
 * many machines. Each write method is one transaction; the single-writer lock is a
 * session advisory lock (postgres.ts).
 */
import type { SqlError } from "@effect/sql/SqlError"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import { dollarParams, lockPostgresWriter, openPostgres } from "./postgres.ts"
import { contentHash } from "./snapshot-hash.ts"
import { SNAPSHOT_PG_MIGRATIONS } from "./snapshot-schema-postgres.ts"
import type { PlainEntity } from "./snapshot-schema.ts"
import {
  MEMBERSHIP,
  type MemberVersion,
  type PruneOptions,
  type RecordEntry,
  type RecordVersionRef,
  type RunNote,
  runRow,
  runsToPrune,
  SnapshotError,
  type SnapshotQuery,
  type SnapshotStoreService,
  withKey
} from "./snapshot-types.ts"
import type { StoreOpenError } from "./sqlite.ts"

type Param = string | number | null

const now = () => new Date().toISOString()

/** Opens (creating its tables when missing, unless `mustExist`) the snapshot in a PostgreSQL schema. */
export const openPostgresSnapshot = (
  location: string,
  options: { readonly mustExist?: boolean } = {}
): Effect.Effect<SnapshotStoreService, StoreOpenError, Scope.Scope> =>
  Effect.map(openPostgres(location, "snapshot", SNAPSHOT_PG_MIGRATIONS, options), (pg) => {
    const { sql } = pg
    const file = pg.location.display
    const fail = (operation: string) => (e: SqlError | Error) =>
      new SnapshotError({ file, operation, detail: e.cause instanceof Error ? e.cause.message : e.message })
    const q = <A = Record<string, unknown>>(text: string, params: ReadonlyArray<Param> = []) =>
      sql.unsafe<A & object>(dollarParams(text), params as Array<Param>)
    /** One operation: its statements in one transaction, failures named by `operation`. */
    const tx = <A>(operation: string, body: Effect.Effect<A, SqlError | Error>): Effect.Effect<A, SnapshotError> =>
      sql.withTransaction(body).pipe(Effect.mapError(fail(operation)))
    const one = <A = Record<string, unknown>>(operation: string, text: string, params: ReadonlyArray<Param> = []) =>
      q<A>(text, params).pipe(Effect.map((rows) => rows[0] as A | undefined), Effect.mapError(fail(operation)))

    const putPlain = (table: PlainEntity, withWorkspace: boolean) =>
    (runId: number, items: ReadonlyArray<{ readonly id: string }>, extra?: { key: string; value: string }) =>
      Effect.forEach(items, (item) =>
        Effect.gen(function*() {
          const stored = extra === undefined ? JSON.stringify(item) : withKey(item, extra.key, extra.value)
          const hash = contentHash(extra === undefined ? item : { ...item, [extra.key]: extra.value })
          const rows = yield* (withWorkspace
            ? q<{ vid: number }>(
              `INSERT INTO ${table} (id, workspace_id, hash, item, first_run, last_run) VALUES (?, ?, ?, ?, ?, ?)
               ON CONFLICT (id, hash) DO UPDATE SET last_run = excluded.last_run RETURNING vid`,
              [item.id, extra?.value ?? "", hash, stored, runId, runId]
            )
            : q<{ vid: number }>(
              `INSERT INTO ${table} (id, hash, item, first_run, last_run) VALUES (?, ?, ?, ?, ?)
               ON CONFLICT (id, hash) DO UPDATE SET last_run = excluded.last_run RETURNING vid`,
              [item.id, hash, stored, runId, runId]
            ))
          yield* q(
            `INSERT INTO run_${table} (run_id, id, vid) VALUES (?, ?, ?) ON CONFLICT (run_id, id) DO UPDATE SET vid = excluded.vid`,
            [runId, item.id, rows[0]!.vid]
          )
        }), { discard: true })

    const writeRecord = (runId: number, e: RecordEntry) =>
      Effect.gen(function*() {
        if (e.kind === "keep") {
          yield* q(
            "INSERT INTO run_records (run_id, id, vid) VALUES (?, ?, ?) ON CONFLICT (run_id, id) DO UPDATE SET vid = excluded.vid",
            [runId, e.id, e.vid]
          )
          return
        }
        const activity: ReadonlyArray<object> = "reuseFrom" in e.activity
          ? (yield* q<{ item: string }>("SELECT item FROM activity WHERE vid = ? ORDER BY seq", [e.activity.reuseFrom]))
            .map((r) => JSON.parse(r.item) as object)
          : e.activity.map((item) => ({ ...item, recordId: e.summary.id }))
        const detail = { ...e.detail, workspaceId: e.workspaceId }
        const commentCount = (e.detail as { commentCount?: unknown }).commentCount
        const rows = yield* q<{ vid: number; first_run: number }>(
          `INSERT INTO records (id, workspace_id, hash, summary_hash, updated_at, comment_count, activity_count, summary, detail, first_run, last_run)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
           ON CONFLICT (id, hash) DO UPDATE SET last_run = excluded.last_run, summary_hash = excluded.summary_hash, summary = excluded.summary,
             updated_at = excluded.updated_at, comment_count = excluded.comment_count
           RETURNING vid, first_run`,
          [
            e.summary.id,
            e.workspaceId,
            contentHash({ detail, activity }),
            contentHash(e.summary),
            e.summary.updatedAt ?? null,
            typeof commentCount === "number" ? commentCount : null,
            activity.length,
            JSON.stringify(e.summary),
            JSON.stringify(detail),
            runId,
            runId
          ]
        )
        const row = rows[0]!
        // A version seen before already has its activity rows.
        if (row.first_run === runId && activity.length > 0) {
          const params: Array<Param> = []
          activity.forEach((item, seq) => {
            params.push(row.vid, seq, String((item as { id?: unknown }).id ?? seq), JSON.stringify(item))
          })
          // One statement for the version's activity (a record has at most a few hundred items).
          yield* q(
            `INSERT INTO activity (vid, seq, id, item) VALUES ${activity.map(() => "(?, ?, ?, ?)").join(", ")}
             ON CONFLICT (vid, seq) DO UPDATE SET id = excluded.id, item = excluded.item`,
            params
          )
        }
        yield* q(
          "INSERT INTO run_records (run_id, id, vid) VALUES (?, ?, ?) ON CONFLICT (run_id, id) DO UPDATE SET vid = excluded.vid",
          [runId, e.summary.id, row.vid]
        )
      })

    const count = (text: string, runId: number) =>
      Effect.map(q<{ n: number }>(text, [runId]), (rows) => rows[0]?.n ?? 0)

    const service: SnapshotStoreService = {
      file,
      lockWriter: lockPostgresWriter(pg, "snapshot"),
      beginRun: (scope, full) =>
        tx("begin run", Effect.gen(function*() {
          yield* q(
            "UPDATE runs SET status = 'failed', finished = ?, error = 'interrupted (found running at the start of a later run)' WHERE status = 'running'",
            [now()]
          )
          const rows = yield* q<{ id: number }>(
            `INSERT INTO runs (scope, started, status, "full") VALUES (?, ?, 'running', ?) RETURNING id`,
            [scope, now(), full ? 1 : 0]
          )
          return rows[0]!.id
        })),
      completeRun: (runId, stats) =>
        tx("complete run", Effect.gen(function*() {
          yield* q(
            "UPDATE records SET last_run = ? WHERE vid IN (SELECT vid FROM run_records WHERE run_id = ?) AND last_run < ?",
            [runId, runId, runId]
          )
          const done = yield* q<{ id: number }>(
            "UPDATE runs SET status = 'complete', finished = ?, stats = ? WHERE id = ? AND status = 'running' RETURNING id",
            [now(), JSON.stringify(stats), runId]
          )
          // A run no longer marked running (failed by another writer) is never reported complete.
          if (done.length !== 1) {
            return yield* Effect.fail(new Error(`run ${runId} is no longer running (another process marked it failed)`))
          }
        })),
      failRun: (runId, error, stats) =>
        tx("fail run", q(
          "UPDATE runs SET status = 'failed', finished = ?, error = ?, stats = ? WHERE id = ? AND status = 'running'",
          [now(), error, JSON.stringify(stats ?? null), runId]
        )).pipe(Effect.asVoid),
      getRun: (runId) =>
        Effect.map(one("read run", "SELECT * FROM runs WHERE id = ?", [runId]), (r) => r === undefined ? undefined : runRow(r)),
      listRuns: q("SELECT * FROM runs ORDER BY id").pipe(
        Effect.map((rows) => rows.map((r) => runRow(r))),
        Effect.mapError(fail("list runs"))
      ),
      latestComplete: Effect.map(
        one("find latest complete run", "SELECT * FROM runs WHERE status = 'complete' ORDER BY id DESC LIMIT 1"),
        (r) => r === undefined ? undefined : runRow(r)
      ),
      previousComplete: (scope, beforeId) =>
        Effect.map(
          one(
            "find previous complete run",
            "SELECT * FROM runs WHERE status = 'complete' AND scope = ? AND id < ? ORDER BY id DESC LIMIT 1",
            [scope, beforeId]
          ),
          (r) => r === undefined ? undefined : runRow(r)
        ),
      latestRecordVersion: (id) =>
        one<RecordVersionRef>(
          "look up record",
          `SELECT vid, summary_hash AS "summaryHash", updated_at AS "updatedAt", comment_count AS "commentCount"
           FROM records WHERE id = ? ORDER BY last_run DESC, vid DESC LIMIT 1`,
          [id]
        ),
      putRecords: (runId, entries) =>
        tx("write records", Effect.forEach(entries, (e) => writeRecord(runId, e), { discard: true })),
      putWorkspaces: (runId, items) => tx("write workspaces", putPlain("workspaces", false)(runId, items)),
      putUsers: (runId, items) => tx("write users", putPlain("users", false)(runId, items)),
      putLists: (runId, workspaceId, items) =>
        tx("write lists", putPlain("lists", true)(runId, items, { key: "workspaceId", value: workspaceId })),
      putFiles: (runId, workspaceId, items) =>
        tx("write files", putPlain("files", true)(runId, items, { key: "workspaceId", value: workspaceId })),
      note: (runId, n: RunNote) =>
        tx("write run note", q(
          `INSERT INTO run_notes (run_id, seq, workspace_id, kind, subject, detail)
           VALUES (?, (SELECT coalesce(max(seq), 0) + 1 FROM run_notes WHERE run_id = ?), ?, ?, ?, ?)`,
          [runId, runId, n.workspaceId, n.kind, n.subject ?? null, n.detail === undefined ? null : JSON.stringify(n.detail)]
        )).pipe(Effect.asVoid),
      notes: (runId) =>
        q<{ workspaceId: string | null; kind: string; subject: string | null; detail: string | null }>(
          `SELECT workspace_id AS "workspaceId", kind, subject, detail FROM run_notes WHERE run_id = ? ORDER BY seq`,
          [runId]
        ).pipe(
          Effect.map((rows) => rows.map((n) => ({ ...n, detail: n.detail === null ? null : JSON.parse(n.detail) as unknown }))),
          Effect.mapError(fail("read run notes"))
        ),
      copyMembership: (from, to) =>
        tx("copy run membership", Effect.forEach(MEMBERSHIP, (t) =>
          Effect.zipRight(
            q(`DELETE FROM run_${t} WHERE run_id = ?`, [to]),
            q(`INSERT INTO run_${t} (run_id, id, vid) SELECT ?, id, vid FROM run_${t} WHERE run_id = ?`, [to, from])
          ), { discard: true })),
      dropRun: (runId) =>
        tx("drop run", Effect.gen(function*() {
          for (const t of [...MEMBERSHIP.map((m) => `run_${m}`), "run_notes"]) yield* q(`DELETE FROM ${t} WHERE run_id = ?`, [runId])
          yield* q("DELETE FROM runs WHERE id = ?", [runId])
        })),
      removeMembers: (table, runId, ids) =>
        ids.length === 0 ? Effect.succeed(0) : tx(
          `remove ${table} from run`,
          Effect.map(
            q<{ id: string }>(`DELETE FROM run_${table} WHERE run_id = ? AND id = ANY(?::text[]) RETURNING id`, [runId, toArray(ids)]),
            (rows) => rows.length
          )
        ),
      memberVersion: (runId, id) =>
        one<MemberVersion>(
          "look up run member",
          `SELECT r.vid AS vid, r.workspace_id AS "workspaceId", r.updated_at AS "updatedAt"
           FROM run_records rr JOIN records r ON r.vid = rr.vid WHERE rr.run_id = ? AND rr.id = ?`,
          [runId, id]
        ),
      counts: (runId) =>
        Effect.all({
          workspaces: count("SELECT count(*) AS n FROM run_workspaces WHERE run_id = ?", runId),
          records: count("SELECT count(*) AS n FROM run_records WHERE run_id = ?", runId),
          activities: count(
            "SELECT coalesce(sum(r.activity_count), 0) AS n FROM run_records rr JOIN records r ON r.vid = rr.vid WHERE rr.run_id = ?",
            runId
          ),
          files: count("SELECT count(*) AS n FROM run_files WHERE run_id = ?", runId)
        }).pipe(Effect.mapError(fail("count run"))),
      pruneRuns: (options: PruneOptions) =>
        tx("prune old runs", Effect.gen(function*() {
          const runs = yield* q<{ id: number; scope: string; status: "running" | "complete" | "failed" }>(
            "SELECT id, scope, status FROM runs ORDER BY id"
          )
          const { kept, removed } = runsToPrune(runs, options)
          if (removed.length === 0) return { removedRuns: removed, keptComplete: kept, removedVersions: 0 }
          const ids = toArray(removed.map(String))
          for (const t of [...MEMBERSHIP.map((m) => `run_${m}`), "run_notes"]) {
            yield* q(`DELETE FROM ${t} WHERE run_id = ANY(?::bigint[])`, [ids])
          }
          yield* q("DELETE FROM runs WHERE id = ANY(?::bigint[])", [ids])
          yield* q(
            "DELETE FROM activity a WHERE NOT EXISTS (SELECT 1 FROM run_records rr WHERE rr.vid = a.vid)"
          )
          let removedVersions = 0
          for (const t of MEMBERSHIP) {
            const gone = yield* q(`DELETE FROM ${t} v WHERE NOT EXISTS (SELECT 1 FROM run_${t} m WHERE m.vid = v.vid) RETURNING vid`)
            removedVersions += gone.length
          }
          return { removedRuns: removed, keptComplete: kept, removedVersions }
        })),
      select: <A>(operation: string, query: SnapshotQuery) =>
        q<A>(query.sql, query.params ?? []).pipe(
          Effect.map((rows) => rows as unknown as Array<A>),
          Effect.mapError(fail(operation))
        ),
      stream: <A>(operation: string, query: SnapshotQuery) =>
        sql.unsafe<A & object>(dollarParams(query.sql), (query.params ?? []) as Array<Param>).stream.pipe(
          Stream.map((row) => row as A),
          Stream.mapError(fail(operation))
        )
    }
    return service
  })

/** A list as a PostgreSQL array literal parameter (`ANY(?::text[])`). */
const toArray = (values: ReadonlyArray<string>): string =>
  `{${values.map((v) => `"${v.replace(/\\/g, "\\\\").replace(/"/g, "\\\"")}"`).join(",")}}`
