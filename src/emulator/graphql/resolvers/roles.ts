/**
 * Custom workspace roles (R-ROLE-01..05): flat Boolean toggles, scoped to one workspace.
 * A member's `files_disabled` flag (what uploads check for FILES_DISABLED_FOR_ROLE)
 * follows the file toggles of the member's role.
 */
import type { EmulatorContext } from "../../context.ts"
import { atLeast, requireWorkspace } from "../access.ts"
import { forbidden, gqlError } from "../errors.ts"
import type { GqlContext } from "../request.ts"
import { exec, many, one } from "../sql.ts"

/** Toggle fields of the GraphQL type and their columns; every toggle defaults to true. */
export const ROLE_TOGGLES = {
  isRecordsEnabled: "is_records_enabled",
  canCreateRecords: "can_create_records",
  canEditRecords: "can_edit_records",
  canDeleteRecords: "can_delete_records",
  isFilesEnabled: "is_files_enabled",
  canUploadFiles: "can_upload_files",
  isCommentsEnabled: "is_comments_enabled",
  canInviteUsers: "can_invite_users"
} as const
type Toggle = keyof typeof ROLE_TOGGLES

interface RoleSql {
  readonly id: string
  readonly workspace_id: string
  readonly name: string
  readonly created_at: string
  readonly updated_at: string
  readonly [column: string]: unknown
}

export const roleModel = (row: RoleSql) => {
  const out: Record<string, unknown> = {
    id: row.id,
    name: row.name,
    projectId: row.workspace_id,
    createdAt: row.created_at,
    updatedAt: row.updated_at
  }
  for (const [field, column] of Object.entries(ROLE_TOGGLES)) out[field] = row[column] === 1
  return out
}

export const roleById = (ctx: EmulatorContext, id: string): RoleSql | undefined =>
  one<RoleSql>(ctx.db, "SELECT * FROM workspace_roles WHERE id = ?", id)

const roleNotFound = () => gqlError("PROJECT_USER_ROLE_NOT_FOUND", "Role not found")

/** Uploads are off for a role without files or without uploading. */
export const roleDisablesFiles = (row: RoleSql | undefined): boolean =>
  row !== undefined && (row["is_files_enabled"] !== 1 || row["can_upload_files"] !== 1)

/** Re-derives `files_disabled` of every member holding the role. */
const syncMembers = (ctx: EmulatorContext, roleId: string) => {
  const row = roleById(ctx, roleId)
  exec(ctx.db, "UPDATE workspace_members SET files_disabled = ? WHERE role_id = ?", roleDisablesFiles(row) ? 1 : 0, roleId)
}

/** The role's workspace, where the caller must be OWNER or ADMIN to change roles. */
const manageable = (g: GqlContext, workspaceRef: string) => {
  const scope = requireWorkspace(g, workspaceRef)
  if (!atLeast(scope.level, "ADMIN")) throw forbidden("Only workspace owners and admins manage roles")
  return scope
}

type ToggleInput = { readonly [K in Toggle]?: boolean | null }

export const roleQueries = {
  workspaceUserRole: (_: unknown, args: { id: string }, g: GqlContext) => {
    const row = roleById(g.ctx, args.id)
    if (row === undefined) throw roleNotFound()
    try {
      requireWorkspace(g, row.workspace_id)
    } catch {
      throw roleNotFound()
    }
    return roleModel(row)
  },
  workspaceUserRoles: (_: unknown, args: { projectId?: string | null }, g: GqlContext) => {
    const scope = requireWorkspace(g, args.projectId)
    return many<RoleSql>(
      g.ctx.db,
      "SELECT * FROM workspace_roles WHERE workspace_id = ? ORDER BY created_at, id",
      scope.workspace.id
    ).map(roleModel)
  }
}

export const roleMutations = {
  createWorkspaceUserRole: (_: unknown, args: { input: ToggleInput & { projectId: string; name: string } }, g: GqlContext) => {
    const scope = manageable(g, args.input.projectId)
    const name = args.input.name.trim()
    if (name === "") throw gqlError("BAD_USER_INPUT", "name must not be empty")
    const id = g.ctx.ids.id()
    const now = g.ctx.clock.iso()
    // ROLE_OPERATIONS: an omitted toggle is on; in the alt variant's reading, off.
    const omitted = g.ctx.variant === "alt" ? 0 : 1
    const toggles = Object.entries(ROLE_TOGGLES).map(([field, column]) => {
      const given = args.input[field as Toggle]
      return { column, value: given === undefined || given === null ? omitted : given ? 1 : 0 }
    })
    exec(
      g.ctx.db,
      `INSERT INTO workspace_roles (id, workspace_id, name, ${toggles.map((t) => t.column).join(", ")}, created_at, updated_at)
       VALUES (?, ?, ?, ${toggles.map(() => "?").join(", ")}, ?, ?)`,
      id,
      scope.workspace.id,
      name,
      ...toggles.map((t) => t.value),
      now,
      now
    )
    return roleModel(roleById(g.ctx, id)!)
  },

  updateWorkspaceUserRole: (_: unknown, args: { input: ToggleInput & { id: string; name?: string | null } }, g: GqlContext) => {
    const row = roleById(g.ctx, args.input.id)
    if (row === undefined) throw roleNotFound()
    manageable(g, row.workspace_id)
    const sets: Array<string> = []
    const values: Array<unknown> = []
    if (typeof args.input.name === "string") {
      if (args.input.name.trim() === "") throw gqlError("BAD_USER_INPUT", "name must not be empty")
      sets.push("name = ?")
      values.push(args.input.name.trim())
    }
    for (const [field, column] of Object.entries(ROLE_TOGGLES)) {
      const value = args.input[field as Toggle]
      if (typeof value === "boolean") {
        sets.push(`${column} = ?`)
        values.push(value ? 1 : 0)
      }
    }
    sets.push("updated_at = ?")
    values.push(g.ctx.clock.iso())
    exec(g.ctx.db, `UPDATE workspace_roles SET ${sets.join(", ")} WHERE id = ?`, ...values, row.id)
    syncMembers(g.ctx, row.id)
    return roleModel(roleById(g.ctx, row.id)!)
  },

  deleteWorkspaceUserRole: (_: unknown, args: { id: string }, g: GqlContext) => {
    const row = roleById(g.ctx, args.id)
    if (row === undefined) throw roleNotFound()
    manageable(g, row.workspace_id)
    g.ctx.db.transaction(() => {
      exec(g.ctx.db, "UPDATE workspace_members SET role_id = NULL, files_disabled = 0 WHERE role_id = ?", row.id)
      exec(g.ctx.db, "DELETE FROM workspace_roles WHERE id = ?", row.id)
    })()
    return true
  }
}
