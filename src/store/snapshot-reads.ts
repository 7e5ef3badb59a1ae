/**
 * The snapshot's named reads: what a run holds (its items, records, files and their
 * objects), the stored versions page by page, and the objects kept. Each is written once,
 * here, in the SQL both backends speak (see SnapshotQuery), over the service's `select`
 * and `stream`; both backends add them to their service (snapshot-sqlite.ts,
 * snapshot-postgres.ts), so callers name what they read instead of writing SQL.
 * The diff between runs lives in snapshot-diff.ts, the consistency rules in
 * snapshot-consistency.ts.
 */
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import { type SnapshotConsistency, snapshotConsistency } from "./snapshot-consistency.ts"
import { type SnapshotDiff, snapshotDiff } from "./snapshot-diff.ts"
import type { PlainEntity } from "./snapshot-schema.ts"
import type { MEMBERSHIP, SnapshotError, SnapshotQuery, SnapshotStoreService } from "./snapshot-types.ts"

/** The reads every named read is made of. */
export type SnapshotQueries = Pick<SnapshotStoreService, "select" | "stream">

/** An entity a run holds (a membership table: run_<entity>). */
export type RunEntity = (typeof MEMBERSHIP)[number]

/** The entities stored per workspace. */
export type WorkspaceEntity = "records" | "lists" | "files"

/** A file of a run with the object the run holds its bytes in (`backup --files`), if any. */
export interface RunFileObject {
  readonly id: string
  readonly workspaceId: string
  /** The stored file item (JSON text). */
  readonly item: string
  readonly sha256: string | null
  /** The object's recorded size; null when the run holds no object, or `file_objects` lacks it. */
  readonly size: number | null
}

/** A file of a run with the object an earlier run recorded for this very version of it. */
export interface RunFileKnownObject {
  readonly id: string
  readonly workspaceId: string
  readonly item: string
  readonly known: string | null
  readonly knownSize: number | null
}

/** A stored record version, as `verify`'s hash check reads it again. */
export interface RecordVersionRow {
  readonly vid: number
  readonly id: string
  readonly hash: string
  readonly summary_hash: string
  readonly summary: string
  readonly detail: string
}

/** A stored version of a workspace, list, user or file. */
export interface PlainVersionRow {
  readonly vid: number
  readonly id: string
  readonly hash: string
  readonly item: string
}

export interface SnapshotReads {
  /** The ids a run holds of an entity, by id. */
  readonly runMemberIds: (entity: RunEntity, runId: number) => Effect.Effect<Array<string>, SnapshotError>
  /**
   * The stored content (JSON text: a record's detail, any other entity's item) of what a
   * run holds of an entity, by id; of one workspace when `workspaceId` is given. Streamed
   * in batches, so memory stays flat (export).
   */
  readonly runItems: {
    (entity: RunEntity, runId: number): Stream.Stream<string, SnapshotError>
    (entity: WorkspaceEntity, runId: number, workspaceId: string): Stream.Stream<string, SnapshotError>
  }
  /** The activity items (JSON text) of the run's records: by record id, then the service's order. */
  readonly runActivity: (runId: number) => Stream.Stream<string, SnapshotError>
  /** The details (JSON text) of the named records the run holds of the workspace, by id; those it lacks are left out. */
  readonly namedRecordDetails: (
    runId: number,
    workspaceId: string,
    ids: ReadonlyArray<string>
  ) => Effect.Effect<Array<string>, SnapshotError>
  /**
   * Which of `ids` are records the run holds of the workspace (a migration's references:
   * the tokens of a text that name source records), read a chunk of ids at a time.
   */
  readonly recordIdsAmong: (
    runId: number,
    workspaceId: string,
    ids: ReadonlyArray<string>
  ) => Effect.Effect<Array<string>, SnapshotError>
  /** The ids of the records the run holds of the workspace, by id, streamed. */
  readonly workspaceRecordIds: (runId: number, workspaceId: string) => Stream.Stream<string, SnapshotError>
  /**
   * The activity items (JSON text) of the named records the run holds of the workspace,
   * each with its record's id, in no particular order (a migration's comments sort them).
   */
  readonly activityOfRecords: (
    runId: number,
    workspaceId: string,
    ids: ReadonlyArray<string>
  ) => Effect.Effect<Array<{ recordId: string; item: string }>, SnapshotError>
  /**
   * The ids of the workspace's records an earlier run than `runId` stored and run `runId`
   * lacks (gone from the source since), by id, streamed.
   */
  readonly recordsGoneBy: (runId: number, workspaceId: string) => Stream.Stream<string, SnapshotError>
  /** How many records and files the run holds of the workspace. */
  readonly workspaceCounts: (runId: number, workspaceId: string) => Effect.Effect<{ records: number; files: number }, SnapshotError>
  /** Whether the run holds any record of the workspace. */
  readonly holdsRecords: (runId: number, workspaceId: string) => Effect.Effect<boolean, SnapshotError>
  /** The detail (JSON text) of one record the run holds, if it holds it. */
  readonly memberDetail: (runId: number, id: string) => Effect.Effect<string | undefined, SnapshotError>
  /** Each workspace of the run with how many records the run holds of it, by workspace id. */
  readonly recordsPerWorkspace: (runId: number) => Effect.Effect<Array<{ id: string; n: number }>, SnapshotError>
  /**
   * The workspaces whose records the run holds, by id: a workspace the run holds without
   * any record of it is left out (restore picks its source among these).
   */
  readonly recordWorkspaces: (runId: number) => Effect.Effect<Array<string>, SnapshotError>
  /** The run's records as id and workspace, by id. */
  readonly runRecordRefs: (runId: number) => Effect.Effect<Array<{ id: string; workspaceId: string }>, SnapshotError>
  /**
   * The run's files with the object the run holds each one's bytes in, streamed:
   * by file id, or by workspace and then file id.
   */
  readonly runFileObjects: (runId: number, order: "id" | "workspace") => Stream.Stream<RunFileObject, SnapshotError>
  /**
   * The same of one workspace, by file id, read at once, not streamed: restore reads on
   * while it uploads them, and an open SQLite cursor would hold the connection meanwhile.
   */
  readonly workspaceFileObjects: (runId: number, workspaceId: string) => Effect.Effect<Array<RunFileObject>, SnapshotError>
  /**
   * The run's files, by workspace and id, each with the object an earlier run (complete
   * or not) recorded for the same file id and the same stored version, the latest such
   * run's, and that object's size.
   */
  readonly runFilesKnownObjects: (runId: number) => Effect.Effect<Array<RunFileKnownObject>, SnapshotError>
  /** Every object `file_objects` records (all runs share them), by sha256. */
  readonly storedObjects: Effect.Effect<Array<{ sha256: string; size: number }>, SnapshotError>
  /** The sha256 of every object some run holds. */
  readonly heldObjects: Effect.Effect<Array<string>, SnapshotError>
  /** Up to `limit` stored record versions after vid `afterVid`, by vid (keyset paging). */
  readonly recordVersionsAfter: (afterVid: number, limit: number) => Effect.Effect<Array<RecordVersionRow>, SnapshotError>
  /** The activity items of the record versions with vids in (afterVid, lastVid], by vid then order. */
  readonly activityOfVersions: (
    afterVid: number,
    lastVid: number
  ) => Effect.Effect<Array<{ vid: number; item: string }>, SnapshotError>
  /** Up to `limit` stored versions of a plain entity after vid `afterVid`, by vid (keyset paging). */
  readonly plainVersionsAfter: (
    table: PlainEntity,
    afterVid: number,
    limit: number
  ) => Effect.Effect<Array<PlainVersionRow>, SnapshotError>
}

/** A record's stored content is its detail; every other entity's, its item. */
export const contentColumn = (entity: RunEntity) => (entity === "records" ? "detail" : "item")

/** A run's members of an entity joined to their stored versions (`m` and `v`), of one run (the first `?`). */
export const membersOf = (entity: RunEntity) => `FROM run_${entity} m JOIN ${entity} v ON v.vid = m.vid WHERE m.run_id = ?`

/** The run's files with the object the run holds each one's bytes in (of one workspace when `workspaceId` is given). */
const runFileObjectsQuery = (runId: number, order: "id" | "workspace", workspaceId?: string): SnapshotQuery => ({
  sql: `SELECT rf.id AS id, f.workspace_id AS "workspaceId", f.item AS item, o.sha256 AS sha256, fo.size AS size
        FROM run_files AS rf
        JOIN files AS f ON f.vid = rf.vid
        LEFT JOIN run_file_objects AS o ON o.run_id = rf.run_id AND o.file_id = rf.id
        LEFT JOIN file_objects AS fo ON fo.sha256 = o.sha256
        WHERE rf.run_id = ?${workspaceId === undefined ? "" : " AND f.workspace_id = ?"}
        ORDER BY ${order === "id" ? "rf.id" : "f.workspace_id, rf.id"}`,
  params: workspaceId === undefined ? [runId] : [runId, workspaceId]
})

/** Ids asked for per read of `namedRecordDetails` (well under every backend's parameter limit). */
const NAMED_PER_READ = 500

/** `ids` without repeats, in chunks of NAMED_PER_READ: one read each. */
const chunksOf = (ids: ReadonlyArray<string>): Array<ReadonlyArray<string>> => {
  const unique = [...new Set(ids)]
  const chunks: Array<ReadonlyArray<string>> = []
  for (let i = 0; i < unique.length; i += NAMED_PER_READ) chunks.push(unique.slice(i, i + NAMED_PER_READ))
  return chunks
}

/** `?, ?, ...`: a placeholder per value of an IN list. */
const placeholders = (values: ReadonlyArray<unknown>) => values.map(() => "?").join(", ")

export const snapshotReads = ({ select, stream }: SnapshotQueries): SnapshotReads => {
  const runItems = (entity: RunEntity, runId: number, workspaceId?: string): Stream.Stream<string, SnapshotError> =>
    Stream.map(
      stream<{ content: string }>(`read the run's ${entity}`, {
        sql: `SELECT v.${contentColumn(entity)} AS content ${membersOf(entity)}${
          workspaceId === undefined ? "" : " AND v.workspace_id = ?"
        } ORDER BY m.id`,
        params: workspaceId === undefined ? [runId] : [runId, workspaceId]
      }),
      (row) => row.content
    )

  return {
    runMemberIds: (entity, runId) =>
      Effect.map(
        select<{ id: string }>(`read the run's ${entity}`, { sql: `SELECT id FROM run_${entity} WHERE run_id = ? ORDER BY id`, params: [runId] }),
        (rows) => rows.map((r) => r.id)
      ),
    runItems,
    runActivity: (runId) =>
      Stream.map(
        stream<{ item: string }>("read the run's activity", {
          sql: "SELECT a.item AS item FROM run_records rr JOIN activity a ON a.vid = rr.vid WHERE rr.run_id = ? ORDER BY rr.id, a.seq",
          params: [runId]
        }),
        (row) => row.item
      ),
    namedRecordDetails: (runId, workspaceId, ids) =>
      Effect.map(
        Effect.forEach(chunksOf(ids), (chunk) =>
          select<{ detail: string }>("read the run's records", {
            sql: `SELECT v.detail AS detail ${membersOf("records")} AND v.workspace_id = ?
                  AND v.id IN (${placeholders(chunk)}) ORDER BY v.id`,
            params: [runId, workspaceId, ...chunk]
          })),
        (pages) => pages.flat().map((row) => row.detail)
      ),
    recordIdsAmong: (runId, workspaceId, ids) =>
      Effect.map(
        Effect.forEach(chunksOf(ids), (chunk) =>
          select<{ id: string }>("read the source's records named in texts", {
            sql: `SELECT m.id AS id ${membersOf("records")} AND v.workspace_id = ? AND m.id IN (${placeholders(chunk)})`,
            params: [runId, workspaceId, ...chunk]
          })),
        (pages) => pages.flat().map((row) => row.id)
      ),
    workspaceRecordIds: (runId, workspaceId) =>
      Stream.map(
        stream<{ id: string }>("read the source's records", {
          sql: `SELECT m.id AS id ${membersOf("records")} AND v.workspace_id = ? ORDER BY m.id`,
          params: [runId, workspaceId]
        }),
        (row) => row.id
      ),
    activityOfRecords: (runId, workspaceId, ids) =>
      Effect.map(
        Effect.forEach(chunksOf(ids), (chunk) =>
          select<{ recordId: string; item: string }>("read the source's comments", {
            sql: `SELECT m.id AS "recordId", a.item AS item
                  FROM run_records m JOIN records v ON v.vid = m.vid JOIN activity a ON a.vid = v.vid
                  WHERE m.run_id = ? AND v.workspace_id = ? AND m.id IN (${placeholders(chunk)})`,
            params: [runId, workspaceId, ...chunk]
          })),
        (pages) => pages.flat()
      ),
    // A record id is in `records` once per stored version: grouped, so each id comes once.
    recordsGoneBy: (runId, workspaceId) =>
      Stream.map(
        stream<{ id: string }>("read the records gone from the source", {
          sql: `SELECT r.id AS id FROM records r WHERE r.workspace_id = ? AND r.first_run < ?
                AND NOT EXISTS (SELECT 1 FROM run_records rr WHERE rr.run_id = ? AND rr.id = r.id)
                GROUP BY r.id ORDER BY r.id`,
          params: [workspaceId, runId, runId]
        }),
        (row) => row.id
      ),
    workspaceCounts: (runId, workspaceId) =>
      Effect.gen(function*() {
        const count = (entity: "records" | "files") =>
          Effect.map(
            select<{ n: number }>(`read the source's ${entity}`, {
              sql: `SELECT count(*) AS n ${membersOf(entity)} AND v.workspace_id = ?`,
              params: [runId, workspaceId]
            }),
            (rows) => rows[0]?.n ?? 0
          )
        return { records: yield* count("records"), files: yield* count("files") }
      }),
    holdsRecords: (runId, workspaceId) =>
      Effect.map(
        select("read the run's records", {
          sql: `SELECT v.id AS id ${membersOf("records")} AND v.workspace_id = ? LIMIT 1`,
          params: [runId, workspaceId]
        }),
        (rows) => rows.length > 0
      ),
    memberDetail: (runId, id) =>
      Effect.map(
        select<{ detail: string }>("read a record of the run", {
          sql: `SELECT v.detail AS detail ${membersOf("records")} AND m.id = ?`,
          params: [runId, id]
        }),
        (rows) => rows[0]?.detail
      ),
    recordsPerWorkspace: (runId) =>
      select<{ id: string; n: number }>("count the run's records per workspace", {
        sql: `SELECT rw.id AS id, (SELECT count(*) FROM run_records rr JOIN records r ON r.vid = rr.vid
                                   WHERE rr.run_id = rw.run_id AND r.workspace_id = rw.id) AS n
              FROM run_workspaces rw WHERE rw.run_id = ? ORDER BY rw.id`,
        params: [runId]
      }),
    recordWorkspaces: (runId) =>
      Effect.map(
        select<{ id: string }>("read the run's workspaces", {
          sql: `SELECT DISTINCT v.workspace_id AS id ${membersOf("records")} ORDER BY v.workspace_id`,
          params: [runId]
        }),
        (rows) => rows.map((row) => row.id)
      ),
    runRecordRefs: (runId) =>
      select<{ id: string; workspaceId: string }>("read the run's record ids", {
        sql: `SELECT m.id AS id, v.workspace_id AS "workspaceId" ${membersOf("records")} ORDER BY m.id`,
        params: [runId]
      }),
    runFileObjects: (runId, order) => stream<RunFileObject>("read the run's file objects", runFileObjectsQuery(runId, order)),
    workspaceFileObjects: (runId, workspaceId) =>
      select<RunFileObject>("read the run's file objects", runFileObjectsQuery(runId, "id", workspaceId)),
    // Indexed lookups per file: the (file_id, run_id) index of run_file_objects, then
    // run_files' primary key.
    runFilesKnownObjects: (runId) =>
      select<RunFileKnownObject>("read the run's files", {
        sql: `SELECT x.id AS id, x.workspace_id AS "workspaceId", x.item AS item, x.known AS known, fo.size AS "knownSize"
              FROM (
                SELECT rf.id AS id, f.workspace_id AS workspace_id, f.item AS item,
                  (SELECT o.sha256 FROM run_file_objects AS o
                   JOIN run_files AS p ON p.run_id = o.run_id AND p.id = o.file_id
                   WHERE o.file_id = rf.id AND p.vid = rf.vid AND o.run_id <> rf.run_id
                   ORDER BY o.run_id DESC LIMIT 1) AS known
                FROM run_files AS rf JOIN files AS f ON f.vid = rf.vid
                WHERE rf.run_id = ?
              ) AS x
              LEFT JOIN file_objects AS fo ON fo.sha256 = x.known
              ORDER BY x.workspace_id, x.id`,
        params: [runId]
      }),
    storedObjects: select<{ sha256: string; size: number }>("read the stored objects", {
      sql: "SELECT sha256, size FROM file_objects ORDER BY sha256"
    }),
    heldObjects: Effect.map(
      select<{ sha256: string }>("read the objects runs hold", { sql: "SELECT DISTINCT sha256 FROM run_file_objects" }),
      (rows) => rows.map((r) => r.sha256)
    ),
    recordVersionsAfter: (afterVid, limit) =>
      select<RecordVersionRow>("read record versions", {
        sql: "SELECT vid, id, hash, summary_hash, summary, detail FROM records WHERE vid > ? ORDER BY vid LIMIT ?",
        params: [afterVid, limit]
      }),
    activityOfVersions: (afterVid, lastVid) =>
      select<{ vid: number; item: string }>("read activity", {
        sql: "SELECT vid, item FROM activity WHERE vid > ? AND vid <= ? ORDER BY vid, seq",
        params: [afterVid, lastVid]
      }),
    plainVersionsAfter: (table, afterVid, limit) =>
      select<PlainVersionRow>(`read ${table}`, {
        sql: `SELECT vid, id, hash, item FROM ${table} WHERE vid > ? ORDER BY vid LIMIT ?`,
        params: [afterVid, limit]
      })
  }
}

/** Every read written once over `select` and `stream`. */
export type NamedReads = SnapshotReads & SnapshotDiff & SnapshotConsistency

/** What a backend implements itself: the service without its named reads. */
export type SnapshotBackend = Omit<SnapshotStoreService, keyof NamedReads>

/** A backend's service with the named reads added (each backend's, through its own `select` and `stream`). */
export const withNamedReads = <B extends SnapshotBackend>(backend: B): B & NamedReads => ({
  ...backend,
  ...snapshotReads(backend),
  ...snapshotDiff(backend),
  ...snapshotConsistency(backend)
})
