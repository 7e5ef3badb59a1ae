/**
 * Planning an undo: reads what the runs of a journal (import-csv, migrate, restore) did,
 * op by op in plan order, and plans the ops that reverse it, newest first:
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
import type { JournalApi, JournalError, NewOp, Op } from "../store/journal.ts"
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
  /** The undo ops, newest first (the order they are to run in). */
  readonly ops: ReadonlyArray<NewOp>
  /** What cannot be reversed, found while reading the journal. */
  readonly kept: ReadonlyArray<Kept>
}

const NO_EARLIER_VALUE = "no earlier value recorded"

const record = (v: unknown): Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : {}
const str = (v: unknown): string | undefined => (typeof v === "string" && v !== "" ? v : undefined)

/** What the journal wrote to a record it created, after the create. */
interface Created {
  readonly seq: number
  readonly createKey: string
  readonly workspaceId: string
  fields: Record<string, unknown>
  listId: string | undefined
  comments: number
}

/** An op that reverses something, with the seq of the op it reverses. */
interface Planned {
  readonly seq: number
  readonly recordId: string
  readonly op: Omit<NewOp, "dependsOn">
}

/** Ops read from the journal at a time. */
const PAGE = 2000

/** Reads the journal's done ops and plans their undo (see the file's comment). */
export const planUndo = (journal: JournalApi): Effect.Effect<UndoPlan, JournalError> =>
  Effect.gen(function*() {
    const metaWorkspace = Option.getOrUndefined(yield* journal.getMeta(TARGET_WORKSPACE_META))
    const created = new Map<string, Created>()
    const reverts: Array<Planned> = []
    const comments: Array<Planned> = []
    const kept: Array<Kept> = []
    const workspaceOf = (payload: unknown): string | undefined => str(record(payload)["workspaceId"]) ?? metaWorkspace

    const onUpdate = (op: Op, recordId: string, workspaceId: string) => {
      const p = record(op.payload)
      const result = record(op.result)
      const fields: Record<string, unknown> = {}
      for (const [k, v] of Object.entries(record(p["fields"]))) {
        const f = fieldOf(k)
        // `archived` the service did not carry is not something the op wrote.
        if (f === undefined || v === undefined || (f === "archived" && result["archivedLeftOut"] === true)) continue
        fields[f] = writtenValue(record(p["fields"]), f)
      }
      const mine = created.get(recordId)
      if (mine !== undefined) {
        Object.assign(mine.fields, fields)
        return
      }
      if (Object.keys(fields).length === 0) return
      if (op.before === undefined || op.before === null) {
        kept.push({ what: "update", id: recordId, why: NO_EARLIER_VALUE })
        return
      }
      reverts.push({
        seq: op.seq,
        recordId,
        op: { key: undoKey(op.key), kind: UNDO_KINDS.recordRevert, payload: { workspaceId, recordId, opKey: op.key, wrote: fields } }
      })
    }

    const onMove = (op: Op, recordId: string, workspaceId: string) => {
      const result = record(op.result)
      const listId = str(result["listId"])
      if (listId === undefined || result["moved"] === false) return
      const mine = created.get(recordId)
      if (mine !== undefined) {
        mine.listId = listId
        return
      }
      if (op.before === undefined || op.before === null) {
        kept.push({ what: "move", id: recordId, why: NO_EARLIER_VALUE })
        return
      }
      reverts.push({
        seq: op.seq,
        recordId,
        op: { key: undoKey(op.key), kind: UNDO_KINDS.recordRevert, payload: { workspaceId, recordId, opKey: op.key, wroteListId: listId } }
      })
    }

    const onOp = (op: Op) => {
      const result = record(op.result)
      const id = str(result["id"])
      switch (op.kind) {
        case OP_KINDS.recordCreate: {
          const workspaceId = workspaceOf(unpackRecordCreate(op.payload))
          if (id === undefined || workspaceId === undefined) return
          const done = record(record(unpackRecordCreate(op.payload))["then"])["done"]
          created.set(id, {
            seq: op.seq,
            createKey: op.key,
            workspaceId,
            fields: typeof done === "boolean" ? { done } : {},
            listId: str(result["listId"]),
            comments: 0
          })
          return
        }
        case OP_KINDS.recordUpdate: {
          const workspaceId = workspaceOf(op.payload)
          if (id !== undefined && workspaceId !== undefined && result["superseded"] === undefined) onUpdate(op, id, workspaceId)
          return
        }
        case OP_KINDS.recordMove: {
          const workspaceId = workspaceOf(op.payload)
          if (id !== undefined && workspaceId !== undefined) onMove(op, id, workspaceId)
          return
        }
        case EXTRA_KINDS.recordArchive: {
          const mine = id === undefined ? undefined : created.get(id)
          if (mine !== undefined && result["archivedLeftOut"] !== true) mine.fields["archived"] = true
          return
        }
        case OP_KINDS.recordDelete:
          if (id !== undefined) kept.push({ what: "record", id, why: "deleted by the run: the service cannot bring back a deleted record" })
          return
        case EXTRA_KINDS.commentCreate: {
          const recordId = str(result["recordId"])
          const workspaceId = workspaceOf(op.payload)
          if (id === undefined || recordId === undefined || workspaceId === undefined) return
          const mine = created.get(recordId)
          if (mine !== undefined) {
            mine.comments++
            return
          }
          comments.push({
            seq: op.seq,
            recordId,
            op: { key: undoKey(op.key), kind: UNDO_KINDS.commentDelete, payload: { workspaceId, recordId, commentId: id, opKey: op.key } }
          })
          return
        }
        case EXTRA_KINDS.fileUpload:
        case FILE_COPY_KIND: {
          const uid = str(result["uid"])
          if (uid !== undefined) kept.push({ what: "file", id: uid, why: "the service has no operation that deletes a file" })
          return
        }
        case OP_KINDS.listEnsure:
        case OP_KINDS.tagEnsure:
          if (id !== undefined && result["existed"] === false) {
            kept.push({
              what: op.kind === OP_KINDS.listEnsure ? "list" : "tag",
              id,
              why: "undo deletes records, comments and files only"
            })
          }
          return
        case PEOPLE_KINDS.roleCreate:
          if (id !== undefined) kept.push({ what: "role", id, why: "undo deletes records, comments and files only" })
          return
        case PEOPLE_KINDS.personInvite: {
          const email = str(record(op.payload)["email"])
          if (result["invited"] === true) kept.push({ what: "invitation", id: email ?? op.key, why: "undo deletes records, comments and files only" })
          return
        }
        case CF_FILE_KIND: {
          // A value on a record the journal created goes with its record.
          const recordId = str(result["recordId"])
          if (recordId !== undefined && !created.has(recordId)) {
            kept.push({ what: "custom field file", id: recordId, why: "undo deletes records, comments and files only" })
          }
          return
        }
        default:
          return
      }
    }

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

    for (let after = 0;;) {
      const page = yield* journal.list({ afterSeq: after, limit: PAGE })
      for (const op of page) {
        if (op.kind.startsWith(UNDO_PREFIX) || op.key.startsWith(UNDO_PREFIX)) continue
        if (op.state === "done") onOp(op)
        else onUnfinished(op)
      }
      if (page.length < PAGE) break
      after = page[page.length - 1]!.seq
    }

    const deletes: Array<Planned> = [...created].map(([recordId, c]) => {
      const later: Record<string, unknown> = {}
      if (Object.keys(c.fields).length > 0) later["fields"] = c.fields
      if (c.listId !== undefined) later["listId"] = c.listId
      if (c.comments > 0) later["comments"] = c.comments
      return {
        seq: c.seq,
        recordId,
        op: {
          key: undoKey(c.createKey),
          kind: UNDO_KINDS.recordDelete,
          payload: { workspaceId: c.workspaceId, recordId, createKey: c.createKey, ...(Object.keys(later).length > 0 ? { later } : {}) }
        }
      }
    })
    // Newest first; a record's reverts one after another, the newest first.
    const all = [...deletes, ...reverts, ...comments].sort((a, b) => b.seq - a.seq)
    const lastRevert = new Map<string, string>()
    const ops = all.map((p): NewOp => {
      if (p.op.kind !== UNDO_KINDS.recordRevert) return p.op
      const after = lastRevert.get(p.recordId)
      lastRevert.set(p.recordId, p.op.key)
      return after === undefined ? p.op : { ...p.op, dependsOn: after }
    })
    return { ops, kept }
  })
