/**
 * The remaining operation families of the REST surface (R-REST-CALL-02): record
 * dependencies, and read-only listings of reports, charts, dashboards, forms, form fields
 * and automations. Shapes are emulator choices (assumptions.ts EXTRA_OPERATIONS).
 */
import { Schema } from "effect"
import { openStruct } from "../../schema/open.ts"
import type { EmulatorContext, Principal, RestOperation } from "../context.ts"
import { invalid, notFound } from "../http.ts"
import { accessibleWorkspaceIds, requireWorkspace } from "./access.ts"
import { checklistOperations } from "./checklists.ts"
import { commentOperations } from "./comments.ts"
import { customFieldOperations } from "./custom-fields.ts"
import { documentOperations } from "./documents.ts"
import { requireRecordExists } from "./lookup.ts"
import { all, get, run } from "./sql.ts"
import { decodeInput } from "./validate.ts"

export const RecordDependenciesInput = openStruct({ workspaceId: Schema.String, recordId: Schema.String })
export const CreateRecordDependencyInput = openStruct({
  workspaceId: Schema.String,
  recordId: Schema.String,
  dependsOnId: Schema.String,
  type: Schema.optional(Schema.Literals(["BLOCKED_BY", "RELATES_TO"]))
})
export const DeleteRecordDependencyInput = openStruct({ workspaceId: Schema.String, dependencyId: Schema.String })
export const WorkspaceScopeInput = openStruct({ workspaceId: Schema.optional(Schema.String) })

interface DependencyRow {
  id: string
  record_id: string
  depends_on_id: string
  type: string
  created_at: string
}
const dependencyJson = (d: DependencyRow) => ({
  id: d.id,
  recordId: d.record_id,
  dependsOnId: d.depends_on_id,
  type: d.type,
  createdAt: d.created_at
})

const listRecordDependencies = (ctx: EmulatorContext, principal: Principal, body: Record<string, unknown>) => {
  const input = decodeInput(RecordDependenciesInput, body)
  const ws = requireWorkspace(ctx, principal, input.workspaceId, "read")
  requireRecordExists(ctx, ws.id, input.recordId)
  const rows = all<DependencyRow>(
    ctx.db,
    `SELECT d.id, d.record_id, d.depends_on_id, d.type, d.created_at FROM record_dependencies d
       JOIN records r ON r.id = d.depends_on_id AND r.deleted_at IS NULL
      WHERE d.record_id = +? ORDER BY d.created_at, d.id`,
    input.recordId
  )
  return { items: rows.map(dependencyJson), totalCount: rows.length }
}

const createRecordDependency = (ctx: EmulatorContext, principal: Principal, body: Record<string, unknown>) => {
  const input = decodeInput(CreateRecordDependencyInput, body)
  const ws = requireWorkspace(ctx, principal, input.workspaceId, "write")
  requireRecordExists(ctx, ws.id, input.recordId)
  requireRecordExists(ctx, ws.id, input.dependsOnId)
  if (input.recordId === input.dependsOnId) throw invalid("A record cannot depend on itself")
  const id = ctx.ids.id()
  const now = ctx.clock.iso()
  run(
    ctx.db,
    "INSERT INTO record_dependencies (id, workspace_id, record_id, depends_on_id, type, created_at) VALUES (?, ?, ?, ?, ?, ?)",
    id,
    ws.id,
    input.recordId,
    input.dependsOnId,
    input.type ?? "BLOCKED_BY",
    now
  )
  return dependencyJson(get<DependencyRow>(ctx.db, "SELECT id, record_id, depends_on_id, type, created_at FROM record_dependencies WHERE id = ?", id)!)
}

const deleteRecordDependency = (ctx: EmulatorContext, principal: Principal, body: Record<string, unknown>) => {
  const input = decodeInput(DeleteRecordDependencyInput, body)
  const ws = requireWorkspace(ctx, principal, input.workspaceId, "write")
  const result = run(ctx.db, "DELETE FROM record_dependencies WHERE id = ? AND workspace_id = ?", input.dependencyId, ws.id)
  if (result.changes === 0) throw notFound("Dependency")
  return { success: true as const }
}

const scopeIds = (ctx: EmulatorContext, principal: Principal, workspaceId: string | undefined): Array<string> =>
  workspaceId === undefined ? accessibleWorkspaceIds(ctx, principal) : [requireWorkspace(ctx, principal, workspaceId, "read").id]

/** A family the emulator keeps no data for: a valid, empty listing. */
const emptyListing = (name: string, family: string): RestOperation => ({
  name,
  write: false,
  input: WorkspaceScopeInput,
  family,
  summary: `${family}: always empty in the emulator`,
  handle: (ctx, principal, body) => {
    const input = decodeInput(WorkspaceScopeInput, body)
    scopeIds(ctx, principal, input.workspaceId)
    return { items: [], totalCount: 0 }
  }
})

/** Forms live in the uploads area's `forms` table (anonymous uploads use them). */
const listForms = (ctx: EmulatorContext, principal: Principal, body: Record<string, unknown>) => {
  const input = decodeInput(WorkspaceScopeInput, body)
  const ids = scopeIds(ctx, principal, input.workspaceId)
  const hasTable = get(ctx.db, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'forms'") !== undefined
  if (!hasTable) return { items: [], totalCount: 0 }
  const rows = all<{ id: string; workspace_id: string; title: string; active: number }>(
    ctx.db,
    "SELECT id, workspace_id, title, active FROM forms WHERE workspace_id IN (SELECT value FROM json_each(?)) ORDER BY id",
    JSON.stringify(ids)
  )
  return {
    items: rows.map((f) => ({ id: f.id, title: f.title, active: f.active === 1, workspaceId: f.workspace_id })),
    totalCount: rows.length
  }
}

/**
 * The caller's webhooks, read-only (managing them is GraphQL); the secret is never read
 * back (R-WEBHOOK-04). They live in the webhooks area's `webhooks` table.
 */
const listWebhooks = (ctx: EmulatorContext, principal: Principal, body: Record<string, unknown>) => {
  decodeInput(WorkspaceScopeInput, body)
  const hasTable = get(ctx.db, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'webhooks'") !== undefined
  if (!hasTable) return { items: [], totalCount: 0 }
  const rows = all<{
    id: string
    uid: string
    name: string | null
    url: string
    status: string
    enabled: number
    events: string
    project_ids: string
    created_at: string
    updated_at: string
  }>(
    ctx.db,
    `SELECT id, uid, name, url, status, enabled, events, project_ids, created_at, updated_at
       FROM webhooks WHERE user_id = +? ORDER BY created_at, id`,
    principal.userId
  )
  const items = rows.map((w) => {
    const events = JSON.parse(w.events) as Array<string>
    const projectIds = JSON.parse(w.project_ids) as Array<string>
    return {
      id: w.id,
      uid: w.uid,
      name: w.name,
      url: w.url,
      secret: null,
      status: w.status,
      events,
      projectIds,
      enabled: w.enabled === 1,
      metadata: { events, projectIds },
      createdAt: w.created_at,
      updatedAt: w.updated_at
    }
  })
  return { items, totalCount: items.length }
}

export const extraOperations: ReadonlyArray<RestOperation> = [
  ...checklistOperations,
  ...commentOperations,
  ...customFieldOperations,
  ...documentOperations,
  { name: "list-record-dependencies", write: false, handle: listRecordDependencies, input: RecordDependenciesInput, family: "dependencies", summary: "Records a record depends on" },
  { name: "create-record-dependency", write: true, handle: createRecordDependency, input: CreateRecordDependencyInput, family: "dependencies", summary: "Adds a dependency between two records" },
  { name: "delete-record-dependency", write: true, handle: deleteRecordDependency, input: DeleteRecordDependencyInput, family: "dependencies", summary: "Removes a dependency" },
  { name: "list-forms", write: false, handle: listForms, input: WorkspaceScopeInput, family: "forms", summary: "Forms of the workspaces" },
  { name: "list-webhooks", write: false, handle: listWebhooks, input: WorkspaceScopeInput, family: "webhooks", summary: "The caller's webhooks (secret null); managed through GraphQL" },
  emptyListing("list-form-fields", "form fields"),
  emptyListing("list-reports", "reports"),
  emptyListing("list-charts", "charts"),
  emptyListing("list-dashboards", "dashboards"),
  emptyListing("list-automations", "automations")
]
