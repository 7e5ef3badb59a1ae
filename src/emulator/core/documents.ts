/**
 * Documents and saved views (assumptions.ts EXTRA_OPERATIONS). Their list operations have
 * the documented paging defaults: 20 for list-documents, 100 for list-saved-views
 * (R-REST-PAGE-12/13), both capped at 100.
 */
import { Schema } from "effect"
import { Limit, Skip } from "../../schema/inputs.ts"
import {
  LIST_DOCUMENTS_DEFAULT_LIMIT,
  LIST_SAVED_VIEWS_DEFAULT_LIMIT,
  PAGE_DEFAULT_SKIP,
  PAGE_MAX_LIMIT
} from "../../schema/limits.ts"
import { openStruct } from "../../schema/open.ts"
import type { EmulatorContext, Principal, RestOperation } from "../context.ts"
import { notFound } from "../http.ts"
import { accessibleWorkspaceIds, requireWorkspace } from "./access.ts"
import { sanitizeHtml } from "./html.ts"
import { all, get, run } from "./sql.ts"
import { decodeInput, pageLimit } from "./validate.ts"

export const ListPagedInput = openStruct({
  workspaceId: Schema.optional(Schema.String),
  skip: Schema.optional(Skip),
  limit: Schema.optional(Limit)
})
export const CreateDocumentInput = openStruct({
  workspaceId: Schema.String,
  title: Schema.String,
  html: Schema.optional(Schema.String)
})
export const GetDocumentInput = openStruct({ workspaceId: Schema.String, documentId: Schema.String })
export const CreateSavedViewInput = openStruct({
  workspaceId: Schema.String,
  name: Schema.String,
  config: Schema.optional(Schema.Unknown)
})

interface DocumentRow {
  id: string
  workspace_id: string
  title: string
  html: string
  created_at: string
  updated_at: string
}
const documentJson = (d: DocumentRow) => ({
  id: d.id,
  title: d.title,
  html: d.html,
  workspaceId: d.workspace_id,
  createdAt: d.created_at,
  updatedAt: d.updated_at
})

interface ViewRow {
  id: string
  workspace_id: string
  name: string
  config: string
  created_at: string
  updated_at: string
}
const viewJson = (v: ViewRow) => ({
  id: v.id,
  name: v.name,
  config: JSON.parse(v.config) as unknown,
  workspaceId: v.workspace_id,
  createdAt: v.created_at,
  updatedAt: v.updated_at
})

const scopeIds = (ctx: EmulatorContext, principal: Principal, workspaceId: string | undefined): string =>
  JSON.stringify(
    workspaceId === undefined ? accessibleWorkspaceIds(ctx, principal) : [requireWorkspace(ctx, principal, workspaceId, "read").id]
  )

const listDocuments = (ctx: EmulatorContext, principal: Principal, body: Record<string, unknown>) => {
  const input = decodeInput(ListPagedInput, body)
  const ids = scopeIds(ctx, principal, input.workspaceId)
  const rows = all<DocumentRow>(
    ctx.db,
    `SELECT id, workspace_id, title, html, created_at, updated_at FROM documents
      WHERE workspace_id IN (SELECT value FROM json_each(?)) AND deleted_at IS NULL
      ORDER BY created_at, id LIMIT +? OFFSET +?`,
    ids,
    pageLimit(input.limit, LIST_DOCUMENTS_DEFAULT_LIMIT, PAGE_MAX_LIMIT),
    input.skip ?? PAGE_DEFAULT_SKIP
  )
  const total = get<{ n: number }>(
    ctx.db,
    "SELECT count(*) AS n FROM documents WHERE workspace_id IN (SELECT value FROM json_each(?)) AND deleted_at IS NULL",
    ids
  )!.n
  return { items: rows.map(documentJson), totalCount: total }
}

const createDocument = (ctx: EmulatorContext, principal: Principal, body: Record<string, unknown>) => {
  const input = decodeInput(CreateDocumentInput, body)
  const ws = requireWorkspace(ctx, principal, input.workspaceId, "write")
  const id = ctx.ids.id()
  const now = ctx.clock.iso()
  run(
    ctx.db,
    "INSERT INTO documents (id, workspace_id, title, html, created_by, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
    id,
    ws.id,
    input.title,
    sanitizeHtml(input.html ?? ""),
    principal.userId,
    now,
    now
  )
  return documentJson(get<DocumentRow>(ctx.db, "SELECT id, workspace_id, title, html, created_at, updated_at FROM documents WHERE id = ?", id)!)
}

const getDocument = (ctx: EmulatorContext, principal: Principal, body: Record<string, unknown>) => {
  const input = decodeInput(GetDocumentInput, body)
  const ws = requireWorkspace(ctx, principal, input.workspaceId, "read")
  const row = get<DocumentRow>(
    ctx.db,
    "SELECT id, workspace_id, title, html, created_at, updated_at FROM documents WHERE id = ? AND workspace_id = ? AND deleted_at IS NULL",
    input.documentId,
    ws.id
  )
  if (row === undefined) throw notFound("Document")
  return documentJson(row)
}

const listSavedViews = (ctx: EmulatorContext, principal: Principal, body: Record<string, unknown>) => {
  const input = decodeInput(ListPagedInput, body)
  const ids = scopeIds(ctx, principal, input.workspaceId)
  const rows = all<ViewRow>(
    ctx.db,
    `SELECT id, workspace_id, name, config, created_at, updated_at FROM saved_views
      WHERE workspace_id IN (SELECT value FROM json_each(?)) ORDER BY created_at, id LIMIT +? OFFSET +?`,
    ids,
    pageLimit(input.limit, LIST_SAVED_VIEWS_DEFAULT_LIMIT, PAGE_MAX_LIMIT),
    input.skip ?? PAGE_DEFAULT_SKIP
  )
  const total = get<{ n: number }>(ctx.db, "SELECT count(*) AS n FROM saved_views WHERE workspace_id IN (SELECT value FROM json_each(?))", ids)!.n
  return { items: rows.map(viewJson), totalCount: total }
}

const createSavedView = (ctx: EmulatorContext, principal: Principal, body: Record<string, unknown>) => {
  const input = decodeInput(CreateSavedViewInput, body)
  const ws = requireWorkspace(ctx, principal, input.workspaceId, "write")
  const id = ctx.ids.id()
  const now = ctx.clock.iso()
  run(
    ctx.db,
    "INSERT INTO saved_views (id, workspace_id, name, config, created_by, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
    id,
    ws.id,
    input.name,
    JSON.stringify(input.config ?? {}),
    principal.userId,
    now,
    now
  )
  return viewJson(get<ViewRow>(ctx.db, "SELECT id, workspace_id, name, config, created_at, updated_at FROM saved_views WHERE id = ?", id)!)
}

export const documentOperations: ReadonlyArray<RestOperation> = [
  { name: "list-documents", write: false, handle: listDocuments, input: ListPagedInput, family: "documents", summary: "Documents, paged (default 20)" },
  { name: "create-document", write: true, handle: createDocument, input: CreateDocumentInput, family: "documents", summary: "Creates a document (html sanitized)" },
  { name: "get-document", write: false, handle: getDocument, input: GetDocumentInput, family: "documents", summary: "One document" },
  { name: "list-saved-views", write: false, handle: listSavedViews, input: ListPagedInput, family: "saved views", summary: "Saved views, paged (default 100)" },
  { name: "create-saved-view", write: true, handle: createSavedView, input: CreateSavedViewInput, family: "saved views", summary: "Saves a view" }
]
