/**
 * Undo: reverses what the runs of a journal wrote to the target (planned by undo-plan.ts),
 * through the same journal and replay as every other write, so an undo is exactly once
 * and resumable: each undo op is claimed (durably) before its requests leave, a done one
 * is never sent again, a rerun after a crash resumes, and a failed one is retried by the
 * next run.
 *
 * Each undo op first reads the record (get-record) and decides, then acts:
 * - delete a created record: the target still shows what the journal wrote (title,
 *   description, dates, done, archived, list, assignees, tags, no comment beyond the
 *   journal's) -> delete-record, then read back (get-record answers not found); else
 *   the record is kept and reported with the fields that changed. A record already gone
 *   (deleted on the target, or by an earlier attempt whose answer was lost) counts as
 *   deleted: nothing is sent.
 * - revert an update or move: per field, the target shows what the op wrote -> put back
 *   the value recorded before it (`Op.before`); shows that earlier value already (an
 *   earlier attempt landed) -> nothing to send; anything else -> the field is kept and
 *   reported. The values put back are read back; one the service did not take is
 *   reported, not retried.
 * - delete a comment on a record the journal did not create: delete-comment (beyond the
 *   documents; a service without it keeps the comment, reported), then read back: a
 *   comment still shown after a success (or not-found) answer is kept and reported too,
 *   never sent again.
 * Deletes and updates set fixed states, so a request of unknown outcome is simply sent
 * again (by the client's retries or the next run); the check before each send makes a
 * landed one a no-op, and a repeated delete that finds nothing counts as done.
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { Schema } from "effect"
import { isNotFound, notAvailableLine } from "../client/errors.ts"
import type { RestClientApi } from "../client/rest-client.ts"
import type { RecordDetail } from "../schema/records.ts"
import type { JournalApi, JournalError, JournalStateError, NewOp, Op } from "../store/journal.ts"
import { LEFT_OUT, RecordCreatePayload, tagNamespace, TARGET_WORKSPACE_META, unpackRecordCreate } from "./plan.ts"
import { type ExecFailure, type Executor, replay, type ReplayAborted, type ReplayReport } from "./replay.ts"
import { commentsOf } from "./replay-extras.ts"
import { decode, isNotAvailable, journalFailure } from "./replay-records.ts"
import { restoreDate } from "./restore-source.ts"
import {
  type Kept,
  planUndo,
  UNDO_KINDS,
  UNDO_PHASES,
  UndoCommentPayload,
  UndoDeletePayload,
  type UndoPlan,
  UndoRevertPayload
} from "./undo-plan.ts"
import { BeforeValues, currentValue, type FieldName, fieldOf, sameValue, writtenValue } from "./undo-values.ts"

export interface UndoOptions {
  readonly concurrency?: number
  /** Decide what would be done (reads only): send no write, add no op (planning state goes to the journal). */
  readonly dryRun?: boolean
}

/** The contract's `--json` report. */
export interface UndoReport {
  readonly deleted: number
  readonly reverted: number
  readonly kept: ReadonlyArray<Kept>
  readonly failed: number
}

const CHANGED = "changed on the target since the journal wrote it"

/** What an undo op found it has to do. */
type Decision =
  | { readonly _tag: "Gone" }
  | { readonly _tag: "Keep"; readonly kept: ReadonlyArray<Kept> }
  | { readonly _tag: "Delete" }
  | {
    readonly _tag: "Revert"
    /** Field -> the value to put back. */
    readonly fields: Readonly<Record<string, unknown>>
    readonly listId: string | undefined
    /** Fields the target shows at their earlier value already. */
    readonly already: ReadonlyArray<string>
    readonly kept: ReadonlyArray<Kept>
  }

/** The record as the target shows it now; none when it is gone. */
const readRecord = (client: RestClientApi, workspaceId: string, recordId: string) =>
  client.getRecord({ workspaceId, recordId }).pipe(
    Effect.map(Option.some),
    Effect.catchIf(isNotFound, () => Effect.succeed(Option.none<RecordDetail>()))
  )

const opOf = (journal: JournalApi, key: string) =>
  journal.get(key).pipe(
    Effect.mapError(journalFailure),
    Effect.flatMap(Option.match({
      onNone: () => Effect.fail<ExecFailure>({ _tag: "Unresolved", message: `journal op ${key} is missing` }),
      onSome: Effect.succeed
    }))
  )

const sameIds = (a: ReadonlyArray<string>, b: ReadonlyArray<string>) => [...a].sort().join("\n") === [...b].sort().join("\n")

/**
 * What a created record should show if nobody touched it since: what its create wrote,
 * then what later ops of the journal wrote (`later`).
 */
const expectedOf = (journal: JournalApi, p: UndoDeletePayload) =>
  Effect.gen(function*() {
    const op = yield* opOf(journal, p.createKey)
    const raw = unpackRecordCreate(op.payload) as Record<string, unknown>
    const create = yield* decode(RecordCreatePayload, op, { workspaceId: p.workspaceId, ...raw })
    const fields: Record<string, unknown> = {
      title: create.title,
      descriptionHtml: writtenValue(create, "descriptionHtml") ?? "",
      startedAt: create.startedAt ?? null,
      duedAt: create.duedAt ?? null,
      assigneeIds: create.assigneeIds ?? [],
      done: create.then?.done ?? false,
      archived: false,
      ...p.later?.fields
    }
    const tagIds = [...(create.tagIds ?? [])]
    for (const title of create.tagTitles ?? []) {
      const id = yield* journal.lookup(tagNamespace(p.workspaceId), title).pipe(Effect.mapError(journalFailure))
      if (Option.isSome(id) && id.value !== LEFT_OUT) tagIds.push(id.value)
    }
    const result = (op.result ?? {}) as { listId?: unknown }
    const listId = p.later?.listId ?? (typeof result.listId === "string" ? result.listId : undefined)
    return { fields, tagIds, listId, comments: p.later?.comments ?? 0 }
  })

const decideDelete = (client: RestClientApi, journal: JournalApi, p: UndoDeletePayload): Effect.Effect<Decision, ExecFailure> =>
  Effect.gen(function*() {
    const found = yield* readRecord(client, p.workspaceId, p.recordId)
    if (Option.isNone(found)) return { _tag: "Gone" }
    const detail = found.value
    const expected = yield* expectedOf(journal, p)
    const changed: Array<string> = []
    for (const [key, value] of Object.entries(expected.fields)) {
      const f = fieldOf(key)
      if (f !== undefined && !sameValue(f, currentValue(detail, f), value)) changed.push(f === "descriptionHtml" ? "description" : f)
    }
    if (expected.listId !== undefined && detail.todoList.id !== expected.listId) changed.push("list")
    if (!sameIds(detail.tags.map((t) => t.id), expected.tagIds)) changed.push("tags")
    if (detail.commentCount > expected.comments) changed.push("comments")
    if (changed.length === 0) return { _tag: "Delete" }
    return { _tag: "Keep", kept: [{ what: "record", id: p.recordId, why: `${CHANGED} (${changed.join(", ")})` }] }
  })

const decideRevert = (client: RestClientApi, journal: JournalApi, p: UndoRevertPayload): Effect.Effect<Decision, ExecFailure> =>
  Effect.gen(function*() {
    const found = yield* readRecord(client, p.workspaceId, p.recordId)
    if (Option.isNone(found)) return { _tag: "Keep", kept: [{ what: "record", id: p.recordId, why: "deleted on the target since" }] }
    const detail = found.value
    const op = yield* opOf(journal, p.opKey)
    const before = yield* decode(BeforeValues, op, op.before)
    const fields: Record<string, unknown> = {}
    const already: Array<string> = []
    const kept: Array<Kept> = []
    const keep = (what: string, why: string) => kept.push({ what, id: p.recordId, why })
    for (const [key, wrote] of Object.entries(p.wrote ?? {})) {
      const f = fieldOf(key)
      if (f === undefined) continue
      const earlier = before.fields?.[f]
      const current = currentValue(detail, f)
      if (earlier === undefined) keep(`field ${f}`, "no earlier value recorded")
      else if (sameValue(f, current, earlier)) already.push(f)
      else if (!sameValue(f, current, wrote)) keep(`field ${f}`, CHANGED)
      // update-record sets a colour, it cannot clear one.
      else if (f === "color" && earlier === null) keep("field color", "update-record cannot clear a colour")
      else fields[f] = earlier
    }
    let listId: string | undefined
    if (p.wroteListId !== undefined) {
      if (before.listId === undefined) keep("list", "no earlier value recorded")
      else if (detail.todoList.id === before.listId) already.push("list")
      else if (detail.todoList.id !== p.wroteListId) keep("list", CHANGED)
      else listId = before.listId
    }
    return { _tag: "Revert", fields, listId, already, kept }
  })

/** update-record's body for the values put back (dates as restore sends them: a midnight UTC date is all-day). */
const updateBody = (fields: Readonly<Record<string, unknown>>): Record<string, unknown> => {
  const out: Record<string, unknown> = {}
  for (const [f, v] of Object.entries(fields)) {
    if (f === "startedAt" || f === "duedAt") out[f] = typeof v === "string" ? restoreDate(v) ?? null : null
    else out[f] = v
  }
  return out
}

const notApplied = (what: string): ExecFailure => ({ _tag: "NotApplied", message: what })

const deleteExecutor = (client: RestClientApi): Executor => ({
  kind: UNDO_KINDS.recordDelete,
  execute: (op, journal) =>
    Effect.gen(function*() {
      const p = yield* decode(UndoDeletePayload, op)
      const decision = yield* decideDelete(client, journal, p)
      if (decision._tag === "Gone") return { result: { id: p.recordId, gone: true }, mappings: [] }
      if (decision._tag === "Keep") return { result: { id: p.recordId, kept: decision.kept }, mappings: [] }
      // A repeat that finds it gone (an earlier attempt landed) is what was asked for.
      yield* client.deleteRecord({ workspaceId: p.workspaceId, recordId: p.recordId }).pipe(
        Effect.catchIf(isNotFound, () => Effect.succeed({ success: true as const }))
      )
      // The answer is not proof (R-REST-RECORD-53 says what a delete does): read back.
      if (Option.isSome(yield* readRecord(client, p.workspaceId, p.recordId))) {
        return yield* Effect.fail(notApplied(`delete-record of ${p.recordId} answered success, and get-record still shows the record`))
      }
      return { result: { id: p.recordId, deleted: true }, mappings: [] }
    })
})

const revertExecutor = (client: RestClientApi): Executor => ({
  kind: UNDO_KINDS.recordRevert,
  execute: (op, journal) =>
    Effect.gen(function*() {
      const p = yield* decode(UndoRevertPayload, op)
      const decision = yield* decideRevert(client, journal, p)
      if (decision._tag !== "Revert") return { result: { id: p.recordId, kept: decision._tag === "Keep" ? decision.kept : [] }, mappings: [] }
      const sent = Object.keys(decision.fields)
      if (sent.length > 0) {
        yield* client.updateRecord({
          workspaceId: p.workspaceId,
          recordId: p.recordId,
          ...updateBody(decision.fields)
        } as Parameters<RestClientApi["updateRecord"]>[0])
      }
      if (decision.listId !== undefined) {
        yield* client.moveRecord({ workspaceId: p.workspaceId, recordId: p.recordId, listId: decision.listId })
      }
      const kept = [...decision.kept]
      const reverted = [...decision.already]
      if (sent.length > 0 || decision.listId !== undefined) {
        // Read back: a value the service did not take is reported, not sent again.
        const after = yield* readRecord(client, p.workspaceId, p.recordId)
        for (const f of sent as Array<FieldName>) {
          if (Option.isSome(after) && sameValue(f, currentValue(after.value, f), decision.fields[f])) reverted.push(f)
          else kept.push({ what: `field ${f}`, id: p.recordId, why: "update-record answered success, and get-record does not show the earlier value" })
        }
        if (decision.listId !== undefined) {
          if (Option.isSome(after) && after.value.todoList.id === decision.listId) reverted.push("list")
          else kept.push({ what: "list", id: p.recordId, why: "move-record answered success, and get-record does not show the earlier list" })
        }
      }
      return { result: { id: p.recordId, reverted, kept }, mappings: [] }
    })
})

/** The comment as list-record-activity shows it (none when gone or deleted). */
const liveComment = (client: RestClientApi, p: UndoCommentPayload) =>
  commentsOf(client, p.workspaceId, p.recordId).pipe(
    Effect.map((items) => Option.fromNullishOr(items.find((c) => c.id === p.commentId && c.deletedAt === null))),
    Effect.catchIf(isNotFound, () => Effect.succeed(Option.none()))
  )

/** Why a comment is kept whose delete-comment answered success (or not found) while it still shows. */
const COMMENT_NOT_DELETED = "delete-comment answered without deleting it: the record's activity still shows the comment"

const commentExecutor = (client: RestClientApi): Executor => ({
  kind: UNDO_KINDS.commentDelete,
  execute: (op) =>
    Effect.gen(function*() {
      const p = yield* decode(UndoCommentPayload, op)
      if (Option.isNone(yield* liveComment(client, p))) return { result: { id: p.commentId, gone: true }, mappings: [] }
      const answer = yield* client
        .call("delete-comment", { workspaceId: p.workspaceId, commentId: p.commentId }, Schema.Unknown, {
          idempotent: true,
          beyondDocuments: true
        })
        .pipe(
          Effect.as(Option.none<string>()),
          Effect.catchIf(isNotFound, () => Effect.succeed(Option.none<string>())),
          Effect.catchIf(isNotAvailable, (e) => Effect.succeed(Option.some(notAvailableLine("comments", e))))
        )
      const keep = (why: string) => ({ result: { id: p.commentId, kept: [{ what: "comment", id: p.commentId, why }] }, mappings: [] })
      if (Option.isSome(answer)) return keep(answer.value)
      // The operation is beyond the documents: a service that says yes and keeps the comment
      // is one more way of not having it. Sending it again would get the same answer.
      if (Option.isSome(yield* liveComment(client, p))) return keep(COMMENT_NOT_DELETED)
      return { result: { id: p.commentId, deleted: true }, mappings: [] }
    })
})

export const makeUndoExecutors = (client: RestClientApi): Array<Executor> => [
  deleteExecutor(client),
  revertExecutor(client),
  commentExecutor(client)
]

/** What a done undo op's result says, for the report. */
const tally = (op: Op, into: { deleted: number; reverted: number; kept: Array<Kept> }) => {
  const r = (op.result ?? {}) as { deleted?: unknown; gone?: unknown; reverted?: unknown; kept?: unknown }
  if (r.deleted === true || r.gone === true) into.deleted++
  if (Array.isArray(r.reverted) && r.reverted.length > 0) into.reverted++
  if (Array.isArray(r.kept)) into.kept.push(...(r.kept as Array<Kept>))
}

/** The same thing kept twice (a field kept by two reverts of one record) is reported once. */
const distinct = (kept: ReadonlyArray<Kept>): Array<Kept> => {
  const seen = new Set<string>()
  return kept.filter((k) => {
    const key = `${k.what}\u0000${k.id}\u0000${k.why}`
    if (seen.has(key)) return false
    seen.add(key)
    return true
  })
}

/** The report over every undo op of the journal (this run's and earlier runs'). */
const reportOf = (journal: JournalApi, plan: UndoPlan): Effect.Effect<UndoReport, JournalError> =>
  Effect.gen(function*() {
    const into = { deleted: 0, reverted: 0, kept: [...plan.kept] }
    let failed = 0
    for (let after = 0;;) {
      const page = yield* journal.list({ afterSeq: after, limit: 2000, kinds: Object.values(UNDO_KINDS) })
      for (const op of page) {
        if (op.state === "done") tally(op, into)
        else failed++
      }
      if (page.length < 2000) break
      after = page[page.length - 1]!.seq
    }
    return { deleted: into.deleted, reverted: into.reverted, kept: distinct(into.kept), failed }
  })

/** A dry run: each undo op of a planned batch that is not done yet decides what it would do (reads only). */
const dryRunBatch = (
  client: RestClientApi,
  journal: JournalApi,
  ops: ReadonlyArray<NewOp>,
  into: { deleted: number; reverted: number; kept: Array<Kept> }
): Effect.Effect<void, JournalError | ExecFailure> =>
  Effect.gen(function*() {
    const done = new Map((yield* journal.getMany(ops.map((o) => o.key))).map((o) => [o.key, o]))
    for (const o of ops) {
      const recorded = done.get(o.key)
      if (recorded !== undefined && recorded.state === "done") {
        tally(recorded, into)
        continue
      }
      const op = { key: o.key, kind: o.kind, payload: o.payload } as Op
      const decision: Decision = o.kind === UNDO_KINDS.recordDelete
        ? yield* decideDelete(client, journal, yield* decode(UndoDeletePayload, op))
        : o.kind === UNDO_KINDS.recordRevert
        ? yield* decideRevert(client, journal, yield* decode(UndoRevertPayload, op))
        : Option.isSome(yield* liveComment(client, yield* decode(UndoCommentPayload, op)))
        ? { _tag: "Delete" }
        : { _tag: "Gone" }
      if (decision._tag === "Gone" || decision._tag === "Delete") into.deleted++
      else if (decision._tag === "Keep") into.kept.push(...decision.kept)
      else {
        if (Object.keys(decision.fields).length > 0 || decision.listId !== undefined || decision.already.length > 0) into.reverted++
        into.kept.push(...decision.kept)
      }
    }
  })

/** Whether the journal holds a run undo can reverse (its kind is set by import-csv, migrate and restore). */
export const journalKind = (journal: JournalApi) => Effect.map(journal.getMeta("kind"), Option.getOrUndefined)

/** Plans the undo of the journal's runs and carries it out (or, dry, says what it would do). */
export const undo = (
  client: RestClientApi,
  journal: JournalApi,
  options: UndoOptions = {}
): Effect.Effect<UndoReport & { readonly replay?: ReplayReport }, JournalError | JournalStateError | ReplayAborted | ExecFailure> =>
  Effect.gen(function*() {
    if (options.dryRun === true) {
      // `kept` holds what the batches keep on top of what planning found.
      const into = { deleted: 0, reverted: 0, kept: [] as Array<Kept> }
      const plan = yield* planUndo(journal, (ops) => dryRunBatch(client, journal, ops, into))
      return { deleted: into.deleted, reverted: into.reverted, kept: distinct([...plan.kept, ...into.kept]), failed: 0 }
    }
    // Newest first, a batch at a time: the plan's order is the order they run in. An op
    // already planned (a rerun) keeps its state.
    const plan = yield* planUndo(journal, (ops) => Effect.asVoid(journal.addOps(ops)))
    yield* journal.retryFailed(Object.values(UNDO_KINDS))
    const replayed = yield* replay(journal, makeUndoExecutors(client), { phases: UNDO_PHASES, concurrency: options.concurrency ?? 8 })
    return { ...(yield* reportOf(journal, plan)), replay: replayed }
  })

/** The workspace the journal's runs wrote to, for messages. */
export const targetWorkspace = (journal: JournalApi) => Effect.map(journal.getMeta(TARGET_WORKSPACE_META), Option.getOrUndefined)
