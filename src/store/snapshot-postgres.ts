/**
 * The snapshot store on PostgreSQL (`--snapshot postgres://...`): the same tables and
 * meanings as the SQLite backend (snapshot-schema-postgres.ts), shared by processes on
 * many machines. Each write method is one transaction; the single-writer lock is a
 * session advisory lock (postgres.ts).
 */
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import type { SqlError } from "effect/sql/SqlError"
import * as Stream from "effect/Stream"
import { dollarParams, lockPostgresWriter, openPostgres, pgErrorDetail } from "./postgres.ts"
import { contentHash } from "./snapshot-hash.ts"
import { type SnapshotBackend, withNamedReads } from "./snapshot-reads.ts"
import { SNAPSHOT_PG_MIGRATIONS } from "./snapshot-schema-postgres.ts"
import type { PlainEntity } from "./snapshot-schema.ts"
import {
  type FileObjectRef,
  MEMBERSHIP,
  type MemberState,
  type MemberVersion,
  type MirrorReread,
  type RecordEntry,
  type RecordVersionRef,
  RUN_OWNED,
  type RunNote,
  runRow,
  SnapshotError,
  type SnapshotQuery,
  type SnapshotStoreService,
  withKey
} from "./snapshot-types.ts"
import type { StoreOpenError } from "./sqlite.ts"

type Param = string | number | null

const now = () => new Date().toISOString()

/** PostgreSQL's limit on the parameters of one statement. */
const MAX_PARAMS = 65_535
/** Rows per multi-row statement at most, however narrow: keeps one statement's text (and its reply) moderate. */
const MAX_ROWS = 5_000

/** A stored version's key, (id, hash), as one string for lookups. */
const versionKey = (id: string, hash: string): string => `${id}\u0000${hash}`

/** Opens (creating its tables when missing, unless `mustExist`) the snapshot in a PostgreSQL schema. */
export const openPostgresSnapshot = (
  location: string,
  options: { readonly mustExist?: boolean } = {}
): Effect.Effect<SnapshotStoreService, StoreOpenError, Scope.Scope> =>
  Effect.map(openPostgres(location, "snapshot", SNAPSHOT_PG_MIGRATIONS, options), (pg) => {
    const { sql } = pg
    const file = pg.location.display
    const fail = (operation: string) => (e: SqlError | Error) =>
      new SnapshotError({ file, operation, detail: pgErrorDetail(e) })
    const q = <A = Record<string, unknown>>(text: string, params: ReadonlyArray<Param> = []) =>
      sql.unsafe<A & object>(dollarParams(text), params)
    /** One operation: its statements in one transaction, failures named by `operation`. */
    const tx = <A>(operation: string, body: Effect.Effect<A, SqlError | Error>): Effect.Effect<A, SnapshotError> =>
      sql.withTransaction(body).pipe(Effect.mapError(fail(operation)))
    const one = <A = Record<string, unknown>>(operation: string, text: string, params: ReadonlyArray<Param> = []) =>
      q<A>(text, params).pipe(Effect.map((rows) => rows[0] as A | undefined), Effect.mapError(fail(operation)))

    /**
     * `INSERT INTO <into> VALUES (...), (...) <tail>` over `rows` (each the same width), in
     * as few statements as PostgreSQL's limit of 65,535 parameters a statement allows: a
     * batch costs a few round trips, not a few per row. Returns the rows of any RETURNING,
     * in order. The rows must not repeat a key of the ON CONFLICT target (one statement
     * cannot update a row twice).
     */
    const insertRows = <A = Record<string, unknown>>(
      into: string,
      tail: string,
      rows: ReadonlyArray<ReadonlyArray<Param>>
    ): Effect.Effect<Array<A>, SqlError> => {
      const width = rows[0]?.length ?? 1
      const perStatement = Math.max(1, Math.min(MAX_ROWS, Math.floor(MAX_PARAMS / width)))
      const tuple = `(${Array.from({ length: width }, () => "?").join(", ")})`
      const chunks: Array<ReadonlyArray<ReadonlyArray<Param>>> = []
      for (let i = 0; i < rows.length; i += perStatement) chunks.push(rows.slice(i, i + perStatement))
      return Effect.map(
        Effect.forEach(chunks, (chunk) =>
          q<A>(`INSERT INTO ${into} VALUES ${chunk.map(() => tuple).join(", ")} ${tail}`, chunk.flat())),
        (results) => results.flat()
      )
    }

    /**
     * Run membership, one row per id: the last vid given for an id wins, as when entries
     * are written one at a time (and one statement cannot set the same key twice).
     */
    const putMembers = (table: string, runId: number, members: ReadonlyMap<string, number>) =>
      insertRows(
        `run_${table} (run_id, id, vid)`,
        "ON CONFLICT (run_id, id) DO UPDATE SET vid = excluded.vid",
        [...members].map(([id, vid]) => [runId, id, vid])
      )

    const putPlain = (table: PlainEntity, withWorkspace: boolean) =>
    (runId: number, items: ReadonlyArray<{ readonly id: string }>, extra?: { key: string; value: string }) =>
      Effect.gen(function*() {
        // One row per distinct version; an item repeated in the batch is one upsert.
        const versions = new Map<string, ReadonlyArray<Param>>()
        const keyOf = items.map((item) => {
          const stored = extra === undefined ? JSON.stringify(item) : withKey(item, extra.key, extra.value)
          const hash = contentHash(extra === undefined ? item : { ...item, [extra.key]: extra.value })
          const key = versionKey(item.id, hash)
          versions.set(
            key,
            withWorkspace ? [item.id, extra?.value ?? "", hash, stored, runId, runId] : [item.id, hash, stored, runId, runId]
          )
          return key
        })
        const rows = yield* insertRows<{ id: string; hash: string; vid: number }>(
          withWorkspace ? `${table} (id, workspace_id, hash, item, first_run, last_run)` : `${table} (id, hash, item, first_run, last_run)`,
          "ON CONFLICT (id, hash) DO UPDATE SET last_run = excluded.last_run RETURNING id, hash, vid",
          [...versions.values()]
        )
        const vids = new Map(rows.map((r) => [versionKey(r.id, r.hash), r.vid]))
        const members = new Map<string, number>()
        items.forEach((item, i) => members.set(item.id, vids.get(keyOf[i]!)!))
        yield* putMembers(table, runId, members)
      })

    /**
     * A batch of records in a bounded number of statements, with the results of writing
     * the entries one at a time: a version is keyed by (id, hash), an existing one gets
     * this run's summary fields, activity is written only for a version first seen in this
     * run, and a record's last entry in the batch decides its membership.
     */
    const putRecords = (runId: number, entries: ReadonlyArray<RecordEntry>) =>
      Effect.gen(function*() {
        // The activity carried over from earlier versions, read once for the batch: the
        // content hash covers it.
        const reuseFrom = new Set<number>()
        for (const e of entries) if (e.kind === "version" && "reuseFrom" in e.activity) reuseFrom.add(e.activity.reuseFrom)
        const reused = new Map<number, Array<object>>()
        if (reuseFrom.size > 0) {
          const rows = yield* q<{ vid: number; item: string }>(
            "SELECT vid, item FROM activity WHERE vid = ANY(?::bigint[]) ORDER BY vid, seq",
            [toArray([...reuseFrom].map(String))]
          )
          for (const r of rows) {
            const items = reused.get(r.vid) ?? []
            items.push(JSON.parse(r.item) as object)
            reused.set(r.vid, items)
          }
        }

        // One row per distinct version, at its first entry's place (so new versions get
        // their vids in entry order) with its last entry's values (as the later upsert
        // would have left it). The same hash means the same detail and activity.
        const versions = new Map<string, { readonly row: ReadonlyArray<Param>; readonly activity: ReadonlyArray<object> }>()
        const keyOf = entries.map((e) => {
          if (e.kind === "keep") return undefined
          const activity: ReadonlyArray<object> = "reuseFrom" in e.activity
            ? reused.get(e.activity.reuseFrom) ?? []
            : e.activity.map((item) => ({ ...item, recordId: e.summary.id }))
          const detail = { ...e.detail, workspaceId: e.workspaceId }
          const hash = contentHash({ detail, activity })
          const commentCount = (e.detail as { commentCount?: unknown }).commentCount
          const key = versionKey(e.summary.id, hash)
          versions.set(key, {
            row: [
              e.summary.id,
              e.workspaceId,
              hash,
              contentHash(e.summary),
              e.summary.updatedAt ?? null,
              typeof commentCount === "number" ? commentCount : null,
              activity.length,
              JSON.stringify(e.summary),
              JSON.stringify(detail),
              runId,
              runId
            ],
            activity
          })
          return key
        })

        const rows = yield* insertRows<{ id: string; hash: string; vid: number; first_run: number }>(
          "records (id, workspace_id, hash, summary_hash, updated_at, comment_count, activity_count, summary, detail, first_run, last_run)",
          `ON CONFLICT (id, hash) DO UPDATE SET last_run = excluded.last_run, summary_hash = excluded.summary_hash, summary = excluded.summary,
             updated_at = excluded.updated_at, comment_count = excluded.comment_count
           RETURNING id, hash, vid, first_run`,
          [...versions.values()].map((v) => v.row)
        )
        const vids = new Map<string, number>()
        const activityRows: Array<ReadonlyArray<Param>> = []
        for (const r of rows) {
          const key = versionKey(r.id, r.hash)
          vids.set(key, r.vid)
          // A version seen before already has its activity rows.
          if (r.first_run !== runId) continue
          versions.get(key)!.activity.forEach((item, seq) => {
            activityRows.push([r.vid, seq, String((item as { id?: unknown }).id ?? seq), JSON.stringify(item)])
          })
        }
        yield* insertRows(
          "activity (vid, seq, id, item)",
          "ON CONFLICT (vid, seq) DO UPDATE SET id = excluded.id, item = excluded.item",
          activityRows
        )

        const members = new Map<string, number>()
        entries.forEach((e, i) => {
          if (e.kind === "keep") members.set(e.id, e.vid)
          else members.set(e.summary.id, vids.get(keyOf[i]!)!)
        })
        yield* putMembers("records", runId, members)
      })

    const count = (text: string, runId: number) =>
      Effect.map(q<{ n: number }>(text, [runId]), (rows) => rows[0]?.n ?? 0)

    const service: SnapshotBackend = {
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
        tx("write records", putRecords(runId, entries)),
      putWorkspaces: (runId, items) => tx("write workspaces", putPlain("workspaces", false)(runId, items)),
      putUsers: (runId, items) => tx("write users", putPlain("users", false)(runId, items)),
      putLists: (runId, workspaceId, items) =>
        tx("write lists", putPlain("lists", true)(runId, items, { key: "workspaceId", value: workspaceId })),
      putFiles: (runId, workspaceId, items) =>
        tx("write files", putPlain("files", true)(runId, items, { key: "workspaceId", value: workspaceId })),
      note: (runId, n: RunNote) =>
        // Notes of one run are numbered max + 1: concurrent notes of a backup would take the
        // same number, so they queue on a per-run transaction lock (SQLite serializes writers).
        tx("write run note", Effect.andThen(q("SELECT pg_advisory_xact_lock(hashtext('worksync-notes'), ?::int)", [runId]), q(
          `INSERT INTO run_notes (run_id, seq, workspace_id, kind, subject, detail)
           VALUES (?, (SELECT coalesce(max(seq), 0) + 1 FROM run_notes WHERE run_id = ?), ?, ?, ?, ?)`,
          [runId, runId, n.workspaceId, n.kind, n.subject ?? null, n.detail === undefined ? null : JSON.stringify(n.detail)]
        ))).pipe(Effect.asVoid),
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
          Effect.andThen(
            q(`DELETE FROM run_${t} WHERE run_id = ?`, [to]),
            q(`INSERT INTO run_${t} (run_id, id, vid) SELECT ?, id, vid FROM run_${t} WHERE run_id = ?`, [to, from])
          ), { discard: true })),
      dropRun: (runId) =>
        tx("drop run", Effect.gen(function*() {
          for (const t of RUN_OWNED) yield* q(`DELETE FROM ${t} WHERE run_id = ?`, [runId])
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
      memberVersions: (runId, ids) =>
        ids.length === 0 ? Effect.succeed(new Map<string, MemberVersion>()) : q<MemberVersion & { id: string }>(
          `SELECT rr.id AS id, r.vid AS vid, r.workspace_id AS "workspaceId", r.updated_at AS "updatedAt"
           FROM run_records rr JOIN records r ON r.vid = rr.vid WHERE rr.run_id = ? AND rr.id = ANY(?::text[])`,
          [runId, toArray(ids)]
        ).pipe(
          Effect.map((rows) => new Map(rows.map(({ id, ...v }) => [id, v]))),
          Effect.mapError(fail("look up run members"))
        ),
      changeMembers: (runId, changes) =>
        changes.length === 0 ? Effect.void : tx("change records of the run", Effect.forEach(changes, (ask) =>
          Effect.gen(function*() {
            const { change, id } = ask
            const [v] = yield* q<Omit<MemberState, "activity">>(
              `SELECT r.vid AS vid, r.workspace_id AS "workspaceId", r.updated_at AS "updatedAt", r.detail AS detail
               FROM run_records rr JOIN records r ON r.vid = rr.vid WHERE rr.run_id = ? AND rr.id = ?`,
              [runId, id]
            )
            const activity = v === undefined
              ? []
              : (yield* q<{ item: string }>("SELECT item FROM activity WHERE vid = ? ORDER BY seq", [v.vid])).map((r) => r.item)
            const next = yield* Effect.try({
              try: () => change(v === undefined ? undefined : { ...v, activity }),
              catch: (e) => e instanceof Error ? e : new Error(String(e))
            })
            if (next === "remove") yield* q("DELETE FROM run_records WHERE run_id = ? AND id = ?", [runId, id])
            else if (next !== undefined) yield* putRecords(runId, [next])
            // After the change, which may take the removal back (MemberChangeAsk).
            if (ask.rereadDone !== undefined) yield* q("DELETE FROM mirror_rereads WHERE record_id = ? AND seq <= ?", [id, ask.rereadDone])
          }), { discard: true })),
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
      putFileObjects: (runId: number, refs: ReadonlyArray<FileObjectRef>) =>
        refs.length === 0 ? Effect.void : tx("write file objects", Effect.gen(function*() {
          // One row per key: a statement cannot touch the same key twice.
          const sizes = new Map(refs.map((r) => [r.sha256, r.size]))
          const members = new Map(refs.map((r) => [r.fileId, r.sha256]))
          yield* insertRows("file_objects (sha256, size)", "ON CONFLICT (sha256) DO NOTHING", [...sizes].map(([sha, size]) => [sha, size]))
          yield* insertRows(
            "run_file_objects (run_id, file_id, sha256)",
            "ON CONFLICT (run_id, file_id) DO UPDATE SET sha256 = excluded.sha256",
            [...members].map(([fileId, sha]) => [runId, fileId, sha])
          )
        })),
      forgetRuns: (runIds: ReadonlyArray<number>) =>
        tx("forget runs", Effect.gen(function*() {
          const removed = [...new Set(runIds)].sort((a, b) => a - b)
          if (removed.length === 0) return { removedRuns: [], removedVersions: 0, removedObjects: 0 }
          const ids = toArray(removed.map(String))
          for (const t of RUN_OWNED) yield* q(`DELETE FROM ${t} WHERE run_id = ANY(?::bigint[])`, [ids])
          yield* q("DELETE FROM runs WHERE id = ANY(?::bigint[])", [ids])
          yield* q(
            "DELETE FROM activity a WHERE NOT EXISTS (SELECT 1 FROM run_records rr WHERE rr.vid = a.vid)"
          )
          let removedVersions = 0
          for (const t of MEMBERSHIP) {
            const gone = yield* q(`DELETE FROM ${t} v WHERE NOT EXISTS (SELECT 1 FROM run_${t} m WHERE m.vid = v.vid) RETURNING vid`)
            removedVersions += gone.length
          }
          const objects = yield* q(
            "DELETE FROM file_objects o WHERE NOT EXISTS (SELECT 1 FROM run_file_objects m WHERE m.sha256 = o.sha256) RETURNING sha256"
          )
          return { removedRuns: removed, removedVersions, removedObjects: objects.length }
        })),
      storageBytes: q<{ n: number | string | null }>(
        `SELECT sum(pg_total_relation_size(c.oid)) AS n FROM pg_class c JOIN pg_namespace ns ON ns.oid = c.relnamespace
         WHERE ns.nspname = current_schema() AND c.relkind = 'r' AND c.relname = ANY(?::text[])`,
        [toArray(SNAPSHOT_TABLES)]
      ).pipe(Effect.map((rows) => Number(rows[0]?.n ?? 0)), Effect.mapError(fail("measure snapshot"))),
      // Outside any transaction (VACUUM refuses to run in one). Plain VACUUM: the space is
      // reused by later writes; VACUUM FULL would lock out every reader while it rewrites.
      compact: Effect.forEach(SNAPSHOT_TABLES, (t) => q(`VACUUM ${t}`), { discard: true }).pipe(
        Effect.mapError(fail("compact snapshot"))
      ),
      integrityCheck: q<{ failures: number | null }>(
        "SELECT checksum_failures AS failures FROM pg_stat_database WHERE datname = current_database()"
      ).pipe(
        Effect.map((rows) => {
          const failures = rows[0]?.failures ?? 0
          return failures > 0 ? [`the server counted ${failures} data checksum failure(s) in this database (pg_stat_database)`] : []
        }),
        Effect.mapError(fail("check the database's integrity"))
      ),
      addVerification: (v) =>
        tx("record the verification", q(
          "INSERT INTO verifications (run_id, verified_at, ok, checks) VALUES (?, ?, ?, ?)",
          [v.runId, v.verifiedAt, v.ok ? 1 : 0, JSON.stringify(v.checks)]
        )).pipe(Effect.asVoid),
      addMirrorRereads: (asks) =>
        asks.length === 0 ? Effect.succeed([]) : tx(
          "keep the records to read again",
          Effect.map(
            insertRows<{ seq: number }>("mirror_rereads (record_id, event)", "RETURNING seq", asks.map((a) => [a.recordId, a.event])),
            (rows) => rows.map((r) => r.seq)
          )
        ),
      mirrorRereads: q<MirrorReread>(`SELECT seq, record_id AS "recordId", event FROM mirror_rereads ORDER BY seq`).pipe(
        Effect.map((rows): Array<MirrorReread> => [...rows]),
        Effect.mapError(fail("read the records to read again"))
      ),
      mirrorRereadDone: (recordId, seq) =>
        tx("remove a record read again", q("DELETE FROM mirror_rereads WHERE record_id = ? AND seq <= ?", [recordId, seq])).pipe(
          Effect.asVoid
        ),
      select: <A>(operation: string, query: SnapshotQuery) =>
        q<A>(query.sql, query.params ?? []).pipe(
          Effect.map((rows) => rows as unknown as Array<A>),
          Effect.mapError(fail(operation))
        ),
      runRecordDetails: (runId, workspaceId) =>
        sql.unsafe<{ detail: string }>(
          dollarParams(
            `SELECT r.detail AS detail FROM run_records rr JOIN records r ON r.vid = rr.vid
             WHERE rr.run_id = ? AND r.workspace_id = ?
             ORDER BY r.detail::jsonb #>> '{todoList,id}',
               CASE jsonb_typeof(r.detail::jsonb -> 'position') WHEN 'number' THEN 0 ELSE 1 END,
               CASE jsonb_typeof(r.detail::jsonb -> 'position') WHEN 'number' THEN (r.detail::jsonb ->> 'position')::numeric END,
               r.id`
          ),
          [runId, workspaceId]
        ).stream.pipe(Stream.map((row) => row.detail), Stream.mapError(fail("read the run's records"))),
      stream: <A>(operation: string, query: SnapshotQuery) =>
        sql.unsafe<A & object>(dollarParams(query.sql), (query.params ?? []) as Array<Param>).stream.pipe(
          Stream.map((row) => row as A),
          Stream.mapError(fail(operation))
        )
    }
    return withNamedReads(service)
  })

/** The snapshot's tables (a schema may hold other stores' tables too). */
const SNAPSHOT_TABLES = ["runs", ...MEMBERSHIP, "activity", ...RUN_OWNED, "file_objects", "mirror_rereads"]

/** A list as a PostgreSQL array literal parameter (`ANY(?::text[])`). */
const toArray = (values: ReadonlyArray<string>): string =>
  `{${values.map((v) => `"${v.replace(/\\/g, "\\\\").replace(/"/g, "\\\"")}"`).join(",")}}`
