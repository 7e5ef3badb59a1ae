/**
 * REST `list-files` (R-REST-FILES-01..08, R-REST-PAGE-08): `{items, pageInfo: {totalItems,
 * hasNextPage}}`, default limit 50, larger limits capped silently at 100, order
 * FILE_ORDER, both statuses listed.
 */
import { Result, Schema } from "effect"
import { decodeUnknownEither } from "../../schema/decode.ts"
import { PAGE_DEFAULT_LIMIT, PAGE_DEFAULT_SKIP, PAGE_MAX_LIMIT, effectiveLimit } from "../../schema/limits.ts"
import { resolveWorkspace, workspaceLevel } from "../auth.ts"
import type { EmulatorContext, Principal, RestOperation } from "../context.ts"
import { all, get } from "../core/sql.ts"
import { badRequest, issuesOf, noAccess, notFound } from "../http.ts"
import { applyFileChurn } from "./file-churn.ts"

export const ListFilesInput = Schema.Struct({
  workspaceId: Schema.optional(Schema.String),
  // The `expected` texts are spelled out because the 400 issues repeat them
  // (`Expected a non-negative number, actual -1`).
  skip: Schema.optional(Schema.Int.check(Schema.isGreaterThanOrEqualTo(0, { expected: "a non-negative number" }))),
  limit: Schema.optional(Schema.Int.check(Schema.isGreaterThan(0, { expected: "a positive number" })))
})

/** LIST_FILES_WITHOUT_WORKSPACE, alt: the workspace is required. */
const AltListFilesInput = Schema.Struct({ ...ListFilesInput.fields, workspaceId: Schema.String })

interface ItemRow {
  id: string
  uid: string
  name: string
  size: number
  type: string
  extension: string
  status: "PENDING" | "CONFIRMED"
  shared: number
  created_at: string
  updated_at: string
  folder_id: string | null
  folder_name: string | null
  todo_id: string | null
  todo_title: string | null
  user_id: string | null
  first_name: string | null
  last_name: string | null
  email: string | null
}

const ITEM_COLUMNS = `
  f.id, f.uid, f.name, f.size, f.type, f.extension, f.status, f.shared, f.created_at, f.updated_at,
  f.folder_id, d.name AS folder_name, f.todo_id, r.title AS todo_title,
  f.user_id, u.first_name, u.last_name, u.email
  FROM files f
  LEFT JOIN folders d ON d.id = f.folder_id
  LEFT JOIN records r ON r.id = f.todo_id AND r.deleted_at IS NULL
  LEFT JOIN users u ON u.id = f.user_id`

/** A file item as list-files answers it; every key always present (R-REST-CALL-17). */
export const fileItem = (r: ItemRow) => ({
  id: r.id,
  uid: r.uid,
  name: r.name,
  size: r.size,
  type: r.type,
  extension: r.extension,
  status: r.status,
  shared: r.shared !== 0,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
  folder: r.folder_id === null ? null : { id: r.folder_id, name: r.folder_name ?? "" },
  todo: r.todo_id === null || r.todo_title === null ? null : { id: r.todo_id, title: r.todo_title },
  user:
    r.user_id === null
      ? null
      : {
          id: r.user_id,
          fullName: `${r.first_name ?? ""} ${r.last_name ?? ""}`.trim(),
          email: r.email ?? ""
        }
})

/**
 * The scope of a list: one workspace, or (LIST_FILES_WITHOUT_WORKSPACE) every workspace
 * the caller can see in the header's organization (all their organizations without
 * one), plus those organizations' organization-level files.
 */
const scopeOf = (
  ctx: EmulatorContext,
  principal: Principal,
  workspaceRef: string | undefined
): { where: string; args: Array<unknown> } => {
  if (workspaceRef !== undefined) {
    const workspace = resolveWorkspace(ctx, workspaceRef)
    if (workspace === null) throw notFound("Workspace")
    if (workspaceLevel(ctx, workspace.id, principal.userId) === null) {
      throw noAccess("The token has no access to this workspace")
    }
    return { where: "f.workspace_id = ?", args: [workspace.id] }
  }
  const orgs = `SELECT org_id FROM org_members WHERE user_id = ?${principal.orgId === null ? "" : " AND org_id = ?"}`
  const orgArgs = principal.orgId === null ? [principal.userId] : [principal.userId, principal.orgId]
  return {
    where: `f.org_id IN (${orgs}) AND (
      f.workspace_id IS NULL
      OR f.workspace_id IN (SELECT workspace_id FROM workspace_members WHERE user_id = ?)
      OR f.org_id IN (SELECT org_id FROM org_members WHERE user_id = ? AND level IN ('OWNER', 'ADMIN')))`,
    args: [...orgArgs, principal.userId, principal.userId]
  }
}

export const listFilesPage = (ctx: EmulatorContext, principal: Principal, body: Record<string, unknown>) => {
  const decoded =
    ctx.variant === "alt"
      ? decodeUnknownEither(AltListFilesInput)(body)
      : decodeUnknownEither(ListFilesInput)(body)
  if (Result.isFailure(decoded)) throw badRequest("Invalid list-files input", issuesOf(decoded.failure))
  const input = decoded.success
  const skip = input.skip ?? PAGE_DEFAULT_SKIP
  const limit = effectiveLimit(input.limit, PAGE_DEFAULT_LIMIT, PAGE_MAX_LIMIT)
  const scope = scopeOf(ctx, principal, input.workspaceId)
  const total = get<{ n: number }>(ctx.db, `SELECT count(*) AS n FROM files f WHERE ${scope.where}`, ...scope.args)?.n ?? 0
  const order = ctx.variant === "alt" ? "f.created_at DESC, f.id DESC" : "f.created_at ASC, f.id ASC"
  const rows = all<ItemRow>(
    ctx.db,
    // FILE_ORDER: oldest first; the alt variant's reading, newest first.
    `SELECT ${ITEM_COLUMNS} WHERE ${scope.where}
      ORDER BY ${order} LIMIT ? OFFSET ?`,
    ...scope.args,
    limit,
    skip
  )
  applyFileChurn(ctx, scope, order)
  return {
    items: rows.map(fileItem),
    pageInfo: { totalItems: total, hasNextPage: skip + rows.length < total }
  }
}

export const listFilesOperation: RestOperation = {
  name: "list-files",
  write: false,
  handle: listFilesPage,
  input: ListFilesInput,
  summary: "Files of a workspace, paged: {items, pageInfo: {totalItems, hasNextPage}}",
  family: "files"
}
