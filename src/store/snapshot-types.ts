/**
 * The snapshot store's contract, shared by its backends (SQLite in snapshot-sqlite.ts,
 * PostgreSQL in snapshot-postgres.ts): the errors, the shapes a run is written and read
 * in, and the service every caller sees. Nothing here knows which backend it has.
 */
import * as Data from "effect/Data"
import type * as Effect from "effect/Effect"
import type * as Stream from "effect/Stream"
import type * as Scope from "effect/Scope"
import type { StoreBusy, StoreLockError } from "./file-lock.ts"
import type { SnapshotConsistency } from "./snapshot-consistency.ts"
import type { SnapshotDiff } from "./snapshot-diff.ts"
import type { SnapshotReads } from "./snapshot-reads.ts"

/** A query or write on the snapshot failed. */
export class SnapshotError extends Data.TaggedError("SnapshotError")<{
  readonly file: string
  readonly operation: string
  readonly detail: string
}> {
  override get message(): string {
    return `snapshot ${this.file}: ${this.operation} failed: ${this.detail}`
  }
}

/** A run id named on the command line or by a caller does not exist or is unusable. */
export class RunNotFound extends Data.TaggedError("RunNotFound")<{
  readonly file: string
  readonly run: string
  readonly detail: string
}> {
  override get message(): string {
    return `snapshot ${this.file}: run ${this.run} ${this.detail}`
  }
}

export type RunStatus = "running" | "complete" | "failed"

export interface RunRow {
  readonly id: number
  readonly scope: string
  readonly started: string
  readonly finished: string | null
  readonly status: RunStatus
  readonly full: boolean
  readonly error: string | null
  readonly stats: unknown
}

/** The latest stored version of a record, for incremental decisions. */
export interface RecordVersionRef {
  readonly vid: number
  readonly summaryHash: string
  readonly updatedAt: string | null
  readonly commentCount: number | null
}

/** One record of a run: either the unchanged stored version or new content. */
export type RecordEntry =
  | { readonly kind: "keep"; readonly id: string; readonly vid: number }
  | {
    readonly kind: "version"
    readonly workspaceId: string
    readonly summary: { readonly id: string; readonly updatedAt?: string | undefined }
    readonly detail: object
    /** Items as fetched, or the stored activity of an earlier version to carry over. */
    readonly activity: ReadonlyArray<object> | { readonly reuseFrom: number }
  }

export interface RunNote {
  readonly workspaceId: string | null
  readonly kind: string
  readonly subject?: string | null | undefined
  readonly detail?: unknown
}

/** Scope of a run: every workspace, or the sorted ids named. */
export const scopeOf = (workspaceIds: ReadonlyArray<string>): string =>
  workspaceIds.length === 0 ? "*" : [...new Set(workspaceIds)].sort().join(",")


export const runRow = (r: Record<string, unknown>): RunRow => ({
  id: r.id as number,
  scope: r.scope as string,
  started: r.started as string,
  finished: (r.finished as string | null) ?? null,
  status: r.status as RunStatus,
  full: r.full === 1,
  error: (r.error as string | null) ?? null,
  stats: typeof r.stats === "string" ? JSON.parse(r.stats) : null
})


/** One file's bytes in a run (`backup --files`): the file, and the object under DIR that holds its bytes. */
export interface FileObjectRef {
  readonly fileId: string
  readonly sha256: string
  readonly size: number
}

/** What `forgetRuns` removed. */
export interface ForgetResult {
  /** Run ids removed, ascending. */
  readonly removedRuns: ReadonlyArray<number>
  /** Stored versions (records, files, lists, users, workspaces) no remaining run held, removed. */
  readonly removedVersions: number
  /** Rows of `file_objects` no remaining run held, removed (their objects go after the commit). */
  readonly removedObjects: number
}


/** The run membership tables, one per versioned entity. */
export const MEMBERSHIP = ["records", "files", "lists", "users", "workspaces"] as const

/** Tables keyed by run besides the membership tables: everything a run alone owns. */
export const RUN_OWNED: ReadonlyArray<string> = [...MEMBERSHIP.map((t) => `run_${t}`), "run_notes", "run_file_objects", "verifications"]

/** The object as JSON with one more key (workspaceId, recordId), as stored and exported. */
export const withKey = (obj: object, key: string, value: string): string => JSON.stringify({ ...obj, [key]: value })

/** A stored record's membership in a run: its version and what the mirror compares. */
export interface MemberVersion {
  readonly vid: number
  readonly workspaceId: string
  readonly updatedAt: string | null
}

/** What a run holds of one record, read together: its version, detail and activity (JSON text, the service's order). */
export interface MemberState extends MemberVersion {
  readonly detail: string
  readonly activity: ReadonlyArray<string>
}

/** What a change makes of a record: a version to hold, the record removed from the run, or nothing written. */
export type MemberChange = RecordEntry | "remove" | undefined

/** One record's change of `changeMembers`. */
export interface MemberChangeAsk {
  readonly id: string
  /** Given what the run holds of the record (by then: after the batch's earlier changes); synchronous, no I/O. */
  readonly change: (held: MemberState | undefined) => MemberChange
  /**
   * Removes the record's `mirror_rereads` rows up to this seq in the same commit. Read
   * after `change`: a change that finds the record elsewhere than its reader expected
   * takes the removal back (sets it undefined) and leaves the rows to the read it does next.
   */
  rereadDone?: number | undefined
}

/**
 * A delivery whose record the mirror reads again (`mirror_rereads`), kept until a read of
 * the record is in the snapshot.
 */
export interface MirrorReread {
  /** Rises with each row: a read removes its record's rows up to the last one it covered. */
  readonly seq: number
  readonly recordId: string
  /** The delivery's event while its line waits for the read; null when it was printed already. */
  readonly event: string | null
}

/** Counts of one run's membership tables. */
export interface RunCounts {
  readonly workspaces: number
  readonly records: number
  readonly activities: number
  readonly files: number
}


/**
 * A read in the SQL every backend speaks: standard SQL over the tables of
 * docs/snapshot.md, `?` placeholders, JSON kept as text and parsed by the caller. Counts
 * and sums come back as numbers on every backend.
 */
export interface SnapshotQuery {
  readonly sql: string
  readonly params?: ReadonlyArray<string | number | null>
}

/**
 * The snapshot store: runs, versioned entities and their membership in runs
 * (docs/snapshot.md). Every operation fails with `SnapshotError` naming the store and
 * what was being done. The named reads (snapshot-reads.ts), the diff between runs
 * (snapshot-diff.ts) and the consistency rules (snapshot-consistency.ts) are written once
 * over `select` and `stream`, and every backend has them.
 */
export interface SnapshotStoreService extends SnapshotReads, SnapshotDiff, SnapshotConsistency {
  /** Where the store is, for messages: a file path, or a database URL without its password. */
  readonly file: string
  /**
   * Holds the store's single-writer lock for the scope (a second writer waits briefly,
   * then fails with StoreBusy). The lock goes with its holder, however it dies.
   */
  readonly lockWriter: Effect.Effect<void, StoreBusy | StoreLockError, Scope.Scope>
  /** Starts a run; any run still marked running (a killed process) is marked failed first. */
  readonly beginRun: (scope: string, full: boolean) => Effect.Effect<number, SnapshotError>
  readonly completeRun: (runId: number, stats: unknown) => Effect.Effect<void, SnapshotError>
  /** Marks a run failed; a failed run never counts for comparisons or deletions. */
  readonly failRun: (runId: number, error: string, stats: unknown) => Effect.Effect<void, SnapshotError>
  readonly getRun: (runId: number) => Effect.Effect<RunRow | undefined, SnapshotError>
  readonly listRuns: Effect.Effect<Array<RunRow>, SnapshotError>
  readonly latestComplete: Effect.Effect<RunRow | undefined, SnapshotError>
  /** The complete run of `scope` just before `beforeId`. */
  readonly previousComplete: (scope: string, beforeId: number) => Effect.Effect<RunRow | undefined, SnapshotError>
  readonly latestRecordVersion: (id: string) => Effect.Effect<RecordVersionRef | undefined, SnapshotError>
  readonly putRecords: (runId: number, entries: ReadonlyArray<RecordEntry>) => Effect.Effect<void, SnapshotError>
  readonly putWorkspaces: (runId: number, items: ReadonlyArray<{ readonly id: string }>) => Effect.Effect<void, SnapshotError>
  readonly putUsers: (runId: number, items: ReadonlyArray<{ readonly id: string }>) => Effect.Effect<void, SnapshotError>
  readonly putLists: (
    runId: number,
    workspaceId: string,
    items: ReadonlyArray<{ readonly id: string }>
  ) => Effect.Effect<void, SnapshotError>
  readonly putFiles: (
    runId: number,
    workspaceId: string,
    items: ReadonlyArray<{ readonly id: string }>
  ) => Effect.Effect<void, SnapshotError>
  readonly note: (runId: number, n: RunNote) => Effect.Effect<void, SnapshotError>
  readonly notes: (runId: number) => Effect.Effect<Array<RunNote & { readonly detail: unknown }>, SnapshotError>
  /** Makes run `to` hold exactly what run `from` holds (every membership table), in one transaction. */
  readonly copyMembership: (from: number, to: number) => Effect.Effect<void, SnapshotError>
  /**
   * Removes a run and its membership (the versions it alone held stay until `forgetRuns`):
   * a mirror's run once the backup after it holds the same state.
   */
  readonly dropRun: (runId: number) => Effect.Effect<void, SnapshotError>
  /** Removes items from one run's membership (a record or list deleted since); returns how many. */
  readonly removeMembers: (
    table: "records" | "lists" | "files",
    runId: number,
    ids: ReadonlyArray<string>
  ) => Effect.Effect<number, SnapshotError>
  /** The version of a record a run holds, if any. */
  readonly memberVersion: (runId: number, id: string) => Effect.Effect<MemberVersion | undefined, SnapshotError>
  /**
   * The versions a run holds of several records, by id (an id the run does not hold is
   * absent), read together: one read transaction, not one per record (the mirror's batch).
   */
  readonly memberVersions: (runId: number, ids: ReadonlyArray<string>) => Effect.Effect<Map<string, MemberVersion>, SnapshotError>
  /**
   * For each record in turn, reads what a run holds of it and writes what its `change`
   * makes of it, all in one transaction (the mirror's reads of records again: each one's
   * compare and write, with its `mirror_rereads` rows removed in the same commit). A
   * change that throws rolls back the whole batch.
   */
  readonly changeMembers: (runId: number, changes: ReadonlyArray<MemberChangeAsk>) => Effect.Effect<void, SnapshotError>
  readonly counts: (runId: number) => Effect.Effect<RunCounts, SnapshotError>
  /** Records which object holds each file's bytes in the run (and the objects' sizes), in one transaction. */
  readonly putFileObjects: (runId: number, refs: ReadonlyArray<FileObjectRef>) => Effect.Effect<void, SnapshotError>
  /**
   * Removes the runs and everything only they held (versions, activity, file rows, the
   * `file_objects` rows no remaining run holds), in one transaction: a crash leaves either
   * every run or none of them removed. The retention decision is the caller's (sync/retention.ts).
   */
  readonly forgetRuns: (runIds: ReadonlyArray<number>) => Effect.Effect<ForgetResult, SnapshotError>
  /** Bytes the store takes: the SQLite file and its WAL, or the PostgreSQL tables of the snapshot. */
  readonly storageBytes: Effect.Effect<number, SnapshotError>
  /** Gives the space of removed rows back (SQLite VACUUM; PostgreSQL VACUUM, reusable by later writes). */
  readonly compact: Effect.Effect<void, SnapshotError>
  /**
   * The record details (JSON text) a run holds of one workspace, in list order: by the
   * list's id, then `position` (a record without a numeric one after the others), then
   * the record's id. A stream fetched in batches, so a restore of any size holds only the
   * batch it is planning; the order is what lets it create each list's records in turn.
   */
  readonly runRecordDetails: (runId: number, workspaceId: string) => Stream.Stream<string, SnapshotError>
  /** Rows of a read (see SnapshotQuery): what the named reads are written over (callers name a read instead). */
  readonly select: <A = Record<string, unknown>>(
    operation: string,
    query: SnapshotQuery
  ) => Effect.Effect<Array<A>, SnapshotError>
  /** The same read as a stream, fetched in batches, so memory stays flat (export). */
  readonly stream: <A = Record<string, unknown>>(operation: string, query: SnapshotQuery) => Stream.Stream<A, SnapshotError>
  /**
   * The backend's own check of its storage, as problems found (none when sound): SQLite's
   * `PRAGMA integrity_check`; on PostgreSQL, the data checksum failures the server counted
   * in the database (the server checks its pages itself).
   */
  readonly integrityCheck: Effect.Effect<Array<string>, SnapshotError>
  /** Records the outcome of a verification of a run (`verifications`, shown by `runs_summary`). */
  readonly addVerification: (verification: Verification) => Effect.Effect<void, SnapshotError>
  /** Keeps the mirror's rereads asked (one row each, in one transaction); their seqs, in order. */
  readonly addMirrorRereads: (
    asks: ReadonlyArray<Omit<MirrorReread, "seq">>
  ) => Effect.Effect<Array<number>, SnapshotError>
  /** The mirror's rereads still to do, oldest first. */
  readonly mirrorRereads: Effect.Effect<Array<MirrorReread>, SnapshotError>
  /** A read of the record is in the snapshot: removes its rows up to `seq` (later asks stay). */
  readonly mirrorRereadDone: (recordId: string, seq: number) => Effect.Effect<void, SnapshotError>
}

/** One verification of a run (`worksync verify`), as recorded. */
export interface Verification {
  readonly runId: number
  /** ISO timestamp. */
  readonly verifiedAt: string
  /** Every check asked for held. */
  readonly ok: boolean
  /** The checks' outcomes, stored as JSON. */
  readonly checks: unknown
}
