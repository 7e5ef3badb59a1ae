/**
 * Restore: a plan from one snapshot run of a source workspace into a target workspace,
 * replayed exactly once through the journal.
 *
 * - A source record with no counterpart yet (id map `record:<target>`) is created
 *   (`restore:<target>:<sourceId>`), then its done / archived / color set by an update
 *   that waits for the create.
 * - A source record already restored whose restorable content changed since the last
 *   restore is updated (and moved when its list changed). Each update's key carries a
 *   hash of that content (`...@<hash>`), so an unchanged record plans nothing: a second
 *   restore of the same run sends nothing, a restore of a later run sends only changes.
 * - Versions of one record apply in order: the journal maps each record to its latest
 *   planned version (`restore.version:<target>`), which alone decides "unchanged" (a
 *   record whose source went back to an earlier content is updated again, under a fresh
 *   key `...@<hash>#n`), and planning a version supersedes the unfinished ops of the one
 *   before it (done without sending): an older update can never land after a newer one.
 * - Lists and tags are matched on the target by title (missing ones are made by
 *   list.ensure / tag.ensure ops); assignees by e-mail among the target's users (unknown
 *   e-mails are left out and reported).
 * - With `deleteMissing`, a record restored earlier whose source is not in the run (deleted
 *   at the source) is deleted on the target (`restore:<target>:<sourceId>/delete`, once).
 *   Off by default: delete-record cannot be undone through the interface. Only from a
 *   complete run that holds records of the source workspace: an empty or partial run
 *   would read as "everything was deleted".
 * - Limits: tag changes of an already restored record are not applied (update-record
 *   takes no tags); a target record deleted by someone else after its restore makes its
 *   update fail (reported); a source record deleted and later brought back is not
 *   restored again once its counterpart was deleted.
 * All-day dates read back as midnight UTC, or as a zoneless midnight (the other reading),
 * are sent as bare dates (assumptions.ts ALL_DAY_READ_FORM).
 * Tags and `archived` need operations beyond the documents: a service without them gets
 * the records without, and the result's `notices` say so in one line.
 */
import { createHash } from "node:crypto"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { notAvailableLine } from "../client/errors.ts"
import type { RestClientApi, RestError } from "../client/rest-client.ts"
import { restUserEmail } from "../schema/users.ts"
import { allPages, Paging } from "../streams/paging.ts"
import { PAGE_MAX_LIMIT } from "../schema/limits.ts"
import type { RunRow, SnapshotError, SnapshotStoreService } from "../store/snapshot.ts"
import { type Adoption, type JournalApi, JournalError, type JournalStateError, type PlanOp } from "../store/journal.ts"
import {
  listEnsureKey,
  OP_KINDS,
  PHASES,
  type RecordCreatePayload,
  type RecordDeletePayload,
  type RecordMovePayload,
  recordNamespace,
  type RecordUpdatePayload,
  tagEnsureKey
} from "./plan.ts"
import { replay, type ReplayAborted } from "./replay.ts"
import { makeRecordExecutors } from "./replay-records.ts"

export class RestoreError extends Data.TaggedError("RestoreError")<{ readonly message: string }> {}

export interface RestoreOptions {
  readonly run: RunRow
  readonly sourceWorkspaceId: string
  readonly targetWorkspaceId: string
  readonly concurrency?: number
  /** Plan only: count what would be sent. */
  readonly dryRun?: boolean
  /** Delete on the target the records restored earlier whose source is gone (see above). */
  readonly deleteMissing?: boolean
}

export interface RestoreResult {
  /** Source records in the run. */
  readonly records: number
  readonly planned: { readonly creates: number; readonly updates: number; readonly moves: number; readonly deletes: number }
  /** Records already restored with the same content. */
  readonly unchanged: number
  readonly created: number
  readonly updated: number
  readonly deleted: number
  readonly failed: number
  readonly unknown: number
  /** Assignee e-mails with no user on the target (left out). */
  readonly unknownAssignees: ReadonlyArray<string>
  /** What was left out because the service lacks an operation beyond the documents, one line each. */
  readonly notices: ReadonlyArray<string>
  /** Records found by title and taken as what a create of unknown outcome made (see ImportResult.adopted). */
  readonly adopted: ReadonlyArray<Adoption>
}

/** The restorable part of a stored record detail (tolerant: a snapshot is data, not code). */
interface SourceRecord {
  readonly id: string
  readonly title: string
  readonly html: string
  readonly text: string
  readonly listTitle: string | null
  readonly startedAt: string | null
  readonly duedAt: string | null
  readonly done: boolean
  readonly archived: boolean
  readonly color: string | null
  readonly emails: ReadonlyArray<string>
  readonly tags: ReadonlyArray<string>
}

const str = (v: unknown): string | null => (typeof v === "string" ? v : null)

const readSource = (detail: Record<string, unknown>): SourceRecord => {
  const list = detail.todoList as { title?: unknown } | null | undefined
  const users = Array.isArray(detail.users) ? (detail.users as Array<{ email?: unknown }>) : []
  const tags = Array.isArray(detail.tags) ? (detail.tags as Array<{ title?: unknown }>) : []
  return {
    id: String(detail.id),
    title: str(detail.title) ?? "",
    html: str(detail.html) ?? "",
    text: str(detail.text) ?? "",
    listTitle: str(list?.title),
    startedAt: str(detail.startedAt),
    duedAt: str(detail.duedAt),
    done: detail.done === true,
    archived: detail.archived === true,
    color: str(detail.color),
    emails: users.map((u) => str(u.email)).filter((e): e is string => e !== null).map((e) => e.toLowerCase()).sort(),
    tags: tags.map((t) => str(t.title)).filter((t): t is string => t !== null).sort()
  }
}

/**
 * All-day dates come back as midnight UTC (or, in the other reading, as a zoneless
 * midnight); send them as bare dates so they stay all-day. Another zoneless time is
 * sent as UTC (inputs need a zone, assumptions.ts DATE_INPUT_FORMS).
 */
export const restoreDate = (value: string | null): string | undefined => {
  if (value === null) return undefined
  const m = /^(\d{4}-\d{2}-\d{2})T00:00(?::00(?:\.0+)?)?Z?$/.exec(value)
  if (m) return m[1]!
  return /T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?$/.test(value) ? `${value}Z` : value
}

const contentHash = (r: SourceRecord): string =>
  createHash("sha1")
    .update(JSON.stringify([r.title, r.html, r.text, r.listTitle, r.startedAt, r.duedAt, r.done, r.archived, r.color, r.emails]))
    .digest("hex")
    .slice(0, 16)

/** id_map namespace: source record id -> the version key of its latest planned restore. */
export const versionNamespace = (target: string) => `restore.version:${target}`

/** The ops of one version: its marker (the version key itself) and its steps. */
const VERSION_STEPS = ["", "/state", "/update", "/move"] as const

/** The content hash of a version key (`...@<hash>` or `...@<hash>#n`). */
const contentOf = (versionKey: string): string => versionKey.slice(versionKey.lastIndexOf("@") + 1).replace(/#\d+$/, "")

/** Plans and (unless dry run) replays a restore. */
export const restore = (
  store: SnapshotStoreService,
  client: RestClientApi,
  journal: JournalApi,
  options: RestoreOptions
): Effect.Effect<
  RestoreResult,
  RestoreError | SnapshotError | RestError | JournalError | JournalStateError | ReplayAborted
> =>
  Effect.gen(function*() {
    const target = options.targetWorkspaceId
    const owner = Option.getOrUndefined(yield* journal.getMeta("target.workspace"))
    if (owner !== undefined && owner !== target) {
      return yield* Effect.fail(
        new RestoreError({ message: `journal ${journal.file} belongs to workspace ${owner}, not ${target}; use another journal file` })
      )
    }
    const kind = Option.getOrUndefined(yield* journal.getMeta("kind"))
    if (kind !== undefined && kind !== "restore") {
      return yield* Effect.fail(
        new RestoreError({ message: `journal ${journal.file} was planned by ${kind}, not by a restore; use another journal file` })
      )
    }
    const notices: Array<string> = []
    const lists = new Map((yield* client.listLists({ workspaceId: target })).map((l) => [l.title, l.id] as const))
    // Tags are beyond the documents: without them on the service, records are restored without tags.
    const tagList = yield* client.listTags({ workspaceId: target }).pipe(
      Effect.map(Option.some),
      Effect.catchTag("NotAvailable", (e) => {
        notices.push(`${notAvailableLine("tags", e)}; records are restored without their tags`)
        return Effect.succeed(Option.none())
      })
    )
    const tagsAvailable = Option.isSome(tagList)
    const tags = new Map(Option.getOrElse(tagList, () => []).map((t) => [t.title, t.id] as const))
    const users = new Map<string, string>()
    const listed = yield* allPages(
      (skip, limit) => Effect.map(client.listUsers({ workspaceId: target, skip, limit }), (p) => Paging.totalCount(p.users, p.totalCount, skip)),
      PAGE_MAX_LIMIT
    )
    for (const u of listed) {
      // A user the service lists without an e-mail cannot be matched by one.
      const email = restUserEmail(u)
      if (email !== undefined) users.set(email, u.id)
    }

    const sources = yield* store.query("read the run's records", (db) =>
      (db
        .prepare(
          `SELECT r.detail AS detail FROM run_records rr JOIN records r ON r.vid = rr.vid
           WHERE rr.run_id = ? AND r.workspace_id = ? ORDER BY r.id`
        )
        .all(options.run.id, options.sourceWorkspaceId) as Array<{ detail: string }>)
        .map((row) => readSource(JSON.parse(row.detail) as Record<string, unknown>))
    )
    if (!options.dryRun) {
      yield* journal.setMeta("target.workspace", target)
      yield* journal.setMeta("kind", "restore")
    }

    const unknownAssignees = new Set<string>()
    const ops: Array<PlanOp> = []
    const ensured = new Set<string>()
    let creates = 0
    let updates = 0
    let moves = 0
    let unchanged = 0
    const listRef = (title: string | null): { listId?: string; listTitle?: string } => {
      if (title === null) return {}
      const id = lists.get(title)
      if (id !== undefined) return { listId: id }
      const key = listEnsureKey(target, title)
      if (!ensured.has(key)) {
        ensured.add(key)
        ops.push({ key, kind: OP_KINDS.listEnsure, payload: { workspaceId: target, title } })
      }
      return { listTitle: title }
    }
    const versionNs = versionNamespace(target)
    /** Whether the journal holds an op with this key (planned by this or an earlier restore). */
    const inJournal = (key: string) => Effect.map(journal.get(key), Option.isSome)
    // Applied after the ops are added: older versions' unfinished ops, superseded.
    const newVersions: Array<{ sourceId: string; versionKey: string; previous: string | undefined }> = []
    for (const r of sources) {
      const hash = contentHash(r)
      const base = `restore:${target}:${r.id}`
      const assigneeIds = r.emails.flatMap((e) => {
        const id = users.get(e)
        if (id === undefined) unknownAssignees.add(e)
        return id === undefined ? [] : [id]
      })
      const startedAt = restoreDate(r.startedAt)
      const duedAt = restoreDate(r.duedAt)
      const latest = Option.getOrUndefined(yield* journal.lookup(versionNs, r.id))
      // The latest version restored (or planned) has this content. Journals of earlier
      // versions, without the version map, are judged by the hash key alone.
      if (latest !== undefined ? contentOf(latest) === hash : yield* inJournal(`${base}@${hash}`)) {
        unchanged++
        continue
      }
      // A content seen before (the source went back to it) gets a fresh key.
      let versionKey = `${base}@${hash}`
      for (let n = 2; yield* inJournal(versionKey); n++) versionKey = `${base}@${hash}#${n}`
      if (!options.dryRun) newVersions.push({ sourceId: r.id, versionKey, previous: latest })
      const marker = (dependsOn: string): PlanOp => ({ key: versionKey, kind: OP_KINDS.marker, payload: { hash }, dependsOn })
      if (!(yield* inJournal(base))) {
        const tagIds: Array<string> = []
        const tagTitles: Array<string> = []
        for (const t of tagsAvailable ? r.tags : []) {
          const id = tags.get(t)
          if (id !== undefined) tagIds.push(id)
          else {
            tagTitles.push(t)
            const key = tagEnsureKey(target, t)
            if (!ensured.has(key)) {
              ensured.add(key)
              ops.push({ key, kind: OP_KINDS.tagEnsure, payload: { workspaceId: target, title: t } })
            }
          }
        }
        const payload: RecordCreatePayload = {
          workspaceId: target,
          sourceKey: r.id,
          title: r.title,
          origin: `source record ${r.id}`,
          ...listRef(r.listTitle),
          ...(r.html !== "" ? { descriptionHtml: r.html } : r.text !== "" ? { description: r.text } : {}),
          ...(startedAt !== undefined ? { startedAt } : {}),
          ...(duedAt !== undefined ? { duedAt } : {}),
          ...(assigneeIds.length > 0 ? { assigneeIds } : {}),
          ...(tagIds.length > 0 ? { tagIds } : {}),
          ...(tagTitles.length > 0 ? { tagTitles } : {})
        }
        ops.push({ key: base, kind: OP_KINDS.recordCreate, payload })
        creates++
        let last = base
        // create-record takes no done / archived / color: set them once it exists.
        if (r.done || r.archived || r.color !== null) {
          const state: RecordUpdatePayload = {
            workspaceId: target,
            recordRef: r.id,
            fields: { done: r.done, archived: r.archived, ...(r.color !== null ? { color: r.color } : {}) },
            origin: `source record ${r.id}`
          }
          last = `${versionKey}/state`
          ops.push({ key: last, kind: OP_KINDS.recordUpdate, payload: state, dependsOn: base })
        }
        ops.push(marker(last))
        continue
      }
      const update: RecordUpdatePayload = {
        workspaceId: target,
        recordRef: r.id,
        fields: {
          title: r.title,
          ...(r.html !== "" ? { descriptionHtml: r.html } : { description: r.text }),
          startedAt: startedAt ?? null,
          duedAt: duedAt ?? null,
          done: r.done,
          archived: r.archived,
          ...(r.color !== null ? { color: r.color } : {}),
          assigneeIds
        },
        origin: `source record ${r.id}`
      }
      const updateKey = `${versionKey}/update`
      ops.push({ key: updateKey, kind: OP_KINDS.recordUpdate, payload: update, dependsOn: base })
      updates++
      let last = updateKey
      if (r.listTitle !== null) {
        const move: RecordMovePayload = { workspaceId: target, recordRef: r.id, ...listRef(r.listTitle), origin: `source record ${r.id}` }
        last = `${versionKey}/move`
        ops.push({ key: last, kind: OP_KINDS.recordMove, payload: move, dependsOn: updateKey })
        moves++
      }
      ops.push(marker(last))
    }
    let deletes = 0
    if (options.deleteMissing === true) {
      if (options.run.status !== "complete") {
        return yield* Effect.fail(new RestoreError({ message: `run ${options.run.id} is ${options.run.status}: deleting what it lacks needs a complete run` }))
      }
      if (sources.length === 0) {
        return yield* Effect.fail(
          new RestoreError({
            message: `run ${options.run.id} holds no record of workspace ${options.sourceWorkspaceId}: refusing to delete every restored record; restore without deleting, or back the workspace up first`
          })
        )
      }
      const present = new Set(sources.map((r) => r.id))
      for (const { sourceKey } of yield* journal.mappings(recordNamespace(target))) {
        if (present.has(sourceKey)) continue
        // Only records this restore created: their create op is done in this journal.
        const create = yield* journal.get(`restore:${target}:${sourceKey}`)
        if (Option.isNone(create) || create.value.state !== "done") continue
        const key = `restore:${target}:${sourceKey}/delete`
        // Deleted (or planned for deletion) by an earlier restore.
        if (yield* inJournal(key)) continue
        const payload: RecordDeletePayload = { workspaceId: target, recordRef: sourceKey, origin: `source record ${sourceKey} (deleted at the source)` }
        ops.push({ key, kind: OP_KINDS.recordDelete, payload })
        deletes++
      }
    }
    const planned = { creates, updates, moves, deletes }
    if (options.dryRun) {
      return {
        records: sources.length,
        planned,
        unchanged,
        created: 0,
        updated: 0,
        deleted: 0,
        failed: 0,
        unknown: 0,
        unknownAssignees: [...unknownAssignees].sort(),
        notices,
        adopted: []
      }
    }
    // The create op of an already restored record is done; `depends_on` lets updates run.
    // With the version map in one transaction: a crash cannot leave a version planned but
    // not recorded as the latest (a rerun would plan it again beside the first).
    yield* journal.addPlan({
      ops,
      supersede: newVersions.flatMap((v) =>
        v.previous === undefined ? [] : [{ keys: VERSION_STEPS.map((step) => `${v.previous}${step}`), by: v.versionKey }]
      ),
      mappings: newVersions.map((v) => ({ namespace: versionNs, sourceKey: v.sourceId, targetId: v.versionKey }))
    })
    yield* journal.retryFailed()
    const onNotice = (line: string) => {
      if (!notices.includes(line)) notices.push(line)
    }
    const adoptedBefore = yield* journal.lastAdoptionId()
    const report = yield* replay(journal, makeRecordExecutors(client, { onNotice }), {
      phases: PHASES,
      concurrency: options.concurrency ?? 8
    })
    return {
      records: sources.length,
      planned,
      unchanged,
      created: report.doneByKind[OP_KINDS.recordCreate] ?? 0,
      updated: report.doneByKind[OP_KINDS.recordUpdate] ?? 0,
      deleted: report.doneByKind[OP_KINDS.recordDelete] ?? 0,
      failed: report.failed,
      unknown: report.unknown,
      unknownAssignees: [...unknownAssignees].sort(),
      notices,
      adopted: (yield* journal.adoptions(adoptedBefore)).map(({ detail, namespace, opKey, sourceKey, targetId }) => ({
        opKey,
        namespace,
        sourceKey,
        targetId,
        detail
      }))
    }
  })
