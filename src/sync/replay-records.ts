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
 * update-record) may be missing from a service: the ensure op then maps the title to
 * LEFT_OUT and records are created without that list or tag, an update is sent without
 * `archived`; each such case is told once to `onNotice` as one line.
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { Schema } from "effect"
import { isNotFound, notAvailableLine } from "../client/errors.ts"
import { RestClient, type RestClientApi } from "../client/rest-client.ts"
import { RECONCILE_CLOCK_SKEW_MS } from "../schema/assumptions.ts"
import { createdListId } from "../schema/records.ts"
import type { JournalApi, Op } from "../store/journal.ts"
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
import type { ExecFailure, Executor, OpOutcome } from "./replay.ts"

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

const createExecutor = (client: RestClientApi, skewMs: number): Executor => ({
  kind: OP_KINDS.recordCreate,
  // By title alone: a journal targets one workspace (import and restore check its
  // `target.workspace`), and a payload may leave the workspace out. Grouping coarser
  // than needed only serialises more.
  group: (op) => `create\u0000${String((unpackRecordCreate(op.payload) as { title?: unknown } | null)?.title)}`,
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

const updateExecutor = (client: RestClientApi, notice: (line: string) => void): Executor => {
  // Once refused, `archived` is no longer sent in this replay.
  let archivedRefused = false
  return {
    kind: OP_KINDS.recordUpdate,
    execute: (op, journal) =>
      Effect.gen(function*() {
        const p = yield* decode(RecordUpdatePayload, op)
        const recordId = yield* recordIdOf(p, journal)
        const wanted = Object.fromEntries(Object.entries(p.fields).filter(([, v]) => v !== undefined))
        const fields = Object.fromEntries(Object.entries(wanted).filter(([k]) => !(archivedRefused && k === "archived")))
        const send = (f: Record<string, unknown>) =>
          client.updateRecord({ workspaceId: p.workspaceId, recordId, ...f } as Parameters<RestClientApi["updateRecord"]>[0])
        // The answer is not shown by the documents: nothing is read from it.
        const archivedSet = yield* send(fields).pipe(
          Effect.as(true),
          Effect.catchIf(
            (e) => "archived" in fields && refusedArchived(e),
            () => {
              const { archived: _, ...rest } = fields
              archivedRefused = true
              notice(`${notAvailableLine("archived", { operation: "update-record archived" })}; records keep their archived state`)
              return Effect.as(Object.keys(rest).length > 0 ? send(rest) : Effect.void, false)
            }
          )
        )
        const leftOut = "archived" in wanted && !("archived" in fields && archivedSet)
        return { result: { id: recordId, ...(leftOut ? { archivedLeftOut: true } : {}) }, mappings: [] }
      })
  }
}

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

/**
 * list.ensure / tag.ensure: find by exact title, else create; both naturally idempotent
 * by title. When the service lacks an operation this needs (NotAvailable), the title is
 * mapped to LEFT_OUT and `leftOut` is told once: records are then created without it.
 */
const ensureExecutor = (
  kind: string,
  namespace: (ws: string) => string,
  list: (ws: string) => Effect.Effect<ReadonlyArray<{ id: string; title: string }>, ExecFailure>,
  create: (ws: string, title: string) => Effect.Effect<{ id: string; title: string }, ExecFailure>,
  leftOut: (e: { readonly operation: string }) => void
): Executor => {
  const findExisting = (p: EnsurePayload) =>
    list(p.workspaceId).pipe(Effect.map((items) => Option.fromNullishOr(items.find((i) => i.title === p.title))))
  const outcome = (p: EnsurePayload, item: { id: string }, existed: boolean): OpOutcome => ({
    result: { id: item.id, title: p.title, existed },
    mappings: [{ namespace: namespace(p.workspaceId), sourceKey: p.title, targetId: item.id }]
  })
  return {
    kind,
    group: (op) => `${kind}\u0000${JSON.stringify(op.payload)}`,
    execute: (op) =>
      Effect.gen(function*() {
        const p = yield* decode(EnsurePayload, op)
        const existing = yield* findExisting(p)
        if (Option.isSome(existing)) return outcome(p, existing.value, true)
        return outcome(p, yield* create(p.workspaceId, p.title), false)
      }).pipe(
        Effect.catchIf(isNotAvailable, (e) =>
          Effect.gen(function*() {
            const p = yield* decode(EnsurePayload, op)
            leftOut(e)
            return {
              result: { id: null, title: p.title, notAvailable: e.operation },
              mappings: [{ namespace: namespace(p.workspaceId), sourceKey: p.title, targetId: LEFT_OUT }]
            } satisfies OpOutcome
          }))
      ),
    reconcile: (op) =>
      Effect.gen(function*() {
        const p = yield* decode(EnsurePayload, op)
        return Option.map(yield* findExisting(p), (item) => outcome(p, item, true))
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
  return [
    ensureExecutor(
      OP_KINDS.listEnsure,
      listNamespace,
      (ws) => client.listLists({ workspaceId: ws }),
      (ws, title) => client.createList({ workspaceId: ws, title }),
      (e) => notice(`${notAvailableLine("lists", e)}; records go to the first list`)
    ),
    ensureExecutor(
      OP_KINDS.tagEnsure,
      tagNamespace,
      (ws) => client.listTags({ workspaceId: ws }),
      (ws, title) => client.createTag({ workspaceId: ws, title }),
      (e) => notice(`${notAvailableLine("tags", e)}; records are created without them`)
    ),
    createExecutor(client, options.skewMs ?? RECONCILE_CLOCK_SKEW_MS),
    updateExecutor(client, notice),
    moveExecutor(client),
    deleteExecutor(client),
    { kind: OP_KINDS.marker, execute: () => Effect.succeed({ result: null, mappings: [] }) }
  ]
}

/** The executors with the client taken from the context. */
export const recordExecutors = (options: RecordExecutorOptions = {}) =>
  Effect.map(RestClient, (client) => makeRecordExecutors(client, options))
