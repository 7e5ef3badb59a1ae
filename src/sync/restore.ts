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
 * Tags and `archived` need operations beyond the documents: a service without them gets
 * the records without, and the result's `notices` say so in one line.
 */
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type { RestClientApi, RestError } from "../client/rest-client.ts"
import type { PageError } from "../streams/paging.ts"
import type { ScanUnstable } from "../streams/stable-scan.ts"
import type { RunRow, SnapshotError, SnapshotStoreService } from "../store/snapshot.ts"
import { type Adoption, type JournalApi, JournalError, type JournalStateError, type Mapping, type PlanOp } from "../store/journal.ts"
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
import { censusOfDetails, contentHash, type NotRestored, readSource, restoreDate, type SourceRecord } from "./restore-source.ts"
import { compareSummary, readTarget } from "./restore-target.ts"

export { restoreDate } from "./restore-source.ts"
export type { NotRestored } from "./restore-source.ts"

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
}

/** id_map namespace: source record id -> the version key of its latest planned restore. */
export const versionNamespace = (target: string) => `restore.version:${target}`

/** Journal meta: set once the service refused `archived` on update-record (then not compared). */
const ARCHIVED_LEFT_OUT_META = "restore.archived-left-out"

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
  RestoreError | SnapshotError | RestError | PageError | ScanUnstable | JournalError | JournalStateError | ReplayAborted
> =>
  Effect.gen(function*() {
    const target = options.targetWorkspaceId
    const owner = Option.getOrUndefined(yield* journal.getMeta("target.workspace"))
    if (owner !== undefined && owner !== target) {
      return yield* Effect.fail(
        new RestoreError({ message: `journal ${journal.file} belongs to workspace ${owner}, not ${target}; use another journal file` })
      )
    }
    const journalKind = options.journalKind ?? "restore"
    const kind = Option.getOrUndefined(yield* journal.getMeta("kind"))
    if (kind !== undefined && kind !== journalKind) {
      return yield* Effect.fail(
        new RestoreError({ message: `journal ${journal.file} was planned by ${kind}, not by a ${journalKind}; use another journal file` })
      )
    }
    if (options.deleteMissing === true && options.records !== undefined) {
      return yield* Effect.fail(new RestoreError({ message: "deleting what the run lacks restores the whole run: do not name single records with it" }))
    }
    if (options.deleteMissing === true && options.run.status !== "complete") {
      return yield* Effect.fail(new RestoreError({ message: `run ${options.run.id} is ${options.run.status}: deleting what it lacks needs a complete run` }))
    }

    const details = (yield* store.select<{ detail: string }>("read the run's records", {
      sql: `SELECT r.detail AS detail FROM run_records rr JOIN records r ON r.vid = rr.vid
            WHERE rr.run_id = ? AND r.workspace_id = ? ORDER BY r.id`,
      params: [options.run.id, options.sourceWorkspaceId]
    })).map((row) => JSON.parse(row.detail) as Record<string, unknown>)
    const wanted = options.records === undefined ? undefined : new Set(options.records)
    const chosen = wanted === undefined ? details : details.filter((d) => wanted.has(String(d.id)))
    if (wanted !== undefined) {
      const found = new Set(chosen.map((d) => String(d.id)))
      const missing = [...wanted].filter((id) => !found.has(id))
      if (missing.length > 0) {
        return yield* Effect.fail(
          new RestoreError({
            message: `record ${missing.join(", ")} is not in run ${options.run.id} of workspace ${options.sourceWorkspaceId}; list the run's records with \`export --run ${options.run.id}\``
          })
        )
      }
    }
    const sources = chosen.map(readSource)
    if (options.deleteMissing === true && sources.length === 0) {
      return yield* Effect.fail(
        new RestoreError({
          message: `run ${options.run.id} holds no record of workspace ${options.sourceWorkspaceId}: refusing to delete every record of the target; restore without deleting, or back the workspace up first`
        })
      )
    }

    const now = yield* readTarget(client, target)
    const notices = [...now.notices]
    if (!options.dryRun) {
      yield* journal.setMeta("target.workspace", target)
      yield* journal.setMeta("kind", journalKind)
    }
    const archivedSettable = Option.isNone(yield* journal.getMeta(ARCHIVED_LEFT_OUT_META))

    const unknownAssignees = new Set<string>()
    const ops: Array<PlanOp> = []
    const mappings: Array<Mapping> = []
    const ensured = new Set<string>()
    let creates = 0
    let updates = 0
    let moves = 0
    let unchanged = 0
    let tagsBehind = 0
    const listRef = (title: string | null): { listId?: string; listTitle?: string } => {
      if (title === null) return {}
      const id = now.lists.get(title)
      if (id !== undefined) return { listId: id }
      const key = listEnsureKey(target, title)
      if (!ensured.has(key)) {
        ensured.add(key)
        ops.push({ key, kind: OP_KINDS.listEnsure, payload: { workspaceId: target, title } })
      }
      return { listTitle: title }
    }
    const versionNs = versionNamespace(target)
    const recordNs = recordNamespace(target)
    /** Whether the journal holds an op with this key (planned by this or an earlier restore). */
    const inJournal = (key: string) => Effect.map(journal.get(key), Option.isSome)
    /**
     * The key for a create of this record: the first of `base`, `base#2`, ... not yet in
     * the journal, or the one still unfinished (it resumes: `resume`).
     */
    const createKey = (base: string) =>
      Effect.gen(function*() {
        for (let n = 1;; n++) {
          const key = n === 1 ? base : `${base}#${n}`
          const op = yield* journal.get(key)
          if (Option.isNone(op)) return { key, resume: false }
          if (op.value.state !== "done") return { key, resume: true }
        }
      })
    /** Whether the target's description is the source's (read only when nothing else tells). */
    const sameDescription = (r: SourceRecord, targetId: string) =>
      Effect.map(client.getRecord({ workspaceId: target, recordId: targetId }), (d) =>
        r.html !== "" ? d.html === r.html : d.text === r.text)
    // Applied after the ops are added: older versions' unfinished ops, superseded.
    const newVersions: Array<{ sourceId: string; versionKey: string; previous: string | undefined }> = []
    /** The update ops of records that exist (not the state set after a create): `updated` counts these. */
    const updateKeys: Array<string> = []
    /** Target ids some run record matches (kept by deleteMissing). */
    const matched = new Set<string>()
    for (const r of sources) {
      const hash = contentHash(r)
      const base = `restore:${target}:${r.id}`
      const assigneeIds = r.emails.flatMap((e) => {
        const id = now.users.get(e)
        if (id === undefined) unknownAssignees.add(e)
        return id === undefined ? [] : [id]
      })
      const assigneeEmails = r.emails.filter((e) => now.users.has(e))
      const startedAt = restoreDate(r.startedAt)
      const duedAt = restoreDate(r.duedAt)
      const mapped = Option.getOrUndefined(yield* journal.lookup(recordNs, r.id))
      const inPlace = mapped === undefined && now.records.has(r.id)
      const targetId = mapped ?? (inPlace ? r.id : undefined)
      const current = targetId === undefined ? undefined : now.records.get(targetId)
      const latest = Option.getOrUndefined(yield* journal.lookup(versionNs, r.id))
      /** A fresh version key: a content seen before (the source went back to it) gets `#n`. */
      const freshVersion = Effect.gen(function*() {
        let key = `${base}@${hash}`
        for (let n = 2; yield* inJournal(key); n++) key = `${base}@${hash}#${n}`
        if (!options.dryRun) newVersions.push({ sourceId: r.id, versionKey: key, previous: latest })
        return key
      })
      const marker = (key: string, dependsOn: string): PlanOp => ({ key, kind: OP_KINDS.marker, payload: { hash }, dependsOn })

      if (current === undefined) {
        const { key, resume } = yield* createKey(base)
        // A create planned earlier and not finished: the replay below resumes it.
        if (resume) continue
        const versionKey = yield* freshVersion
        const tagIds: Array<string> = []
        const tagTitles: Array<string> = []
        for (const t of Option.isSome(now.tags) ? r.tags : []) {
          const id = Option.isSome(now.tags) ? now.tags.value.get(t) : undefined
          if (id !== undefined) tagIds.push(id)
          else {
            tagTitles.push(t)
            const ensureKey = tagEnsureKey(target, t)
            if (!ensured.has(ensureKey)) {
              ensured.add(ensureKey)
              ops.push({ key: ensureKey, kind: OP_KINDS.tagEnsure, payload: { workspaceId: target, title: t } })
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
        ops.push({ key, kind: OP_KINDS.recordCreate, payload })
        creates++
        let last = key
        // create-record takes no done / archived / color: set them once it exists.
        if (r.done || r.archived || r.color !== null) {
          const state: RecordUpdatePayload = {
            workspaceId: target,
            recordRef: r.id,
            fields: { done: r.done, archived: r.archived, ...(r.color !== null ? { color: r.color } : {}) },
            origin: `source record ${r.id}`
          }
          last = `${versionKey}/state`
          ops.push({ key: last, kind: OP_KINDS.recordUpdate, payload: state, dependsOn: key })
        }
        ops.push(marker(versionKey, last))
        continue
      }

      matched.add(current.id)
      const difference = compareSummary(r, current, assigneeEmails, archivedSettable)
      if (difference.tags) tagsBehind++
      if (!difference.fields && !difference.list) {
        const described = (inPlace && r.updatedAt !== null && r.updatedAt === current.updatedAt) ||
          (latest !== undefined && contentOf(latest) === hash) ||
          (latest === undefined && !inPlace && (yield* inJournal(`${base}@${hash}`))) ||
          (yield* sameDescription(r, current.id))
        if (described) {
          unchanged++
          continue
        }
      }
      // Matched by id: the id maps to itself, so updates find it as they find created ones.
      if (inPlace) mappings.push({ namespace: recordNs, sourceKey: r.id, targetId: r.id })
      const versionKey = yield* freshVersion
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
      ops.push({ key: updateKey, kind: OP_KINDS.recordUpdate, payload: update })
      updateKeys.push(updateKey)
      updates++
      let last = updateKey
      if (difference.list) {
        const move: RecordMovePayload = { workspaceId: target, recordRef: r.id, ...listRef(r.listTitle), origin: `source record ${r.id}` }
        last = `${versionKey}/move`
        ops.push({ key: last, kind: OP_KINDS.recordMove, payload: move, dependsOn: updateKey })
        moves++
      }
      ops.push(marker(versionKey, last))
    }
    let deletes = 0
    if (options.deleteMissing === true) {
      // Records matched through the journal whose source is in the run, and those in place.
      for (const { sourceKey, targetId } of yield* journal.mappings(recordNs)) {
        if (sources.some((r) => r.id === sourceKey)) matched.add(targetId)
      }
      for (const r of sources) if (now.records.has(r.id)) matched.add(r.id)
      for (const id of now.records.keys()) {
        if (matched.has(id)) continue
        const key = `restore:${target}:delete:${id}`
        // Deleted (or planned for deletion) by an earlier restore.
        if (yield* inJournal(key)) continue
        const payload: RecordDeletePayload = { workspaceId: target, recordId: id, origin: `target record ${id} (not in run ${options.run.id})` }
        ops.push({ key, kind: OP_KINDS.recordDelete, payload })
        deletes++
      }
    }
    const planned = { creates, updates, moves, deletes }
    const notRestoredOf = (leftOut: ReadonlyArray<string>): Array<NotRestored> => [
      ...(tagsBehind > 0
        ? [{ what: "tags of records that exist on the target", count: tagsBehind, why: "update-record takes no tags; only a created record gets its tags" }]
        : []),
      ...(unknownAssignees.size > 0
        ? [{ what: "assignees", count: unknownAssignees.size, why: "no user with that e-mail on the target" }]
        : []),
      ...leftOut.map((line) => ({ what: line.slice(0, line.indexOf(":")), count: sources.length, why: line })),
      ...censusOfDetails(chosen)
    ]
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
        notRestored: notRestoredOf(notices),
        notices,
        adopted: []
      }
    }
    // With the version map in one transaction: a crash cannot leave a version planned but
    // not recorded as the latest (a rerun would plan it again beside the first).
    yield* journal.addPlan({
      ops,
      supersede: newVersions.flatMap((v) =>
        v.previous === undefined ? [] : [{ keys: VERSION_STEPS.map((step) => `${v.previous}${step}`), by: v.versionKey }]
      ),
      mappings: [...mappings, ...newVersions.map((v) => ({ namespace: versionNs, sourceKey: v.sourceId, targetId: v.versionKey }))]
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
    if (notices.some((line) => line.startsWith("archived:"))) yield* journal.setMeta(ARCHIVED_LEFT_OUT_META, "1")
    return {
      records: sources.length,
      planned,
      unchanged,
      created: report.doneByKind[OP_KINDS.recordCreate] ?? 0,
      updated: (yield* Effect.forEach(updateKeys, (key) => journal.get(key))).filter((o) => Option.isSome(o) && o.value.state === "done").length,
      deleted: report.doneByKind[OP_KINDS.recordDelete] ?? 0,
      failed: report.failed,
      unknown: report.unknown,
      unknownAssignees: [...unknownAssignees].sort(),
      notRestored: notRestoredOf(notices),
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
