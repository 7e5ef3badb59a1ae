/**
 * The snapshot store on a local SQLite file (better-sqlite3), the default backend.
 * Writes are batched in transactions of prepared statements; the single-writer lock is
 * the file lock of file-lock.ts.
 */
import type Database from "better-sqlite3"
import * as Arr from "effect/Array"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import * as fs from "node:fs"
import { lockStore } from "./file-lock.ts"
import { contentHash } from "./snapshot-hash.ts"
import { type SnapshotBackend, withNamedReads } from "./snapshot-reads.ts"
import { type PlainEntity, SNAPSHOT_MIGRATIONS } from "./snapshot-schema.ts"
import {
  type FileObjectRef,
  type ForgetResult,
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
import { openDatabase, statementCache } from "./sqlite.ts"

/**
 * better-sqlite3's connection under a name of ours: its own type lives in a namespace
 * that declaration files cannot name.
 */
export interface SqliteDatabase extends Database.Database {}

/** The SQLite backend, with its connection for tests of SQLite's own plans. */
export interface SqliteSnapshotStore extends SnapshotStoreService {
  readonly db: SqliteDatabase
}

/** Rows fetched per step of `stream` (between interruption points). */
const STREAM_BATCH = 2000

/**
 * Removes the runs, then the stored versions no remaining run refers to (with their
 * activity) and the `file_objects` rows no remaining run holds. One transaction.
 *
 * The orphan deletes are set-based (`vid NOT IN (SELECT vid FROM run_<t>)`): SQLite reads
 * each membership table once into a temporary index, where a correlated NOT EXISTS would
 * scan it once per stored version (run_<t> has no index on vid).
 */
const forgetRunsIn = (db: Database.Database, runIds: ReadonlyArray<number>): ForgetResult =>
  db.transaction(() => {
    const removed = [...new Set(runIds)].sort((a, b) => a - b)
    if (removed.length === 0) return { removedRuns: [], removedVersions: 0, removedObjects: 0 }
    // Each delete is a range of the (run_id, ...) primary key.
    const deletes = RUN_OWNED.map((t) => db.prepare(`DELETE FROM ${t} WHERE run_id = ?`))
    const deleteRun = db.prepare("DELETE FROM runs WHERE id = ?")
    for (const id of removed) {
      for (const d of deletes) d.run(id)
      deleteRun.run(id)
    }

    db.prepare(
      "DELETE FROM activity WHERE vid IN (SELECT vid FROM records WHERE vid NOT IN (SELECT vid FROM run_records))"
    ).run()
    let removedVersions = 0
    for (const t of MEMBERSHIP) {
      removedVersions += db.prepare(`DELETE FROM ${t} WHERE vid NOT IN (SELECT vid FROM run_${t})`).run().changes
    }
    const removedObjects = db.prepare(
      "DELETE FROM file_objects WHERE sha256 NOT IN (SELECT sha256 FROM run_file_objects)"
    ).run().changes
    return { removedRuns: removed, removedVersions, removedObjects }
  })()

/** Bytes of the file and its write-ahead log (what the snapshot takes on disk). */
const fileBytes = (file: string): number => {
  let total = 0
  for (const f of [file, `${file}-wal`]) total += fs.statSync(f, { throwIfNoEntry: false })?.size ?? 0
  return total
}

const makeStore = (db: Database.Database, file: string): SqliteSnapshotStore => withNamedReads(makeBase(db, file))

const makeBase = (db: Database.Database, file: string): SnapshotBackend & { readonly db: SqliteDatabase } => {
  const fail = (operation: string) => (e: unknown) =>
    new SnapshotError({ file, operation, detail: e instanceof Error ? e.message : String(e) })
  const run = <A>(operation: string, f: () => A): Effect.Effect<A, SnapshotError> =>
    Effect.try({ try: f, catch: fail(operation) })
  // Reads of a page of named items (a parameter per id) come back with the same text.
  const statement = statementCache(db)

  /** A read fetched a batch per pull (`stream`, see SnapshotStoreService). */
  const streamRows = <A>(operation: string, query: SnapshotQuery): Stream.Stream<A, SnapshotError> =>
    Stream.unwrap(Effect.map(
      Effect.acquireRelease(
        run(operation, () => db.prepare(query.sql).iterate(...(query.params ?? [])) as IterableIterator<A>),
        (rows) => Effect.sync(() => rows.return?.())
      ),
      (rows) =>
        // One bounded batch per pull, emitted as one chunk: the fiber can be interrupted
        // between batches. An empty batch ends the stream (Cause.done). Not
        // fromIterableEffectRepeat: it makes each batch a stream of its own (flatMap), which
        // kept about 10 MB of rows reachable at every young-generation collection; promoted,
        // they grew the heap of an export of a million records past 150 MB.
        Stream.fromPull(Effect.succeed(
          run(operation, () => {
            const batch: Array<A> = []
            for (let i = 0; i < STREAM_BATCH; i++) {
              const next = rows.next()
              if (next.done === true) break
              batch.push(next.value)
            }
            return batch
          }).pipe(Effect.flatMap((batch) => Arr.isArrayNonEmpty(batch) ? Effect.succeed(batch) : Cause.done()))
        ))
    ))

  const s = {
    insertRun: db.prepare(
      "INSERT INTO runs (scope, started, status, full) VALUES (?, ?, 'running', ?) RETURNING id"
    ),
    abandonRunning: db.prepare(
      "UPDATE runs SET status = 'failed', finished = ?, error = 'interrupted (found running at the start of a later run)' WHERE status = 'running'"
    ),
    completeRun: db.prepare("UPDATE runs SET status = 'complete', finished = ?, stats = ? WHERE id = ? AND status = 'running'"),
    failRun: db.prepare(
      "UPDATE runs SET status = 'failed', finished = ?, error = ?, stats = ? WHERE id = ? AND status = 'running'"
    ),
    getRun: db.prepare("SELECT * FROM runs WHERE id = ?"),
    listRuns: db.prepare("SELECT * FROM runs ORDER BY id"),
    latestComplete: db.prepare("SELECT * FROM runs WHERE status = 'complete' ORDER BY id DESC LIMIT 1"),
    previousComplete: db.prepare(
      "SELECT * FROM runs WHERE status = 'complete' AND scope = ? AND id < ? ORDER BY id DESC LIMIT 1"
    ),
    latestRecord: db.prepare(
      "SELECT vid, summary_hash AS summaryHash, updated_at AS updatedAt, comment_count AS commentCount FROM records WHERE id = ? ORDER BY last_run DESC, vid DESC LIMIT 1"
    ),
    upsertRecord: db.prepare(
      `INSERT INTO records (id, workspace_id, hash, summary_hash, updated_at, comment_count, activity_count, summary, detail, first_run, last_run)
       VALUES (@id, @workspaceId, @hash, @summaryHash, @updatedAt, @commentCount, @activityCount, @summary, @detail, @run, @run)
       ON CONFLICT (id, hash) DO UPDATE SET last_run = excluded.last_run, summary_hash = excluded.summary_hash, summary = excluded.summary,
         updated_at = excluded.updated_at, comment_count = excluded.comment_count
       RETURNING vid, first_run AS firstRun`
    ),
    insertActivity: db.prepare("INSERT OR REPLACE INTO activity (vid, seq, id, item) VALUES (?, ?, ?, ?)"),
    // An upsert, not INSERT OR REPLACE: a record the run holds already has its row changed
    // in place rather than deleted and inserted again.
    runRecord: db.prepare("INSERT INTO run_records (run_id, id, vid) VALUES (?, ?, ?) ON CONFLICT (run_id, id) DO UPDATE SET vid = excluded.vid"),
    note: db.prepare(
      "INSERT INTO run_notes (run_id, seq, workspace_id, kind, subject, detail) VALUES (?, (SELECT coalesce(max(seq), 0) + 1 FROM run_notes WHERE run_id = ?), ?, ?, ?, ?)"
    ),
    notes: db.prepare("SELECT workspace_id AS workspaceId, kind, subject, detail FROM run_notes WHERE run_id = ? ORDER BY seq"),
    memberVersion: db.prepare(
      `SELECT r.vid AS vid, r.workspace_id AS workspaceId, r.updated_at AS updatedAt
       FROM run_records rr JOIN records r ON r.vid = rr.vid WHERE rr.run_id = ? AND rr.id = ?`
    ),
    memberState: db.prepare(
      `SELECT r.vid AS vid, r.workspace_id AS workspaceId, r.updated_at AS updatedAt, r.detail AS detail
       FROM run_records rr JOIN records r ON r.vid = rr.vid WHERE rr.run_id = ? AND rr.id = ?`
    ),
    activityItems: db.prepare("SELECT item FROM activity WHERE vid = ? ORDER BY seq").pluck(),
    removeRecordMember: db.prepare("DELETE FROM run_records WHERE run_id = ? AND id = ?"),
    bumpRecords: db.prepare(
      "UPDATE records SET last_run = @run WHERE vid IN (SELECT vid FROM run_records WHERE run_id = @run) AND last_run < @run"
    ),
    putObject: db.prepare("INSERT INTO file_objects (sha256, size) VALUES (?, ?) ON CONFLICT (sha256) DO NOTHING"),
    runObject: db.prepare("INSERT OR REPLACE INTO run_file_objects (run_id, file_id, sha256) VALUES (?, ?, ?)"),
    addReread: db.prepare("INSERT INTO mirror_rereads (record_id, event) VALUES (?, ?) RETURNING seq"),
    rereads: db.prepare("SELECT seq, record_id AS recordId, event FROM mirror_rereads ORDER BY seq"),
    rereadDone: db.prepare("DELETE FROM mirror_rereads WHERE record_id = ? AND seq <= ?")
  }

  const plain = (table: PlainEntity, withWorkspace: boolean) => {
    const upsert = db.prepare(
      withWorkspace
        ? `INSERT INTO ${table} (id, workspace_id, hash, item, first_run, last_run) VALUES (?, ?, ?, ?, ?, ?)
           ON CONFLICT (id, hash) DO UPDATE SET last_run = excluded.last_run RETURNING vid`
        : `INSERT INTO ${table} (id, hash, item, first_run, last_run) VALUES (?, ?, ?, ?, ?)
           ON CONFLICT (id, hash) DO UPDATE SET last_run = excluded.last_run RETURNING vid`
    )
    const member = db.prepare(`INSERT OR REPLACE INTO run_${table} (run_id, id, vid) VALUES (?, ?, ?)`)
    return (runId: number, items: ReadonlyArray<{ readonly id: string }>, extra?: { key: string; value: string }) =>
      db.transaction(() => {
        for (const item of items) {
          const stored = extra === undefined ? JSON.stringify(item) : withKey(item, extra.key, extra.value)
          const hash = contentHash(extra === undefined ? item : { ...item, [extra.key]: extra.value })
          const row = (withWorkspace
            ? upsert.get(item.id, extra?.value ?? "", hash, stored, runId, runId)
            : upsert.get(item.id, hash, stored, runId, runId)) as { vid: number }
          member.run(runId, item.id, row.vid)
        }
      })()
  }
  const putWorkspaces = plain("workspaces", false)
  const putUsers = plain("users", false)
  const putLists = plain("lists", true)
  const putFiles = plain("files", true)

  const now = () => new Date().toISOString()

  const writeRecord = (runId: number, e: RecordEntry): void => {
    if (e.kind === "keep") {
      s.runRecord.run(runId, e.id, e.vid)
      return
    }
    // The activity of a version reused as it is stored: parsed for the hash, its text written again as it was.
    const stored = "reuseFrom" in e.activity ? s.activityItems.all(e.activity.reuseFrom) as Array<string> : undefined
    const activity: ReadonlyArray<object> = stored !== undefined
      ? stored.map((item) => JSON.parse(item) as object)
      : (e.activity as ReadonlyArray<object>).map((item) => ({ ...item, recordId: e.summary.id }))
    const detail = { ...e.detail, workspaceId: e.workspaceId }
    const hash = contentHash({ detail, activity })
    const commentCount = (e.detail as { commentCount?: unknown }).commentCount
    const row = s.upsertRecord.get({
      id: e.summary.id,
      workspaceId: e.workspaceId,
      hash,
      summaryHash: contentHash(e.summary),
      updatedAt: e.summary.updatedAt ?? null,
      commentCount: typeof commentCount === "number" ? commentCount : null,
      activityCount: activity.length,
      summary: JSON.stringify(e.summary),
      detail: JSON.stringify(detail),
      run: runId
    }) as { vid: number; firstRun: number }
    // A version seen before already has its activity rows.
    if (row.firstRun === runId) {
      activity.forEach((item, seq) => {
        s.insertActivity.run(row.vid, seq, String((item as { id?: unknown }).id ?? seq), stored?.[seq] ?? JSON.stringify(item))
      })
    }
    s.runRecord.run(runId, e.summary.id, row.vid)
  }

  return {
    file,
    db: db as SqliteDatabase,
    lockWriter: lockStore("snapshot", file),
    /** Starts a run; any run still marked running (a killed process) is marked failed first. */
    beginRun: (scope: string, full: boolean) =>
      run("begin run", () =>
        db.transaction(() => {
          s.abandonRunning.run(now())
          return (s.insertRun.get(scope, now(), full ? 1 : 0) as { id: number }).id
        })()
      ),
    completeRun: (runId: number, stats: unknown) =>
      run("complete run", () =>
        db.transaction(() => {
          s.bumpRecords.run({ run: runId })
          // A run no longer marked running (failed by another writer) is never reported complete.
          if (s.completeRun.run(now(), JSON.stringify(stats), runId).changes !== 1) {
            throw new Error(`run ${runId} is no longer running (another process marked it failed)`)
          }
        })()
      ),
    /** Marks a run failed; a failed run never counts for comparisons or deletions. */
    failRun: (runId: number, error: string, stats: unknown) =>
      run("fail run", () => void s.failRun.run(now(), error, JSON.stringify(stats ?? null), runId)),
    getRun: (runId: number) => run("read run", () => {
      const r = s.getRun.get(runId) as Record<string, unknown> | undefined
      return r === undefined ? undefined : runRow(r)
    }),
    listRuns: run("list runs", () => (s.listRuns.all() as Array<Record<string, unknown>>).map(runRow)),
    latestComplete: run("find latest complete run", () => {
      const r = s.latestComplete.get() as Record<string, unknown> | undefined
      return r === undefined ? undefined : runRow(r)
    }),
    /** The complete run of `scope` just before `beforeId`. */
    previousComplete: (scope: string, beforeId: number) =>
      run("find previous complete run", () => {
        const r = s.previousComplete.get(scope, beforeId) as Record<string, unknown> | undefined
        return r === undefined ? undefined : runRow(r)
      }),
    latestRecordVersion: (id: string) =>
      run("look up record", () => s.latestRecord.get(id) as RecordVersionRef | undefined),
    putRecords: (runId: number, entries: ReadonlyArray<RecordEntry>) =>
      run("write records", () =>
        db.transaction(() => {
          for (const e of entries) writeRecord(runId, e)
        })()
      ),
    putWorkspaces: (runId: number, items: ReadonlyArray<{ readonly id: string }>) =>
      run("write workspaces", () => putWorkspaces(runId, items)),
    putUsers: (runId: number, items: ReadonlyArray<{ readonly id: string }>) =>
      run("write users", () => putUsers(runId, items)),
    putLists: (runId: number, workspaceId: string, items: ReadonlyArray<{ readonly id: string }>) =>
      run("write lists", () => putLists(runId, items, { key: "workspaceId", value: workspaceId })),
    putFiles: (runId: number, workspaceId: string, items: ReadonlyArray<{ readonly id: string }>) =>
      run("write files", () => putFiles(runId, items, { key: "workspaceId", value: workspaceId })),
    note: (runId: number, n: RunNote) =>
      run("write run note", () =>
        void s.note.run(
          runId,
          runId,
          n.workspaceId,
          n.kind,
          n.subject ?? null,
          n.detail === undefined ? null : JSON.stringify(n.detail)
        )
      ),
    notes: (runId: number) =>
      run("read run notes", () =>
        (s.notes.all(runId) as Array<{ workspaceId: string | null; kind: string; subject: string | null; detail: string | null }>)
          .map((n) => ({ ...n, detail: n.detail === null ? null : JSON.parse(n.detail) as unknown }))
      ),
    /**
     * Makes run `to` hold exactly what run `from` holds (every membership table), in one
     * transaction: the mirror's run starts as a copy of the run that reconciled it.
     */
    copyMembership: (from: number, to: number) =>
      run("copy run membership", () =>
        db.transaction(() => {
          for (const t of MEMBERSHIP) {
            db.prepare(`DELETE FROM run_${t} WHERE run_id = ?`).run(to)
            db.prepare(`INSERT INTO run_${t} (run_id, id, vid) SELECT ?, id, vid FROM run_${t} WHERE run_id = ?`).run(to, from)
          }
        })()
      ),
    dropRun: (runId: number) =>
      run("drop run", () =>
        db.transaction(() => {
          for (const t of RUN_OWNED) db.prepare(`DELETE FROM ${t} WHERE run_id = ?`).run(runId)
          db.prepare("DELETE FROM runs WHERE id = ?").run(runId)
        })()
      ),
    /** Removes items from one run's membership (a record or list deleted since). */
    removeMembers: (table: "records" | "lists" | "files", runId: number, ids: ReadonlyArray<string>) =>
      run(`remove ${table} from run`, () =>
        db.transaction(() => {
          const del = db.prepare(`DELETE FROM run_${table} WHERE run_id = ? AND id = ?`)
          let removed = 0
          for (const id of ids) removed += del.run(runId, id).changes
          return removed
        })()
      ),
    /** The version of a record a run holds, if any. */
    memberVersion: (runId: number, id: string) =>
      run("look up run member", () => s.memberVersion.get(runId, id) as MemberVersion | undefined),
    memberVersions: (runId: number, ids: ReadonlyArray<string>) =>
      run("look up run members", () =>
        // One transaction: each statement on its own would take and release the file's locks.
        db.transaction(() => {
          const found = new Map<string, MemberVersion>()
          for (const id of ids) {
            const v = s.memberVersion.get(runId, id) as MemberVersion | undefined
            if (v !== undefined) found.set(id, v)
          }
          return found
        })()
      ),
    changeMembers: (runId, changes) =>
      run("change records of the run", () =>
        // One transaction: each statement on its own would take and release the file's
        // locks, and each commit append to its log.
        db.transaction(() => {
          for (const ask of changes) {
            const { change, id } = ask
            const v = s.memberState.get(runId, id) as Omit<MemberState, "activity"> | undefined
            const next = change(v === undefined ? undefined : { ...v, activity: s.activityItems.all(v.vid) as Array<string> })
            if (next === "remove") s.removeRecordMember.run(runId, id)
            else if (next !== undefined) writeRecord(runId, next)
            // After the change, which may take the removal back (MemberChangeAsk).
            if (ask.rereadDone !== undefined) s.rereadDone.run(id, ask.rereadDone)
          }
        })()
      ),
    /** Counts of one run's membership tables. */
    counts: (runId: number) =>
      run("count run", () => {
        const one = (sql: string) => (db.prepare(sql).get(runId) as { n: number }).n
        return {
          workspaces: one("SELECT count(*) AS n FROM run_workspaces WHERE run_id = ?"),
          records: one("SELECT count(*) AS n FROM run_records WHERE run_id = ?"),
          activities: one(
            "SELECT coalesce(sum(r.activity_count), 0) AS n FROM run_records rr JOIN records r ON r.vid = rr.vid WHERE rr.run_id = ?"
          ),
          files: one("SELECT count(*) AS n FROM run_files WHERE run_id = ?")
        }
      }),
    putFileObjects: (runId: number, refs: ReadonlyArray<FileObjectRef>) =>
      run("write file objects", () =>
        db.transaction(() => {
          for (const r of refs) {
            s.putObject.run(r.sha256, r.size)
            s.runObject.run(runId, r.fileId, r.sha256)
          }
        })()
      ),
    forgetRuns: (runIds: ReadonlyArray<number>) => run("forget runs", () => forgetRunsIn(db, runIds)),
    storageBytes: run("measure snapshot", () => fileBytes(file)),
    compact: run("compact snapshot", () => {
      db.exec("VACUUM")
      // VACUUM in WAL mode writes the new file through the log: fold it back in and empty it.
      db.pragma("wal_checkpoint(TRUNCATE)")
    }),
    integrityCheck: run("check the file's integrity", () => {
      try {
        return (db.pragma("integrity_check") as Array<{ integrity_check: string }>).map((r) => r.integrity_check).filter((t) => t !== "ok")
      } catch (e) {
        // Damage bad enough that the check itself stops is its finding, not a failure to check.
        if (/^SQLITE_(CORRUPT|NOTADB)/.test((e as { code?: string }).code ?? "")) return [`SQLite: ${(e as Error).message}`]
        throw e
      }
    }),
    addVerification: (v) =>
      run("record the verification", () =>
        void db.prepare("INSERT INTO verifications (run_id, verified_at, ok, checks) VALUES (?, ?, ?, ?)")
          .run(v.runId, v.verifiedAt, v.ok ? 1 : 0, JSON.stringify(v.checks))
      ),
    addMirrorRereads: (asks) =>
      run("keep the records to read again", () =>
        db.transaction(() => asks.map((a) => (s.addReread.get(a.recordId, a.event) as { seq: number }).seq))()
      ),
    mirrorRereads: run("read the records to read again", () => s.rereads.all() as Array<MirrorReread>),
    mirrorRereadDone: (recordId, seq) => run("remove a record read again", () => void s.rereadDone.run(recordId, seq)),
    select: <A>(operation: string, query: SnapshotQuery) =>
      run(operation, () => statement(query.sql).all(...(query.params ?? [])) as Array<A>),
    runRecordDetails: (runId: number, workspaceId: string) =>
      Stream.map(
        streamRows<{ detail: string }>("read the run's records", {
          sql: `SELECT r.detail AS detail FROM run_records rr JOIN records r ON r.vid = rr.vid
                WHERE rr.run_id = ? AND r.workspace_id = ?
                ORDER BY json_extract(r.detail, '$.todoList.id'),
                  CASE WHEN json_type(r.detail, '$.position') IN ('integer', 'real') THEN 0 ELSE 1 END,
                  json_extract(r.detail, '$.position'), r.id`,
          params: [runId, workspaceId]
        }),
        (row) => row.detail
      ),
    stream: streamRows
  }
}

/** Opens (creating it when missing, unless `mustExist`) the snapshot file for the scope. */
export const openSqliteSnapshot = (file: string, options: { readonly mustExist?: boolean } = {}) =>
  Effect.map(
    openDatabase(file, { migrations: SNAPSHOT_MIGRATIONS, ...(options.mustExist === true ? { mustExist: true } : {}) }),
    (db) => makeStore(db, file)
  )
