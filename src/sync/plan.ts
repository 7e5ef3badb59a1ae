/**
 * The operations a write plan is made of, as stored in the journal's `payload`. Each
 * is Schema-defined so replay decodes exactly what planning wrote.
 *
 * References between ops go through the journal's id map, never through ids known only
 * in memory: a record created by one op is found by the next (an update, a move) with
 * `lookup(recordNamespace(ws), sourceKey)`, and a list created by a `list.ensure` op is
 * found by title with `lookup(listNamespace(ws), title)`.
 */
import { Schema } from "effect"

export const OP_KINDS = {
  listEnsure: "list.ensure",
  tagEnsure: "tag.ensure",
  recordCreate: "record.create",
  recordUpdate: "record.update",
  recordMove: "record.move",
  recordDelete: "record.delete",
  /** Sends nothing: records that a state was reached once its dependency is done (restore versions). */
  marker: "marker"
} as const

/** Ops that create what later ops refer to by title run in an earlier phase. */
export const PHASES: ReadonlyArray<ReadonlyArray<string>> = [
  [OP_KINDS.listEnsure, OP_KINDS.tagEnsure],
  [OP_KINDS.recordCreate, OP_KINDS.recordUpdate, OP_KINDS.recordMove, OP_KINDS.recordDelete, OP_KINDS.marker]
]

/**
 * What a list or tag title maps to when the service cannot make it (no create operation,
 * or a create answered with success that made nothing: capabilities.ts): records are
 * created without it.
 */
export const LEFT_OUT = ""

/** id_map namespaces, per target workspace. */
export const recordNamespace = (workspaceId: string) => `record:${workspaceId}`
export const listNamespace = (workspaceId: string) => `list:${workspaceId}`
export const tagNamespace = (workspaceId: string) => `tag:${workspaceId}`

const Str = Schema.String
const opt = <S extends Schema.Constraint>(s: S) => Schema.optional(s)

/** Create one record. A list or tags not on the service at planning time are named by title. */
export const RecordCreatePayload = Schema.Struct({
  workspaceId: Str,
  /** id_map source key of the record (namespace `record:<workspaceId>`); default: the op's key. */
  sourceKey: opt(Str),
  title: Str,
  listId: opt(Str),
  /** Resolved at replay through `list:<workspaceId>` (made by a list.ensure op). */
  listTitle: opt(Str),
  description: opt(Str),
  descriptionHtml: opt(Str),
  startedAt: opt(Str),
  duedAt: opt(Str),
  assigneeIds: opt(Schema.Array(Str)),
  tagIds: opt(Schema.Array(Str)),
  /** Resolved at replay through `tag:<workspaceId>` (made by tag.ensure ops). */
  tagTitles: opt(Schema.Array(Str)),
  /** Where it came from, for messages (CSV line, snapshot record id). */
  origin: opt(Str),
  /**
   * Sent after the creates planned before it that name the same `listId` (their executor
   * group is that list instead of the title): a planner that plans a list's records in
   * the source's order gets them to the service in that order, so the target's order
   * follows wherever the service appends (no documented write sets a position). With
   * `listId`, or with `listTitle` (a list made by a list.ensure of the same plan: its
   * creates share a group of their own). migrate names a list the service could not make
   * by the first list's id, where those records go, so every create that can land in a
   * list shares its group; restore keeps the title, so each list of the run keeps its own
   * order there.
   */
  inListOrder: opt(Schema.Boolean),
  /**
   * Set once the record exists (create-record takes no `done`): replay sends
   * update-record right after the create, in the same op, which is done only after both
   * (the record is mapped in between, so a resumed op repeats only the update). Journals
   * of earlier versions hold a separate `record.update` op instead (`<key>/done`,
   * depending on the create), replayed as any update.
   */
  then: opt(Schema.Struct({ done: opt(Schema.Boolean) }))
})
export type RecordCreatePayload = typeof RecordCreatePayload.Type

/**
 * A create as planned by import-csv: `workspaceId` left out, since it is the same on
 * every op of the file and the journal holds it once (meta `target.workspace`, which
 * import and restore set before planning and check on every rerun). Replay fills it in
 * (`replay-records.ts`); a payload that carries it (restore, journals planned before)
 * is read as it is.
 */
export type PlannedRecordCreate = Omit<RecordCreatePayload, "workspaceId">

/** The journal meta key naming the workspace of the ops whose payload omits it. */
export const TARGET_WORKSPACE_META = "target.workspace"

/**
 * Positions of a packed create (see `packRecordCreate`). Append only: journals written
 * with this order must stay readable.
 */
const PACKED_CREATE_FIELDS = [
  "title",
  "origin",
  "listId",
  "listTitle",
  "description",
  "descriptionHtml",
  "startedAt",
  "duedAt",
  "assigneeIds",
  "tagIds",
  "tagTitles",
  "then",
  "sourceKey"
] as const satisfies ReadonlyArray<keyof PlannedRecordCreate>

/** Position of each field in a packed create (`then` holds its `done` flag). */
export const PACKED_CREATE_INDEX = Object.fromEntries(PACKED_CREATE_FIELDS.map((f, i) => [f, i])) as {
  readonly [K in (typeof PACKED_CREATE_FIELDS)[number]]: number
}

/**
 * A create payload as a JSON array of its fields by position (absent = null, trailing
 * nulls dropped; `then` as its `done` flag). A million-row import stores a million of
 * them, and SQLite's insert cost follows row size: the field names were about a third
 * of each payload. Objects (restore, older journals) stay readable: see `unpackRecordCreate`.
 */
export const packRecordCreate = (p: PlannedRecordCreate): Array<unknown> => {
  const out: Array<unknown> = []
  let last = 0
  for (let i = 0; i < PACKED_CREATE_FIELDS.length; i++) {
    const f = PACKED_CREATE_FIELDS[i]!
    const v = f === "then" ? p.then?.done : p[f]
    if (v === undefined) out.push(null)
    else {
      out.push(v)
      last = i + 1
    }
  }
  out.length = last
  return out
}

/** A stored create payload as an object (packed ones unpacked; anything else as it is). */
export const unpackRecordCreate = (payload: unknown): unknown => {
  if (!Array.isArray(payload)) return payload
  const out: Record<string, unknown> = {}
  for (let i = 0; i < payload.length && i < PACKED_CREATE_FIELDS.length; i++) {
    const v: unknown = payload[i]
    if (v === null || v === undefined) continue
    const f = PACKED_CREATE_FIELDS[i]!
    out[f] = f === "then" ? { done: v } : v
  }
  return out
}

/** The `origin` of any op payload (packed creates included), for messages. */
export const originOf = (kind: string, payload: unknown): string | undefined => {
  const p = kind === OP_KINDS.recordCreate ? unpackRecordCreate(payload) : payload
  const origin = typeof p === "object" && p !== null ? (p as { origin?: unknown }).origin : undefined
  return typeof origin === "string" ? origin : undefined
}

/** The record an op acts on: a known id, or the source key of the op that created it. */
const RecordTarget = {
  workspaceId: Str,
  recordId: opt(Str),
  recordRef: opt(Str)
}

/** Fields of update-record (omitted = unchanged; null dates clear). */
export const RecordUpdatePayload = Schema.Struct({
  ...RecordTarget,
  fields: Schema.Struct({
    title: opt(Str),
    description: opt(Str),
    descriptionHtml: opt(Str),
    done: opt(Schema.Boolean),
    archived: opt(Schema.Boolean),
    startedAt: opt(Schema.NullOr(Str)),
    duedAt: opt(Schema.NullOr(Str)),
    allDay: opt(Schema.Boolean),
    color: opt(Str),
    assigneeIds: opt(Schema.Array(Str))
  }),
  origin: opt(Str)
})
export type RecordUpdatePayload = typeof RecordUpdatePayload.Type

/** Move to a list by id, or by title through `list:<workspaceId>` (made by a list.ensure op). */
export const RecordMovePayload = Schema.Struct({ ...RecordTarget, listId: opt(Str), listTitle: opt(Str), origin: opt(Str) })
export type RecordMovePayload = typeof RecordMovePayload.Type

export const RecordDeletePayload = Schema.Struct({ ...RecordTarget, origin: opt(Str) })
export type RecordDeletePayload = typeof RecordDeletePayload.Type

/** Make sure a list (or tag) with this exact title exists; map its id by title. */
export const EnsurePayload = Schema.Struct({ workspaceId: Str, title: Str })
export type EnsurePayload = typeof EnsurePayload.Type

/** Journal keys of the ensure ops, so every row needing the same list shares one op. */
export const listEnsureKey = (workspaceId: string, title: string) => `list:${workspaceId}:${title}`
export const tagEnsureKey = (workspaceId: string, title: string) => `tag:${workspaceId}:${title}`
