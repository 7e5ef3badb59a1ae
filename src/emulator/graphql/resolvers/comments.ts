/**
 * Comments (R-COMMENT-01..09) and file custom fields (R-CUSTOMFIELD-01..03). A comment
 * is a row of the core's activity table (kind COMMENT), so list-record-activity returns
 * it and the record's commentCount counts it; attachment elements are parsed only with
 * `tiptap: true` and only CONFIRMED files attach (R-FILE-STATUS-08).
 */
import { parseAttachments } from "../../../schema/comments.ts"
import type { EmulatorContext } from "../../context.ts"
import { ACTIVITY_SELECT, activityItem, recordDetail, type ActivityRow } from "../../core/serialize.ts"
import { getFileById, getFileByUid, type FileRow } from "../../uploads/files.ts"
import { atLeast, requireWorkspace, type WorkspaceScope } from "../access.ts"
import { badInput, forbidden, notFound } from "../errors.ts"
import { fileModel, userById } from "../models.ts"
import type { GqlContext } from "../request.ts"
import { exec, many, one } from "../sql.ts"

type Category = "TODO" | "DISCUSSION" | "STATUS_UPDATE"

interface CommentSql {
  readonly id: string
  readonly workspace_id: string
  readonly record_id: string | null
  readonly category: Category
  readonly category_id: string | null
  readonly parent_id: string | null
  readonly html: string | null
  readonly text: string | null
  readonly user_id: string | null
  readonly created_at: string
  readonly updated_at: string
}

const commentById = (ctx: EmulatorContext, id: string): CommentSql | undefined =>
  one<CommentSql>(
    ctx.db,
    "SELECT * FROM activity WHERE id = ? AND kind = 'COMMENT' AND deleted_at IS NULL",
    id
  )

const attachedFiles = (ctx: EmulatorContext, commentId: string): Array<FileRow> =>
  many<{ file_id: string }>(ctx.db, "SELECT file_id FROM comment_files WHERE comment_id = ? ORDER BY position", commentId)
    .map((r) => getFileById(ctx.db, r.file_id))
    .filter((f): f is FileRow => f !== null)

/** The comment as GraphQL returns it. */
const commentModel = (ctx: EmulatorContext, row: CommentSql) => ({
  id: row.id,
  html: row.html ?? "",
  text: row.text ?? "",
  category: row.category,
  categoryId: row.category_id ?? "",
  parentId: row.parent_id,
  createdAt: row.created_at,
  updatedAt: row.updated_at,
  user: () => (row.user_id === null ? null : userById(ctx, row.user_id)),
  files: () => attachedFiles(ctx, row.id).map((f) => fileModel(ctx, f))
})

/**
 * The comment as webhook deliveries carry it: the activity item the REST comment
 * operations announce (so both interfaces send one shape), plus the GraphQL fields and
 * the attached files (related rows expanded).
 */
export const commentJson = (ctx: EmulatorContext, row: CommentSql) => {
  const item = one<ActivityRow>(ctx.db, `${ACTIVITY_SELECT} WHERE a.id = ?`, row.id)
  return {
    ...(item === undefined ? {} : activityItem(item)),
    recordId: row.record_id,
    text: row.text ?? "",
    category: row.category,
    categoryId: row.category_id,
    parentId: row.parent_id,
    updatedAt: row.updated_at,
    files: attachedFiles(ctx, row.id).map((f) => ({
      id: f.id,
      uid: f.uid,
      name: f.name,
      size: f.size,
      type: f.type,
      extension: f.extension
    }))
  }
}

/** The live record and the caller's scope in its workspace. */
const recordScope = (g: GqlContext, recordId: string): { scope: WorkspaceScope; recordId: string } => {
  const row = one<{ id: string; workspace_id: string }>(
    g.ctx.db,
    "SELECT id, workspace_id FROM records WHERE id = ? AND deleted_at IS NULL",
    recordId
  )
  if (row === undefined) throw notFound("Record")
  let scope: WorkspaceScope
  try {
    scope = requireWorkspace(g, row.workspace_id)
  } catch (e) {
    // A record in a workspace the caller cannot see does not exist for them.
    if ((e as { extensions?: { code?: string } }).extensions?.code === "PROJECT_NOT_FOUND") throw notFound("Record")
    throw e
  }
  return { scope, recordId: row.id }
}

/** Files of the attachment elements: known, CONFIRMED, and of the comment's organization. */
const attachmentFiles = (g: GqlContext, html: string, orgId: string): Array<FileRow> => {
  const files: Array<FileRow> = []
  for (const a of parseAttachments(html)) {
    const file = getFileByUid(g.ctx.db, a.uid)
    const usable = file !== null && file.orgId === orgId && file.status === "CONFIRMED"
    // GRAPHQL_COMMENTS: the alt variant leaves an unusable attachment out instead of refusing.
    if (!usable && g.ctx.variant === "alt") continue
    if (file === null || file.orgId !== orgId) throw badInput(`Attached file ${a.uid} does not exist`)
    if (file.status !== "CONFIRMED") throw badInput(`Attached file ${a.uid} is not CONFIRMED and cannot be attached`)
    if (!files.some((f) => f.id === file.id)) files.push(file)
  }
  return files
}

const linkFiles = (ctx: EmulatorContext, commentId: string, files: ReadonlyArray<FileRow>) => {
  exec(ctx.db, "DELETE FROM comment_files WHERE comment_id = ?", commentId)
  files.forEach((f, i) => exec(ctx.db, "INSERT INTO comment_files (comment_id, file_id, position) VALUES (?, ?, ?)", commentId, f.id, i))
}

interface CreateCommentArgs {
  readonly input: {
    readonly html: string
    readonly text: string
    readonly category: Category
    readonly categoryId: string
    readonly tiptap?: boolean | null
    readonly parentId?: string | null
  }
}

interface UpdateCommentArgs {
  readonly input: { readonly id: string; readonly html: string; readonly text: string; readonly tiptap?: boolean | null }
}

export const commentMutations = {
  createComment: (_: unknown, args: CreateCommentArgs, g: GqlContext) => {
    const input = args.input
    let scope: WorkspaceScope
    let recordId: string | null = null
    if (input.category === "TODO") {
      const found = recordScope(g, input.categoryId)
      scope = found.scope
      recordId = found.recordId
    } else {
      // Discussions and status updates live in the workspace of the workspace header
      // (assumptions.ts COMMENT_CATEGORIES).
      scope = requireWorkspace(g, null)
    }
    if (!atLeast(scope.level, "COMMENT_ONLY")) throw forbidden("Your access level cannot comment")
    const parentId = input.parentId ?? null
    if (parentId !== null) {
      const parent = commentById(g.ctx, parentId)
      if (parent === undefined || parent.category_id !== input.categoryId || parent.category !== input.category) {
        throw badInput("The parent comment does not exist on this entity")
      }
    }
    const files = input.tiptap === true ? attachmentFiles(g, input.html, scope.org.id) : []
    const id = g.ctx.ids.id()
    const now = g.ctx.clock.iso()
    g.ctx.db.transaction(() => {
      exec(
        g.ctx.db,
        `INSERT INTO activity (id, workspace_id, record_id, kind, category, category_id, parent_id, html, text, user_id, created_at, updated_at)
         VALUES (?, ?, ?, 'COMMENT', ?, ?, ?, ?, ?, ?, ?, ?)`,
        id,
        scope.workspace.id,
        recordId,
        input.category,
        input.categoryId,
        parentId,
        input.html,
        input.text,
        g.principal.userId,
        now,
        now
      )
      linkFiles(g.ctx, id, files)
      // A comment changes the record's commentCount: the record changed.
      if (recordId !== null) exec(g.ctx.db, "UPDATE records SET updated_at = ? WHERE id = ?", now, recordId)
    })()
    const row = commentById(g.ctx, id)!
    g.ctx.events.emit({ event: "COMMENT_CREATED", workspaceId: scope.workspace.id, previousValue: null, currentValue: commentJson(g.ctx, row) })
    return commentModel(g.ctx, row)
  },

  updateComment: (_: unknown, args: UpdateCommentArgs, g: GqlContext) => {
    const before = commentById(g.ctx, args.input.id)
    if (before === undefined) throw notFound("Comment")
    const scope = requireWorkspace(g, before.workspace_id)
    if (before.user_id !== g.principal.userId) throw forbidden("Only the author edits a comment")
    const previous = commentJson(g.ctx, before)
    const files = args.input.tiptap === true ? attachmentFiles(g, args.input.html, scope.org.id) : []
    g.ctx.db.transaction(() => {
      const now = g.ctx.clock.iso()
      exec(g.ctx.db, "UPDATE activity SET html = ?, text = ?, updated_at = ? WHERE id = ?", args.input.html, args.input.text, now, before.id)
      linkFiles(g.ctx, before.id, files)
      if (before.record_id !== null) exec(g.ctx.db, "UPDATE records SET updated_at = ? WHERE id = ?", now, before.record_id)
    })()
    const after = commentById(g.ctx, before.id)!
    g.ctx.events.emit({ event: "COMMENT_UPDATED", workspaceId: scope.workspace.id, previousValue: previous, currentValue: commentJson(g.ctx, after) })
    return commentModel(g.ctx, after)
  },

  deleteComment: (_: unknown, args: { id: string }, g: GqlContext) => {
    const before = commentById(g.ctx, args.id)
    if (before === undefined) throw notFound("Comment")
    const scope = requireWorkspace(g, before.workspace_id)
    if (before.user_id !== g.principal.userId && !atLeast(scope.level, "ADMIN")) {
      throw forbidden("Only the author or an admin deletes a comment")
    }
    const previous = commentJson(g.ctx, before)
    const now = g.ctx.clock.iso()
    exec(g.ctx.db, "UPDATE activity SET deleted_at = ?, updated_at = ? WHERE id = ?", now, now, before.id)
    if (before.record_id !== null) exec(g.ctx.db, "UPDATE records SET updated_at = ? WHERE id = ?", now, before.record_id)
    g.ctx.events.emit({ event: "COMMENT_DELETED", workspaceId: scope.workspace.id, previousValue: previous, currentValue: null })
    return true
  },

  createRecordCustomFieldFile: (
    _: unknown,
    args: { input: { todoId: string; customFieldId: string; fileUid: string } },
    g: GqlContext
  ) => {
    const { recordId, scope } = recordScope(g, args.input.todoId)
    if (!atLeast(scope.level, "CLIENT")) throw forbidden("Your access level cannot change records")
    const field = one<{ id: string; type: string }>(
      g.ctx.db,
      "SELECT id, type FROM custom_fields WHERE id = ? AND workspace_id = ? AND deleted_at IS NULL",
      args.input.customFieldId,
      scope.workspace.id
    )
    if (field === undefined) throw notFound("Custom field")
    if (field.type !== "FILE") throw badInput("The custom field is not a FILE field")
    const file = getFileByUid(g.ctx.db, args.input.fileUid)
    if (file === null || file.orgId !== scope.org.id) throw badInput(`File ${args.input.fileUid} does not exist`)
    if (file.status !== "CONFIRMED") throw badInput(`File ${args.input.fileUid} is not CONFIRMED and cannot be attached`)
    const before = recordDetail(g.ctx.db, recordId)
    const current = one<{ text: string | null }>(
      g.ctx.db,
      "SELECT text FROM record_custom_values WHERE record_id = ? AND custom_field_id = ?",
      recordId,
      field.id
    )
    let uids: Array<string> = []
    try {
      const parsed: unknown = JSON.parse(current?.text ?? "[]")
      if (Array.isArray(parsed)) uids = parsed.filter((u): u is string => typeof u === "string")
    } catch {
      uids = []
    }
    if (uids.includes(file.uid)) return true
    uids.push(file.uid)
    const now = g.ctx.clock.iso()
    g.ctx.db.transaction(() => {
      exec(
        g.ctx.db,
        `INSERT INTO record_custom_values (record_id, custom_field_id, text, updated_at) VALUES (?, ?, ?, ?)
         ON CONFLICT (record_id, custom_field_id) DO UPDATE SET text = excluded.text, updated_at = excluded.updated_at`,
        recordId,
        field.id,
        JSON.stringify(uids),
        now
      )
      exec(
        g.ctx.db,
        `INSERT INTO activity (id, workspace_id, record_id, kind, category, category_id, type, old_value, new_value, user_id, custom_field_id, created_at, updated_at)
         VALUES (?, ?, ?, 'ACTION', 'TODO', ?, 'UPDATE_CUSTOM_FIELD', ?, ?, ?, ?, ?, ?)`,
        g.ctx.ids.id(),
        scope.workspace.id,
        recordId,
        recordId,
        current?.text === undefined || current.text === null ? null : JSON.stringify(current.text),
        JSON.stringify(JSON.stringify(uids)),
        g.principal.userId,
        field.id,
        now,
        now
      )
      exec(g.ctx.db, "UPDATE records SET updated_at = ? WHERE id = ?", now, recordId)
    })()
    g.ctx.events.emit({
      event: "TODO_CUSTOM_FIELD_UPDATED",
      workspaceId: scope.workspace.id,
      previousValue: before ?? null,
      currentValue: recordDetail(g.ctx.db, recordId) ?? null
    })
    return true
  }
}

