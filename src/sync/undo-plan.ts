/**
 * Planning an undo: reads what the runs of a journal (import-csv, migrate, restore) did,
 * a page of ops at a time, newest first, and plans the ops that reverse it, newest first
 * (what it must carry across pages is kept in the journal: see `CREATED`):
 * - a record a create made: deleted (`undo.record.delete`), unless the target shows it
 *   changed since the journal last wrote it (checked when the op runs, undo.ts); what
 *   later ops of the journal wrote to it (updates, a move, an archive, comments) is what
 *   the check expects to find;
 * - an update or move of a record the journal did not create: its fields put back to the
 *   values recorded before it was sent (`Op.before`; `undo.record.revert`), each revert
 *   of a record after the revert of the record's next newer op;
 * - a comment on a record the journal did not create: deleted (`undo.comment.delete`;
 *   comments on created records go with their record);
 * - what cannot be reversed is listed as kept with the reason: records a run deleted,
 *   files (no operation of the service deletes one), lists, tags, roles, invitations,
 *   custom field values, updates of a journal written before before-values were
 *   recorded (format 4), and ops of the runs that were sent but did not finish (what
 *   they wrote is not known until a rerun of the command settles them).
 * Undo ops are keyed `undo:<key of the op they reverse>`, so planning the same journal
 * again adds nothing, and an undo's own ops are never undone.
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { Schema } from "effect"
import { FILE_COPY_KIND } from "../connectors/files/plan.ts"
import type { JournalApi, JournalError, Mapping, NewOp, Op } from "../store/journal.ts"
import { CF_FILE_KIND } from "./migrate/custom-field-files.ts"
import { PEOPLE_KINDS } from "./migrate/people.ts"
import { OP_KINDS, TARGET_WORKSPACE_META, unpackRecordCreate } from "./plan.ts"
import { EXTRA_KINDS } from "./plan-extras.ts"
import { fieldOf, writtenValue } from "./undo-values.ts"

export const UNDO_KINDS = {
  recordDelete: "undo.record.delete",
  recordRevert: "undo.record.revert",
  commentDelete: "undo.comment.delete"
} as const

export const UNDO_PHASES: ReadonlyArray<ReadonlyArray<string>> = [Object.values(UNDO_KINDS)]

const UNDO_PREFIX = "undo:"

/** The key of the op that reverses the op `key`. */
export const undoKey = (key: string): string => `${UNDO_PREFIX}${key}`

/** Something undo leaves as it is, and why (the `kept` of the report). */
export interface Kept {
  readonly what: string
  readonly id: string
  readonly why: string
}

const Str = Schema.String
const opt = <S extends Schema.Constraint>(s: S) => Schema.optional(s)

/** What later ops of the journal wrote to a record it created (field -> value, as `writtenValue` gives). */
export const LaterWrites = Schema.Struct({
  fields: opt(Schema.Record(Str, Schema.Unknown)),
  listId: opt(Str),
  /** Comments the journal made on it. */
  comments: opt(Schema.Number)
})
export type LaterWrites = typeof LaterWrites.Type

/** Delete a record the journal created, unless it changed on the target since. */
export const UndoDeletePayload = Schema.Struct({
  workspaceId: Str,
  recordId: Str,
  /** The create op: what it wrote is what the record should still show. */
  createKey: Str,
  later: opt(LaterWrites)
})
export type UndoDeletePayload = typeof UndoDeletePayload.Type

/** Put back the fields (or the list) an update (or move) of a record changed. */
export const UndoRevertPayload = Schema.Struct({
  workspaceId: Str,
  recordId: Str,
  /** The update or move being reversed. */
  opKey: Str,
  /** What it wrote (field -> value, as `writtenValue` gives). */
  wrote: opt(Schema.Record(Str, Schema.Unknown)),
  /** The list a move put the record in. */
  wroteListId: opt(Str)
})
export type UndoRevertPayload = typeof UndoRevertPayload.Type

/** Delete a comment the journal made on a record it did not create. */
export const UndoCommentPayload = Schema.Struct({ workspaceId: Str, recordId: Str, commentId: Str, opKey: Str })
export type UndoCommentPayload = typeof UndoCommentPayload.Type

export interface UndoPlan {
  /**
   * What cannot be reversed, found while reading the journal. One entry per such thing
   * the runs did (a file uploaded, a record deleted...), so on a journal of a million
   * uploads it holds a million entries: the report lists each.
   */
  readonly kept: ReadonlyArray<Kept>
}

const NO_EARLIER_VALUE = "no earlier value recorded"

const record = (v: unknown): Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : {}
const str = (v: unknown): string | undefined => (typeof v === "string" && v !== "" ? v : undefined)

/** Ops read from the journal at a time. */
const PAGE = 2000

/**
 * Planning state kept in the journal (as mappings) rather than in the heap, so planning
 * holds one page of ops at a time whatever the journal's size:
 * - `CREATED`: the records the runs created (source key and target id: the record id);
 * - `laterOf(id)`: what later ops wrote to a created record, a mapping per field
 *   (`list`, and `comment:<op key>` per comment), the newest value kept (mappings are
 *   replaced), so recomputing it on a rerun gives the same;
 * - `chainOf(n)`: per record, the key of the last revert planned for it, for the
 *   next older revert to depend on (a namespace per planning, the n-th, counted in the
 *   journal's meta `PLANNINGS`, so no planning follows an earlier one's chain).
 */
const CREATED = "undo.created"
const laterOf = (recordId: string) => `undo.later:${recordId}`
const chainOf = (n: number) => `undo.chain@${n}`
const PLANNINGS = "undo.plannings"
const LATER_LIST = "list"
const LATER_COMMENT = "comment:"

/** The kinds whose done ops tell what a created record should show. */
const TRACKED = [OP_KINDS.recordCreate, OP_KINDS.recordUpdate, OP_KINDS.recordMove, EXTRA_KINDS.recordArchive, EXTRA_KINDS.commentCreate]

const isUndo = (op: Op) => op.kind.startsWith(UNDO_PREFIX) || op.key.startsWith(UNDO_PREFIX)

/** The fields an update op wrote (field -> value as `writtenValue` gives). */
const updateFields = (op: Op): Record<string, unknown> => {
  const p = record(op.payload)
  const result = record(op.result)
  const fields: Record<string, unknown> = {}
  for (const [k, v] of Object.entries(record(p["fields"]))) {
    const f = fieldOf(k)
    // `archived` the service did not carry is not something the op wrote.
    if (f === undefined || v === undefined || (f === "archived" && result["archivedLeftOut"] === true)) continue
    fields[f] = writtenValue(record(p["fields"]), f)
  }
  return fields
}

/** The record an op is about: the id its result names (a comment's: its record). */
const recordIdOf = (op: Op): string | undefined =>
  op.kind === EXTRA_KINDS.commentCreate || op.kind === CF_FILE_KIND ? str(record(op.result)["recordId"]) : str(record(op.result)["id"])

/**
 * Oldest first, the runs' done ops of `TRACKED` kinds: records each created record and
 * what later ops wrote to it (see `CREATED`, `laterOf`), a page at a time.
 */
const recordCreated = (journal: JournalApi) =>
  Effect.gen(function*() {
    for (let after = 0;;) {
      const read = yield* journal.list({ afterSeq: after, limit: PAGE, kinds: TRACKED, states: ["done"] })
      const page = read.filter((op) => !isUndo(op))
      const fresh = new Set<string>()
      const mappings: Array<Mapping> = []
      const later = (recordId: string, sourceKey: string, value: unknown) =>
        mappings.push({ namespace: laterOf(recordId), sourceKey, targetId: JSON.stringify(value) })
      for (const op of page) {
        if (op.kind !== OP_KINDS.recordCreate) continue
        const id = str(record(op.result)["id"])
        if (id === undefined) continue
        fresh.add(id)
        mappings.push({ namespace: CREATED, sourceKey: id, targetId: id })
        const done = record(record(unpackRecordCreate(op.payload))["then"])["done"]
        if (typeof done === "boolean") later(id, "done", done)
        const listId = str(record(op.result)["listId"])
        if (listId !== undefined) later(id, LATER_LIST, listId)
      }
      const ids = page.flatMap((op) => (op.kind === OP_KINDS.recordCreate ? [] : [recordIdOf(op) ?? ""]))
      const created = yield* journal.mappedTargets(CREATED, [...new Set(ids)].filter((id) => id !== "" && !fresh.has(id)))
      for (const op of page) {
        const id = recordIdOf(op)
        if (id === undefined || op.kind === OP_KINDS.recordCreate || !(fresh.has(id) || created.has(id))) continue
        const result = record(op.result)
        if (op.kind === OP_KINDS.recordUpdate && result["superseded"] === undefined) {
          for (const [f, v] of Object.entries(updateFields(op))) later(id, f, v)
        } else if (op.kind === OP_KINDS.recordMove) {
          const listId = str(result["listId"])
          if (listId !== undefined && result["moved"] !== false) later(id, LATER_LIST, listId)
        } else if (op.kind === EXTRA_KINDS.recordArchive && result["archivedLeftOut"] !== true) later(id, "archived", true)
        else if (op.kind === EXTRA_KINDS.commentCreate && str(result["id"]) !== undefined) later(id, `${LATER_COMMENT}${op.key}`, 1)
      }
      if (mappings.length > 0) yield* journal.addPlan({ ops: [], mappings })
      if (read.length < PAGE) break
      after = read[read.length - 1]!.seq
    }
  })

/** What later ops of the journal wrote to the created record `recordId` (see `laterOf`). */
const laterWrites = (journal: JournalApi, recordId: string) =>
  Effect.map(journal.mappings(laterOf(recordId)), (rows): LaterWrites | undefined => {
    const fields: Record<string, unknown> = {}
    let listId: string | undefined
    let comments = 0
    for (const m of rows) {
      if (m.sourceKey === LATER_LIST) listId = JSON.parse(m.targetId) as string
      else if (m.sourceKey.startsWith(LATER_COMMENT)) comments++
      else fields[m.sourceKey] = JSON.parse(m.targetId)
    }
    const later: { fields?: Record<string, unknown>; listId?: string; comments?: number } = {}
    if (Object.keys(fields).length > 0) later.fields = fields
    if (listId !== undefined) later.listId = listId
    if (comments > 0) later.comments = comments
    return Object.keys(later).length > 0 ? later : undefined
  })

/**
 * Reads the journal's ops newest first, a page at a time, and plans their undo (see the
 * file's comment): each page's undo ops, newest first, go to `onBatch` (which adds them
 * to the journal, or for a dry run decides them) before the next page is read.
 */
export const planUndo = <E>(
  journal: JournalApi,
  onBatch: (ops: ReadonlyArray<NewOp>) => Effect.Effect<void, E>
): Effect.Effect<UndoPlan, JournalError | E> =>
  Effect.gen(function*() {
    const metaWorkspace = Option.getOrUndefined(yield* journal.getMeta(TARGET_WORKSPACE_META))
    const workspaceOf = (payload: unknown): string | undefined => str(record(payload)["workspaceId"]) ?? metaWorkspace
    yield* recordCreated(journal)
    const kept: Array<Kept> = []

    /**
     * An op of the runs that is not done, yet may have been applied: one of unknown outcome
     * (uncertain, or left in flight), or a failed update or move (replay fails those
     * plainly whatever the outcome, as they are safe to send again). What it wrote is not
     * known.
     */
    const onUnfinished = (op: Op) => {
      const mayHaveWritten = op.uncertain || op.state === "in_flight" ||
        (op.state === "failed" && (op.kind === OP_KINDS.recordUpdate || op.kind === OP_KINDS.recordMove))
      if (op.attempts === 0 || !mayHaveWritten) return
      kept.push({
        what: op.kind,
        id: op.key,
        why: "it did not finish, so what it wrote is not known: rerun the command that wrote the journal, then undo again"
      })
    }

    const planning = Number(Option.getOrElse(yield* journal.getMeta(PLANNINGS), () => "0")) + 1
    yield* journal.setMeta(PLANNINGS, String(planning))
    const chain = chainOf(planning)
    for (let before: number | undefined;;) {
      const page = yield* journal.list({ limit: PAGE, descending: true, ...(before !== undefined ? { beforeSeq: before } : {}) })
      if (page.length === 0) break
      before = page[page.length - 1]!.seq
      const ids = [...new Set(page.flatMap((op) => (isUndo(op) ? [] : [recordIdOf(op) ?? ""])))].filter((id) => id !== "")
      const created = yield* journal.mappedTargets(CREATED, ids)
      const ops: Array<NewOp> = []
      const lastRevert = new Map<string, string>()
      const revert = (op: Op, recordId: string, payload: Record<string, unknown>) =>
        Effect.gen(function*() {
          const key = undoKey(op.key)
          // A record's reverts one after another, the newest first.
          const after = lastRevert.get(recordId) ?? Option.getOrUndefined(yield* journal.lookup(chain, recordId))
          lastRevert.set(recordId, key)
          ops.push({ key, kind: UNDO_KINDS.recordRevert, payload, ...(after !== undefined ? { dependsOn: after } : {}) })
        })
      for (const op of page) {
        if (isUndo(op)) continue
        if (op.state !== "done") {
          onUnfinished(op)
          continue
        }
        const result = record(op.result)
        const id = recordIdOf(op)
        const mine = id !== undefined && created.has(id)
        switch (op.kind) {
          case OP_KINDS.recordCreate: {
            const workspaceId = workspaceOf(unpackRecordCreate(op.payload))
            if (id === undefined || workspaceId === undefined) break
            const later = yield* laterWrites(journal, id)
            ops.push({
              key: undoKey(op.key),
              kind: UNDO_KINDS.recordDelete,
              payload: { workspaceId, recordId: id, createKey: op.key, ...(later !== undefined ? { later } : {}) }
            })
            break
          }
          case OP_KINDS.recordUpdate: {
            const workspaceId = workspaceOf(op.payload)
            if (id === undefined || workspaceId === undefined || mine || result["superseded"] !== undefined) break
            const fields = updateFields(op)
            if (Object.keys(fields).length === 0) break
            if (op.before === undefined || op.before === null) kept.push({ what: "update", id, why: NO_EARLIER_VALUE })
            else yield* revert(op, id, { workspaceId, recordId: id, opKey: op.key, wrote: fields })
            break
          }
          case OP_KINDS.recordMove: {
            const workspaceId = workspaceOf(op.payload)
            const listId = str(result["listId"])
            if (id === undefined || workspaceId === undefined || mine || listId === undefined || result["moved"] === false) break
            if (op.before === undefined || op.before === null) kept.push({ what: "move", id, why: NO_EARLIER_VALUE })
            else yield* revert(op, id, { workspaceId, recordId: id, opKey: op.key, wroteListId: listId })
            break
          }
          case OP_KINDS.recordDelete:
            if (id !== undefined) kept.push({ what: "record", id, why: "deleted by the run: the service cannot bring back a deleted record" })
            break
          case EXTRA_KINDS.commentCreate: {
            const commentId = str(result["id"])
            const workspaceId = workspaceOf(op.payload)
            // Comments on a created record go with their record.
            if (commentId === undefined || id === undefined || workspaceId === undefined || mine) break
            ops.push({
              key: undoKey(op.key),
              kind: UNDO_KINDS.commentDelete,
              payload: { workspaceId, recordId: id, commentId, opKey: op.key }
            })
            break
          }
          case EXTRA_KINDS.fileUpload:
          case FILE_COPY_KIND: {
            const uid = str(result["uid"])
            if (uid !== undefined) kept.push({ what: "file", id: uid, why: "the service has no operation that deletes a file" })
            break
          }
          case OP_KINDS.listEnsure:
          case OP_KINDS.tagEnsure: {
            const ensured = str(result["id"])
            if (ensured !== undefined && result["existed"] === false) {
              kept.push({ what: op.kind === OP_KINDS.listEnsure ? "list" : "tag", id: ensured, why: "undo deletes records, comments and files only" })
            }
            break
          }
          case PEOPLE_KINDS.roleCreate: {
            const role = str(result["id"])
            if (role !== undefined) kept.push({ what: "role", id: role, why: "undo deletes records, comments and files only" })
            break
          }
          case PEOPLE_KINDS.personInvite: {
            const email = str(record(op.payload)["email"])
            if (result["invited"] === true) kept.push({ what: "invitation", id: email ?? op.key, why: "undo deletes records, comments and files only" })
            break
          }
          case CF_FILE_KIND:
            // A value on a record the journal created goes with its record.
            if (id !== undefined && !mine) kept.push({ what: "custom field file", id, why: "undo deletes records, comments and files only" })
            break
          default:
            break
        }
      }
      if (lastRevert.size > 0) {
        yield* journal.addPlan({ ops: [], mappings: [...lastRevert].map(([sourceKey, targetId]) => ({ namespace: chain, sourceKey, targetId })) })
      }
      if (ops.length > 0) yield* onBatch(ops)
    }
    // Read newest first, reported in plan order (each op keeps at most one entry).
    return { kept: kept.reverse() }
  })
