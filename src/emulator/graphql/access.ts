/**
 * Scope and permission checks of GraphQL operations: organizations and workspaces by
 * id or slug (R-GQL-AUTH-05/06), the caller's levels, and the documented error codes
 * (COMPANY_NOT_FOUND, PROJECT_NOT_FOUND, COMPANY_BANNED, FORBIDDEN).
 */
import { ACCESS_LEVELS } from "../../schema/users.ts"
import {
  orgLevel,
  resolveOrganization,
  resolveWorkspace,
  workspaceLevel,
  type OrganizationRow,
  type WorkspaceRow
} from "../auth.ts"
import type { AccessLevel, EmulatorContext } from "../context.ts"
import { companyBanned, companyNotFound, projectNotFound } from "./errors.ts"
import type { GqlContext } from "./request.ts"
import { one } from "./sql.ts"

export const rank = (level: AccessLevel): number => ACCESS_LEVELS.indexOf(level)

/** At least as capable as `min`. */
export const atLeast = (level: AccessLevel | null, min: AccessLevel): boolean => level !== null && rank(level) <= rank(min)

export interface OrgScope {
  readonly org: OrganizationRow
  readonly level: AccessLevel
}

export interface WorkspaceScope {
  readonly workspace: WorkspaceRow
  readonly org: OrganizationRow
  readonly level: AccessLevel
}

const orgById = (ctx: EmulatorContext, id: string): OrganizationRow =>
  one<OrganizationRow>(ctx.db, "SELECT id, slug, name, banned, seat_limit FROM organizations WHERE id = ?", id)!

/**
 * The organization `ref` names (id or slug) and the caller's level in it: missing, unknown
 * or not the caller's is COMPANY_NOT_FOUND (R-GQL-ERR-11/12); suspended is COMPANY_BANNED (R-GQL-ERR-20).
 */
export const requireOrg = (g: GqlContext, ref: string | null | undefined): OrgScope => {
  if (ref === null || ref === undefined || ref.trim() === "") throw companyNotFound("companyId is required")
  const org = resolveOrganization(g.ctx, ref.trim())
  if (org === null) throw companyNotFound()
  const level = orgLevel(g.ctx, org.id, g.principal.userId)
  if (level === null) throw companyNotFound()
  if (org.banned) throw companyBanned()
  return { org, level }
}

/**
 * The workspace `ref` names (id or slug; the workspace header when `ref` is absent,
 * R-GQL-AUTH-07) and the caller's level in it: unknown or without access is
 * PROJECT_NOT_FOUND (R-GQL-ERR-09/10); a suspended organization is COMPANY_BANNED.
 */
export const requireWorkspace = (g: GqlContext, ref: string | null | undefined): WorkspaceScope => {
  const given = ref === null || ref === undefined || ref.trim() === "" ? null : ref.trim()
  const effective = given ?? g.principal.workspaceRef ?? null
  if (effective === null) {
    throw projectNotFound(`projectId or the ${g.ctx.prefix}-workspace-id header is required`)
  }
  const workspace = resolveWorkspace(g.ctx, effective)
  if (workspace === null) throw projectNotFound()
  const level = workspaceLevel(g.ctx, workspace.id, g.principal.userId)
  if (level === null) throw projectNotFound()
  const org = orgById(g.ctx, workspace.org_id)
  if (org.banned) throw companyBanned()
  return { workspace, org, level }
}

/** Every operation in an organization named by the org header fails when it is suspended (R-GQL-ERR-20). */
export const checkHeaderOrgNotBanned = (g: GqlContext): void => {
  if (g.principal.orgId === null) return
  if (orgById(g.ctx, g.principal.orgId).banned) throw companyBanned()
}
