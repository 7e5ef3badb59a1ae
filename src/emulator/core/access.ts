/**
 * Who may see and change what. A user reaches a workspace through a membership row, or
 * as organization OWNER/ADMIN. VIEW_ONLY and COMMENT_ONLY users cannot write records;
 * COMMENT_ONLY may comment (assumptions.ts AUTH_401_VS_403).
 *
 * Every request runs these lookups, so they are scalar subqueries, not joins: a JOIN or an
 * EXISTS with bound parameters is planned again on every run (sql.ts), 10 to 40 µs here,
 * where the same lookups as scalar subqueries cost 2 to 4.
 */
import type { AccessLevel, EmulatorContext, Principal } from "../context.ts"
import { orgLevel, type WorkspaceRow } from "../auth.ts"
import { forbidden, noAccess, notFound } from "../http.ts"
import { all, get } from "./sql.ts"
import { untilWrite } from "./until-write.ts"

export type Need = "read" | "comment" | "write"

const allows = (level: AccessLevel, need: Need): boolean => {
  if (need === "read") return true
  if (need === "comment") return level !== "VIEW_ONLY"
  return level !== "VIEW_ONLY" && level !== "COMMENT_ONLY"
}

/** Organizations the caller acts in: the one named by the header, else all of theirs. */
export const callerOrgIds = (ctx: EmulatorContext, principal: Principal): Array<string> =>
  principal.orgId !== null
    ? [principal.orgId]
    : all<{ org_id: string }>(
        ctx.db,
        "SELECT org_id FROM org_members WHERE user_id = +? ORDER BY created_at, org_id",
        principal.userId
      ).map((r) => r.org_id)

/** The organization for an org-level write (create-workspace): the header's, else the first. */
export const callerOrgId = (ctx: EmulatorContext, principal: Principal): string => {
  const first = callerOrgIds(ctx, principal)[0]
  if (first === undefined) throw forbidden("The token's user belongs to no organization")
  return first
}

/** Ids of the workspaces the caller can read, oldest first. */
export const accessibleWorkspaceIds = (ctx: EmulatorContext, principal: Principal): Array<string> => {
  const rows = all<{ id: string; org_id: string }>(
    ctx.db,
    `SELECT w.id, w.org_id FROM workspaces w
      WHERE (SELECT o.banned FROM organizations o WHERE o.id = w.org_id) = 0
        AND ((SELECT 1 FROM workspace_members wm WHERE wm.workspace_id = w.id AND wm.user_id = ?) IS NOT NULL
          OR (SELECT om.level FROM org_members om WHERE om.org_id = w.org_id AND om.user_id = ?) IN ('OWNER', 'ADMIN'))
      ORDER BY w.created_at, w.id`,
    principal.userId,
    principal.userId
  )
  if (principal.orgId === null) return rows.map((r) => r.id)
  return rows.filter((r) => r.org_id === principal.orgId).map((r) => r.id)
}

type WorkspaceAccessRow = WorkspaceRow & { member_level: AccessLevel | null; org_level: AccessLevel | null; banned: number }

/** requireWorkspace's row by user and workspace reference, until the next write. */
const workspaceAccess = untilWrite<WorkspaceAccessRow | undefined>()

/**
 * A workspace named by id or slug that the caller may use for `need`.
 * 422 NOT_FOUND when it does not exist (or is outside the organization acted in);
 * 403 when the caller has no access or too low a level.
 */
export const requireWorkspace = (
  ctx: EmulatorContext,
  principal: Principal,
  ref: string,
  need: Need
): WorkspaceRow & { level: AccessLevel } => {
  // One query: the workspace (by id or slug), the caller's levels and the org's suspension.
  const row = workspaceAccess(ctx.db, `${principal.userId}\u0000${ref}`, () => get<WorkspaceAccessRow>(
    ctx.db,
    `SELECT w.id, w.slug, w.name, w.org_id, w.created_at, w.updated_at,
            (SELECT wm.level FROM workspace_members wm WHERE wm.workspace_id = w.id AND wm.user_id = @user) AS member_level,
            (SELECT om.level FROM org_members om WHERE om.org_id = w.org_id AND om.user_id = @user) AS org_level,
            (SELECT o.banned FROM organizations o WHERE o.id = w.org_id) AS banned
       FROM workspaces w
      WHERE (w.id = @ref OR w.slug = @ref) AND (SELECT o.banned FROM organizations o WHERE o.id = w.org_id) IS NOT NULL
      LIMIT 1`,
    { user: principal.userId, ref }
  ))
  if (row === undefined) throw notFound("Workspace")
  if (principal.orgId !== null && row.org_id !== principal.orgId) throw notFound("Workspace")
  const level: AccessLevel | null =
    row.member_level ?? (row.org_level === "OWNER" || row.org_level === "ADMIN" ? row.org_level : null)
  if (level === null) throw noAccess("No access to this workspace")
  if (row.banned) throw forbidden("The organization account is suspended", "COMPANY_BANNED")
  if (!allows(level, need)) throw forbidden(`Access level ${level} cannot do this`)
  return { id: row.id, slug: row.slug, name: row.name, org_id: row.org_id, created_at: row.created_at, updated_at: row.updated_at, level }
}

/** The caller's level in an organization (null when not a member). */
export const callerOrgLevel = (ctx: EmulatorContext, principal: Principal, orgId: string): AccessLevel | null =>
  orgLevel(ctx, orgId, principal.userId)
