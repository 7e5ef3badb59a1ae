/**
 * Planning a restore, one source record at a time (the rules are in restore.ts): each
 * record is matched with a target record and planned as a create, an update (and move),
 * or nothing; then, with `deleteMissing`, the target records no run record matched are
 * planned for deletion.
 *
 * The planner keeps only what spans records: the lists and tags already ensured and the
 * counts; the target records matched (for the deletions) are marked in the target's
 * scratch file (restore-target.ts), and the keys of the updates planned go to the
 * caller a batch at a time (`keepUpdateKeys`), not held. The ops of the records planned so
 * far are handed over by `takeBatch`, so a restore writes its plan to the journal a batch
 * at a time and never holds the plan of the whole run.
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { isNotFound } from "../client/errors.ts"
import type { RestClientApi, RestError } from "../client/rest-client.ts"
import type { JournalApi, JournalError, Mapping, PlanOp } from "../store/journal.ts"
import {
  listEnsureKey,
  OP_KINDS,
  type RecordCreatePayload,
  type RecordDeletePayload,
  type RecordMovePayload,
  recordNamespace,
  type RecordUpdatePayload,
  tagEnsureKey
} from "./plan.ts"
import type { RecordSummary } from "../schema/records.ts"
import { CAPABILITY, listsNotMade, missingCapabilities } from "./capabilities.ts"
import { contentHash, restoreDate, type SourceRecord } from "./restore-source.ts"
import { compareSummary, type TargetState } from "./restore-target.ts"
import { type Kept, keptDeletionWhy, keptEditWhy } from "./pass-plan.ts"
import {
  descriptionHash,
  type RecordField,
  summaryDifferences,
  type Written,
  writtenAfter,
  writtenOf,
  writtenOfMarker
} from "./restore-written.ts"
import { withoutReferenceMarks } from "./references.ts"

/** id_map namespace: source record id -> the version key of its latest planned restore. */
export const versionNamespace = (target: string) => `restore.version:${target}`

/** The ops of one version: its marker (the version key itself) and its steps. */
const VERSION_STEPS = ["", "/state", "/update", "/move"] as const

/** The content hash of a version key (`...@<hash>` or `...@<hash>#n`). */
const contentOf = (versionKey: string): string => versionKey.slice(versionKey.lastIndexOf("@") + 1).replace(/#\d+$/, "")

/**
 * What the records planned since the last batch add to the journal, in one transaction:
 * their ops, the older versions they supersede, and the mappings (ids matched in place,
 * each record's latest version). Together, so a crash cannot leave a version planned but
 * not recorded as the latest (a rerun would plan it again beside the first).
 */
export interface PlanBatch {
  readonly ops: ReadonlyArray<PlanOp>
  readonly supersede: ReadonlyArray<{ readonly keys: ReadonlyArray<string>; readonly by: string }>
  readonly mappings: ReadonlyArray<Mapping>
}

export interface PlanCounts {
  readonly creates: number
  readonly updates: number
  readonly moves: number
  readonly unchanged: number
}

export interface RecordPlannerOptions {
  readonly client: RestClientApi
  readonly journal: JournalApi
  /** The target workspace id. */
  readonly target: string
  /** The target as it is now. */
  readonly now: TargetState
  /** Whether the service sets `archived` (else it is not compared). */
  readonly archivedSettable: boolean
  /** Plan only: no version is recorded as the latest. */
  readonly dryRun: boolean
  /**
   * Delta passes (a migration): each version's marker keeps what it wrote
   * (restore-written.ts), and a record an earlier pass wrote gets only the fields that
   * differ from the source and were not edited on the target since that pass; those are
   * kept and reported, unless `overwriteTargetEdits`. Without: a restore, which makes the
   * target hold the run whatever was edited there.
   */
  readonly delta?: { readonly overwriteTargetEdits: boolean } | undefined
  /**
   * Where the keys of the update ops planned (of records that exist, not the state set
   * after a create) are kept, a batch at a time (`takeBatch`): restore.ts counts those done
   * as `updated`, from a scratch file, not the heap. Without it they are not kept.
   */
  readonly keepUpdateKeys?: ((keys: ReadonlyArray<string>) => void) | undefined
}

/** A source record's versions: its key base, the hash of its content, its latest version planned. */
interface Version {
  readonly base: string
  readonly hash: string
  readonly latest: string | undefined
}

/** The key for a create of this record, and whether it is one planned earlier and not finished. */
interface CreateKey {
  readonly key: string
  readonly resume: boolean
}

/** Plans the source records handed to `plan`, one at a time (see the file's comment). */
export const makeRecordPlanner = (options: RecordPlannerOptions) => {
  const { client, journal, now, target } = options
  const versionNs = versionNamespace(target)
  const recordNs = recordNamespace(target)
  /** List and tag ensure ops planned by this restore (each once). */
  const ensured = new Set<string>()
  const unknownAssignees = new Set<string>()
  /** The update ops of records that exist planned since the last batch (`keepUpdateKeys`). */
  let updateKeys: Array<string> = []
  const counts = { creates: 0, updates: 0, moves: 0, unchanged: 0 }
  let tagsBehind = 0
  /** Delta passes: target edits kept (the plan's conflicts, the run's kept), and the source records they are of. */
  const kept: Array<Kept> = []
  const keptRecords = new Set<string>()
  /** Delta passes: source records whose target record was deleted there since the last pass (kept deleted). */
  const deletedOnTarget = new Set<string>()
  /** Titles of the lists and tags this restore plans to make, in plan order. */
  const toMake = { lists: [] as Array<string>, tags: [] as Array<string> }

  let ops: Array<PlanOp> = []
  let mappings: Array<Mapping> = []
  let newVersions: Array<{ sourceId: string; versionKey: string; previous: string | undefined }> = []

  /**
   * What the journal's runs found the target cannot hold (capabilities.ts): a list it
   * cannot make is not a difference (its records are in the first list, and no move can
   * change that), nor is `archived` it ignores. Read once.
   */
  let cannot: { readonly archivedSettable: boolean; readonly listsNotMade: ReadonlySet<string> } | undefined
  const targetCannot = () =>
    cannot !== undefined ? Effect.succeed(cannot) : Effect.gen(function*() {
      const missing = yield* missingCapabilities(journal)
      cannot = { archivedSettable: !missing.has(CAPABILITY.archived), listsNotMade: new Set(yield* listsNotMade(journal, target)) }
      return cannot
    })

  /** Whether the journal holds an op with this key (planned by this or an earlier restore). */
  const inJournal = (key: string) => Effect.map(journal.get(key), Option.isSome)

  const ensureOnce = (key: string, op: () => PlanOp) => {
    if (ensured.has(key)) return
    ensured.add(key)
    ops.push(op())
  }

  /** The list a write names: its id on the target, or its title once a list.ensure makes it. */
  const listRef = (title: string | null): { listId?: string; listTitle?: string } => {
    if (title === null) return {}
    const id = now.lists.get(title)
    if (id !== undefined) return { listId: id }
    const key = listEnsureKey(target, title)
    ensureOnce(key, () => {
      toMake.lists.push(title)
      return { key, kind: OP_KINDS.listEnsure, payload: { workspaceId: target, title } }
    })
    return { listTitle: title }
  }

  /**
   * A create that names a list is sent in its list's order (`inListOrder`, plan.ts): the
   * run is planned a list at a time by position (restore-source.ts `runDetails`), and no
   * documented write sets a position, so the target keeps the run's order wherever the
   * service appends. A create without a list goes where the service puts it, unordered.
   */
  const inList = (ref: { listId?: string; listTitle?: string }) =>
    ref.listId !== undefined || ref.listTitle !== undefined ? { ...ref, inListOrder: true } : ref

  /** The tags of a create: ids of the target's tags, titles of those a tag.ensure makes. */
  const tagRefs = (r: SourceRecord): { tagIds?: Array<string>; tagTitles?: Array<string> } => {
    if (Option.isNone(now.tags)) return {}
    const tagIds: Array<string> = []
    const tagTitles: Array<string> = []
    for (const t of r.tags) {
      const id = now.tags.value.get(t)
      if (id !== undefined) {
        tagIds.push(id)
        continue
      }
      tagTitles.push(t)
      const key = tagEnsureKey(target, t)
      ensureOnce(key, () => {
        toMake.tags.push(t)
        return { key, kind: OP_KINDS.tagEnsure, payload: { workspaceId: target, title: t } }
      })
    }
    return { ...(tagIds.length > 0 ? { tagIds } : {}), ...(tagTitles.length > 0 ? { tagTitles } : {}) }
  }

  /** Assignee ids on the target by e-mail; e-mails with no user there are left out and reported. */
  const assigneesOf = (r: SourceRecord): Array<string> =>
    r.emails.flatMap((e) => {
      const id = now.users.get(e)
      if (id === undefined) unknownAssignees.add(e)
      return id === undefined ? [] : [id]
    })

  /**
   * The key for a create of this record: the first of `base`, `base#2`, ... not yet in
   * the journal, or the one still unfinished (it resumes).
   */
  const createKey = (base: string): Effect.Effect<CreateKey, JournalError> =>
    Effect.gen(function*() {
      for (let n = 1;; n++) {
        const key = n === 1 ? base : `${base}#${n}`
        const op = yield* journal.get(key)
        if (Option.isNone(op)) return { key, resume: false }
        if (op.value.state !== "done") return { key, resume: true }
      }
    })

  /** A fresh version key: a content seen before (the source went back to it) gets `#n`. */
  const freshVersion = (r: SourceRecord, { base, hash, latest }: Version) =>
    Effect.gen(function*() {
      let key = `${base}@${hash}`
      for (let n = 2; yield* inJournal(key); n++) key = `${base}@${hash}#${n}`
      if (!options.dryRun) newVersions.push({ sourceId: r.id, versionKey: key, previous: latest })
      return key
    })

  /** A version's marker: with delta passes, it keeps what the version wrote. */
  const marker = (key: string, hash: string, dependsOn: string, written: Written): PlanOp => ({
    key,
    kind: OP_KINDS.marker,
    payload: options.delta !== undefined ? { hash, written } : { hash },
    dependsOn
  })

  /** The e-mails of a source record's assignees that the target knows (the others are left out). */
  const knownEmails = (r: SourceRecord) => r.emails.filter((e) => now.users.has(e))

  /** No target record: created, then done / archived / colour set (create-record takes none of them). */
  const planCreate = (r: SourceRecord, version: Version, assigneeIds: ReadonlyArray<string>) =>
    Effect.gen(function*() {
      const { base, hash } = version
      const { key, resume } = yield* createKey(base)
      // A create planned earlier and not finished: the replay resumes it (a create all the same).
      if (resume) {
        counts.creates++
        return
      }
      const versionKey = yield* freshVersion(r, version)
      const tags = tagRefs(r)
      const startedAt = restoreDate(r.startedAt)
      const duedAt = restoreDate(r.duedAt)
      const payload: RecordCreatePayload = {
        workspaceId: target,
        sourceKey: r.id,
        title: r.title,
        origin: `source record ${r.id}`,
        ...inList(listRef(r.listTitle)),
        ...(r.html !== "" ? { descriptionHtml: r.html } : r.text !== "" ? { description: r.text } : {}),
        ...(startedAt !== undefined ? { startedAt } : {}),
        ...(duedAt !== undefined ? { duedAt } : {}),
        ...(assigneeIds.length > 0 ? { assigneeIds: [...assigneeIds] } : {}),
        ...tags
      }
      ops.push({ key, kind: OP_KINDS.recordCreate, payload })
      counts.creates++
      let last = key
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
      ops.push(marker(versionKey, hash, last, writtenOf(r, knownEmails(r))))
    })

  /**
   * Whether a target record whose summary shows no difference also has the source's
   * description: it is not in the listing, so it counts as the same when the record's
   * `updatedAt` is the one in the run (in place), when the journal's latest version of
   * the record has this content, or when get-record shows it (read only for those).
   */
  const sameDescription = (r: SourceRecord, current: RecordSummary, inPlace: boolean, { base, hash, latest }: Version) =>
    Effect.gen(function*() {
      if (inPlace && r.updatedAt !== null && r.updatedAt === current.updatedAt) return true
      if (latest !== undefined && contentOf(latest) === hash) return true
      if (latest === undefined && !inPlace && (yield* inJournal(`${base}@${hash}`))) return true
      const d = yield* client.getRecord({ workspaceId: target, recordId: current.id })
      return r.html !== "" ? d.html === r.html : d.text === r.text
    })

  /** A matched target record that differs: updated, and moved when its list differs. */
  const planUpdate = (r: SourceRecord, version: Version, assigneeIds: ReadonlyArray<string>, inPlace: boolean, moved: boolean) =>
    Effect.gen(function*() {
      // Matched by id: the id maps to itself, so updates find it as they find created ones.
      if (inPlace) mappings.push({ namespace: recordNs, sourceKey: r.id, targetId: r.id })
      const versionKey = yield* freshVersion(r, version)
      const update: RecordUpdatePayload = {
        workspaceId: target,
        recordRef: r.id,
        fields: {
          title: r.title,
          ...(r.html !== "" ? { descriptionHtml: r.html } : { description: r.text }),
          startedAt: restoreDate(r.startedAt) ?? null,
          duedAt: restoreDate(r.duedAt) ?? null,
          done: r.done,
          archived: r.archived,
          ...(r.color !== null ? { color: r.color } : {}),
          assigneeIds: [...assigneeIds]
        },
        origin: `source record ${r.id}`
      }
      const updateKey = `${versionKey}/update`
      ops.push({ key: updateKey, kind: OP_KINDS.recordUpdate, payload: update })
      updateKeys.push(updateKey)
      counts.updates++
      let last = updateKey
      if (moved) {
        const move: RecordMovePayload = { workspaceId: target, recordRef: r.id, ...listRef(r.listTitle), origin: `source record ${r.id}` }
        last = `${versionKey}/move`
        ops.push({ key: last, kind: OP_KINDS.recordMove, payload: move, dependsOn: updateKey })
        counts.moves++
      }
      ops.push(marker(versionKey, version.hash, last, writtenOf(r, knownEmails(r))))
    })

  /**
   * Delta passes: a matched record an earlier pass wrote (`was`, its latest version's
   * marker). A field the source has otherwise than the target is written, unless the
   * target's value is not what that pass wrote (edited there since): then it is kept and
   * reported, or written with `overwriteTargetEdits`. The description, which summaries
   * lack, is read (get-record) only when the source changed it since that pass. Only the
   * fields written are sent; the new version's marker keeps the others as they were
   * written, so a field kept is found and reported again by the next pass.
   */
  const planDelta = (
    r: SourceRecord,
    version: Version,
    assigneeIds: ReadonlyArray<string>,
    current: RecordSummary,
    was: Written,
    cannot: { readonly archivedSettable: boolean; readonly listsNotMade: ReadonlySet<string> }
  ) =>
    Effect.gen(function*() {
      const overwrite = options.delta?.overwriteTargetEdits === true
      const archivedSettable = options.archivedSettable && cannot.archivedSettable
      const source = writtenOf(r, knownEmails(r))
      const edited = new Set(summaryDifferences(was, was.emails, current, archivedSettable, cannot.listsNotMade))
      const write: Array<RecordField> = []
      const keep: Array<RecordField> = []
      for (const f of summaryDifferences(r, source.emails, current, archivedSettable, cannot.listsNotMade)) {
        ;(edited.has(f) && !overwrite ? keep : write).push(f)
      }
      if (source.description !== was.description) {
        const got = yield* client.getRecord({ workspaceId: target, recordId: current.id })
        // References a pass rewrote to name target records are read as the source wrote them (references.ts).
        const d = { html: withoutReferenceMarks(got.html), text: withoutReferenceMarks(got.text) }
        if (source.description !== descriptionHash(d.html, d.text) && source.description !== descriptionHash("", d.text)) {
          const editedThere = was.description !== descriptionHash(d.html, d.text) && was.description !== descriptionHash("", d.text)
          ;(editedThere && !overwrite ? keep : write).push("description")
        }
      }
      for (const f of keep) kept.push({ what: f, item: r.id, why: keptEditWhy(`record ${current.id}`) })
      if (keep.length > 0) keptRecords.add(r.id)
      if (write.length === 0) {
        counts.unchanged++
        return
      }
      const versionKey = yield* freshVersion(r, version)
      const fields: Record<string, unknown> = {}
      for (const f of write) {
        if (f === "title") fields["title"] = r.title
        else if (f === "description") {
          if (r.html !== "") fields["descriptionHtml"] = r.html
          else fields["description"] = r.text
        } else if (f === "startedAt") fields["startedAt"] = restoreDate(r.startedAt) ?? null
        else if (f === "duedAt") fields["duedAt"] = restoreDate(r.duedAt) ?? null
        else if (f === "done") fields["done"] = r.done
        else if (f === "archived") fields["archived"] = r.archived
        else if (f === "color") fields["color"] = r.color
        else if (f === "assignees") fields["assigneeIds"] = [...assigneeIds]
      }
      // Always an update op, even one with no field (a move only: it sends nothing), so
      // each record a pass changes has one: what `updated` counts.
      const updateKey = `${versionKey}/update`
      const update: RecordUpdatePayload = { workspaceId: target, recordRef: r.id, fields, origin: `source record ${r.id}` }
      ops.push({ key: updateKey, kind: OP_KINDS.recordUpdate, payload: update })
      updateKeys.push(updateKey)
      counts.updates++
      let last = updateKey
      if (write.includes("list")) {
        const move: RecordMovePayload = { workspaceId: target, recordRef: r.id, ...listRef(r.listTitle), origin: `source record ${r.id}` }
        last = `${versionKey}/move`
        ops.push({ key: last, kind: OP_KINDS.recordMove, payload: move, dependsOn: updateKey })
        counts.moves++
      }
      ops.push(marker(versionKey, version.hash, last, writtenAfter(was, source, write)))
    })

  /**
   * What the record's latest version wrote, when a delta pass can rely on it: a version
   * whose marker keeps it and is done (a version left unfinished is superseded by the
   * next, which then writes every field, as a restore does).
   */
  const writtenBefore = (latest: string | undefined) =>
    options.delta === undefined || latest === undefined
      ? Effect.succeed(undefined)
      : Effect.map(journal.get(latest), (op) => (Option.isSome(op) && op.value.state === "done" ? writtenOfMarker(op.value.payload) : undefined))

  /**
   * Delta passes: whether the target record an earlier pass made for `r` (`mapped`, not in
   * the target's listing) was deleted on the target since: get-record says it is not
   * found (the listing alone is not proof), and no pass of this journal deleted it. Then
   * the deletion, the strongest edit on the target, is kept and reported, unless
   * `overwriteTargetEdits` (the record is made again, as a restore does).
   */
  const keptDeleted = (r: SourceRecord, mapped: string) =>
    Effect.gen(function*() {
      if (options.delta === undefined || options.delta.overwriteTargetEdits) return false
      const byJournal = yield* journal.get(deleteKey(target, mapped))
      if (Option.isSome(byJournal) && byJournal.value.state === "done") return false
      const there = yield* client.getRecord({ workspaceId: target, recordId: mapped }).pipe(
        Effect.as(true),
        Effect.catchIf(isNotFound, () => Effect.succeed(false))
      )
      if (there) return false
      kept.push({ what: "record", item: r.id, why: keptDeletionWhy(mapped) })
      keptRecords.add(r.id)
      deletedOnTarget.add(r.id)
      counts.unchanged++
      return true
    })

  /** Plans one source record. */
  const plan = (r: SourceRecord): Effect.Effect<void, JournalError | RestError> =>
    Effect.gen(function*() {
      const assigneeIds = assigneesOf(r)
      const mapped = Option.getOrUndefined(yield* journal.lookup(recordNs, r.id))
      const inPlace = mapped === undefined && now.records.has(r.id)
      // Never deleted: the target record this one maps to, and one with its id.
      if (mapped !== undefined) now.records.match(mapped)
      now.records.match(r.id)
      const targetId = mapped ?? (inPlace ? r.id : undefined)
      const current = targetId === undefined ? undefined : now.records.get(targetId)
      const version: Version = {
        base: `restore:${target}:${r.id}`,
        hash: contentHash(r),
        latest: Option.getOrUndefined(yield* journal.lookup(versionNs, r.id))
      }
      if (current === undefined) {
        if (mapped !== undefined && (yield* keptDeleted(r, mapped))) return
        return yield* planCreate(r, version, assigneeIds)
      }
      const assigneeEmails = r.emails.filter((e) => now.users.has(e))
      const cannot = yield* targetCannot()
      const difference = compareSummary(r, current, assigneeEmails, options.archivedSettable && cannot.archivedSettable, cannot.listsNotMade)
      if (difference.tags) tagsBehind++
      const was = inPlace ? undefined : yield* writtenBefore(version.latest)
      if (was !== undefined) return yield* planDelta(r, version, assigneeIds, current, was, cannot)
      if (!difference.fields && !difference.list && (yield* sameDescription(r, current, inPlace, version))) {
        counts.unchanged++
        return
      }
      yield* planUpdate(r, version, assigneeIds, inPlace, difference.list)
    })

  return {
    plan,
    /** The ops of the records planned since the last call, with what they supersede and map. */
    takeBatch: (): PlanBatch => {
      const batch: PlanBatch = {
        ops,
        supersede: newVersions.flatMap((v) =>
          v.previous === undefined ? [] : [{ keys: VERSION_STEPS.map((step) => `${v.previous}${step}`), by: v.versionKey }]
        ),
        mappings: [...mappings, ...newVersions.map((v) => ({ namespace: versionNs, sourceKey: v.sourceId, targetId: v.versionKey }))]
      }
      ops = []
      mappings = []
      newVersions = []
      if (updateKeys.length > 0) options.keepUpdateKeys?.(updateKeys)
      updateKeys = []
      return batch
    },
    counts: (): PlanCounts => ({ ...counts }),
    /** Records whose tags differ on the target (update-record takes no tags). */
    tagsBehind: () => tagsBehind,
    unknownAssignees: (): ReadonlyArray<string> => [...unknownAssignees].sort(),
    /** Delta passes: target edits kept, and the source records they are of. */
    kept: (): ReadonlyArray<Kept> => kept,
    keptRecords: (): ReadonlySet<string> => keptRecords,
    /** Delta passes: source records whose target record was deleted there since the last pass (kept deleted). */
    deletedOnTarget: (): ReadonlySet<string> => deletedOnTarget,
    /** Titles of the lists and tags this restore plans to make (the target lacks them). */
    toMake: (): { readonly lists: ReadonlyArray<string>; readonly tags: ReadonlyArray<string> } => toMake
  }
}

export type RecordPlanner = ReturnType<typeof makeRecordPlanner>

/** The journal key of the deletion of target record `id`. */
export const deleteKey = (target: string, id: string) => `restore:${target}:delete:${id}`

/** Deletions planned per call of `write`. */
const DELETE_BATCH = 500

/**
 * The deletions of `deleteMissing`: every target record no run record matched, except
 * those an earlier restore deleted (or planned to), handed to `write` a batch at a time
 * (one lookup per target record); returns how many were planned.
 */
export const planDeletes = <E>(
  journal: JournalApi,
  target: string,
  now: TargetState,
  runId: number,
  write: (ops: ReadonlyArray<PlanOp>) => Effect.Effect<void, E>,
  batchSize: number = DELETE_BATCH
): Effect.Effect<number, JournalError | E> =>
  Effect.gen(function*() {
    let planned = 0
    let ops: Array<PlanOp> = []
    for (const id of now.records.unmatchedIds()) {
      const key = deleteKey(target, id)
      if (Option.isSome(yield* journal.get(key))) continue
      const payload: RecordDeletePayload = { workspaceId: target, recordId: id, origin: `target record ${id} (not in run ${runId})` }
      ops.push({ key, kind: OP_KINDS.recordDelete, payload })
      planned++
      if (ops.length >= batchSize) {
        yield* write(ops)
        ops = []
      }
    }
    if (ops.length > 0) yield* write(ops)
    return planned
  })
