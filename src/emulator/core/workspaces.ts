/** Workspace operations (assumptions.ts WORKSPACE_SHAPE); resource style `GET/POST /v1/workspaces`. */
import { Schema } from "effect"
import { CreateWorkspaceInput, ListWorkspacesInput } from "../../schema/inputs.ts"
import { openStruct } from "../../schema/open.ts"
import type { EmulatorContext, Principal, RestOperation } from "../context.ts"
import type { WorkspaceRow } from "../auth.ts"
import { forbidden, invalid } from "../http.ts"
import { accessibleWorkspaceIds, callerOrgId, callerOrgLevel, requireWorkspace } from "./access.ts"
import { all, get, run } from "./sql.ts"
import { decodeInput } from "./validate.ts"

export const workspaceJson = (w: WorkspaceRow) => ({
  id: w.id,
  slug: w.slug,
  name: w.name,
  organizationId: w.org_id,
  createdAt: w.created_at,
  updatedAt: w.updated_at
})

const WORKSPACE_COLUMNS = "id, slug, name, org_id, created_at, updated_at"

/** A slug from a name: lowercase ascii words joined by dashes, unique among workspaces. */
export const uniqueSlug = (ctx: EmulatorContext, base: string): string => {
  const root =
    base
      .normalize("NFKD")
      .replace(/[\u0300-\u036f]/g, "")
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, "-")
      .replace(/^-+|-+$/g, "")
      .slice(0, 48) || "workspace"
  let slug = root
  for (let n = 2; get(ctx.db, "SELECT 1 FROM workspaces WHERE slug = ?", slug) !== undefined; n++) slug = `${root}-${n}`
  return slug
}

/** Creates a workspace with a first list ("To do") and the creator as ADMIN member. */
export const insertWorkspace = (
  ctx: EmulatorContext,
  w: { orgId: string; name: string; slug: string; creatorId: string | null; at?: string; firstList?: string | null }
): WorkspaceRow => {
  const id = ctx.ids.id()
  const at = w.at ?? ctx.clock.iso()
  run(ctx.db, `INSERT INTO workspaces (${WORKSPACE_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?)`, id, w.slug, w.name, w.orgId, at, at)
  if (w.creatorId !== null) {
    run(
      ctx.db,
      "INSERT INTO workspace_members (workspace_id, user_id, level, created_at) VALUES (?, ?, 'ADMIN', ?)",
      id,
      w.creatorId,
      at
    )
  }
  if (w.firstList !== null) {
    run(
      ctx.db,
      "INSERT INTO lists (id, workspace_id, title, position, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)",
      ctx.ids.id(),
      id,
      w.firstList ?? "To do",
      65536,
      at,
      at
    )
  }
  return { id, slug: w.slug, name: w.name, org_id: w.orgId, created_at: at, updated_at: at }
}

const listWorkspaces = (ctx: EmulatorContext, principal: Principal, body: Record<string, unknown>) => {
  decodeInput(ListWorkspacesInput, body)
  const ids = accessibleWorkspaceIds(ctx, principal)
  const rows = all<WorkspaceRow>(
    ctx.db,
    `SELECT ${WORKSPACE_COLUMNS} FROM workspaces WHERE id IN (SELECT value FROM json_each(?)) ORDER BY created_at, id`,
    JSON.stringify(ids)
  )
  return { items: rows.map(workspaceJson), totalCount: rows.length }
}

const createWorkspace = (ctx: EmulatorContext, principal: Principal, body: Record<string, unknown>) => {
  const input = decodeInput(CreateWorkspaceInput, body)
  const orgId = callerOrgId(ctx, principal)
  const level = callerOrgLevel(ctx, principal, orgId)
  if (level !== "OWNER" && level !== "ADMIN" && level !== "MEMBER") throw forbidden(`Access level ${level} cannot create workspaces`)
  if (input.name.trim() === "") throw invalid("A workspace name is required")
  let slug: string
  if (input.slug !== undefined) {
    if (!/^[a-z0-9][a-z0-9-]*$/.test(input.slug)) throw invalid("A slug is lowercase letters, digits and dashes")
    if (get(ctx.db, "SELECT 1 FROM workspaces WHERE slug = ?", input.slug) !== undefined) {
      throw invalid("This slug is taken", "SLUG_TAKEN")
    }
    slug = input.slug
  } else {
    slug = uniqueSlug(ctx, input.name)
  }
  const row = ctx.db.transaction(() => insertWorkspace(ctx, { orgId, name: input.name, slug, creatorId: principal.userId }))()
  return workspaceJson(row)
}

export const GetWorkspaceInput = openStruct({ workspaceId: Schema.String })
export const UpdateWorkspaceInput = openStruct({ workspaceId: Schema.String, name: Schema.optional(Schema.String) })

const getWorkspace = (ctx: EmulatorContext, principal: Principal, body: Record<string, unknown>) => {
  const input = decodeInput(GetWorkspaceInput, body)
  const { level: _, ...ws } = requireWorkspace(ctx, principal, input.workspaceId, "read")
  return workspaceJson(ws)
}

const updateWorkspace = (ctx: EmulatorContext, principal: Principal, body: Record<string, unknown>) => {
  const input = decodeInput(UpdateWorkspaceInput, body)
  const ws = requireWorkspace(ctx, principal, input.workspaceId, "write")
  if (ws.level !== "OWNER" && ws.level !== "ADMIN") throw forbidden("Only workspace admins can rename a workspace")
  if (input.name !== undefined) run(ctx.db, "UPDATE workspaces SET name = ?, updated_at = ? WHERE id = ?", input.name, ctx.clock.iso(), ws.id)
  return workspaceJson(get<WorkspaceRow>(ctx.db, `SELECT ${WORKSPACE_COLUMNS} FROM workspaces WHERE id = ?`, ws.id)!)
}

export const workspaceOperations: ReadonlyArray<RestOperation> = [
  { name: "list-workspaces", write: false, handle: listWorkspaces, input: ListWorkspacesInput, family: "workspaces", summary: "Workspaces the caller reaches: { items, totalCount }" },
  { name: "get-workspace", write: false, handle: getWorkspace, input: GetWorkspaceInput, family: "workspaces", summary: "One workspace (id or slug)" },
  { name: "create-workspace", write: true, handle: createWorkspace, input: CreateWorkspaceInput, family: "workspaces", summary: "Creates a workspace with a first list" },
  { name: "update-workspace", write: true, handle: updateWorkspace, input: UpdateWorkspaceInput, family: "workspaces", summary: "Renames a workspace" }
]
