/**
 * Migrate: a whole workspace into another one, usually of another account, exactly once
 * and resumable through one journal. Composed from what exists:
 * 1. the source read into a snapshot (an incremental backup: records, details, comments
 *    as activity, files, lists);
 * 2. custom roles, then people (people.ts), each an op of the journal;
 * 3. lists, in the source's order (list.ensure ops run one at a time);
 * 4. files, as copy-files from workspace to workspace (byte-identical, CONFIRMED, mapped
 *    source uid -> target uid in the journal);
 * 5. records: those the target lacks created in each list's source order (ordered-creates.ts),
 *    then a restore of the snapshot run (every field restore carries; assignees by e-mail
 *    among the target's users);
 * 6. comments, oldest first (`createComment`, category TODO, `tiptap`), their attachment
 *    elements re-linked to the target's files, replies under their parent where the
 *    service shows one, opened by an attribution line unless turned off;
 * 7. file custom field values (custom-field-files.ts);
 * then a verification pass compares source and target (verify.ts).
 *
 * A rerun with the same journal is the next pass (contract: "Delta passes and plans"):
 * the source read again carries what changed since the last pass. A record field edited
 * on the target since then is kept and reported unless `overwriteTargetEdits` (each
 * version's marker keeps what it wrote: restore-plan.ts `delta`), and so is a record
 * deleted on the target since (it stays deleted; its new comments and file values are
 * counted, not sent); a record gone from the source is deleted on the target only with
 * `deleteMissing` (gone.ts), else counted.
 * `plan` is a dry run that also says what the run would do (the shared `PlanReport`).
 * Each step's ops live in the journal under keys of their own, so a rerun finds done what
 * is done, settles what a killed run left in flight, and sends the rest.
 *
 * The source is never whole in memory: its records, comments and file values are read
 * from the snapshot run a batch at a time (source-run.ts), each batch's ops written to the
 * journal before the next batch is read (`addPlan` keeps an op already planned, so a rerun
 * plans nothing twice), and what spans the run (source id -> target id) stays in the
 * journal, looked up per record. Held whole: the source's list titles, and the
 * verification's order check holds the last target record of each list (list-order.ts).
 * What the steps need per record is in scratch files, not the heap: the ids the backup
 * and the scans of the target have seen (store/scratch-keys.ts), and the target's
 * records as the restore step and the verification read them (restore-target.ts
 * `readTarget`, store/scratch-records.ts).
 */
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import type { GraphqlClientApi } from "../../client/graphql-client.ts"
import { RestClient, type RestClientApi } from "../../client/rest-client.ts"
import { copyFiles, type CopyFilesOptions, type CopySummary } from "../../connectors/files/copy.ts"
import type { WorkspaceFiles } from "../../connectors/files/ports.ts"
import { fileUidLookup } from "../../connectors/files/uid-map.ts"
import type { JournalApi, PlanOp } from "../../store/journal.ts"
import { SnapshotStore, type SnapshotStoreService } from "../../store/snapshot.ts"
import { backup } from "../backup.ts"
import { listEnsureKey, OP_KINDS, recordNamespace } from "../plan.ts"
import { EXTRA_KINDS } from "../plan-extras.ts"
import { type ReferenceCounts, REFERENCES_KIND, referencesOf } from "../references.ts"
import { makeReferencesExecutor } from "../replay-references.ts"
import { planDescriptionReferences, referenceResolver } from "./references.ts"
import { type Executor, replay, type ReplayReport } from "../replay.ts"
import { makeExtraExecutors } from "../replay-extras.ts"
import { makeRecordExecutors } from "../replay-records.ts"
import { restore, type RestoreResult } from "../restore.ts"
import { type NotRestored, readSource } from "../restore-source.ts"
import { commentsOf, detailBatches, planRecordComments, recordIdBatches } from "./source-run.ts"
import {
  addCounts,
  CF_FILE_KIND,
  makeCustomFieldFileExecutor,
  NO_COUNTS,
  notCarriedOf,
  planCustomFieldFiles,
  targetFileFields
} from "./custom-field-files.ts"
import { createInSourceOrder } from "./ordered-creates.ts"
import { customRolesNotCarried, type InviteOutcome, type InvitePayload, makePeopleExecutors, PEOPLE_KINDS, planPeople, planRoles } from "./people.ts"
import { planGone } from "./gone.ts"
import { sourceMapping } from "./mapped-source.ts"
import { mappingsOf, type PeopleMap, SKIP, type TitleMap } from "../mapping-files.ts"
import type { Kept, Mappings, PlanReport } from "../pass-plan.ts"
import { type MigrationReport, verify } from "./verify.ts"

export class MigrateError extends Data.TaggedError("MigrateError")<{ readonly message: string }> {}

/** One end of a migration: its clients and its file port. */
export interface MigrateEnd {
  readonly rest: RestClientApi
  readonly graphql: GraphqlClientApi
  readonly files: WorkspaceFiles
  readonly workspaceId: string
}

export interface MigrateOptions {
  readonly source: MigrateEnd
  readonly target: MigrateEnd
  readonly journal: JournalApi
  /** Where the source is read to (an incremental backup). */
  readonly store: SnapshotStoreService
  /** Invite the source's members (default) or leave people out. */
  readonly people?: "invite" | "skip"
  /** `--people FILE` (invite): members and assignees under other e-mails, or left out (mapping-files.ts). */
  readonly peopleMap?: PeopleMap | undefined
  /** `--title-map FILE.json`: lists and tags under other titles on the target. */
  readonly titles?: TitleMap | undefined
  /** Open each comment with a line naming its author and date (default true). */
  readonly attribution?: boolean
  readonly dryRun?: boolean
  /** A dry run that also reports the plan (`MigrateResult.plan`); implies `dryRun`. */
  readonly plan?: boolean
  /** Delete on the target the records gone from the source since the last pass (default: count them). */
  readonly deleteMissing?: boolean
  /** Replace fields edited on the target since the last pass (default: keep and report them). */
  readonly overwriteTargetEdits?: boolean
  readonly concurrency?: number
  /** One line per step, for progress. */
  readonly onStep?: (line: string) => void
  /** The file step's plan is in the journal: `toCopy` files wait (helpers may take some). */
  readonly onFilesPlanned?: (toCopy: number) => void
}

/**
 * The file step as a copy: its journal keys come from these ends (copy.ts,
 * `copyJobIdOf`), so a helper of a spread migrate (docs/scale.md) builds the same copy
 * to claim the step's files.
 */
export const fileCopyOf = (
  source: MigrateEnd,
  target: MigrateEnd,
  journal: JournalApi,
  concurrency: number
): CopyFilesOptions => ({
  from: { kind: "workspace", workspaceId: source.workspaceId },
  to: { kind: "workspace", workspaceId: target.workspaceId },
  source: source.files,
  target: target.files,
  journal,
  concurrency: Math.min(concurrency, 4)
})

export const JOURNAL_KIND = "migrate"

/** Why new comments and file values of a record deleted on the target (and kept deleted) are not carried. */
const DELETED_ON_TARGET = "their record was deleted on the target since the last pass and is kept deleted (see kept)"

/** Journal meta: how many passes of this migration have finished. */
export const PASSES_META = "migrate.passes"

/** The report with what a pass adds: the contract's `pass` and `updated`, and the delta's counts. */
export interface MigrateResult extends MigrationReport {
  /** Which pass of the journal this is: 1 for the first (a resumed pass keeps its number). */
  readonly pass: number
  /** Records of earlier passes this run updated (planned to, in a dry run). */
  readonly updated: number
  /** Records gone from the source whose target records stay (no `deleteMissing`). */
  readonly missing: number
  /** Target records of records gone from the source deleted by this run (planned to, in a dry run). */
  readonly deleted: number
  /** Fields edited on the target since the last pass and kept, and records deleted there since and kept deleted. */
  readonly kept: ReadonlyArray<Kept>
  /** `plan` only: what the run would do. */
  readonly plan?: PlanReport
  /** References between records rewritten to name target records (planned, in a dry run), and those naming records outside the source. */
  readonly references: ReferenceCounts
  /** With `peopleMap` or `titles`: which of their entries the pass used. */
  readonly mappings?: Mappings
}

/** Ops in flight at once (files: at most 4, each a stream of bytes). */
export const DEFAULT_MIGRATE_CONCURRENCY = 8

export { attributionOf } from "./source-run.ts"

/** What the migration holds of the source run whole: its list titles (in order) and counts. */
const readRun = (store: SnapshotStoreService, runId: number, workspaceId: string) =>
  Effect.gen(function*() {
    const lists = [...yield* Stream.runCollect(store.runItems("lists", runId, workspaceId))]
      .map((item) => JSON.parse(item) as { title?: unknown; position?: unknown; id?: unknown })
      .filter((l): l is { title: string; position?: unknown; id?: unknown } => typeof l.title === "string")
      .sort((a, b) => (Number(a.position) || 0) - (Number(b.position) || 0) || String(a.id).localeCompare(String(b.id)))
      .map((l) => l.title)
    const { files, records } = yield* store.workspaceCounts(runId, workspaceId)
    return { lists, records, files }
  })

/**
 * Target ids of the first `atMost` source records of the run that are mapped (in source id
 * order), looked up one at a time: where the target's FILE fields are read from when the
 * service cannot list them (custom-field-files.ts `targetFileFields`).
 */
const firstMapped = (journal: JournalApi, store: SnapshotStoreService, runId: number, source: string, target: string, deleted: ReadonlySet<string>) => (atMost: number) =>
  recordIdBatches(store, runId, source).pipe(
    Stream.flattenIterable,
    Stream.filter((id) => !deleted.has(id)),
    Stream.mapEffect((id) => journal.lookup(recordNamespace(target), id)),
    Stream.filter(Option.isSome),
    Stream.map((o) => o.value),
    Stream.take(atMost),
    Stream.runCollect
  )

const EMPTY_REPORT: ReplayReport = { sent: 0, reconciled: 0, failed: 0, unknown: 0, deferred: 0, doneByKind: {} }

/** Plans and (unless dry run) carries out a migration, then verifies it. */
export const migrate = (options: MigrateOptions): Effect.Effect<MigrateResult, unknown, Scope.Scope> =>
  Effect.gen(function*() {
    const { journal, source, target, store } = options
    const step = (line: string) => options.onStep?.(line)
    const dryRun = options.dryRun === true || options.plan === true
    const delta = { overwriteTargetEdits: options.overwriteTargetEdits === true }
    const concurrency = options.concurrency ?? DEFAULT_MIGRATE_CONCURRENCY
    const kind = Option.getOrUndefined(yield* journal.getMeta("kind"))
    if (kind !== undefined && kind !== JOURNAL_KIND) {
      return yield* new MigrateError({ message: `journal ${journal.file} was planned by ${kind}, not by a migrate; use another journal file` })
    }
    const owner = Option.getOrUndefined(yield* journal.getMeta("target.workspace"))
    if (owner !== undefined && owner !== target.workspaceId) {
      return yield* new MigrateError({ message: `journal ${journal.file} belongs to workspace ${owner}, not ${target.workspaceId}; use another journal file` })
    }
    // A journal of a migration from before passes were counted has had one pass at least.
    const passesMeta = Option.getOrUndefined(yield* journal.getMeta(PASSES_META))
    const pass = 1 + (passesMeta !== undefined ? Number(passesMeta) || 0 : kind === JOURNAL_KIND ? 1 : 0)
    if (!dryRun) {
      if (kind === undefined) yield* journal.setMeta(PASSES_META, "0")
      yield* journal.setMeta("kind", JOURNAL_KIND)
      yield* journal.setMeta("target.workspace", target.workspaceId)
    }
    // A killed run's in-flight ops are settled before anything is sent again.
    yield* journal.resetInFlight()
    yield* journal.retryFailed()

    step(`reading workspace ${source.workspaceId}`)
    const read = yield* backup({ workspaces: [source.workspaceId] }).pipe(
      Effect.provideService(RestClient, source.rest),
      Effect.provideService(SnapshotStore, store)
    )
    const run = (yield* store.getRun(Number(read.runId)))!
    const src = yield* readRun(store, run.id, source.workspaceId)
    const notCarried: Array<NotRestored> = []
    const replay_ = (executors: ReadonlyArray<Executor>, phases: ReadonlyArray<ReadonlyArray<string>>, c = concurrency) =>
      dryRun ? Effect.succeed(EMPTY_REPORT) : replay(journal, executors, { phases, concurrency: c })
    const run_ = (ops: ReadonlyArray<PlanOp>, executors: ReadonlyArray<Executor>, phases: ReadonlyArray<ReadonlyArray<string>>, c = concurrency) =>
      dryRun ? Effect.succeed(EMPTY_REPORT) : Effect.andThen(journal.addPlan({ ops }), replay_(executors, phases, c))
    /** Writes a batch's ops to the journal (not in a dry run). */
    const plan = (ops: ReadonlyArray<PlanOp>) => dryRun || ops.length === 0 ? Effect.void : Effect.asVoid(journal.addPlan({ ops }))

    // Roles, then people.
    step("custom roles")
    const roles = yield* planRoles(source.graphql, target.graphql, source.workspaceId, target.workspaceId)
    if (!roles.available) notCarried.push({ what: "custom roles", count: 0, why: "the source service lists no workspace roles (workspaceUserRoles)" })
    const rolesReport = yield* run_(roles.ops, makePeopleExecutors(target.graphql), [[PEOPLE_KINDS.roleCreate]])
    const peopleMode = options.people ?? "invite"
    const people = peopleMode === "invite"
      ? yield* planPeople(source.graphql, target.graphql, source.workspaceId, target.workspaceId, options.peopleMap)
      : { ops: [], source: 0, alreadyMember: [], refused: [], skipped: [], targetOf: new Map<string, string>() }
    const roleUnknown = customRolesNotCarried(roles, people.ops)
    if (peopleMode === "invite") step(`people: ${people.ops.length} to invite`)
    if (roleUnknown !== undefined) notCarried.push(roleUnknown.notCarried)
    yield* run_(people.ops, makePeopleExecutors(target.graphql), [[PEOPLE_KINDS.personInvite]])
    // The mapping files: every step reads lists, tags and assignees as the target is to have them.
    const mapping = sourceMapping(options.peopleMap, people.targetOf, options.titles)
    const lists = options.titles === undefined ? src.lists : src.lists.map(options.titles.list)

    // Lists in the source's order: one at a time, so the target lists them the same way.
    step(`lists: ${src.lists.length}`)
    const listOps = [...new Set(lists)].map((title): PlanOp => ({
      key: listEnsureKey(target.workspaceId, title),
      kind: OP_KINDS.listEnsure,
      payload: { workspaceId: target.workspaceId, title }
    }))
    const listsReport = yield* run_(listOps, makeRecordExecutors(target.rest), [[OP_KINDS.listEnsure]], 1)

    // Files.
    step("files")
    const onFilesPlanned = options.onFilesPlanned
    const files: CopySummary | undefined = dryRun ? undefined : yield* copyFiles({
      ...fileCopyOf(source, target, journal, concurrency),
      ...(onFilesPlanned !== undefined ? { reporter: { planned: (p) => onFilesPlanned(p.toCopy) } } : {})
    })

    // Records: those the target does not hold yet, in each list's source order; then the
    // restore carries the rest (what changed at the source, what a stopped run left).
    step(`records: ${src.records}`)
    const ordered = dryRun ? undefined : yield* createInSourceOrder({
      client: target.rest,
      journal,
      target: target.workspaceId,
      store,
      runId: run.id,
      sourceWorkspaceId: source.workspaceId,
      concurrency,
      delta,
      mapSource: mapping?.record
    })
    const restored = yield* restore(store, target.rest, journal, {
      run,
      sourceWorkspaceId: source.workspaceId,
      targetWorkspaceId: target.workspaceId,
      journalKind: JOURNAL_KIND,
      concurrency,
      dryRun,
      delta,
      mapSource: mapping?.record
    })
    // The restore found the records created just before unchanged: they count as created.
    const createdInOrder = ordered?.doneByKind[OP_KINDS.recordCreate] ?? 0
    const records: RestoreResult = {
      ...restored,
      created: restored.created + createdInOrder,
      unchanged: Math.max(0, restored.unchanged - createdInOrder)
    }

    // Records gone from the source since the last pass: deleted with deleteMissing, else counted.
    const gone = yield* planGone({
      store,
      run,
      sourceWorkspaceId: source.workspaceId,
      journal,
      target: target.rest,
      targetWorkspaceId: target.workspaceId,
      deleteMissing: options.deleteMissing === true
    })
    const deletesReport = yield* run_(gone.ops, makeRecordExecutors(target.rest), [[OP_KINDS.recordDelete]])

    // References between records (references.ts): each record exists by now, or its create failed.
    let rewritten = 0
    const onReferences = (n: number) => {
      rewritten += n
    }
    const described = yield* planDescriptionReferences({
      store,
      runId: run.id,
      sourceWorkspaceId: source.workspaceId,
      target: target.workspaceId,
      journal,
      deletedOnTarget: records.deletedOnTarget,
      plan
    })
    yield* replay_([makeReferencesExecutor(target.rest, { onRewritten: onReferences })], [[REFERENCES_KIND]])
    let commentRefs = { planned: 0, outside: 0 }

    // Comments, re-linked to the target's files, planned a batch of records at a time.
    // A record deleted on the target and kept deleted gets none of its new comments.
    const deletedOnTarget = records.deletedOnTarget
    /** Ops new to the journal (not planned by an earlier pass), counted as skipped for a record deleted on the target. */
    const notNew = (ops: ReadonlyArray<PlanOp>) =>
      Effect.map(Effect.forEach(ops, (op) => journal.get(op.key)), (found) => found.filter(Option.isNone).length)
    let skippedComments = 0
    let skippedFileValues = 0
    const uids = yield* fileUidLookup(journal)
    let unlinked = 0
    let comments = 0
    const attribution = options.attribution !== false
    yield* Stream.runForEach(recordIdBatches(store, run.id, source.workspaceId), (ids) =>
      Effect.gen(function*() {
        const byRecord = yield* commentsOf(store, run.id, source.workspaceId, ids)
        const resolver = yield* referenceResolver(store, run.id, source.workspaceId, ids, [...byRecord.values()].flatMap((cs) => cs.map((c) => c.html)))
        const ops: Array<PlanOp> = []
        for (const id of ids) {
          const ofRecord = byRecord.get(id)
          if (ofRecord === undefined) continue
          const planned = planRecordComments(ofRecord, { target: target.workspaceId, attribution, uids, refsOf: resolver.of })
          if (deletedOnTarget.has(id)) {
            skippedComments += yield* notNew(planned.ops)
            continue
          }
          unlinked += planned.unlinked
          for (const op of planned.ops) ops.push(op)
        }
        comments += ops.length
        // A dry run counts the references of the comments still to be sent.
        for (const op of dryRun ? ops : []) {
          const n = referencesOf(op.payload)
          if (n > 0 && !Option.exists(yield* journal.get(op.key), (o) => o.state === "done")) commentRefs.planned += n
        }
        commentRefs = { ...commentRefs, outside: commentRefs.outside + resolver.outside() }
        yield* plan(ops)
      }))
    if (skippedComments > 0) notCarried.push({ what: "comments", count: skippedComments, why: DELETED_ON_TARGET })
    if (unlinked > 0) notCarried.push({ what: "comment attachments", count: unlinked, why: "the attached file was not copied (see files); the element keeps the source uid" })
    step(`comments: ${comments}`)
    // Replies after their parents: one comment at a time per record (the executor's group) in creation order.
    const commentsReport = yield* replay_(makeExtraExecutors(target.rest, target.graphql, { onReferences }), [[EXTRA_KINDS.commentCreate]])

    // File custom field values, planned a batch of records at a time (archived records counted on the way).
    const fields = yield* targetFileFields(target.rest, target.workspaceId, firstMapped(journal, store, run.id, source.workspaceId, target.workspaceId, deletedOnTarget))
    let cf = NO_COUNTS
    let cfPlanned = 0
    let archived = 0
    let skippedAssignments = 0
    yield* Stream.runForEach(detailBatches(store, run.id, source.workspaceId), (batch) =>
      Effect.gen(function*() {
        for (const d of batch) if (d.archived === true) archived++
        if (options.peopleMap !== undefined) for (const d of batch) skippedAssignments += readSource(d).emails.filter((e) => mapping?.email(e) === SKIP).length
        const planned = planCustomFieldFiles(batch, target.workspaceId, fields, uids)
        const ofDeleted = (op: PlanOp) => deletedOnTarget.has((op.payload as { recordRef: string }).recordRef)
        skippedFileValues += yield* notNew(planned.ops.filter(ofDeleted))
        const ops = planned.ops.filter((op) => !ofDeleted(op))
        cf = addCounts(cf, planned.counts)
        cfPlanned += ops.length
        yield* plan(ops)
      }))
    notCarried.push(...notCarriedOf(cf))
    if (skippedFileValues > 0) notCarried.push({ what: "file custom field values", count: skippedFileValues, why: DELETED_ON_TARGET })
    if (people.skipped.length > 0) notCarried.push({ what: "people", count: people.skipped.length, why: `not invited: --people maps them to skip: ${people.skipped.join(", ")}` })
    if (skippedAssignments > 0) notCarried.push({ what: "assignments", count: skippedAssignments, why: "of people --people maps to skip: records carried without them" })
    const cfReport = yield* replay_([makeCustomFieldFileExecutor(target.rest, target.graphql)], [[CF_FILE_KIND]])

    const invites = dryRun ? [] : yield* Effect.forEach(people.ops, (op) => Effect.map(journal.get(op.key), (o) => ({ op, o })))
    const outcomes = invites.flatMap(({ o, op }) =>
      Option.isSome(o) && o.value.state === "done" ? [{ email: (op.payload as { email: string }).email, outcome: o.value.result as InviteOutcome }] : []
    )
    const refusedRoles = dryRun ? [] : (yield* Effect.forEach(roles.ops, (op) => journal.get(op.key))).flatMap((o) => {
      const result = Option.isSome(o) ? (o.value.result as { refused?: unknown } | null) : null
      return typeof result?.refused === "string" ? [{ name: (o as Option.Some<{ payload: { name: string } }>).value.payload.name, code: result.refused }] : []
    })
    step("verifying")
    const report = yield* verify({
      ...options,
      dryRun,
      keptRecords: records.keptRecords,
      run,
      lists,
      mapping,
      sourceArchived: archived,
      records,
      files,
      sourceFiles: src.files,
      notCarried: [...notCarried, ...records.notRestored.filter((n) => n.what !== "comments" && n.what !== "file custom field values")],
      counts: {
        roles: { source: roles.source, skipped: roles.skipped, planned: roles.ops.length, report: rolesReport, refused: refusedRoles },
        lists: { source: src.lists.length, report: listsReport },
        comments: { source: comments, planned: comments, report: commentsReport },
        customFieldFiles: { source: cf.source, planned: cfPlanned, report: cfReport, fields },
        people: {
          source: people.source,
          alreadyMember: people.alreadyMember.length,
          refusedBeforeSending: people.refused,
          outcomes,
          planned: people.ops.length,
          customRoleUnknown: roleUnknown?.emails ?? []
        }
      }
    })
    const references: ReferenceCounts = {
      rewritten: dryRun ? described.rewritten + commentRefs.planned : rewritten,
      outside: described.outside + commentRefs.outside
    }
    const failed = report.lists.failed + report.records.failed + report.files.failed + report.comments.failed +
      report.customFieldFiles.failed + report.roles.failed + deletesReport.failed + deletesReport.unknown
    const mappings = mappingsOf(options.peopleMap, options.titles)
    // A pass is finished when nothing of it is left: the next run is the next pass.
    if (!dryRun && failed === 0) yield* journal.setMeta(PASSES_META, String(pass))
    const result: MigrateResult = {
      ...report,
      // A deletion that failed is a record that failed.
      records: { ...report.records, failed: report.records.failed + deletesReport.failed + deletesReport.unknown },
      references,
      pass,
      updated: dryRun ? records.planned.updates : records.updated,
      missing: gone.missing,
      deleted: dryRun ? gone.ops.length : deletesReport.doneByKind[OP_KINDS.recordDelete] ?? 0,
      kept: records.kept,
      ...(mappings !== undefined ? { mappings } : {})
    }
    if (options.plan !== true) return result
    const targetLists = new Set((yield* target.rest.listLists({ workspaceId: target.workspaceId })).map((l) => l.title))
    const invite = people.ops.map((op) => {
      const p = op.payload as InvitePayload
      return { email: p.email, level: p.accessLevel }
    })
    const invited = new Set(invite.map((i) => i.email.toLowerCase()))
    const planReport: PlanReport = {
      create: records.planned.creates,
      update: records.planned.updates,
      unchanged: records.unchanged,
      delete: gone.ops.length,
      lists: [...new Set(lists.filter((t) => !targetLists.has(t)))],
      tags: records.toMake.tags,
      invite,
      // Assignees the target does not know and the run does not invite: records are carried without them.
      unresolved: records.unknownAssignees.filter((e) => !invited.has(e)),
      // Present only when there are references: the plan's shape is the contract's otherwise.
      ...(references.rewritten + references.outside > 0 ? { references } : {}),
      notCarried: [
        ...result.notCarried,
        ...(gone.missing > 0
          ? [{ what: "records gone from the source", count: gone.missing, why: "their records stay on the target (--delete-missing deletes them)" }]
          : [])
      ],
      conflicts: records.kept,
      ...(mappings !== undefined ? { mappings } : {})
    }
    return { ...result, plan: planReport }
  })
