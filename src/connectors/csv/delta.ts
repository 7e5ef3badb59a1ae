/**
 * Delta passes of import-csv: a rerun on a newer export of the same tool, with the same
 * journal, carries what changed since the last pass.
 *
 * What the journal last wrote for a row is in its ops: the row's `record.create` (keyed
 * by the row's key), then for each later pass n that changed it a `record.update`
 * (`<key>/update/<n>`, only the changed fields) and, when its list changed, a
 * `record.move` (`<key>/move/<n>`, after the update). Folding them in order gives the
 * row's fields as written; a field of the export that differs from it has changed.
 *
 * Before a changed field is sent, the record is read on the target: a field whose value
 * there differs from what the journal last wrote was edited on the target since, and is
 * kept (and reported) unless `overwriteTargetEdits`. Nothing else is stored: a field kept
 * stays different from the export, so the next pass finds and reports it again.
 *
 * Tags: update-record takes none (the documents have no write that sets a record's tags):
 * rows whose tags changed are counted as not carried.
 */
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import { isNotFound } from "../../client/errors.ts"
import type { RestClientApi, RestError } from "../../client/rest-client.ts"
import type { RecordDetail } from "../../schema/records.ts"
import type { JournalError, Op, PlanOp } from "../../store/journal.ts"
import { type ScratchRecords, scratchRecords } from "../../store/scratch-records.ts"
import type { StoreOpenError } from "../../store/sqlite.ts"
import { OP_KINDS, type RecordMovePayload, recordNamespace, type RecordUpdatePayload, unpackRecordCreate } from "../../sync/plan.ts"
import { comparableText } from "../../sync/references.ts"
import { sameDate } from "../../sync/restore-source.ts"
import type { JournalView } from "../../store/journal/read-only.ts"
import { type Kept, keptEditWhy } from "../../sync/pass-plan.ts"

/** Journal meta: how many passes of this import have finished (absent: none). */
export const PASSES_META = "import.passes"

/** Journal keys of a row's later writes (the row's create is keyed by the row's key). */
export const deltaKey = {
  update: (rowKey: string, pass: number) => `${rowKey}/update/${pass}`,
  move: (rowKey: string, pass: number) => `${rowKey}/move/${pass}`,
  delete: (rowKey: string) => `${rowKey}/delete`
} as const

/**
 * What a delta pass knows of the rows earlier passes created, kept in scratch files
 * (store/scratch-records.ts), not in the heap: a map of every row's key and record
 * grew with the rows, and a million of them would not fit the memory of one.
 */
export interface EarlierRows {
  /** The record a row created by an earlier pass maps to (the journal's id map). */
  readonly recordOf: (rowKey: string) => string | undefined
  /** Every row key of the id map, by key (the journal's order), a page at a time. */
  readonly rowKeys: () => Iterable<string>
  /** Whether a target record stands for a row of this journal (only with `byTarget`). */
  readonly ours: (recordId: string) => boolean
}

/** Mappings read from the journal and written to the scratch file per transaction. */
const PUT_PAGE = 1000

/**
 * The rows earlier passes created (undefined when none did: a first pass), copied from
 * the journal's id map into a scratch file for the scope, and (`byTarget`, for `--plan`)
 * their records' ids into a second one.
 */
export const earlierRows = (
  view: JournalView,
  workspaceId: string,
  byTarget: boolean
): Effect.Effect<EarlierRows | undefined, JournalError | StoreOpenError, Scope.Scope> =>
  Effect.gen(function*() {
    // The id map is read a page at a time, each page copied before the next is read.
    const namespace = recordNamespace(workspaceId)
    let page = yield* view.mappings(namespace, { limit: PUT_PAGE })
    if (page.length === 0) return undefined
    const bySource = yield* scratchRecords("import-mapped")
    const targets: ScratchRecords | undefined = byTarget ? yield* scratchRecords("import-targets") : undefined
    while (page.length > 0) {
      bySource.putAll(page.map((m) => ({ id: m.sourceKey, to: m.targetId })))
      targets?.putAll(page.map((m) => ({ id: m.targetId })))
      page = page.length < PUT_PAGE ? [] : yield* view.mappings(namespace, { after: page[page.length - 1]!.sourceKey, limit: PUT_PAGE })
    }
    return {
      recordOf: (rowKey) => {
        const text = bySource.get(rowKey)
        return text === undefined ? undefined : (JSON.parse(text) as { to: string }).to
      },
      rowKeys: bySource.ids,
      ours: (recordId) => targets?.has(recordId) ?? false
    }
  })

/** The fields a pass compares and carries (tags are compared, never carried). */
export type DeltaField = "title" | "description" | "startedAt" | "duedAt" | "done" | "assignees" | "list"

/** A row's fields as written (or, for the export's row, as they would be written). */
export interface Written {
  readonly title: string
  readonly description: string | undefined
  readonly descriptionHtml: string | undefined
  readonly startedAt: string | null
  readonly duedAt: string | null
  readonly done: boolean
  readonly assigneeIds: ReadonlyArray<string>
  readonly listId: string | undefined
  readonly listTitle: string | undefined
  readonly tagIds: ReadonlyArray<string>
  readonly tagTitles: ReadonlyArray<string>
}

const strOr = (v: unknown): string | undefined => (typeof v === "string" ? v : undefined)
const strs = (v: unknown): ReadonlyArray<string> => (Array.isArray(v) ? v.filter((x): x is string => typeof x === "string") : [])

/** A create payload (packed, as import-csv stores it, or an object) as written fields. */
export const writtenByCreate = (payload: unknown): Written => {
  const p = unpackRecordCreate(payload) as Record<string, unknown>
  const then = p["then"] as { done?: unknown } | undefined
  return {
    title: strOr(p["title"]) ?? "",
    description: strOr(p["description"]),
    descriptionHtml: strOr(p["descriptionHtml"]),
    startedAt: strOr(p["startedAt"]) ?? null,
    duedAt: strOr(p["duedAt"]) ?? null,
    done: then?.done === true,
    assigneeIds: strs(p["assigneeIds"]),
    listId: strOr(p["listId"]),
    listTitle: strOr(p["listTitle"]),
    tagIds: strs(p["tagIds"]),
    tagTitles: strs(p["tagTitles"])
  }
}

/** The fields after an update op of an earlier pass. */
const afterUpdate = (w: Written, payload: unknown): Written => {
  const f = ((payload as { fields?: unknown } | null)?.fields ?? {}) as Record<string, unknown>
  const has = (k: string) => k in f && f[k] !== undefined
  return {
    ...w,
    ...(has("title") ? { title: String(f["title"]) } : {}),
    ...(has("description") ? { description: String(f["description"]), descriptionHtml: undefined } : {}),
    ...(has("descriptionHtml") ? { descriptionHtml: String(f["descriptionHtml"]), description: undefined } : {}),
    ...(has("startedAt") ? { startedAt: strOr(f["startedAt"]) ?? null } : {}),
    ...(has("duedAt") ? { duedAt: strOr(f["duedAt"]) ?? null } : {}),
    ...(has("done") ? { done: f["done"] === true } : {}),
    ...(has("assigneeIds") ? { assigneeIds: strs(f["assigneeIds"]) } : {})
  }
}

/** The fields after a move op of an earlier pass. */
const afterMove = (w: Written, payload: unknown): Written => {
  const p = (payload ?? {}) as Record<string, unknown>
  return { ...w, listId: strOr(p["listId"]), listTitle: strOr(p["listTitle"]) }
}

/** What the journal holds for a row: its fields as last written, and where its ops end. */
export interface RowHistory {
  readonly written: Written
  /** Whether the row's create is done (its record exists on the target). */
  readonly created: boolean
  /** The latest pass that wrote the row (1: only its create). */
  readonly version: number
  /** The key of the row's last op (a later write depends on it). */
  readonly last: string
  /** An earlier pass deleted its record (the row was gone from that export, `--delete-missing`). */
  readonly deleted: boolean
}

/**
 * The histories of the rows whose create is in the journal, by row key: the create and
 * then, pass after pass, the updates and moves (one read of the journal per pass that
 * wrote any of these rows).
 */
export const readHistories = (view: JournalView, rowKeys: ReadonlyArray<string>): Effect.Effect<Map<string, RowHistory>, unknown> =>
  Effect.gen(function*() {
    const out = new Map<string, RowHistory>()
    if (rowKeys.length === 0) return out
    const first = yield* view.getMany([...rowKeys, ...rowKeys.flatMap((k) => [deltaKey.update(k, 2), deltaKey.move(k, 2), deltaKey.delete(k)])])
    let byKey = new Map<string, Op>(first.map((op) => [op.key, op]))
    let open: Array<string> = []
    for (const k of rowKeys) {
      const create = byKey.get(k)
      if (create === undefined || create.kind !== OP_KINDS.recordCreate) continue
      out.set(k, { written: writtenByCreate(create.payload), created: create.state === "done", version: 1, last: k, deleted: byKey.has(deltaKey.delete(k)) })
      open.push(k)
    }
    for (let pass = 2; open.length > 0; pass++) {
      if (pass > 2) byKey = new Map((yield* view.getMany(open.flatMap((k) => [deltaKey.update(k, pass), deltaKey.move(k, pass)]))).map((op) => [op.key, op]))
      const next: Array<string> = []
      for (const k of open) {
        const update = byKey.get(deltaKey.update(k, pass))
        const move = byKey.get(deltaKey.move(k, pass))
        if (update === undefined && move === undefined) continue
        const h = out.get(k)!
        let written = h.written
        if (update !== undefined) written = afterUpdate(written, update.payload)
        if (move !== undefined) written = afterMove(written, move.payload)
        out.set(k, { ...h, written, version: pass, last: (move ?? update)!.key })
        next.push(k)
      }
      open = next
    }
    return out
  })

const sortedJoin = (xs: ReadonlyArray<string>) => [...xs].sort().join("\u0000")

/**
 * Text for comparing descriptions: tags dropped, a few entities read, blanks collapsed,
 * and the references rewritten to name target records read as written (references.ts).
 */
const plainText = comparableText

const writtenText = (w: Written): string =>
  w.description !== undefined ? plainText(w.description) : w.descriptionHtml !== undefined ? plainText(w.descriptionHtml) : ""

/** A description as written: HTML or plain text (none and empty are the same). */
const descriptionOf = (w: Written): string => (w.descriptionHtml !== undefined ? `html:${w.descriptionHtml}` : `text:${w.description ?? ""}`)

/** Lists and tags by id, to compare what names them by id with what names them by title. */
export interface Titles {
  readonly list: (id: string) => string | undefined
  readonly tag: (id: string) => string | undefined
  /**
   * The list a record of this list title is in: the title itself, or the first list's when
   * the service could not make the list (its records went there; no move changes that).
   */
  readonly placed: (title: string) => string
}

const listOf = (w: Written, titles: Titles): string | undefined => {
  const title = w.listTitle ?? (w.listId !== undefined ? titles.list(w.listId) ?? `id ${w.listId}` : undefined)
  return title === undefined ? undefined : titles.placed(title)
}

const tagsOf = (w: Written, titles: Titles): string => sortedJoin([...w.tagTitles, ...w.tagIds.map((id) => titles.tag(id) ?? `id ${id}`)])

/** The fields of `next` (the export's row) that differ from what was written; tags apart. */
export const changedFields = (
  next: Written,
  was: Written,
  titles: Titles
): { readonly fields: ReadonlyArray<DeltaField>; readonly tags: boolean } => {
  const fields: Array<DeltaField> = []
  if (next.title !== was.title) fields.push("title")
  if (descriptionOf(next) !== descriptionOf(was)) fields.push("description")
  if ((next.startedAt ?? null) !== (was.startedAt ?? null)) fields.push("startedAt")
  if ((next.duedAt ?? null) !== (was.duedAt ?? null)) fields.push("duedAt")
  if (next.done !== was.done) fields.push("done")
  if (sortedJoin(next.assigneeIds) !== sortedJoin(was.assigneeIds)) fields.push("assignees")
  // A row that names no list leaves its record where it is.
  const list = listOf(next, titles)
  if (list !== undefined && list !== listOf(was, titles)) fields.push("list")
  return { fields, tags: tagsOf(next, titles) !== tagsOf(was, titles) }
}

/**
 * The fields among `fields` whose value on the target is not what the journal last wrote:
 * edited there since. A list the service could not make is judged where its records went
 * (`Titles.placed`).
 */
export const editedOnTarget = (
  fields: ReadonlyArray<DeltaField>,
  was: Written,
  target: RecordDetail,
  titles: Titles
): Array<DeltaField> =>
  fields.filter((f) => {
    switch (f) {
      case "title":
        return target.title !== was.title
      case "description":
        return plainText(target.text) !== writtenText(was) && plainText(target.html) !== writtenText(was)
      case "startedAt":
        return !sameDate(was.startedAt, target.startedAt ?? null)
      case "duedAt":
        return !sameDate(was.duedAt, target.duedAt ?? null)
      case "done":
        return target.done !== was.done
      case "assignees":
        return sortedJoin(target.users.map((u) => u.id)) !== sortedJoin(was.assigneeIds)
      case "list": {
        const list = listOf(was, titles)
        return list !== undefined && list !== target.todoList.title
      }
    }
  })


/** The row's key as the export names it (`k:ABC-1` -> `ABC-1`). */
export const itemOf = (rowKey: string): string => (rowKey.startsWith("k:") ? rowKey.slice(2) : rowKey)

/** The update (and move) of a row that changed: only `fields`, after the row's last op. */
export const versionOps = (
  workspaceId: string,
  rowKey: string,
  history: RowHistory,
  next: Written,
  fields: ReadonlyArray<DeltaField>,
  origin: string
): Array<PlanOp> => {
  const pass = history.version + 1
  const set: Record<string, unknown> = {}
  for (const f of fields) {
    if (f === "title") set["title"] = next.title
    else if (f === "description") {
      if (next.descriptionHtml !== undefined) set["descriptionHtml"] = next.descriptionHtml
      else set["description"] = next.description ?? ""
    } else if (f === "startedAt") set["startedAt"] = next.startedAt
    else if (f === "duedAt") set["duedAt"] = next.duedAt
    else if (f === "done") set["done"] = next.done
    else if (f === "assignees") set["assigneeIds"] = [...next.assigneeIds]
  }
  const updateKey = deltaKey.update(rowKey, pass)
  // Always an update op, even one with no field (a list change only: it sends nothing):
  // each row a pass changes has exactly one, which is what `updated` counts.
  const update: RecordUpdatePayload = { workspaceId, recordRef: rowKey, fields: set, origin }
  const ops: Array<PlanOp> = [{ key: updateKey, kind: OP_KINDS.recordUpdate, payload: update, dependsOn: history.last }]
  if (fields.includes("list")) {
    const move: RecordMovePayload = {
      workspaceId,
      recordRef: rowKey,
      ...(next.listId !== undefined ? { listId: next.listId } : { listTitle: next.listTitle! }),
      origin
    }
    ops.push({ key: deltaKey.move(rowKey, pass), kind: OP_KINDS.recordMove, payload: move, dependsOn: updateKey })
  }
  return ops
}

/** A row of the export whose create the journal already holds. */
export interface KnownRow {
  readonly key: string
  readonly line: number
  readonly next: Written
  readonly history: RowHistory
}

export interface DeltaOptions {
  readonly client: RestClientApi
  readonly workspaceId: string
  readonly titles: Titles
  /** The record each created row maps to (the journal's id map). */
  readonly recordOf: (rowKey: string) => string | undefined
  readonly overwriteTargetEdits: boolean
  readonly concurrency: number
}

export interface DeltaBatch {
  readonly ops: Array<PlanOp>
  /** Rows with an update planned. */
  readonly updated: number
  /** Target edits kept (and records gone from the target). */
  readonly kept: Array<Kept>
  /** Rows whose tags changed (not carried). */
  readonly tagsChanged: number
}

/**
 * Plans the changes of known rows: each changed row's record is read on the target (only
 * those) and its update planned with the fields to carry.
 */
export const planChanges = (rows: ReadonlyArray<KnownRow>, o: DeltaOptions): Effect.Effect<DeltaBatch, RestError> =>
  Effect.gen(function*() {
    const out: DeltaBatch = { ops: [], updated: 0, kept: [], tagsChanged: 0 }
    const changed: Array<{ row: KnownRow; fields: ReadonlyArray<DeltaField> }> = []
    for (const row of rows) {
      const c = changedFields(row.next, row.history.written, o.titles)
      if (c.tags) (out as { tagsChanged: number }).tagsChanged++
      if (c.fields.length > 0) changed.push({ row, fields: c.fields })
    }
    const decided = yield* Effect.forEach(changed, ({ fields, row }) =>
      Effect.gen(function*() {
        const recordId = row.history.created ? o.recordOf(row.key) : undefined
        // Not created yet (its create is still to be sent): nothing on the target to keep.
        if (recordId === undefined) return { row, fields, kept: [] as Array<Kept> }
        const target = yield* o.client.getRecord({ workspaceId: o.workspaceId, recordId }).pipe(
          Effect.map((d) => d as RecordDetail | undefined),
          Effect.catchIf(isNotFound, () => Effect.succeed(undefined))
        )
        if (target === undefined) {
          return {
            row,
            fields: [] as ReadonlyArray<DeltaField>,
            kept: [{ what: "record", item: itemOf(row.key), why: `record ${recordId} was deleted on the target since the last pass; not updated` }]
          }
        }
        const edited = editedOnTarget(fields, row.history.written, target, o.titles)
        if (edited.length === 0 || o.overwriteTargetEdits) return { row, fields, kept: [] as Array<Kept> }
        return {
          row,
          fields: fields.filter((f) => !edited.includes(f)),
          kept: edited.map((f) => ({
            what: f,
            item: itemOf(row.key),
            why: keptEditWhy(`record ${recordId}`)
          }))
        }
      }), { concurrency: o.concurrency })
    for (const d of decided) {
      out.kept.push(...d.kept)
      if (d.fields.length === 0) continue
      out.ops.push(...versionOps(o.workspaceId, d.row.key, d.row.history, d.row.next, d.fields, `line ${d.row.line}`))
      ;(out as { updated: number }).updated++
    }
    return out
  })
