/** List operations (assumptions.ts LIST_SHAPE); resource style `GET/POST /v1/lists`. */
import { Schema } from "effect"
import { CreateListInput, ListListsInput } from "../../schema/inputs.ts"
import { openStruct } from "../../schema/open.ts"
import type { EmulatorContext, Principal, RestOperation } from "../context.ts"
import { notFound } from "../http.ts"
import { isAlt } from "../readings.ts"
import { requireWorkspace } from "./access.ts"
import { all, get, run } from "./sql.ts"
import { decodeInput } from "./validate.ts"
import { emit, POSITION_STEP } from "./writes.ts"

interface ListRow {
  id: string
  workspace_id: string
  title: string
  position: number
}

export const listJson = (l: ListRow) => ({ id: l.id, title: l.title, position: l.position, workspaceId: l.workspace_id })

const requireListRow = (ctx: EmulatorContext, workspaceId: string, listId: string): ListRow => {
  const row = get<ListRow>(
    ctx.db,
    "SELECT id, workspace_id, title, position FROM lists WHERE id = ? AND workspace_id = ? AND deleted_at IS NULL",
    listId,
    workspaceId
  )
  if (row === undefined) throw notFound("List")
  return row
}

/** Unpaged: every list of the workspace (R-REST-PAGE-11). */
const listLists = (ctx: EmulatorContext, principal: Principal, body: Record<string, unknown>) => {
  const input = decodeInput(ListListsInput, body)
  const ws = requireWorkspace(ctx, principal, input.workspaceId, "read")
  const rows = all<ListRow>(
    ctx.db,
    "SELECT id, workspace_id, title, position FROM lists WHERE workspace_id = +? AND deleted_at IS NULL ORDER BY position, id",
    ws.id
  )
  return { items: rows.map(listJson), totalCount: rows.length }
}

export const insertList = (ctx: EmulatorContext, workspaceId: string, title: string, at = ctx.clock.iso()): ListRow => {
  const position =
    (get<{ p: number | null }>(ctx.db, "SELECT max(position) AS p FROM lists WHERE workspace_id = ?", workspaceId)?.p ?? 0) +
    POSITION_STEP
  const id = ctx.ids.id()
  run(
    ctx.db,
    "INSERT INTO lists (id, workspace_id, title, position, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)",
    id,
    workspaceId,
    title,
    position,
    at,
    at
  )
  return { id, workspace_id: workspaceId, title, position }
}

const createList = (ctx: EmulatorContext, principal: Principal, body: Record<string, unknown>) => {
  const input = decodeInput(CreateListInput, body)
  // CREATE_LIST_READING, alt: `POST /v1/lists` is the POST form of list-lists ("GET or
  // POST /v1/lists | lists"), and create-list the same handler: the lists, nothing made.
  if (isAlt(ctx)) return listLists(ctx, principal, { workspaceId: input.workspaceId })
  const ws = requireWorkspace(ctx, principal, input.workspaceId, "write")
  const list = listJson(insertList(ctx, ws.id, input.title))
  emit(ctx, "TODO_LIST_CREATED", ws.id, null, list)
  return list
}

export const UpdateListInput = openStruct({
  workspaceId: Schema.String,
  listId: Schema.String,
  title: Schema.optional(Schema.String),
  position: Schema.optional(Schema.Number)
})
export const DeleteListInput = openStruct({ workspaceId: Schema.String, listId: Schema.String })

const updateList = (ctx: EmulatorContext, principal: Principal, body: Record<string, unknown>) => {
  const input = decodeInput(UpdateListInput, body)
  const ws = requireWorkspace(ctx, principal, input.workspaceId, "write")
  const before = requireListRow(ctx, ws.id, input.listId)
  const after = { ...before, title: input.title ?? before.title, position: input.position ?? before.position }
  run(ctx.db, "UPDATE lists SET title = ?, position = ?, updated_at = ? WHERE id = ?", after.title, after.position, ctx.clock.iso(), before.id)
  if (after.title !== before.title) emit(ctx, "TODO_LIST_NAME_CHANGED", ws.id, listJson(before), listJson(after))
  return listJson(after)
}

/** Deleting a list moves its records to the trash too. */
const deleteList = (ctx: EmulatorContext, principal: Principal, body: Record<string, unknown>) => {
  const input = decodeInput(DeleteListInput, body)
  const ws = requireWorkspace(ctx, principal, input.workspaceId, "write")
  const before = requireListRow(ctx, ws.id, input.listId)
  const now = ctx.clock.iso()
  ctx.db.transaction(() => {
    run(ctx.db, "UPDATE lists SET deleted_at = ?, updated_at = ? WHERE id = ?", now, now, before.id)
    run(ctx.db, "UPDATE records SET deleted_at = ?, updated_at = ? WHERE list_id = ? AND deleted_at IS NULL", now, now, before.id)
  })()
  emit(ctx, "TODO_LIST_DELETED", ws.id, listJson(before), null)
  return { success: true as const }
}

export const listOperations: ReadonlyArray<RestOperation> = [
  { name: "list-lists", write: false, handle: listLists, input: ListListsInput, family: "lists", summary: "Every list of a workspace (not paged)" },
  { name: "create-list", write: true, handle: createList, input: CreateListInput, family: "lists", summary: "Creates a list" },
  { name: "update-list", write: true, handle: updateList, input: UpdateListInput, family: "lists", summary: "Renames or repositions a list" },
  { name: "delete-list", write: true, handle: deleteList, input: DeleteListInput, family: "lists", summary: "Deletes a list and trashes its records" }
]
