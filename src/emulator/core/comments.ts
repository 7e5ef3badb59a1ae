/**
 * Comment operations over the activity table (assumptions.ts EXTRA_OPERATIONS). A comment
 * changes the record's commentCount, so it touches the record.
 */
import { Schema } from "effect"
import { Limit, Skip } from "../../schema/inputs.ts"
import { LIST_ACTIVITY_DEFAULT_LIMIT, PAGE_DEFAULT_SKIP, PAGE_MAX_LIMIT } from "../../schema/limits.ts"
import { openStruct } from "../../schema/open.ts"
import type { EmulatorContext, Principal, RestOperation } from "../context.ts"
import { badRequest, forbidden, notFound } from "../http.ts"
import { requireWorkspace } from "./access.ts"
import { htmlToText, sanitizeHtml, textToHtml } from "./html.ts"
import { requireRecordExists } from "./lookup.ts"
import { ACTIVITY_SELECT, activityItem, type ActivityRow } from "./serialize.ts"
import { all, get, run } from "./sql.ts"
import { decodeInput, pageLimit } from "./validate.ts"
import { emit, insertComment, touchRecord } from "./writes.ts"

export const ListCommentsInput = openStruct({
  workspaceId: Schema.String,
  recordId: Schema.String,
  skip: Schema.optional(Skip),
  limit: Schema.optional(Limit)
})
export const CreateCommentInput = openStruct({
  workspaceId: Schema.String,
  recordId: Schema.String,
  html: Schema.optional(Schema.String),
  text: Schema.optional(Schema.String),
  parentId: Schema.optional(Schema.String)
})
export const UpdateCommentInput = openStruct({
  workspaceId: Schema.String,
  commentId: Schema.String,
  html: Schema.optional(Schema.String),
  text: Schema.optional(Schema.String)
})
export const DeleteCommentInput = openStruct({ workspaceId: Schema.String, commentId: Schema.String })

/** HTML and text of a comment body: sanitized HTML wins, else the text as paragraphs. */
const bodyOf = (input: { html?: string | undefined; text?: string | undefined }) => {
  if (input.html !== undefined) {
    const html = sanitizeHtml(input.html)
    return { html, text: input.text ?? htmlToText(html) }
  }
  if (input.text !== undefined) return { html: textToHtml(input.text), text: input.text }
  throw badRequest("A comment needs html or text", [{ path: ["html"], message: "is missing" }])
}

const commentItem = (ctx: EmulatorContext, id: string) => {
  const row = get<ActivityRow>(ctx.db, `${ACTIVITY_SELECT} WHERE a.id = ?`, id)!
  return { ...activityItem(row), recordId: row.record_id }
}

const requireComment = (ctx: EmulatorContext, workspaceId: string, commentId: string) => {
  const row = get<{ id: string; record_id: string; user_id: string }>(
    ctx.db,
    "SELECT id, record_id, user_id FROM activity WHERE id = ? AND workspace_id = ? AND kind = 'COMMENT' AND deleted_at IS NULL",
    commentId,
    workspaceId
  )
  if (row === undefined) throw notFound("Comment")
  return row
}

const listComments = (ctx: EmulatorContext, principal: Principal, body: Record<string, unknown>) => {
  const input = decodeInput(ListCommentsInput, body)
  const ws = requireWorkspace(ctx, principal, input.workspaceId, "read")
  requireRecordExists(ctx, ws.id, input.recordId)
  const limit = pageLimit(input.limit, LIST_ACTIVITY_DEFAULT_LIMIT, PAGE_MAX_LIMIT)
  const rows = all<ActivityRow>(
    ctx.db,
    `${ACTIVITY_SELECT} WHERE a.record_id = +? AND a.kind = 'COMMENT' AND a.deleted_at IS NULL
      ORDER BY a.created_at DESC, a.id DESC LIMIT +? OFFSET +?`,
    input.recordId,
    limit,
    input.skip ?? PAGE_DEFAULT_SKIP
  )
  const total = get<{ n: number }>(
    ctx.db,
    "SELECT count(*) AS n FROM activity WHERE record_id = ? AND kind = 'COMMENT' AND deleted_at IS NULL",
    input.recordId
  )!.n
  return { items: rows.map(activityItem), totalCount: total }
}

const createComment = (ctx: EmulatorContext, principal: Principal, body: Record<string, unknown>) => {
  const input = decodeInput(CreateCommentInput, body)
  const ws = requireWorkspace(ctx, principal, input.workspaceId, "comment")
  requireRecordExists(ctx, ws.id, input.recordId)
  const content = bodyOf(input)
  const now = ctx.clock.iso()
  const id = ctx.db.transaction(() => {
    const commentId = insertComment(ctx, {
      workspaceId: ws.id,
      recordId: input.recordId,
      userId: principal.userId,
      html: content.html,
      text: content.text,
      parentId: input.parentId ?? null,
      at: now
    })
    // UPDATED_AT_ON_EVERY_CHANGE: the alt variant's reading leaves the record's updatedAt alone.
    if (ctx.variant !== "alt") touchRecord(ctx, input.recordId, now)
    return commentId
  })()
  const item = commentItem(ctx, id)
  emit(ctx, "COMMENT_CREATED", ws.id, null, item)
  return item
}

const updateComment = (ctx: EmulatorContext, principal: Principal, body: Record<string, unknown>) => {
  const input = decodeInput(UpdateCommentInput, body)
  const ws = requireWorkspace(ctx, principal, input.workspaceId, "comment")
  const row = requireComment(ctx, ws.id, input.commentId)
  if (row.user_id !== principal.userId) throw forbidden("Only the author can edit a comment")
  const content = bodyOf(input)
  const before = commentItem(ctx, row.id)
  const now = ctx.clock.iso()
  run(ctx.db, "UPDATE activity SET html = ?, text = ?, updated_at = ? WHERE id = ?", content.html, content.text, now, row.id)
  touchRecord(ctx, row.record_id, now)
  const after = commentItem(ctx, row.id)
  emit(ctx, "COMMENT_UPDATED", ws.id, before, after)
  return after
}

const deleteComment = (ctx: EmulatorContext, principal: Principal, body: Record<string, unknown>) => {
  const input = decodeInput(DeleteCommentInput, body)
  const ws = requireWorkspace(ctx, principal, input.workspaceId, "comment")
  const row = requireComment(ctx, ws.id, input.commentId)
  if (row.user_id !== principal.userId && ws.level !== "OWNER" && ws.level !== "ADMIN") {
    throw forbidden("Only the author or an admin can delete a comment")
  }
  const before = commentItem(ctx, row.id)
  const now = ctx.clock.iso()
  run(ctx.db, "UPDATE activity SET deleted_at = ?, updated_at = ? WHERE id = ?", now, now, row.id)
  touchRecord(ctx, row.record_id, now)
  emit(ctx, "COMMENT_DELETED", ws.id, before, null)
  return { success: true as const }
}

export const commentOperations: ReadonlyArray<RestOperation> = [
  { name: "list-comments", write: false, handle: listComments, input: ListCommentsInput, family: "comments", summary: "A record's comments, newest first" },
  { name: "create-comment", write: true, handle: createComment, input: CreateCommentInput, family: "comments", summary: "Comments on a record (html sanitized, or text)" },
  { name: "update-comment", write: true, handle: updateComment, input: UpdateCommentInput, family: "comments", summary: "Edits one's own comment" },
  { name: "delete-comment", write: true, handle: deleteComment, input: DeleteCommentInput, family: "comments", summary: "Deletes a comment" }
]
