/**
 * Executors of the record-level ops (see plan.ts) over the REST client, with the
 * reconciliation that makes creates exactly-once.
 *
 * Reconciling a create (the op may have been applied; docs/journal.md has the argument):
 * search-records for the exact title in the target workspace (list-records with `search`
 * and the list filter, paged, when the search page comes back full), keep records that
 * - have exactly the title,
 * - are in the list the op targets (when the op names one),
 * - were created no earlier than the op's latest attempt minus a clock-skew margin,
 * - are not already mapped to another source item in the journal,
 * and take the earliest. Creates with the same title never run at the same time (their
 * executor group is the title), so at most one of our unknown creates can match.
 *
 * A create with `then.done` also sets `done` (update-record) in the same op, after
 * mapping the record it made; see `setDone`.
 *
 * Operations beyond the documents (list-tags, create-tag, create-list, `archived` on
 * update-record) may be missing from a service, or answered with success and not carried
 * out: lists and tags are read back after their create, `archived` with get-record
 * (capabilities.ts). What the service cannot do is remembered in the journal: the ensure
 * op maps the title to LEFT_OUT and records are created without that list or tag, an
 * update is sent without `archived`; each such case is told once to `onNotice` as one line.
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { Schema } from "effect"
import { isNotFound, notAvailableLine } from "../client/errors.ts"
import { RestClient, type RestClientApi } from "../client/rest-client.ts"
import { RECONCILE_CLOCK_SKEW_MS } from "../schema/assumptions.ts"
import { createdListId } from "../schema/records.ts"
import { isApplied, type JournalApi, type Op } from "../store/journal.ts"
import {
  EnsurePayload,
  LEFT_OUT,
  listNamespace,
  OP_KINDS,
  RecordCreatePayload,
  RecordDeletePayload,
  RecordMovePayload,
  recordNamespace,
  RecordUpdatePayload,
  tagNamespace,
  TARGET_WORKSPACE_META,
  unpackRecordCreate
} from "./plan.ts"
import { CAPABILITY, type Capability, type CapabilityMemory, capabilityMemory, noEffectLine } from "./capabilities.ts"
import type { ExecFailure, Executor, OpOutcome } from "./replay.ts"
import { type BeforeValues, beforeOfMove, beforeOfUpdate } from "./undo-values.ts"

/** A payload the journal holds but this version cannot read: the op cannot run. */
const badPayload = (op: Op, detail: string): ExecFailure => ({
  _tag: "BadPayload",
  message: `journal op ${op.key} (${op.kind}) has an unreadable payload: ${detail}`
})

export const decode = <A>(schema: Schema.ConstraintDecoder<A>, op: Op, payload: unknown = op.payload): Effect.Effect<A, ExecFailure> =>
  Schema.decodeUnknownEffect(schema)(payload).pipe(Effect.mapError((e) => badPayload(op, e.message)))

/**
 * A create's payload: unpacked when stored packed (import-csv, see `packRecordCreate`),
 * with `workspaceId` taken from the journal's target workspace when the payload leaves
 * it out (import-csv stores it once, see `PlannedRecordCreate`).
 */
const decodeCreate = (op: Op, journal: JournalApi): Effect.Effect<RecordCreatePayload, ExecFailure> =>
  Effect.gen(function*() {
    const raw = unpackRecordCreate(op.payload)
    if (typeof raw !== "object" || raw === null || "workspaceId" in raw) return yield* decode(RecordCreatePayload, op, raw)
    const ws = yield* journal.getMeta(TARGET_WORKSPACE_META).pipe(Effect.mapError(journalFailure))
    if (Option.isNone(ws)) return yield* Effect.fail(badPayload(op, "no workspaceId, and the journal names no target workspace"))
    return yield* decode(RecordCreatePayload, op, { ...raw, workspaceId: ws.value })
  })

export const unresolved = (what: string): ExecFailure => ({ _tag: "Unresolved", message: what })

export const lookupOrFail = (journal: JournalApi, namespace: string, key: string, what: string) =>
  journal.lookup(namespace, key).pipe(
    Effect.mapError((e): ExecFailure => ({ _tag: e._tag, message: e.message })),
    Effect.flatMap(Option.match({ onNone: () => Effect.fail(unresolved(what)), onSome: Effect.succeed }))
  )

export const journalFailure = (e: { readonly _tag: string; readonly message: string }): ExecFailure => ({
  _tag: e._tag,
  message: e.message
})

/**
 * The list id a create or move targets, if it names one (directly or through a
 * list.ensure); undefined also when the list could not be made (LEFT_OUT).
 */
const targetListId = (
  p: { readonly workspaceId: string; readonly listId?: string | undefined; readonly listTitle?: string | undefined },
  journal: JournalApi
): Effect.Effect<string | undefined, ExecFailure> =>
  p.listId !== undefined
    ? Effect.succeed(p.listId)
    : p.listTitle !== undefined
    ? lookupOrFail(journal, listNamespace(p.workspaceId), p.listTitle, `list ${JSON.stringify(p.listTitle)} was not created (see its list.ensure op)`)
      .pipe(Effect.map((id) => (id === LEFT_OUT ? undefined : id)))
    : Effect.succeed(undefined)

/** Tells each notice once per executor set. */
export const noticeOnce = (onNotice: ((line: string) => void) | undefined) => {
  const told = new Set<string>()
  return (line: string) => {
    if (onNotice === undefined || told.has(line)) return
    told.add(line)
    onNotice(line)
  }
}

export const isNotAvailable = (e: { readonly _tag: string }): e is ExecFailure & { readonly operation: string } =>
  e._tag === "NotAvailable"

/**
 * A create whose payload says `then.done` is finished in the same op (create-record takes
 * no `done`): create, record the id mapping (committed before going on; replay groups the
 * commit with other ops' transitions), then update-record with the
 * fixed value (safe to repeat). The op is done only after both. An attempt that ends
 * between the two (a crash, a refused or lost update) leaves the record mapped: the next
 * attempt finds the mapping and repeats only the update. A crash before the mapping is
 * written leaves the op in flight, and reconciling it finds the record by title as for
 * any create.
 */
const setDone = (client: RestClientApi, p: RecordCreatePayload, recordId: string, done: boolean) =>
  client.updateRecord({ workspaceId: p.workspaceId, recordId, done })

/** The record an earlier attempt of this create op made and mapped (creates with `then` only). */
const mappedByEarlierAttempt = (op: Op, p: RecordCreatePayload, journal: JournalApi) =>
  p.then?.done === undefined
    ? Effect.succeed(Option.none<string>())
    : journal.lookup(recordNamespace(p.workspaceId), p.sourceKey ?? op.key).pipe(Effect.mapError(journalFailure))

/**
 * A create's executor group. By title: a journal targets one workspace (import and restore
 * check its `target.workspace`), and a payload may leave the workspace out; grouping
 * coarser than needed only serialises more. A create `inListOrder` goes by its list
 * instead (its id, or the title a list.ensure makes it under), one at a time in plan
 * order; creates of one title in that list are then serialised all the same, so a
 * reconciliation still tells them apart.
 */
const createGroup = (op: Op): string => {
  const p = unpackRecordCreate(op.payload) as { title?: unknown; listId?: unknown; listTitle?: unknown; inListOrder?: unknown } | null
  if (p?.inListOrder === true && typeof p.listId === "string") return `create-in-list\u0000${p.listId}`
  if (p?.inListOrder === true && typeof p.listTitle === "string") return `create-in-list-titled\u0000${p.listTitle}`
  return `create\u0000${String(p?.title)}`
}

const createExecutor = (client: RestClientApi, skewMs: number): Executor => ({
  kind: OP_KINDS.recordCreate,
  group: createGroup,
  execute: (op, journal) =>
    Effect.gen(function*() {
      const p = yield* decodeCreate(op, journal)
      const done = p.then?.done
      const earlier = yield* mappedByEarlierAttempt(op, p, journal)
      if (done !== undefined && Option.isSome(earlier)) {
        // Created and mapped by an earlier attempt: only the update is left.
        yield* setDone(client, p, earlier.value, done)
        return {
          result: { id: earlier.value, done, resumed: true },
          mappings: [{ namespace: recordNamespace(p.workspaceId), sourceKey: p.sourceKey ?? op.key, targetId: earlier.value }]
        } satisfies OpOutcome
      }
      const listId = yield* targetListId(p, journal)
      const tagIds = [...(p.tagIds ?? [])]
      for (const title of p.tagTitles ?? []) {
        const id = yield* lookupOrFail(
          journal,
          tagNamespace(p.workspaceId),
          title,
          `tag ${JSON.stringify(title)} was not created (see its tag.ensure op)`
        )
        // A tag the service could not make (LEFT_OUT): the record is created without it.
        if (id !== LEFT_OUT) tagIds.push(id)
      }
      const created = yield* client.createRecord({
        workspaceId: p.workspaceId,
        title: p.title,
        ...(listId !== undefined ? { listId } : {}),
        ...(p.description !== undefined ? { description: p.description } : {}),
        ...(p.descriptionHtml !== undefined ? { descriptionHtml: p.descriptionHtml } : {}),
        ...(p.startedAt !== undefined ? { startedAt: p.startedAt } : {}),
        ...(p.duedAt !== undefined ? { duedAt: p.duedAt } : {}),
        ...(p.assigneeIds !== undefined && p.assigneeIds.length > 0 ? { assigneeIds: p.assigneeIds } : {}),
        ...(tagIds.length > 0 ? { tagIds } : {})
      })
      const mapping = { namespace: recordNamespace(p.workspaceId), sourceKey: p.sourceKey ?? op.key, targetId: created.id }
      if (done !== undefined) {
        // The record exists now: failing to map it must leave the op to reconciliation
        // (an unknown outcome), never to a plain resend.
        yield* journal.setMapping(mapping).pipe(
          Effect.mapError((e): ExecFailure => ({ _tag: "OutcomeUnknown", message: `created ${created.id}, not mapped: ${e.message}` }))
        )
        yield* setDone(client, p, created.id, done)
      }
      return {
        result: {
          id: created.id,
          uid: created.uid,
          title: created.title,
          // The answer's list (`list` or `todoList`), else the one asked for.
          listId: createdListId(created) ?? listId ?? null,
          ...(done !== undefined ? { done } : {})
        },
        mappings: [mapping]
      } satisfies OpOutcome
    }),
  resumable: (op, journal) =>
    Effect.gen(function*() {
      const p = yield* decodeCreate(op, journal)
      return Option.isSome(yield* mappedByEarlierAttempt(op, p, journal))
    }),
  reconcile: (op, journal) =>
    Effect.gen(function*() {
      const p = yield* decodeCreate(op, journal)
      // Created and mapped by an earlier attempt (its update unconfirmed): not applied
      // yet as a whole; the resend repeats only the update (see `setDone`).
      if (Option.isSome(yield* mappedByEarlierAttempt(op, p, journal))) return Option.none()
      // A list.ensure that never completed means the create cannot have been sent with it.
      const listId = yield* targetListId(p, journal).pipe(Effect.catch(() => Effect.succeed(undefined)))
      const attemptedAt = op.attemptedAt === null ? 0 : Date.parse(op.attemptedAt)
      const since = attemptedAt - skewMs
      const matches = (r: { title: string; createdAt: string; todoList: { id: string } }) =>
        r.title === p.title && Date.parse(r.createdAt) >= since && (listId === undefined || r.todoList.id === listId)
      let candidates: Array<{ id: string; uid: string; title: string; createdAt: string; todoList: { id: string } }> = []
      const found = yield* client.searchRecords({ workspaceId: p.workspaceId, query: p.title, limit: 100 })
      candidates = found.filter(matches).map((r) => ({ ...r }))
      if (found.length >= 100) {
        // The search page is full: page through list-records filtered by title (and list).
        candidates = []
        for (let skip = 0;; skip += 100) {
          const page = yield* client.listRecords({
            workspaceId: p.workspaceId,
            search: p.title,
            ...(listId !== undefined ? { listId } : {}),
            skip,
            limit: 100
          })
          for (const r of page.items) if (matches(r)) candidates.push({ ...r })
          if (!page.pageInfo.hasNextPage || page.items.length < 100) break
        }
      }
      if (candidates.length === 0) return Option.none()
      const mapped = yield* journal
        .mappedTargets(recordNamespace(p.workspaceId), candidates.map((c) => c.id))
        .pipe(Effect.mapError(journalFailure))
      const free = candidates
        .filter((c) => !mapped.has(c.id))
        .sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.id.localeCompare(b.id))
      const pick = free[0]
      if (pick === undefined) return Option.none()
      const mapping = { namespace: recordNamespace(p.workspaceId), sourceKey: p.sourceKey ?? op.key, targetId: pick.id }
      // Found by content, so possibly someone else's: kept in the journal and reported.
      yield* journal.recordAdoption({
        opKey: op.key,
        ...mapping,
        detail: `title ${JSON.stringify(p.title)}${listId !== undefined ? ` in list ${listId}` : ""}, created ${pick.createdAt}`
      }).pipe(Effect.mapError(journalFailure))
      if (p.then?.done !== undefined) {
        // Found, but its update may not have been sent: map it, and let the resend (which
        // finds the mapping) send only the update. Reconciling itself sends nothing.
        yield* journal.setMapping(mapping).pipe(Effect.mapError(journalFailure))
        return Option.none()
      }
      return Option.some({
        result: { id: pick.id, uid: pick.uid, title: pick.title, listId: pick.todoList.id, reconciled: true },
        mappings: [mapping]
      } satisfies OpOutcome)
    })
})

const recordIdOf = (
  p: { readonly workspaceId: string; readonly recordId?: string | undefined; readonly recordRef?: string | undefined },
  journal: JournalApi
): Effect.Effect<string, ExecFailure> =>
  p.recordId !== undefined
    ? Effect.succeed(p.recordId)
    : p.recordRef !== undefined
    ? lookupOrFail(journal, recordNamespace(p.workspaceId), p.recordRef, `the record of ${p.recordRef} was not created`)
    : Effect.fail(unresolved("the op names no record"))

/**
 * The service refused `archived` as a field of update-record (it is beyond the
 * documents, assumptions.ts ARCHIVE_VIA_UPDATE_RECORD): a 400 naming that field.
 */
const refusedArchived = (e: ExecFailure): boolean => {
  if (e._tag !== "InvalidInput") return false
  const { issues, detail } = e as ExecFailure & { issues?: ReadonlyArray<{ path: string }>; detail?: string }
  return (issues ?? []).some((i) => /(^|[./])archived$/.test(i.path)) || /\barchived\b/.test(detail ?? "")
}

/**
 * `archived` through update-record, which does not document the field: a service may
 * refuse it (a 400 naming it) or take it with success and ignore it. An update that sets
 * `archived: true` is read back with get-record until one shows it took effect (then the
 * service is known to carry it); `false` is not read back, since on a record that is not
 * archived it proves nothing. Refused or ignored, the capability is missing for the rest
 * of the run and every later run of the journal (`capabilities.ts`): `archived` is no
 * longer sent, and `consequence` is told once.
 */
export const archivedWrites = (client: RestClientApi, memory: CapabilityMemory, notice: (line: string) => void, consequence: string) => {
  const refusedLine = `${notAvailableLine("archived", { operation: "update-record archived" })}; ${consequence}`
  const ignoredLine = noEffectLine("archived", "update-record with archived", "get-record shows it unchanged", consequence)
  let confirmed = false
  const missing = (journal: JournalApi, line: string) =>
    memory.markMissing(journal, CAPABILITY.archived, line).pipe(
      Effect.mapError(journalFailure),
      Effect.tap(() => Effect.sync(() => notice(line)))
    )
  return {
    /** Whether `archived` may be sent; when this journal's runs found it missing, that is told again. */
    settable: (journal: JournalApi) =>
      memory.missing(journal, CAPABILITY.archived).pipe(
        Effect.mapError(journalFailure),
        Effect.map((line) => {
          if (line !== null) notice(line)
          return line === null
        })
      ),
    refused: (journal: JournalApi) => missing(journal, refusedLine),
    isRefusal: refusedArchived,
    /** After a 2xx that sent `archived: wanted`: whether it took effect (read back, see above). */
    confirm: (journal: JournalApi, workspaceId: string, recordId: string, wanted: boolean): Effect.Effect<boolean, ExecFailure> =>
      Effect.gen(function*() {
        if (confirmed || !wanted) return true
        const detail = yield* client.getRecord({ workspaceId, recordId })
        if (detail.archived === wanted) {
          confirmed = true
          return true
        }
        yield* missing(journal, ignoredLine)
        return false
      })
  }
}
export type ArchivedWrites = ReturnType<typeof archivedWrites>

/**
 * Whether `op` acts on a record this journal created: it depends on the create (the state
 * a restore sets after its create, a `<key>/done` op of an earlier version). Undo deletes
 * such a record, so nothing of its earlier state is worth reading.
 */
const followsCreate = (op: Op, journal: JournalApi): Effect.Effect<boolean, ExecFailure> =>
  op.dependsOn === null
    ? Effect.succeed(false)
    : journal.get(op.dependsOn).pipe(
      Effect.mapError(journalFailure),
      Effect.map((o) => Option.isSome(o) && o.value.kind === OP_KINDS.recordCreate)
    )

/**
 * Reads what the target holds before `op` changes it and records it in the journal
 * (`Op.before`), committed before the op's request is sent: undo puts it back. An attempt
 * that finds it recorded by an earlier one reads nothing (that one's request may have
 * landed, so the target may now show the op's own values).
 */
const recordBefore = (
  client: RestClientApi,
  op: Op,
  journal: JournalApi,
  workspaceId: string,
  recordId: string,
  of: (detail: Parameters<typeof beforeOfMove>[0]) => BeforeValues
): Effect.Effect<void, ExecFailure> =>
  Effect.gen(function*() {
    if (op.before !== undefined && op.before !== null) return
    if (yield* followsCreate(op, journal)) return
    const detail = yield* client.getRecord({ workspaceId, recordId })
    yield* journal.recordBefore(op.key, of(detail)).pipe(Effect.mapError(journalFailure))
  })

const updateExecutor = (client: RestClientApi, archived: ArchivedWrites): Executor => ({
  kind: OP_KINDS.recordUpdate,
  execute: (op, journal) =>
    Effect.gen(function*() {
      const p = yield* decode(RecordUpdatePayload, op)
      const recordId = yield* recordIdOf(p, journal)
      const wanted = Object.fromEntries(Object.entries(p.fields).filter(([, v]) => v !== undefined))
      yield* recordBefore(client, op, journal, p.workspaceId, recordId, (d) => beforeOfUpdate(d, Object.keys(wanted)))
      const { archived: _, ...rest } = wanted
      const withArchived = "archived" in wanted && (yield* archived.settable(journal))
      const send = (f: Record<string, unknown>) =>
        Object.keys(f).length === 0
          ? Effect.void
          : client.updateRecord({ workspaceId: p.workspaceId, recordId, ...f } as Parameters<RestClientApi["updateRecord"]>[0])
      // The answer is not shown by the documents: nothing is read from it.
      const archivedSent = yield* send(withArchived ? wanted : rest).pipe(
        Effect.as(withArchived),
        Effect.catchIf(
          (e) => withArchived && archived.isRefusal(e),
          () => Effect.andThen(archived.refused(journal), Effect.as(send(rest), false))
        )
      )
      const carried = archivedSent && (yield* archived.confirm(journal, p.workspaceId, recordId, wanted["archived"] === true))
      const leftOut = "archived" in wanted && !carried
      return { result: { id: recordId, ...(leftOut ? { archivedLeftOut: true } : {}) }, mappings: [] }
    })
})

const moveExecutor = (client: RestClientApi): Executor => ({
  kind: OP_KINDS.recordMove,
  execute: (op, journal) =>
    Effect.gen(function*() {
      const p = yield* decode(RecordMovePayload, op)
      const recordId = yield* recordIdOf(p, journal)
      if (p.listId === undefined && p.listTitle === undefined) return yield* Effect.fail(unresolved("the move names no list"))
      const listId = yield* targetListId(p, journal)
      // The list could not be made on this service (LEFT_OUT): the record stays where it is.
      if (listId === undefined) return { result: { id: recordId, listId: null, moved: false }, mappings: [] }
      yield* recordBefore(client, op, journal, p.workspaceId, recordId, beforeOfMove)
      yield* client.moveRecord({ workspaceId: p.workspaceId, recordId, listId })
      return { result: { id: recordId, listId }, mappings: [] }
    })
})

const deleteExecutor = (client: RestClientApi): Executor => ({
  kind: OP_KINDS.recordDelete,
  execute: (op, journal) =>
    Effect.gen(function*() {
      const p = yield* decode(RecordDeletePayload, op)
      const recordId = yield* recordIdOf(p, journal)
      // Deleting what is already gone (an earlier attempt landed) is success.
      yield* client.deleteRecord({ workspaceId: p.workspaceId, recordId }).pipe(
        Effect.catchIf(
          (e) => isNotFound(e) && op.attempts > 1,
          () => Effect.succeed({ success: true as const })
        )
      )
      return { result: { id: recordId, deleted: true }, mappings: [] }
    })
})

/** How an ensure op reports what the service could not make. */
interface EnsureCapability {
  readonly name: Capability
  /** The service has no create operation for it: the line to tell (and remember). */
  readonly notAvailable: (e: { readonly operation: string }) => string
  /** The create was answered with success, yet the read-back does not show the item. */
  readonly noEffect: string
}

/**
 * list.ensure / tag.ensure: find by exact title, else create, then read the listing back:
 * the create's answer is not shown by the documents (for tags the operation is beyond
 * them), so only the listing proves the item was made. Both are naturally idempotent by
 * title. When the service cannot make it (no create operation: NotAvailable; or a create
 * answered with success whose item the listing does not show), the title is mapped to
 * LEFT_OUT, the capability is remembered as missing (`capabilities.ts`: no later op of
 * this journal sends the create again) and told once: records are then created without it.
 */
const ensureExecutor = (
  kind: string,
  namespace: (ws: string) => string,
  list: (ws: string) => Effect.Effect<ReadonlyArray<{ id: string; title: string }>, ExecFailure>,
  create: (ws: string, title: string) => Effect.Effect<{ id: string; title: string }, ExecFailure>,
  capability: EnsureCapability,
  memory: CapabilityMemory,
  notice: (line: string) => void
): Executor => {
  const findExisting = (p: EnsurePayload) =>
    list(p.workspaceId).pipe(Effect.map((items) => Option.fromNullishOr(items.find((i) => i.title === p.title))))
  const outcome = (p: EnsurePayload, item: { id: string }, existed: boolean): OpOutcome => ({
    result: { id: item.id, title: p.title, existed },
    mappings: [{ namespace: namespace(p.workspaceId), sourceKey: p.title, targetId: item.id }]
  })
  const leftOut = (p: EnsurePayload, line: string): OpOutcome => {
    notice(line)
    return {
      result: { id: null, title: p.title, leftOut: line },
      mappings: [{ namespace: namespace(p.workspaceId), sourceKey: p.title, targetId: LEFT_OUT }]
    }
  }
  const missing = (journal: JournalApi, p: EnsurePayload, line: string) =>
    Effect.map(memory.markMissing(journal, capability.name, line).pipe(Effect.mapError(journalFailure)), () => leftOut(p, line))
  return {
    kind,
    group: (op) => `${kind}\u0000${JSON.stringify(op.payload)}`,
    execute: (op, journal) =>
      Effect.gen(function*() {
        const p = yield* decode(EnsurePayload, op)
        const existing = yield* findExisting(p)
        if (Option.isSome(existing)) return outcome(p, existing.value, true)
        const known = yield* memory.missing(journal, capability.name).pipe(Effect.mapError(journalFailure))
        if (known !== null) return leftOut(p, known)
        const answer = yield* create(p.workspaceId, p.title).pipe(
          Effect.map((item) => ({ id: Option.some(item.id) })),
          // A 2xx whose answer names no item, and no item of the title was listed after it.
          Effect.catchIf((e) => e._tag === "DecodeError", () => Effect.succeed({ id: Option.none<string>() })),
          Effect.catchIf(isNotAvailable, (e) => Effect.succeed({ notAvailable: capability.notAvailable(e) }))
        )
        if ("notAvailable" in answer) return yield* missing(journal, p, answer.notAvailable)
        const items = yield* list(p.workspaceId)
        const made = items.find((i) => Option.isSome(answer.id) && i.id === answer.id.value) ?? items.find((i) => i.title === p.title)
        if (made !== undefined) return outcome(p, made, false)
        return yield* missing(journal, p, capability.noEffect)
      }).pipe(
        // No listing at all (list-tags beyond the documents): nothing can be found or confirmed.
        Effect.catchIf(isNotAvailable, (e) => Effect.flatMap(decode(EnsurePayload, op), (p) => missing(journal, p, capability.notAvailable(e))))
      ),
    reconcile: (op, journal) =>
      Effect.gen(function*() {
        const p = yield* decode(EnsurePayload, op)
        const found = yield* findExisting(p)
        if (Option.isSome(found)) return Option.some(outcome(p, found.value, true))
        // Answered with success (an earlier version kept such ops as "applied") and not
        // listed: the create had no effect, as a read-back would have found.
        return isApplied(op) ? Option.some(yield* missing(journal, p, capability.noEffect)) : Option.none()
      }).pipe(Effect.catchIf(isNotAvailable, () => Effect.succeed(Option.none())))
  }
}

export interface RecordExecutorOptions {
  /** Clock-skew margin of the reconciliation window (default from assumptions.ts). */
  readonly skewMs?: number
  /**
   * Told once per kind of thing left out because the service lacks an operation beyond
   * the documents (one line, "tags: not available from this service (create-tag); ...").
   */
  readonly onNotice?: (line: string) => void
}

/** Every record-level executor, over the client. */
export const makeRecordExecutors = (client: RestClientApi, options: RecordExecutorOptions = {}): Array<Executor> => {
  const notice = noticeOnce(options.onNotice)
  const memory = capabilityMemory()
  return [
    ensureExecutor(
      OP_KINDS.listEnsure,
      listNamespace,
      (ws) => client.listLists({ workspaceId: ws }),
      (ws, title) => client.createList({ workspaceId: ws, title }),
      {
        name: CAPABILITY.lists,
        notAvailable: (e) => `${notAvailableLine("lists", e)}; records go to the first list`,
        noEffect: noEffectLine("lists", "create-list", "list-lists does not show the list", "records go to the first list")
      },
      memory,
      notice
    ),
    ensureExecutor(
      OP_KINDS.tagEnsure,
      tagNamespace,
      (ws) => client.listTags({ workspaceId: ws }),
      (ws, title) => client.createTag({ workspaceId: ws, title }),
      {
        name: CAPABILITY.tags,
        notAvailable: (e) => `${notAvailableLine("tags", e)}; records are created without them`,
        noEffect: noEffectLine("tags", "create-tag", "list-tags does not show the tag", "records are created without them")
      },
      memory,
      notice
    ),
    createExecutor(client, options.skewMs ?? RECONCILE_CLOCK_SKEW_MS),
    updateExecutor(client, archivedWrites(client, memory, notice, "records keep their archived state")),
    moveExecutor(client),
    deleteExecutor(client),
    { kind: OP_KINDS.marker, execute: () => Effect.succeed({ result: null, mappings: [] }) }
  ]
}

/** The executors with the client taken from the context. */
export const recordExecutors = (options: RecordExecutorOptions = {}) =>
  Effect.map(RestClient, (client) => makeRecordExecutors(client, options))
