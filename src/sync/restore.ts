/**
 * Restore: makes a target workspace hold the records of one snapshot run of a source
 * workspace (or only the records named), replayed exactly once through the journal.
 *
 * Each source record is matched with a target record, then compared with it as it is now
 * (restore-target.ts):
 * - Matched: through the journal's id map (`record:<target>`, made by an earlier restore's
 *   create), or, with no mapping, by the same id (restoring into the workspace the run was
 *   taken from: the record still exists and is updated in place; the id maps to itself).
 * - No target record (never restored, or deleted since): created (`restore:<target>:<id>`,
 *   `...#n` when that key made a record that is gone), then done / archived / color set.
 * - Matched and different: updated (title, description, dates, done, archived, colour,
 *   assignees), and moved when its list differs. Each version's key carries a hash of
 *   its content (`...@<hash>`, `...#n` for a content seen before). Planning a version
 *   supersedes the unfinished ops of the one before it (done without sending): an older
 *   update can never land after a newer one.
 * - Matched and the same: nothing is sent. The description is not in the listing: it
 *   counts as the same when the record's `updatedAt` is the one in the run (in place),
 *   when the journal's latest version of the record has this content, or when
 *   get-record shows it (read only for those records).
 * - Lists and tags are matched by title (missing ones made by list.ensure / tag.ensure
 *   ops); assignees by e-mail among the target's users (unknown e-mails left out and
 *   reported).
 * - With `deleteMissing`, target records that no run record matches are deleted (in the
 *   source workspace: records created after the run). Only from a complete run that holds
 *   records of the source workspace: an empty or partial run would read as "everything
 *   was deleted".
 * - What the documented writes cannot carry is counted in `notRestored`: tags of records
 *   that exist (update-record takes no tags), checklists, custom field values, comments...
 * All-day dates read back as midnight UTC, or as a zoneless midnight (the other reading),
 * are sent as bare dates (assumptions.ts ALL_DAY_READ_FORM).
 * Tags, lists and `archived` need operations beyond the documents: a service without them
 * gets the records without, the result's `notices` say so in one line, and `notRestored`
 * names each on every run of the journal, read from what the journal recorded
 * (capabilities.ts), so a rerun that sends nothing reports it too.
 *
 * - Order within a list: no documented write sets a position, so the run is read a list
 *   at a time by position and each list's creates are sent one at a time in that order
 *   (`inListOrder`): the target keeps the run's order wherever the service appends.
 *
 * The run's records are read from the snapshot a batch at a time (restore-source.ts),
 * planned one at a time (restore-plan.ts), and the plan is written to the journal a batch
 * at a time: neither the run's details nor its plan are ever all in memory. What a restore
 * needs per record is in scratch files of its own, not the heap: the target's listing
 * and the ids its scans read (restore-target.ts), the keys of the updates it planned.
 * A restore stopped while planning leaves the batches it wrote; the rerun resumes their
 * creates and supersedes their updates, as it does after a stop during the replay.
 */
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import type { RestClientApi, RestError } from "../client/rest-client.ts"
import type { FilePortError } from "../connectors/files/ports.ts"
import type { StoreBusy, StoreLockError } from "../store/file-lock.ts"
import type { ObjectStoreError } from "../store/object-store.ts"
import { scratchKeys } from "../store/scratch-keys.ts"
import type { StoreOpenError } from "../store/sqlite.ts"
import type { PageError } from "../streams/paging.ts"
import type { ScanUnstable } from "../streams/stable-scan.ts"
import type { RunRow, SnapshotError, SnapshotStoreService } from "../store/snapshot.ts"
import { type Adoption, type JournalApi, JournalError, type JournalStateError } from "../store/journal.ts"
import { CAPABILITY, listsNotMade, missingCapabilities } from "./capabilities.ts"
import type { Kept } from "./pass-plan.ts"
import { OP_KINDS, PHASES } from "./plan.ts"
import { replay, type ReplayAborted, type ReplayReport } from "./replay.ts"
import { makeRecordExecutors } from "./replay-records.ts"
import { makeRecordPlanner, type PlanBatch, planDeletes, type RecordPlanner } from "./restore-plan.ts"
import {
  type Census,
  holdsRecords,
  makeCensus,
  namedDetails,
  type NotRestored,
  readSource,
  runDetails,
  type SourceRecord,
  type StoredDetail
} from "./restore-source.ts"
import { type FilesRestored, filesNotRestored, restoreFiles, type RestoreFilesOptions, runFiles } from "./restore-files.ts"
import { byPosition, readTarget } from "./restore-target.ts"

export { restoreDate } from "./restore-source.ts"
export type { NotRestored } from "./restore-source.ts"
export type { FileNotRestored, FilesRestored, RestoreFilesOptions } from "./restore-files.ts"
export { versionNamespace } from "./restore-plan.ts"

export class RestoreError extends Data.TaggedError("RestoreError")<{ readonly message: string }> {}

export interface RestoreOptions {
  readonly run: RunRow
  readonly sourceWorkspaceId: string
  readonly targetWorkspaceId: string
  /** Only these source records (point-in-time restore of single records). */
  readonly records?: ReadonlyArray<string>
  readonly concurrency?: number
  /** Plan only: count what would be sent. */
  readonly dryRun?: boolean
  /** Delete target records that no run record matches (see above). */
  readonly deleteMissing?: boolean
  /** What the journal is for (meta `kind`): a migration restores into its own journal. Default "restore". */
  readonly journalKind?: string
  /**
   * `--files DIR`: upload the run's files the target lacks from the bytes `backup --files`
   * stored (restore-files.ts). Only for a whole run, not for records named.
   */
  readonly files?: RestoreFilesOptions | undefined
  /** Delta passes of a migration (restore-plan.ts `delta`): fields edited on the target since the last pass are kept. */
  readonly delta?: { readonly overwriteTargetEdits: boolean } | undefined
  /** A migration's mapping files: each source record as the target is to have it (migrate/mapped-source.ts). */
  readonly mapSource?: ((r: SourceRecord) => SourceRecord) | undefined
}

export interface RestoreResult {
  /** Source records restored (all of the run's, or those named). */
  readonly records: number
  readonly planned: { readonly creates: number; readonly updates: number; readonly moves: number; readonly deletes: number }
  /** Records the target already holds as the run has them. */
  readonly unchanged: number
  readonly created: number
  readonly updated: number
  readonly deleted: number
  readonly failed: number
  readonly unknown: number
  /** Assignee e-mails with no user on the target (left out). */
  readonly unknownAssignees: ReadonlyArray<string>
  /** What the documented interface cannot restore, counted (the contract's `notRestored`). */
  readonly notRestored: ReadonlyArray<NotRestored>
  /** What was left out because the service lacks an operation beyond the documents, one line each. */
  readonly notices: ReadonlyArray<string>
  /** Records found by title and taken as what a create of unknown outcome made (see ImportResult.adopted). */
  readonly adopted: ReadonlyArray<Adoption>
  /** With `files`: what became of the run's files (planned, in a dry run). */
  readonly files?: FilesRestored | undefined
  /** Delta passes: fields edited on the target since the last pass, kept (not written). */
  readonly kept: ReadonlyArray<Kept>
  /** Delta passes: the source records of `kept`. */
  readonly keptRecords: ReadonlySet<string>
  /** Delta passes: source records whose target record was deleted there since the last pass (kept deleted). */
  readonly deletedOnTarget: ReadonlySet<string>
  /** Titles of the lists and tags planned to be made (the target lacked them). */
  readonly toMake: { readonly lists: ReadonlyArray<string>; readonly tags: ReadonlyArray<string> }
}

/** Source records planned per journal transaction. */
const PLAN_BATCH = 500

const refuse = (message: string) => Effect.fail(new RestoreError({ message }))

/** The journal belongs to this target and this kind of job, and the options fit each other and the run. */
const checkRequest = (journal: JournalApi, options: RestoreOptions, journalKind: string) =>
  Effect.gen(function*() {
    const target = options.targetWorkspaceId
    const owner = Option.getOrUndefined(yield* journal.getMeta("target.workspace"))
    if (owner !== undefined && owner !== target) {
      return yield* refuse(`journal ${journal.file} belongs to workspace ${owner}, not ${target}; use another journal file`)
    }
    const kind = Option.getOrUndefined(yield* journal.getMeta("kind"))
    if (kind !== undefined && kind !== journalKind) {
      return yield* refuse(`journal ${journal.file} was planned by ${kind}, not by a ${journalKind}; use another journal file`)
    }
    if (options.deleteMissing === true && options.records !== undefined) {
      return yield* refuse("deleting what the run lacks restores the whole run: do not name single records with it")
    }
    if (options.deleteMissing === true && options.run.status !== "complete") {
      return yield* refuse(`run ${options.run.id} is ${options.run.status}: deleting what it lacks needs a complete run`)
    }
  })

/** The order `runDetails` reads a run in: by list id, then position (restore-target.ts `byPosition`). */
const inListOrder = (a: StoredDetail, b: StoredDetail): number => {
  const list = (d: StoredDetail) => String((d.todoList as { id?: unknown } | null | undefined)?.id ?? "")
  const la = list(a)
  const lb = list(b)
  return la < lb ? -1 : la > lb ? 1 : byPosition(a, b)
}

/**
 * The details to restore, checked before anything is written: the named records (each
 * one in the run, else RestoreError), or the whole run, read as it is planned (with
 * `deleteMissing`, a run holding no record of the workspace is refused: it would read as
 * "everything was deleted").
 */
const sourceDetails = (
  store: SnapshotStoreService,
  options: RestoreOptions
): Effect.Effect<Stream.Stream<StoredDetail, SnapshotError>, RestoreError | SnapshotError> =>
  Effect.gen(function*() {
    const { run, sourceWorkspaceId: workspace } = options
    if (options.records !== undefined) {
      const chosen = yield* namedDetails(store, run.id, workspace, options.records)
      const found = new Set(chosen.map((d) => String(d.id)))
      const missing = [...new Set(options.records)].filter((id) => !found.has(id))
      if (missing.length > 0) {
        return yield* refuse(
          `record ${missing.join(", ")} is not in run ${run.id} of workspace ${workspace}; list the run's records with \`export --run ${run.id}\``
        )
      }
      return Stream.fromIterable([...chosen].sort(inListOrder))
    }
    if (options.deleteMissing === true && !(yield* holdsRecords(store, run.id, workspace))) {
      return yield* refuse(
        `run ${run.id} holds no record of workspace ${workspace}: refusing to delete every record of the target; restore without deleting, or back the workspace up first`
      )
    }
    return runDetails(store, run.id, workspace)
  })

/**
 * Plans every detail of the stream a batch at a time, counting what stays behind on the
 * way, and hands each batch's plan to `write`. Returns how many records were planned.
 */
const planAll = (
  details: Stream.Stream<StoredDetail, SnapshotError>,
  planner: RecordPlanner,
  census: Census,
  write: (batch: PlanBatch) => Effect.Effect<void, JournalError>,
  mapSource: (r: SourceRecord) => SourceRecord = (r) => r
): Effect.Effect<number, SnapshotError | JournalError | RestError> =>
  Effect.gen(function*() {
    let records = 0
    yield* Stream.runForEach(Stream.grouped(details, PLAN_BATCH), (batch) =>
      Effect.gen(function*() {
        for (const detail of batch) {
          census.add(detail)
          yield* planner.plan(mapSource(readSource(detail)))
        }
        records += batch.length
        yield* write(planner.takeBatch())
      }))
    return records
  })

/** The feature a capability line or a notice names: the text before its first colon ("archived: ..."). */
const featureOf = (line: string): string => line.slice(0, Math.max(0, line.indexOf(":")))

/**
 * What the journal's runs found the target cannot do (capabilities.ts: meta
 * `capability.missing:<name>`, and the lists it could not make), read on every run, so a
 * rerun that sends nothing reports it as the run that found it did: one entry per
 * feature, counting what the run holds that needs it.
 */
const missingOnTarget = (journal: JournalApi, target: string, census: Census, records: number) =>
  Effect.gen(function*() {
    const out: Array<NotRestored> = []
    const notMade = yield* listsNotMade(journal, target)
    for (const [name, line] of yield* missingCapabilities(journal)) {
      if (name === CAPABILITY.lists) {
        if (notMade.length === 0) continue
        out.push({ what: featureOf(line), count: notMade.length, why: `${line} (${notMade.map((t) => JSON.stringify(t)).join(", ")})` })
        continue
      }
      const count = name === CAPABILITY.archived ? census.archived() : name === CAPABILITY.tags ? census.tagged() : records
      if (count > 0) out.push({ what: featureOf(line), count, why: line })
    }
    return out
  })

/**
 * The contract's `notRestored`: what the target cannot do (`missing`, from the journal),
 * tags and assignees left behind, the lines of `notices` not said already, the census.
 */
const notRestoredOf = (
  planner: RecordPlanner,
  census: Census,
  records: number,
  notices: ReadonlyArray<string>,
  missing: ReadonlyArray<NotRestored>
): Array<NotRestored> => {
  const unknownAssignees = planner.unknownAssignees()
  const said = new Set(missing.map((m) => m.what))
  return [
    ...missing,
    ...(planner.tagsBehind() > 0
      ? [{ what: "tags of records that exist on the target", count: planner.tagsBehind(), why: "update-record takes no tags; only a created record gets its tags" }]
      : []),
    ...(unknownAssignees.length > 0
      ? [{ what: "assignees", count: unknownAssignees.length, why: "no user with that e-mail on the target" }]
      : []),
    ...notices.filter((line) => !said.has(featureOf(line))).map((line) => ({ what: featureOf(line), count: records, why: line })),
    ...census.result()
  ]
}

/** Replays the journal's plan; `notices` gains what the service turned out to lack. */
const replayPlan = (
  client: RestClientApi,
  journal: JournalApi,
  concurrency: number,
  notices: Array<string>
): Effect.Effect<{ readonly report: ReplayReport; readonly adopted: Array<Adoption> }, JournalError | JournalStateError | ReplayAborted> =>
  Effect.gen(function*() {
    yield* journal.retryFailed()
    const onNotice = (line: string) => {
      if (!notices.includes(line)) notices.push(line)
    }
    const adoptedBefore = yield* journal.lastAdoptionId()
    const report = yield* replay(journal, makeRecordExecutors(client, { onNotice }), { phases: PHASES, concurrency })
    const adopted = (yield* journal.adoptions(adoptedBefore)).map(({ detail, namespace, opKey, sourceKey, targetId }) => ({
      opKey,
      namespace,
      sourceKey,
      targetId,
      detail
    }))
    return { report, adopted }
  })

/** How many of the update ops (of records that exist) are done: looked up one at a time, none held. */
const doneCount = (journal: JournalApi, keys: Iterable<string>) =>
  Effect.gen(function*() {
    let done = 0
    for (const key of keys) {
      const op = yield* journal.get(key)
      if (Option.isSome(op) && op.value.state === "done") done++
    }
    return done
  })

/**
 * The run's files, for a whole run: with `files`, those the target lacks uploaded (or
 * counted, in a dry run); without, counted as not restored.
 */
const filesStep = (store: SnapshotStoreService, journal: JournalApi, options: RestoreOptions, dryRun: boolean) =>
  Effect.gen(function*() {
    // Named records carry no files; a migration (its own journal kind) copies the files itself.
    if (options.records !== undefined || (options.journalKind ?? "restore") !== "restore") return { files: undefined, notRestored: [] }
    const request = { runId: options.run.id, sourceWorkspaceId: options.sourceWorkspaceId, targetWorkspaceId: options.targetWorkspaceId, dryRun }
    if (options.files === undefined) {
      return { files: undefined, notRestored: filesNotRestored(yield* runFiles(store, request.runId, request.sourceWorkspaceId), false) }
    }
    const { all, ...files } = yield* restoreFiles(store, journal, request, options.files)
    return { files, notRestored: filesNotRestored(all, true) }
  })

/** Plans and (unless dry run) replays a restore. */
export const restore = (
  store: SnapshotStoreService,
  client: RestClientApi,
  journal: JournalApi,
  options: RestoreOptions
): Effect.Effect<
  RestoreResult,
  | RestoreError
  | SnapshotError
  | RestError
  | PageError
  | ScanUnstable
  | JournalError
  | JournalStateError
  | ReplayAborted
  | FilePortError
  | ObjectStoreError
  | StoreBusy
  | StoreLockError
  | StoreOpenError
> =>
  // Scoped: the target's records are read into a scratch file for the plan (restore-target.ts).
  Effect.scoped(Effect.gen(function*() {
    const target = options.targetWorkspaceId
    const journalKind = options.journalKind ?? "restore"
    const dryRun = options.dryRun === true
    yield* checkRequest(journal, options, journalKind)
    const details = yield* sourceDetails(store, options)

    const now = yield* readTarget(client, target)
    const notices = [...now.notices]
    if (!dryRun) {
      yield* journal.setMeta("target.workspace", target)
      yield* journal.setMeta("kind", journalKind)
    }
    // The update ops planned, counted as `updated` once replayed: in a scratch file, not the heap.
    const updates = yield* scratchKeys("updates")
    const keepUpdateKeys = (keys: ReadonlyArray<string>) =>
      updates.batch(() => {
        for (const key of keys) updates.see(key)
      })
    // Whether `archived` can be set is the journal's to say (capabilities.ts); the planner reads it.
    const planner = makeRecordPlanner({ client, journal, target, now, archivedSettable: true, dryRun, delta: options.delta, keepUpdateKeys })
    const census = makeCensus()
    const write = (batch: PlanBatch) => (dryRun || batch.ops.length + batch.mappings.length === 0 ? Effect.void : Effect.asVoid(journal.addPlan(batch)))
    const records = yield* planAll(details, planner, census, write, options.mapSource)
    const deletes = options.deleteMissing === true
      ? yield* planDeletes(journal, target, now, options.run.id, (ops) => write({ ops, supersede: [], mappings: [] }))
      : 0
    const planned = { ...planner.counts(), deletes }
    const { unchanged, ...sent } = planned

    if (dryRun) {
      const files = yield* filesStep(store, journal, options, true)
      return {
        records,
        planned: sent,
        unchanged,
        created: 0,
        updated: 0,
        deleted: 0,
        failed: 0,
        unknown: 0,
        unknownAssignees: planner.unknownAssignees(),
        notRestored: [...notRestoredOf(planner, census, records, notices, yield* missingOnTarget(journal, target, census, records)), ...files.notRestored],
        notices,
        adopted: [],
        kept: planner.kept(),
        keptRecords: planner.keptRecords(),
        deletedOnTarget: planner.deletedOnTarget(),
        toMake: planner.toMake(),
        ...(files.files !== undefined ? { files: files.files } : {})
      }
    }
    const { adopted, report } = yield* replayPlan(client, journal, options.concurrency ?? 8, notices)
    const files = yield* filesStep(store, journal, options, false)
    return {
      records,
      planned: sent,
      unchanged,
      created: report.doneByKind[OP_KINDS.recordCreate] ?? 0,
      updated: yield* doneCount(journal, updates.keys()),
      deleted: report.doneByKind[OP_KINDS.recordDelete] ?? 0,
      failed: report.failed,
      unknown: report.unknown,
      unknownAssignees: planner.unknownAssignees(),
      notRestored: [...notRestoredOf(planner, census, records, notices, yield* missingOnTarget(journal, target, census, records)), ...files.notRestored],
      notices,
      adopted,
      kept: planner.kept(),
      keptRecords: planner.keptRecords(),
      deletedOnTarget: planner.deletedOnTarget(),
      toMake: planner.toMake(),
      ...(files.files !== undefined ? { files: files.files } : {})
    }
  }))
