/**
 * Backup: reads workspaces, users, lists, record summaries (stable scan), record
 * details and activity, and file metadata into a new run of the snapshot; with `files`,
 * the bytes of the CONFIRMED files too, as objects of the files directory (backup-files.ts).
 *
 * Incremental: get-record and list-record-activity are called only for records whose
 * summary changed since the version last stored (content hash or updatedAt); activity
 * is carried over when neither updatedAt nor the comment count moved. `full`
 * refetches everything.
 *
 * Records are scanned twice per workspace, with `archived: false` and `archived: true`
 * sent explicitly: the documents leave open whether list-records without the filter
 * includes archived records, and the backup must be complete under either reading.
 *
 * A run that fails or is interrupted is marked failed and marks nothing deleted
 * (deletions exist only as differences between complete runs); versions it already
 * stored are reused by the next run, which therefore resumes without refetching them.
 */
import * as Cause from "effect/Cause"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import * as Stream from "effect/Stream"
import { isNotFound } from "../client/errors.ts"
import { RestClient } from "../client/rest-client.ts"
import type { ActivityItem } from "../schema/activity.ts"
import { PAGE_MAX_LIMIT } from "../schema/limits.ts"
import type { RecordDetail, RecordSummary } from "../schema/records.ts"
import { type Workspace, workspaceSlug } from "../schema/workspaces.ts"
import { recordActivityStream } from "../streams/activity.ts"
import { listsStream, usersStream, workspacesStream } from "../streams/directory.ts"
import { PageError, sequentialPages } from "../streams/paging.ts"
import { countRecords, recordsFetch } from "../streams/records.ts"
import { type ScanReport, type ScanUnstable, stableFileScan, stableRecordScan } from "../streams/stable-scan.ts"
import { scratchKeys } from "../store/scratch-keys.ts"
import { contentHash } from "../store/snapshot-hash.ts"
import type { StoreOpenError } from "../store/sqlite.ts"
import type { StoreBusy, StoreLockError } from "../store/file-lock.ts"
import type { ObjectStoreError } from "../store/object-store.ts"
import { type RecordEntry, scopeOf, type SnapshotError, SnapshotStore, type SnapshotStoreService } from "../store/snapshot.ts"
import { backupFileBytes, type BackupFilesOptions, type FileBytes } from "./backup-files.ts"
import { type ChangeCounts, diffCounts } from "./diff.ts"

export interface BackupProgress {
  /** Records finished (kept or fetched). */
  readonly advance: (n: number) => Effect.Effect<void>
  /** Records expected (the sum of the workspaces' counts as they become known). */
  readonly setTotal: (n: number) => Effect.Effect<void>
}

export interface BackupOptions {
  /** Workspace ids (or slugs) to back up; empty or omitted: every workspace. */
  readonly workspaces?: ReadonlyArray<string> | undefined
  /** Refetch every detail and activity list, ignoring what the snapshot holds. */
  readonly full?: boolean | undefined
  /**
   * Re-read each record's detail and activity at least every this many runs, whatever its
   * summary says (rolling: about 1/N of the records a run). Default 7; 0 turns it off.
   * The documents do not say that every change (a comment, a checklist, a custom field)
   * moves `updatedAt` (assumptions.ts UPDATED_AT_ON_EVERY_CHANGE).
   */
  readonly refreshEvery?: number | undefined
  /** Workspaces read at once. Default 3. */
  readonly workspaceConcurrency?: number | undefined
  /** Pages in flight per paged stream. Default 4. */
  readonly pageConcurrency?: number | undefined
  /** get-record / activity reads in flight per workspace. Default 8. */
  readonly detailConcurrency?: number | undefined
  /** Records written per transaction. Default 200. */
  readonly batchSize?: number | undefined
  readonly progress?: BackupProgress | undefined
  /** The caller already holds the snapshot's lock (a mirror reconciling its own snapshot). */
  readonly lockHeld?: boolean | undefined
  /** Also store the bytes of every CONFIRMED file in the files directory (`backup --files DIR`). */
  readonly files?: BackupFilesOptions | undefined
}

/** The contract's `backup --json` object. */
export interface BackupResult {
  readonly runId: string
  readonly workspaces: number
  readonly records: number
  readonly activities: number
  readonly files: number
  readonly changes: ChangeCounts
  /** With `files`: objects stored, files whose bytes were there already, bytes written. */
  readonly fileBytes?: FileBytes
}

/** A workspace named for the backup does not exist (or is not visible to the token). */
export class WorkspaceNotFound extends Data.TaggedError("WorkspaceNotFound")<{
  readonly workspace: string
  readonly known: number
}> {
  override get message(): string {
    return `workspace ${this.workspace} not found among the ${this.known} workspaces the token can read`
  }
}

export type BackupError = PageError | ScanUnstable | SnapshotError | StoreBusy | StoreLockError | StoreOpenError | WorkspaceNotFound | ObjectStoreError

interface Counters {
  refreshed: number
  detailsFetched: number
  activityFetched: number
  activityReused: number
  kept: number
  vanished: number
}

/**
 * Resolves the named workspaces against the readable ones, in the order named: by id, or
 * by slug when the service sends one (the documents name only a workspace's id).
 */
const selectWorkspaces = (all: ReadonlyArray<Workspace>, named: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    if (named.length === 0) return [...all].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
    const out: Array<Workspace> = []
    for (const name of named) {
      const ws = all.find((w) => w.id === name) ?? all.find((w) => workspaceSlug(w) === name)
      if (ws === undefined) return yield* new WorkspaceNotFound({ workspace: name, known: all.length })
      if (!out.some((w) => w.id === ws.id)) out.push(ws)
    }
    return out
  })

/** One workspace named by id or slug (restore and migrate name their workspaces so). */
export const findWorkspace = (name: string): Effect.Effect<Workspace, PageError | WorkspaceNotFound, RestClient> =>
  Effect.gen(function*() {
    const all = yield* Stream.runCollect(workspacesStream())
    return (yield* selectWorkspaces([...all], [name]))[0]!
  })

export const DEFAULT_REFRESH_EVERY = 7

/** FNV-1a of an id: spreads records evenly over the refresh cycle. */
const idHash = (id: string): number => {
  let h = 0x811c9dc5
  for (let i = 0; i < id.length; i++) h = Math.imul(h ^ id.charCodeAt(i), 0x01000193) >>> 0
  return h
}

/**
 * Whether run `runId` re-reads record `id` in full: every record once in `every`
 * consecutive runs, about 1/`every` of them each run.
 */
export const refreshDue = (id: string, runId: number, every: number): boolean =>
  every > 0 && (idHash(id) + runId) % every === 0

/** One record: keep the stored version, or fetch what changed. Undefined: it vanished meanwhile. */
const recordEntry = (
  store: SnapshotStoreService,
  client: typeof RestClient.Service,
  workspaceId: string,
  summary: RecordSummary,
  full: boolean,
  counters: Counters,
  pageConcurrency: number
): Effect.Effect<RecordEntry | undefined, PageError | SnapshotError, RestClient> =>
  Effect.gen(function*() {
    const previous = yield* store.latestRecordVersion(summary.id)
    if (!full && previous !== undefined && previous.updatedAt === summary.updatedAt) {
      if (previous.summaryHash === contentHash(summary)) {
        counters.kept++
        return { kind: "keep", id: summary.id, vid: previous.vid } satisfies RecordEntry
      }
    }
    const detail = yield* client.getRecord({ workspaceId, recordId: summary.id }).pipe(
      Effect.map(Option.some<RecordDetail>),
      Effect.catchIf(isNotFound, () => Effect.succeed(Option.none<RecordDetail>())),
      Effect.mapError((cause) =>
        new PageError({ operation: "get-record", workspaceId, recordId: summary.id, skip: 0, limit: 0, cause })
      )
    )
    if (Option.isNone(detail)) {
      counters.vanished++
      return undefined
    }
    counters.detailsFetched++
    const reuse = !full && previous !== undefined && previous.updatedAt === detail.value.updatedAt &&
      previous.commentCount === detail.value.commentCount
    if (reuse) {
      counters.activityReused++
      return {
        kind: "version",
        workspaceId,
        summary,
        detail: detail.value,
        activity: { reuseFrom: previous.vid }
      } satisfies RecordEntry
    }
    const activity: ReadonlyArray<ActivityItem> = yield* Stream.runCollect(
      recordActivityStream({ workspaceId, recordId: summary.id }, { concurrency: pageConcurrency })
    ).pipe(
      Effect.map((c) => [...c]),
      // The record was deleted between get-record and its activity: keep the detail without it.
      Effect.catchIf((e) => isNotFound(e.cause), () => Effect.succeed([] as Array<ActivityItem>))
    )
    counters.activityFetched++
    return { kind: "version", workspaceId, summary, detail: detail.value, activity } satisfies RecordEntry
  })

/** The two scans of a backup: the filter is always sent, so either reading of its default gives everything. */
const ARCHIVED_FILTERS = [false, true] as const

/** Backs up one workspace into the run; returns its scan reports (live records, archived records, files). */
const backupWorkspace = (
  store: SnapshotStoreService,
  runId: number,
  workspace: Workspace,
  options: BackupOptions,
  counters: Counters,
  vanishedIds: Array<string>,
  total: Ref.Ref<number>
): Effect.Effect<ReadonlyArray<ScanReport>, BackupError, RestClient> =>
  // Scoped: the ids seen are kept in scratch files (store/scratch-keys.ts) for the workspace's backup.
  Effect.scoped(Effect.gen(function*() {
    const client = yield* RestClient
    const pageConcurrency = options.pageConcurrency ?? 4
    const lists = yield* Stream.runCollect(listsStream(workspace.id))
    // The lists' workspace is the one asked for (putLists adds it); their order is the array's.
    yield* store.putLists(runId, workspace.id, [...lists])

    // A record whose `archived` flips between the two scans may be listed by both: stored
    // once. The ids are kept in a scratch file, not the heap (with the scan's own, below:
    // about 66 bytes a record as two sets).
    const seen = yield* scratchKeys("backup-ids")
    /** The records of a chunk (a page, as the scans emit them) listed for the first time, noted in one transaction. */
    const firstSightings = (chunk: ReadonlyArray<RecordSummary>): Array<RecordSummary> =>
      seen.batch(() => chunk.filter((summary) => seen.see(summary.id)))
    // Each scan's own ids (stable-scan.ts `seenIds`), emptied for each scan.
    const scanned = yield* scratchKeys("backup-scan-ids")
    const seenIds = () => {
      scanned.clear()
      return scanned
    }
    const every = options.refreshEvery ?? DEFAULT_REFRESH_EVERY
    /** The whole run refetches, or this record's turn in the rolling refresh came. */
    const refetch = (id: string): boolean => {
      if (options.full === true) return true
      if (!refreshDue(id, runId, every)) return false
      counters.refreshed++
      return true
    }
    /** Fetches what changed of each record seen for the first time, and stores it in batches. */
    const backUpRecords = (records: Stream.Stream<RecordSummary, BackupError, RestClient>) =>
      records.pipe(
        Stream.mapArray((chunk) => [firstSightings(chunk)] as const),
        Stream.flattenIterable,
        Stream.mapEffect(
          (summary) =>
            recordEntry(store, client, workspace.id, summary, refetch(summary.id), counters, pageConcurrency).pipe(
              Effect.tap((entry) => {
                if (entry === undefined) vanishedIds.push(summary.id)
                return options.progress?.advance(1) ?? Effect.void
              })
            ),
          { concurrency: options.detailConcurrency ?? 8 }
        ),
        Stream.filter((e): e is RecordEntry => e !== undefined),
        Stream.grouped(options.batchSize ?? 200),
        Stream.runForEach((chunk) => store.putRecords(runId, [...chunk]))
      )

    const reports: Array<ScanReport> = []
    for (const archived of ARCHIVED_FILTERS) {
      const scan = yield* stableRecordScan(workspace.id, {
        archived,
        seenIds,
        concurrency: pageConcurrency,
        onCount: (n) =>
          Effect.flatMap(Ref.updateAndGet(total, (t) => t + n), (t) => options.progress?.setTotal(t) ?? Effect.void)
      })
      yield* backUpRecords(scan.records)
      reports.push(yield* scan.report)
    }
    // A record whose `archived` flipped while the scan of its new value had passed it is
    // in neither: when the counts now hold more records than were seen, both filters are
    // read once more and what was missed is added.
    const counts = yield* Effect.forEach(ARCHIVED_FILTERS, (archived) => countRecords({ workspaceId: workspace.id, archived }))
    const counted = counts.reduce<number | null>((sum, c) => (sum === null || c === null ? null : sum + c), 0)
    if (counted !== null && counted > seen.count()) {
      for (const archived of ARCHIVED_FILTERS) {
        const fetch = yield* recordsFetch({ workspaceId: workspace.id, archived })
        yield* backUpRecords(sequentialPages(fetch, PAGE_MAX_LIMIT))
      }
    }

    const files = yield* stableFileScan(workspace.id, { concurrency: pageConcurrency })
    yield* files.records.pipe(
      Stream.grouped(500),
      Stream.runForEach((chunk) => store.putFiles(runId, workspace.id, [...chunk]))
    )
    reports.push(yield* files.report)
    return reports
  }))

/** Runs one backup into the snapshot from the context. */
export const backup = (options: BackupOptions = {}): Effect.Effect<BackupResult, BackupError, RestClient | SnapshotStore> =>
  Effect.scoped(Effect.gen(function*() {
    const store = yield* SnapshotStore
    // One backup per snapshot at a time: a second one would take the first's run for a
    // killed one and mark it failed under it.
    if (options.lockHeld !== true) yield* store.lockWriter
    if (options.files !== undefined) yield* options.files.objects.lock
    const all = yield* Stream.runCollect(workspacesStream())
    const selected = yield* selectWorkspaces([...all], options.workspaces ?? [])
    const scope = scopeOf(options.workspaces === undefined || options.workspaces.length === 0 ? [] : selected.map((w) => w.id))
    const runId = yield* store.beginRun(scope, options.full === true)
    const counters: Counters = { refreshed: 0, detailsFetched: 0, activityFetched: 0, activityReused: 0, kept: 0, vanished: 0 }
    const vanishedIds: Array<string> = []
    const reports = yield* Ref.make<Array<ScanReport>>([])
    const total = yield* Ref.make(0)
    const stats = Effect.map(Ref.get(reports), (scans) => ({ ...counters, scans }))

    const work = Effect.gen(function*() {
      yield* store.putWorkspaces(runId, selected)
      const users = yield* Stream.runCollect(usersStream({}, { concurrency: options.pageConcurrency ?? 4 }))
      yield* store.putUsers(runId, [...users])
      yield* Effect.forEach(
        selected,
        (workspace) =>
          Effect.flatMap(
            backupWorkspace(store, runId, workspace, options, counters, vanishedIds, total),
            (scans) =>
              Effect.andThen(
                Ref.update(reports, (r) => [...r, ...scans]),
                Effect.forEach(scans, (report) => store.note(runId, { workspaceId: workspace.id, kind: "scan", detail: report }))
              )
          ),
        { concurrency: options.workspaceConcurrency ?? 3, discard: true }
      )
      for (const id of vanishedIds) {
        yield* store.note(runId, { workspaceId: null, kind: "vanished", subject: id, detail: "listed, then not found by get-record" })
      }
      // After every workspace's file metadata: the bytes of the run's CONFIRMED files. A
      // file left without its bytes is noted; the run is complete for everything else.
      const bytes = options.files === undefined ? undefined : yield* backupFileBytes(store, runId, options.files)
      for (const f of bytes?.skipped ?? []) {
        yield* store.note(runId, {
          workspaceId: f.workspaceId,
          kind: "file-skipped",
          subject: `file ${f.fileId} (${JSON.stringify(f.name)})`,
          detail: f.reason
        })
      }
      const fileBytes = bytes === undefined ? undefined : { stored: bytes.stored, reused: bytes.reused, bytes: bytes.bytes }
      const previous = yield* store.previousComplete(scope, runId)
      const changes = yield* diffCounts(store, "records", previous?.id ?? 0, runId)
      const counts = yield* store.counts(runId)
      yield* store.completeRun(runId, {
        ...(yield* stats),
        previousRun: previous?.id ?? null,
        changes,
        ...(bytes === undefined ? {} : { fileBytes: { ...fileBytes, skipped: bytes.skipped.length } })
      })
      return {
        runId: String(runId),
        workspaces: counts.workspaces,
        records: counts.records,
        activities: counts.activities,
        files: counts.files,
        changes,
        ...(fileBytes === undefined ? {} : { fileBytes })
      } satisfies BackupResult
    })

    return yield* work.pipe(
      Effect.onExit((exit) =>
        Exit.isSuccess(exit)
          ? Effect.void
          : Effect.flatMap(stats, (s) =>
            store.failRun(runId, failureText(exit), s).pipe(Effect.ignore))
      )
    )
  }))

const failureText = (exit: Exit.Exit<unknown, unknown>): string => {
  if (Exit.isSuccess(exit)) return ""
  if (Cause.hasInterruptsOnly(exit.cause)) return "interrupted"
  const failure = Cause.squash(exit.cause)
  if (typeof failure === "object" && failure !== null && "message" in failure) {
    return String((failure as { message: unknown }).message)
  }
  return String(failure)
}
