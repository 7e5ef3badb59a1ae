/** Tag operations (assumptions.ts TAG_SHAPE) and tagging records. */
import { Schema } from "effect"
import { CreateTagInput, ListTagsInput } from "../../schema/inputs.ts"
import { openStruct } from "../../schema/open.ts"
import type { EmulatorContext, Principal, RestOperation } from "../context.ts"
import { notFound } from "../http.ts"
import { requireWorkspace } from "./access.ts"
import { requireRecordDetail } from "./lookup.ts"
import { recordDetail } from "./serialize.ts"
import { all, get, run } from "./sql.ts"
import { decodeInput } from "./validate.ts"
import { emit, recordAction, syncRecordLinks, touchRecord } from "./writes.ts"

interface TagRow {
  id: string
  title: string
  color: string | null
}

export const tagJson = (t: TagRow) => ({ id: t.id, title: t.title, color: t.color })

export const insertTag = (ctx: EmulatorContext, workspaceId: string, title: string, color: string | null, at = ctx.clock.iso()): TagRow => {
  const id = ctx.ids.id()
  run(
    ctx.db,
    "INSERT INTO tags (id, workspace_id, title, color, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)",
    id,
    workspaceId,
    title,
    color,
    at,
    at
  )
  return { id, title, color }
}

const requireTag = (ctx: EmulatorContext, workspaceId: string, tagId: string): TagRow => {
  const row = get<TagRow>(ctx.db, "SELECT id, title, color FROM tags WHERE id = ? AND workspace_id = ? AND deleted_at IS NULL", tagId, workspaceId)
  if (row === undefined) throw notFound("Tag")
  return row
}

const requireRecordIn = requireRecordDetail

const listTags = (ctx: EmulatorContext, principal: Principal, body: Record<string, unknown>) => {
  const input = decodeInput(ListTagsInput, body)
  const ws = requireWorkspace(ctx, principal, input.workspaceId, "read")
  const rows = all<TagRow>(ctx.db, "SELECT id, title, color FROM tags WHERE workspace_id = +? AND deleted_at IS NULL ORDER BY title, id", ws.id)
  return { items: rows.map(tagJson), totalCount: rows.length }
}

const createTag = (ctx: EmulatorContext, principal: Principal, body: Record<string, unknown>) => {
  const input = decodeInput(CreateTagInput, body)
  const ws = requireWorkspace(ctx, principal, input.workspaceId, "write")
  const tag = tagJson(insertTag(ctx, ws.id, input.title, input.color ?? null))
  emit(ctx, "TAG_CREATED", ws.id, null, tag)
  return tag
}

export const UpdateTagInput = openStruct({
  workspaceId: Schema.String,
  tagId: Schema.String,
  title: Schema.optional(Schema.String),
  color: Schema.optional(Schema.NullOr(Schema.String))
})
export const DeleteTagInput = openStruct({ workspaceId: Schema.String, tagId: Schema.String })
export const RecordTagInput = openStruct({ workspaceId: Schema.String, recordId: Schema.String, tagId: Schema.String })

const updateTag = (ctx: EmulatorContext, principal: Principal, body: Record<string, unknown>) => {
  const input = decodeInput(UpdateTagInput, body)
  const ws = requireWorkspace(ctx, principal, input.workspaceId, "write")
  const before = requireTag(ctx, ws.id, input.tagId)
  const after = { id: before.id, title: input.title ?? before.title, color: input.color === undefined ? before.color : input.color }
  run(ctx.db, "UPDATE tags SET title = ?, color = ?, updated_at = ? WHERE id = ?", after.title, after.color, ctx.clock.iso(), before.id)
  emit(ctx, "TAG_UPDATED", ws.id, tagJson(before), tagJson(after))
  return tagJson(after)
}

const deleteTag = (ctx: EmulatorContext, principal: Principal, body: Record<string, unknown>) => {
  const input = decodeInput(DeleteTagInput, body)
  const ws = requireWorkspace(ctx, principal, input.workspaceId, "write")
  const before = requireTag(ctx, ws.id, input.tagId)
  const now = ctx.clock.iso()
  run(ctx.db, "UPDATE tags SET deleted_at = ?, updated_at = ? WHERE id = ?", now, now, before.id)
  emit(ctx, "TAG_DELETED", ws.id, tagJson(before), null)
  return { success: true as const }
}

const addRecordTag = (ctx: EmulatorContext, principal: Principal, body: Record<string, unknown>) => {
  const input = decodeInput(RecordTagInput, body)
  const ws = requireWorkspace(ctx, principal, input.workspaceId, "write")
  const before = requireRecordIn(ctx, ws.id, input.recordId)
  const tag = requireTag(ctx, ws.id, input.tagId)
  if (before.tags.some((t) => t.id === tag.id)) return before
  const now = ctx.clock.iso()
  ctx.db.transaction(() => {
    run(ctx.db, "INSERT INTO record_tags (record_id, tag_id, position) VALUES (?, ?, ?)", input.recordId, tag.id, before.tags.length)
    syncRecordLinks(ctx, input.recordId)
    touchRecord(ctx, input.recordId, now)
    recordAction(ctx, { workspaceId: ws.id, recordId: input.recordId, userId: principal.userId, type: "ADD_TAG", newValue: tag.title, at: now })
  })()
  const after = recordDetail(ctx.db, input.recordId)!
  emit(ctx, "TODO_TAG_ADDED", ws.id, before, after)
  return after
}

const removeRecordTag = (ctx: EmulatorContext, principal: Principal, body: Record<string, unknown>) => {
  const input = decodeInput(RecordTagInput, body)
  const ws = requireWorkspace(ctx, principal, input.workspaceId, "write")
  const before = requireRecordIn(ctx, ws.id, input.recordId)
  const tag = before.tags.find((t) => t.id === input.tagId)
  if (tag === undefined) return before
  const now = ctx.clock.iso()
  ctx.db.transaction(() => {
    run(ctx.db, "DELETE FROM record_tags WHERE record_id = ? AND tag_id = ?", input.recordId, tag.id)
    syncRecordLinks(ctx, input.recordId)
    touchRecord(ctx, input.recordId, now)
    recordAction(ctx, { workspaceId: ws.id, recordId: input.recordId, userId: principal.userId, type: "REMOVE_TAG", oldValue: tag.title, at: now })
  })()
  const after = recordDetail(ctx.db, input.recordId)!
  emit(ctx, "TODO_TAG_REMOVED", ws.id, before, after)
  return after
}

export const tagOperations: ReadonlyArray<RestOperation> = [
  { name: "list-tags", write: false, handle: listTags, input: ListTagsInput, family: "tags", summary: "Every tag of a workspace: { items, totalCount }" },
  { name: "create-tag", write: true, handle: createTag, input: CreateTagInput, family: "tags", summary: "Creates a tag" },
  { name: "update-tag", write: true, handle: updateTag, input: UpdateTagInput, family: "tags", summary: "Renames or recolours a tag" },
  { name: "delete-tag", write: true, handle: deleteTag, input: DeleteTagInput, family: "tags", summary: "Deletes a tag" },
  { name: "add-record-tag", write: true, handle: addRecordTag, input: RecordTagInput, family: "tags", summary: "Tags a record; answers the record detail" },
  { name: "remove-record-tag", write: true, handle: removeRecordTag, input: RecordTagInput, family: "tags", summary: "Untags a record; answers the record detail" }
]
