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
 * Each step's ops live in the journal under keys of their own, so a rerun finds done what
 * is done, settles what a killed run left in flight, and sends the rest.
 */
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import type { GraphqlClientApi } from "../../client/graphql-client.ts"
import { RestClient, type RestClientApi } from "../../client/rest-client.ts"
import { copyFiles, type CopyFilesOptions, type CopySummary } from "../../connectors/files/copy.ts"
import type { WorkspaceFiles } from "../../connectors/files/ports.ts"
import { relinkCommentHtml } from "../../connectors/files/relink.ts"
import { fileUidLookup } from "../../connectors/files/uid-map.ts"
import type { JournalApi, PlanOp } from "../../store/journal.ts"
import { SnapshotStore, type SnapshotStoreService } from "../../store/snapshot.ts"
import { backup } from "../backup.ts"
import { listEnsureKey, OP_KINDS, PHASES, recordNamespace } from "../plan.ts"
import { commentNamespace, EXTRA_KINDS } from "../plan-extras.ts"
import { type Executor, replay, type ReplayReport } from "../replay.ts"
import { makeExtraExecutors } from "../replay-extras.ts"
import { makeRecordExecutors } from "../replay-records.ts"
import { restore, type RestoreResult } from "../restore.ts"
import type { NotRestored } from "../restore-source.ts"
import { CF_FILE_KIND, makeCustomFieldFileExecutor, planCustomFieldFiles, targetFileFields } from "./custom-field-files.ts"
import { createInSourceOrder } from "./ordered-creates.ts"
import { customRolesNotCarried, type InviteOutcome, makePeopleExecutors, PEOPLE_KINDS, planPeople, planRoles } from "./people.ts"
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
  /** Open each comment with a line naming its author and date (default true). */
  readonly attribution?: boolean
  readonly dryRun?: boolean
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

/** Ops in flight at once (files: at most 4, each a stream of bytes). */
export const DEFAULT_MIGRATE_CONCURRENCY = 8

interface SourceComment {
  readonly id: string
  readonly recordId: string
  readonly html: string
  readonly author: string
  readonly createdAt: string
  readonly parentId: string | undefined
}

const str = (v: unknown): string | undefined => (typeof v === "string" && v !== "" ? v : undefined)

/** A reply's parent where the service shows one (not in the documents: `parentId` or `parent.id`). */
const parentOf = (item: Record<string, unknown>): string | undefined =>
  str(item.parentId) ?? str((item.parent as { id?: unknown } | null | undefined)?.id)

/** "Originally by Ada Lovelace on 2026-01-05 14:03 UTC" */
export const attributionOf = (author: string, createdAt: string): string => {
  const d = new Date(createdAt)
  const when = Number.isNaN(d.getTime()) ? createdAt : `${d.toISOString().slice(0, 16).replace("T", " ")} UTC`
  return `Originally by ${author} on ${when}`
}

const readRun = (store: SnapshotStoreService, runId: number, workspaceId: string) =>
  Effect.gen(function*() {
    const read = <A>(what: string, sql: string) => store.select<A>(`read the source's ${what}`, { sql, params: [runId, workspaceId] })
    const details = (yield* read<{ detail: string }>(
      "records",
      `SELECT r.detail AS detail FROM run_records rr JOIN records r ON r.vid = rr.vid
       WHERE rr.run_id = ? AND r.workspace_id = ? ORDER BY r.id`
    )).map((row) => JSON.parse(row.detail) as Record<string, unknown>)
    const lists = (yield* read<{ item: string }>(
      "lists",
      `SELECT l.item AS item FROM run_lists rl JOIN lists l ON l.vid = rl.vid
       WHERE rl.run_id = ? AND l.workspace_id = ?`
    ))
      .map((row) => JSON.parse(row.item) as { title?: unknown; position?: unknown; id?: unknown })
      .filter((l): l is { title: string; position?: unknown; id?: unknown } => typeof l.title === "string")
      .sort((a, b) => (Number(a.position) || 0) - (Number(b.position) || 0) || String(a.id).localeCompare(String(b.id)))
      .map((l) => l.title)
    const comments = (yield* read<{ record_id: string; item: string }>(
      "comments",
      `SELECT r.id AS record_id, a.item AS item FROM run_records rr JOIN records r ON r.vid = rr.vid
       JOIN activity a ON a.vid = r.vid WHERE rr.run_id = ? AND r.workspace_id = ?`
    ))
      .flatMap((row): Array<SourceComment> => {
        const item = JSON.parse(row.item) as Record<string, unknown>
        const user = item.commentUser as { fullName?: unknown } | null | undefined
        const html = str(item.html)
        if (user === null || user === undefined || item.deletedAt !== null && item.deletedAt !== undefined || html === undefined) return []
        return [{
          id: String(item.id),
          recordId: row.record_id,
          html,
          author: str(user.fullName) ?? "someone",
          createdAt: str(item.createdAt) ?? "",
          parentId: parentOf(item)
        }]
      })
      .sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.id.localeCompare(b.id))
    const [files] = yield* read<{ n: number }>(
      "files",
      "SELECT count(*) AS n FROM run_files rf JOIN files f ON f.vid = rf.vid WHERE rf.run_id = ? AND f.workspace_id = ?"
    )
    return { details, lists, comments, files: files?.n ?? 0 }
  })

const EMPTY_REPORT: ReplayReport = { sent: 0, reconciled: 0, failed: 0, unknown: 0, deferred: 0, doneByKind: {} }

/** Plans and (unless dry run) carries out a migration, then verifies it. */
export const migrate = (options: MigrateOptions): Effect.Effect<MigrationReport, unknown, Scope.Scope> =>
  Effect.gen(function*() {
    const { journal, source, target, store } = options
    const step = (line: string) => options.onStep?.(line)
    const dryRun = options.dryRun === true
    const concurrency = options.concurrency ?? DEFAULT_MIGRATE_CONCURRENCY
    const kind = Option.getOrUndefined(yield* journal.getMeta("kind"))
    if (kind !== undefined && kind !== JOURNAL_KIND) {
      return yield* new MigrateError({ message: `journal ${journal.file} was planned by ${kind}, not by a migrate; use another journal file` })
    }
    const owner = Option.getOrUndefined(yield* journal.getMeta("target.workspace"))
    if (owner !== undefined && owner !== target.workspaceId) {
      return yield* new MigrateError({ message: `journal ${journal.file} belongs to workspace ${owner}, not ${target.workspaceId}; use another journal file` })
    }
    if (!dryRun) {
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
    const run_ = (ops: ReadonlyArray<PlanOp>, executors: ReadonlyArray<Executor>, phases: ReadonlyArray<ReadonlyArray<string>>, c = concurrency) =>
      dryRun ? Effect.succeed(EMPTY_REPORT) : Effect.andThen(journal.addPlan({ ops }), replay(journal, executors, { phases, concurrency: c }))

    // Roles, then people.
    step("custom roles")
    const roles = yield* planRoles(source.graphql, target.graphql, source.workspaceId, target.workspaceId)
    if (!roles.available) notCarried.push({ what: "custom roles", count: 0, why: "the source service lists no workspace roles (workspaceUserRoles)" })
    const rolesReport = yield* run_(roles.ops, makePeopleExecutors(target.graphql), [[PEOPLE_KINDS.roleCreate]])
    const peopleMode = options.people ?? "invite"
    const people = peopleMode === "invite"
      ? yield* planPeople(source.graphql, target.graphql, source.workspaceId, target.workspaceId)
      : { ops: [], source: 0, alreadyMember: [], refused: [] }
    const roleUnknown = customRolesNotCarried(roles, people.ops)
    if (peopleMode === "invite") step(`people: ${people.ops.length} to invite`)
    if (roleUnknown !== undefined) notCarried.push(roleUnknown.notCarried)
    yield* run_(people.ops, makePeopleExecutors(target.graphql), [[PEOPLE_KINDS.personInvite]])

    // Lists in the source's order: one at a time, so the target lists them the same way.
    step(`lists: ${src.lists.length}`)
    const listOps = src.lists.map((title): PlanOp => ({
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
    step(`records: ${src.details.length}`)
    const ordered = dryRun
      ? undefined
      : yield* createInSourceOrder({ client: target.rest, journal, target: target.workspaceId, details: src.details, concurrency })
    const restored = yield* restore(store, target.rest, journal, {
      run,
      sourceWorkspaceId: source.workspaceId,
      targetWorkspaceId: target.workspaceId,
      journalKind: JOURNAL_KIND,
      concurrency,
      dryRun
    })
    // The restore found the records created just before unchanged: they count as created.
    const createdInOrder = ordered?.doneByKind[OP_KINDS.recordCreate] ?? 0
    const records: RestoreResult = {
      ...restored,
      created: restored.created + createdInOrder,
      unchanged: Math.max(0, restored.unchanged - createdInOrder)
    }

    // Comments, re-linked to the target's files.
    const uids = yield* fileUidLookup(journal)
    let unlinked = 0
    const commentOps = src.comments.map((c): PlanOp => {
      const relinked = relinkCommentHtml(c.html, uids)
      unlinked += relinked.missing.length
      return {
        key: `migrate:${target.workspaceId}:comment:${c.id}`,
        kind: EXTRA_KINDS.commentCreate,
        payload: {
          workspaceId: target.workspaceId,
          recordRef: c.recordId,
          text: options.attribution === false ? "" : attributionOf(c.author, c.createdAt),
          html: relinked.value,
          sourceKey: c.id,
          ...(c.parentId !== undefined && src.comments.some((p) => p.id === c.parentId) ? { parentRef: c.parentId } : {})
        }
      }
    })
    if (unlinked > 0) notCarried.push({ what: "comment attachments", count: unlinked, why: "the attached file was not copied (see files); the element keeps the source uid" })
    step(`comments: ${commentOps.length}`)
    // Replies after their parents: one comment at a time per record (the executor's group) in creation order.
    const commentsReport = yield* run_(commentOps, makeExtraExecutors(target.rest, target.graphql), [[EXTRA_KINDS.commentCreate]])

    // File custom field values.
    const targetRecords = (yield* journal.mappings(recordNamespace(target.workspaceId))).map((m) => m.targetId)
    const fields = yield* targetFileFields(target.rest, target.workspaceId, targetRecords)
    const cf = planCustomFieldFiles(src.details, target.workspaceId, fields, uids)
    notCarried.push(...cf.notCarried)
    const cfReport = yield* run_(cf.ops, [makeCustomFieldFileExecutor(target.rest, target.graphql)], [[CF_FILE_KIND]])

    const invites = dryRun ? [] : yield* Effect.forEach(people.ops, (op) => Effect.map(journal.get(op.key), (o) => ({ op, o })))
    const outcomes = invites.flatMap(({ o, op }) =>
      Option.isSome(o) && o.value.state === "done" ? [{ email: (op.payload as { email: string }).email, outcome: o.value.result as InviteOutcome }] : []
    )
    const refusedRoles = dryRun ? [] : (yield* Effect.forEach(roles.ops, (op) => journal.get(op.key))).flatMap((o) => {
      const result = Option.isSome(o) ? (o.value.result as { refused?: unknown } | null) : null
      return typeof result?.refused === "string" ? [{ name: (o as Option.Some<{ payload: { name: string } }>).value.payload.name, code: result.refused }] : []
    })
    step("verifying")
    return yield* verify({
      ...options,
      dryRun,
      run,
      src,
      records,
      files,
      sourceFiles: src.files,
      notCarried: [...notCarried, ...records.notRestored.filter((n) => n.what !== "comments" && n.what !== "file custom field values")],
      counts: {
        roles: { source: roles.source, skipped: roles.skipped, planned: roles.ops.length, report: rolesReport, refused: refusedRoles },
        lists: { source: src.lists.length, report: listsReport },
        comments: { source: src.comments.length, planned: commentOps.length, report: commentsReport },
        customFieldFiles: {
          source: cf.source,
          planned: cf.ops.length,
          report: cfReport,
          values: cf.ops.map((op) => op.payload as { recordRef: string; customFieldId: string; fileUid: string })
        },
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
  })
