/** Checklist operations (assumptions.ts EXTRA_OPERATIONS); every change touches the record. */
import { Schema } from "effect"
import { DateInput } from "../../schema/dates.ts"
import { openStruct } from "../../schema/open.ts"
import type { EmulatorContext, Principal, RestOperation } from "../context.ts"
import { badRequest, notFound } from "../http.ts"
import { workspaceLevel } from "../auth.ts"
import { requireWorkspace } from "./access.ts"
import { toStoredDate } from "./dates.ts"
import { requireRecordExists } from "./lookup.ts"
import { all, get, run } from "./sql.ts"
import { decodeInput } from "./validate.ts"
import { emit, POSITION_STEP, touchRecord } from "./writes.ts"

interface ItemRow {
  id: string
  checklist_id: string
  title: string
  done: number
  position: number
  started_at: string | null
  dued_at: string | null
}

const itemJson = (i: ItemRow) => ({
  id: i.id,
  title: i.title,
  done: i.done === 1,
  position: i.position,
  startedAt: i.started_at,
  duedAt: i.dued_at
})

const ITEM_COLUMNS = "id, checklist_id, title, done, position, started_at, dued_at"

const checklistJson = (ctx: EmulatorContext, id: string) => {
  const c = get<{ id: string; title: string; position: number }>(ctx.db, "SELECT id, title, position FROM checklists WHERE id = ?", id)!
  const items = all<ItemRow>(
    ctx.db,
    `SELECT ${ITEM_COLUMNS} FROM checklist_items WHERE checklist_id = +? AND deleted_at IS NULL ORDER BY position, id`,
    id
  )
  return { id: c.id, title: c.title, position: c.position, checklistItems: items.map(itemJson) }
}

/** A live checklist of a live record in the workspace; returns its record id. */
const requireChecklist = (ctx: EmulatorContext, workspaceId: string, checklistId: string): { recordId: string } => {
  const row = get<{ record_id: string }>(
    ctx.db,
    `SELECT c.record_id FROM checklists c JOIN records r ON r.id = c.record_id
      WHERE c.id = ? AND c.deleted_at IS NULL AND r.workspace_id = ? AND r.deleted_at IS NULL`,
    checklistId,
    workspaceId
  )
  if (row === undefined) throw notFound("Checklist")
  return { recordId: row.record_id }
}

const requireItem = (ctx: EmulatorContext, workspaceId: string, itemId: string): ItemRow & { record_id: string } => {
  const row = get<ItemRow & { record_id: string }>(
    ctx.db,
    `SELECT i.id, i.checklist_id, i.title, i.done, i.position, i.started_at, i.dued_at, c.record_id
       FROM checklist_items i JOIN checklists c ON c.id = i.checklist_id AND c.deleted_at IS NULL
       JOIN records r ON r.id = c.record_id AND r.deleted_at IS NULL
      WHERE i.id = ? AND i.deleted_at IS NULL AND r.workspace_id = ?`,
    itemId,
    workspaceId
  )
  if (row === undefined) throw notFound("Checklist item")
  return row
}

export const CreateChecklistInput = openStruct({ workspaceId: Schema.String, recordId: Schema.String, title: Schema.String })
export const UpdateChecklistInput = openStruct({
  workspaceId: Schema.String,
  checklistId: Schema.String,
  title: Schema.optional(Schema.String),
  position: Schema.optional(Schema.Number)
})
export const DeleteChecklistInput = openStruct({ workspaceId: Schema.String, checklistId: Schema.String })
export const CreateChecklistItemInput = openStruct({
  workspaceId: Schema.String,
  checklistId: Schema.String,
  title: Schema.String,
  done: Schema.optional(Schema.Boolean),
  startedAt: Schema.optional(DateInput),
  duedAt: Schema.optional(DateInput)
})
export const UpdateChecklistItemInput = openStruct({
  workspaceId: Schema.String,
  checklistItemId: Schema.String,
  title: Schema.optional(Schema.String),
  done: Schema.optional(Schema.Boolean),
  position: Schema.optional(Schema.Number),
  startedAt: Schema.optional(Schema.NullOr(DateInput)),
  duedAt: Schema.optional(Schema.NullOr(DateInput))
})
export const DeleteChecklistItemInput = openStruct({ workspaceId: Schema.String, checklistItemId: Schema.String })

const createChecklist = (ctx: EmulatorContext, principal: Principal, body: Record<string, unknown>) => {
  const input = decodeInput(CreateChecklistInput, body)
  const ws = requireWorkspace(ctx, principal, input.workspaceId, "write")
  requireRecordExists(ctx, ws.id, input.recordId)
  const now = ctx.clock.iso()
  const id = ctx.ids.id()
  ctx.db.transaction(() => {
    const position =
      (get<{ p: number | null }>(ctx.db, "SELECT max(position) AS p FROM checklists WHERE record_id = +?", input.recordId)?.p ?? 0) +
      POSITION_STEP
    run(
      ctx.db,
      "INSERT INTO checklists (id, record_id, title, position, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)",
      id,
      input.recordId,
      input.title,
      position,
      now,
      now
    )
    touchRecord(ctx, input.recordId, now)
  })()
  const checklist = checklistJson(ctx, id)
  emit(ctx, "TODO_CHECKLIST_CREATED", ws.id, null, { ...checklist, recordId: input.recordId })
  return checklist
}

const updateChecklist = (ctx: EmulatorContext, principal: Principal, body: Record<string, unknown>) => {
  const input = decodeInput(UpdateChecklistInput, body)
  const ws = requireWorkspace(ctx, principal, input.workspaceId, "write")
  const { recordId } = requireChecklist(ctx, ws.id, input.checklistId)
  const before = checklistJson(ctx, input.checklistId)
  const now = ctx.clock.iso()
  run(
    ctx.db,
    "UPDATE checklists SET title = ?, position = ?, updated_at = ? WHERE id = ?",
    input.title ?? before.title,
    input.position ?? before.position,
    now,
    input.checklistId
  )
  touchRecord(ctx, recordId, now)
  const after = checklistJson(ctx, input.checklistId)
  if (after.title !== before.title) emit(ctx, "TODO_CHECKLIST_NAME_CHANGED", ws.id, { ...before, recordId }, { ...after, recordId })
  return after
}

const deleteChecklist = (ctx: EmulatorContext, principal: Principal, body: Record<string, unknown>) => {
  const input = decodeInput(DeleteChecklistInput, body)
  const ws = requireWorkspace(ctx, principal, input.workspaceId, "write")
  const { recordId } = requireChecklist(ctx, ws.id, input.checklistId)
  const before = checklistJson(ctx, input.checklistId)
  const now = ctx.clock.iso()
  run(ctx.db, "UPDATE checklists SET deleted_at = ?, updated_at = ? WHERE id = ?", now, now, input.checklistId)
  touchRecord(ctx, recordId, now)
  emit(ctx, "TODO_CHECKLIST_DELETED", ws.id, { ...before, recordId }, null)
  return { success: true as const }
}

const createChecklistItem = (ctx: EmulatorContext, principal: Principal, body: Record<string, unknown>) => {
  const input = decodeInput(CreateChecklistItemInput, body)
  const ws = requireWorkspace(ctx, principal, input.workspaceId, "write")
  const { recordId } = requireChecklist(ctx, ws.id, input.checklistId)
  const now = ctx.clock.iso()
  const id = ctx.ids.id()
  ctx.db.transaction(() => {
    const position =
      (get<{ p: number | null }>(ctx.db, "SELECT max(position) AS p FROM checklist_items WHERE checklist_id = +?", input.checklistId)?.p ??
        0) + POSITION_STEP
    run(
      ctx.db,
      `INSERT INTO checklist_items (id, checklist_id, title, done, position, started_at, dued_at, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      id,
      input.checklistId,
      input.title,
      input.done ? 1 : 0,
      position,
      input.startedAt === undefined ? null : toStoredDate(input.startedAt, undefined).iso,
      input.duedAt === undefined ? null : toStoredDate(input.duedAt, undefined).iso,
      now,
      now
    )
    touchRecord(ctx, recordId, now)
  })()
  const item = itemJson(get<ItemRow>(ctx.db, `SELECT ${ITEM_COLUMNS} FROM checklist_items WHERE id = ?`, id)!)
  emit(ctx, "TODO_CHECKLIST_ITEM_CREATED", ws.id, null, { ...item, checklistId: input.checklistId, recordId })
  return item
}

const updateChecklistItem = (ctx: EmulatorContext, principal: Principal, body: Record<string, unknown>) => {
  const input = decodeInput(UpdateChecklistItemInput, body)
  const ws = requireWorkspace(ctx, principal, input.workspaceId, "write")
  const row = requireItem(ctx, ws.id, input.checklistItemId)
  const before = itemJson(row)
  const date = (value: string | null | undefined, current: string | null) =>
    value === undefined ? current : value === null ? null : toStoredDate(value, undefined).iso
  const now = ctx.clock.iso()
  run(
    ctx.db,
    "UPDATE checklist_items SET title = ?, done = ?, position = ?, started_at = ?, dued_at = ?, updated_at = ? WHERE id = ?",
    input.title ?? row.title,
    input.done === undefined ? row.done : input.done ? 1 : 0,
    input.position ?? row.position,
    date(input.startedAt, row.started_at),
    date(input.duedAt, row.dued_at),
    now,
    row.id
  )
  touchRecord(ctx, row.record_id, now)
  const after = itemJson(get<ItemRow>(ctx.db, `SELECT ${ITEM_COLUMNS} FROM checklist_items WHERE id = ?`, row.id)!)
  const extra = { checklistId: row.checklist_id, recordId: row.record_id }
  // CHECKLIST_ITEM_ASSIGNEES, alt: assignees change here (replaced, like update-record's), not over GraphQL.
  if (ctx.variant === "alt" && body["assigneeIds"] !== undefined) replaceAssignees(ctx, ws.id, row, after, extra, body["assigneeIds"])
  const announce = (event: string) => emit(ctx, event, ws.id, { ...before, ...extra }, { ...after, ...extra })
  if (after.title !== before.title) announce("TODO_CHECKLIST_ITEM_NAME_CHANGED")
  if (after.done !== before.done) announce("TODO_CHECKLIST_ITEM_DONE_STATUS_UPDATED")
  if (after.duedAt !== before.duedAt) {
    announce(
      before.duedAt === null
        ? "TODO_CHECKLIST_ITEM_DUE_DATE_ADDED"
        : after.duedAt === null
          ? "TODO_CHECKLIST_ITEM_DUE_DATE_REMOVED"
          : "TODO_CHECKLIST_ITEM_DUE_DATE_UPDATED"
    )
  }
  return after
}

const assigneesOf = (ctx: EmulatorContext, itemId: string): Array<string> =>
  all<{ user_id: string }>(ctx.db, "SELECT user_id FROM checklist_item_assignees WHERE item_id = +? ORDER BY position, user_id", itemId).map(
    (r) => r.user_id
  )

const assigneeJson = (ctx: EmulatorContext, ids: ReadonlyArray<string>) =>
  ids.flatMap((id) => {
    const u = get<{ id: string; first_name: string; last_name: string; email: string }>(
      ctx.db,
      "SELECT id, first_name, last_name, email FROM users WHERE id = ?",
      id
    )
    return u === undefined ? [] : [{ id: u.id, fullName: `${u.first_name} ${u.last_name}`.trim(), email: u.email }]
  })

/** Replaces a checklist item's assignees; one event per user added or removed. */
const replaceAssignees = (
  ctx: EmulatorContext,
  workspaceId: string,
  row: ItemRow,
  item: ReturnType<typeof itemJson>,
  extra: { checklistId: string; recordId: string },
  given: unknown
): void => {
  if (!Array.isArray(given) || !given.every((id): id is string => typeof id === "string")) {
    throw badRequest("assigneeIds must be a list of user ids", [{ path: ["assigneeIds"], message: "Expected an array of strings" }])
  }
  const next = [...new Set(given)]
  if (next.some((id) => workspaceLevel(ctx, workspaceId, id) === null)) throw notFound("Assignee")
  const current = assigneesOf(ctx, row.id)
  const value = (ids: ReadonlyArray<string>) => ({ ...item, ...extra, assignees: assigneeJson(ctx, ids) })
  ctx.db.transaction(() => {
    run(ctx.db, "DELETE FROM checklist_item_assignees WHERE item_id = ?", row.id)
    next.forEach((id, i) => run(ctx.db, "INSERT INTO checklist_item_assignees (item_id, user_id, position) VALUES (?, ?, ?)", row.id, id, i))
  })()
  const added = next.filter((u) => !current.includes(u)).length
  const removed = current.filter((u) => !next.includes(u)).length
  for (let i = 0; i < added; i++) emit(ctx, "TODO_CHECKLIST_ITEM_ASSIGNEE_ADDED", workspaceId, value(current), value(next))
  for (let i = 0; i < removed; i++) emit(ctx, "TODO_CHECKLIST_ITEM_ASSIGNEE_REMOVED", workspaceId, value(current), value(next))
}

const deleteChecklistItem = (ctx: EmulatorContext, principal: Principal, body: Record<string, unknown>) => {
  const input = decodeInput(DeleteChecklistItemInput, body)
  const ws = requireWorkspace(ctx, principal, input.workspaceId, "write")
  const row = requireItem(ctx, ws.id, input.checklistItemId)
  const now = ctx.clock.iso()
  run(ctx.db, "UPDATE checklist_items SET deleted_at = ?, updated_at = ? WHERE id = ?", now, now, row.id)
  touchRecord(ctx, row.record_id, now)
  emit(ctx, "TODO_CHECKLIST_ITEM_DELETED", ws.id, { ...itemJson(row), checklistId: row.checklist_id, recordId: row.record_id }, null)
  return { success: true as const }
}

export const checklistOperations: ReadonlyArray<RestOperation> = [
  { name: "create-checklist", write: true, handle: createChecklist, input: CreateChecklistInput, family: "checklists", summary: "Adds a checklist to a record" },
  { name: "update-checklist", write: true, handle: updateChecklist, input: UpdateChecklistInput, family: "checklists", summary: "Renames or repositions a checklist" },
  { name: "delete-checklist", write: true, handle: deleteChecklist, input: DeleteChecklistInput, family: "checklists", summary: "Deletes a checklist" },
  { name: "create-checklist-item", write: true, handle: createChecklistItem, input: CreateChecklistItemInput, family: "checklists", summary: "Adds an item to a checklist" },
  { name: "update-checklist-item", write: true, handle: updateChecklistItem, input: UpdateChecklistItemInput, family: "checklists", summary: "Changes a checklist item (title, done, dates)" },
  { name: "delete-checklist-item", write: true, handle: deleteChecklistItem, input: DeleteChecklistItemInput, family: "checklists", summary: "Deletes a checklist item" }
]
