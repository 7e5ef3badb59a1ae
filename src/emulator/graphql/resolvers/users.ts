/**
 * Users (R-USER-01..10), invitations (R-INVITE-01..16) and their error codes
 * (R-GQL-ERR-07, 13..20). Existing users are added to the workspace or organization at
 * once, with an invitation row already accepted; new addresses get a pending invitation
 * and an email in the outbox (assumptions.ts INVITE_EXISTING_USERS).
 */
import { ACCESS_LEVELS } from "../../../schema/users.ts"
import { orgLevel, resolveWorkspace, workspaceLevel } from "../../auth.ts"
import type { AccessLevel, EmulatorContext } from "../../context.ts"
import { readingOf } from "../../readings.ts"
import { sendEmail } from "../../webhooks/store.ts"
import { atLeast, requireOrg, requireWorkspace, type WorkspaceScope } from "../access.ts"
import { badInput, forbidden, gqlError, projectNotFound } from "../errors.ts"
import { organizationModel, userById, userByEmail, userModel, workspaceModel, type UserModel } from "../models.ts"
import type { GqlContext } from "../request.ts"
import { exec, many, one } from "../sql.ts"
import { roleById, roleDisablesFiles, roleModel } from "./roles.ts"

/** Levels an inviter may assign (R-INVITE-05..09). */
export const ASSIGNABLE: Readonly<Record<AccessLevel, ReadonlyArray<AccessLevel>>> = {
  OWNER: ACCESS_LEVELS,
  ADMIN: ["ADMIN", "MEMBER", "CLIENT", "COMMENT_ONLY", "VIEW_ONLY"],
  MEMBER: ["MEMBER", "CLIENT", "COMMENT_ONLY", "VIEW_ONLY"],
  CLIENT: ["CLIENT", "COMMENT_ONLY", "VIEW_ONLY"],
  COMMENT_ONLY: [],
  VIEW_ONLY: []
}

/** Levels whose users can be assigned to records (assumptions.ts ASSIGNEE_LEVELS). */
const ASSIGNEE_LEVELS: ReadonlyArray<AccessLevel> = ["OWNER", "ADMIN", "MEMBER", "CLIENT"]

const PAGE_DEFAULT = 50
const PAGE_MAX = 100
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/

// --- users -----------------------------------------------------------------

interface MemberSql {
  readonly id: string
  readonly email: string
  readonly first_name: string
  readonly last_name: string
  readonly level: AccessLevel
}

/**
 * A workspace's users: its members, and the organization's OWNER and ADMINs, who see
 * every workspace without a membership row (as authentication treats them).
 */
const workspaceMembers = (ctx: EmulatorContext, workspaceId: string): Array<UserModel & { level: AccessLevel }> =>
  many<MemberSql>(
    ctx.db,
    `SELECT u.id, u.email, u.first_name, u.last_name, level FROM (
        SELECT wm.user_id AS user_id, wm.level AS level, wm.created_at AS since FROM workspace_members wm WHERE wm.workspace_id = ?
        UNION ALL
        SELECT om.user_id, om.level, om.created_at FROM org_members om JOIN workspaces w ON w.org_id = om.org_id
         WHERE w.id = ? AND om.level IN ('OWNER', 'ADMIN')
           AND NOT EXISTS (SELECT 1 FROM workspace_members x WHERE x.workspace_id = w.id AND x.user_id = om.user_id)
     ) m JOIN users u ON u.id = m.user_id
     ORDER BY m.since, u.id`,
    workspaceId,
    workspaceId
  ).map((r) => ({ ...userModel(ctx, r), level: r.level }))

export const userResolvers = {
  projectLevel: (user: UserModel, args: { projectId: string }, g: GqlContext): AccessLevel | null => {
    const workspace = resolveWorkspace(g.ctx, args.projectId)
    if (workspace === null) return null
    // Only within workspaces the caller can see.
    if (workspaceLevel(g.ctx, workspace.id, g.principal.userId) === null) return null
    return workspaceLevel(g.ctx, workspace.id, user.id)
  }
}

export const userQueries = {
  currentUser: (_: unknown, __: unknown, g: GqlContext) => userById(g.ctx, g.principal.userId),

  workspaceUserList: (
    _: unknown,
    args: { projectId?: string | null; first?: number | null; skip?: number | null; search?: string | null },
    g: GqlContext
  ) => {
    const scope = requireWorkspace(g, args.projectId)
    const first = Math.min(Math.max(args.first ?? PAGE_DEFAULT, 0), PAGE_MAX)
    const skip = Math.max(args.skip ?? 0, 0)
    const needle = args.search?.trim().toLowerCase() ?? ""
    const all = workspaceMembers(g.ctx, scope.workspace.id).filter(
      (u) => needle === "" || u.fullName.toLowerCase().includes(needle) || u.email.toLowerCase().includes(needle)
    )
    const users = all.slice(skip, skip + first)
    return {
      users,
      pageInfo: { totalItems: all.length, hasNextPage: skip + users.length < all.length },
      totalCount: all.length
    }
  },

  assignees: (_: unknown, args: { projectId?: string | null }, g: GqlContext) => {
    const scope = requireWorkspace(g, args.projectId)
    return workspaceMembers(g.ctx, scope.workspace.id).filter((u) => ASSIGNEE_LEVELS.includes(u.level))
  }
}

// --- invitations -----------------------------------------------------------

interface InvitationSql {
  readonly id: string
  readonly email: string
  readonly access_level: AccessLevel
  readonly org_id: string
  readonly workspace_id: string | null
  readonly project_ids: string
  readonly role_id: string | null
  readonly invited_by: string
  readonly status: "PENDING" | "ACCEPTED" | "REVOKED"
  readonly expired_at: string
  readonly accepted_at: string | null
  readonly created_at: string
  readonly updated_at: string
}

const invitationModel = (ctx: EmulatorContext, row: InvitationSql) => ({
  id: row.id,
  email: row.email,
  accessLevel: row.access_level,
  expiredAt: row.expired_at,
  createdAt: row.created_at,
  accepted: row.status === "ACCEPTED",
  invitedBy: () => userById(ctx, row.invited_by),
  project: () => workspaceModel(ctx, row.workspace_id),
  organization: () => organizationModel(ctx, row.org_id),
  role: () => {
    if (row.role_id === null) return null
    const role = roleById(ctx, row.role_id)
    return role === undefined ? null : roleModel(role)
  }
})

const expiryFrom = (ctx: EmulatorContext): string =>
  new Date(ctx.clock.now() + readingOf(ctx).invitationTtlDays * 24 * 60 * 60 * 1000).toISOString()

const invitationById = (ctx: EmulatorContext, id: string): InvitationSql | undefined =>
  one<InvitationSql>(ctx.db, "SELECT * FROM invitations WHERE id = ?", id)

interface InviteInput {
  readonly email: string
  readonly projectId?: string | null
  readonly companyId?: string | null
  readonly projectIds?: ReadonlyArray<string> | null
  readonly accessLevel: AccessLevel
  readonly roleId?: string | null
}

/** Seats in use: organization members plus distinct addresses with a pending invitation. */
const seatsInUse = (ctx: EmulatorContext, orgId: string): number =>
  one<{ n: number }>(
    ctx.db,
    `SELECT (SELECT count(*) FROM org_members WHERE org_id = ?)
          + (SELECT count(DISTINCT lower(email)) FROM invitations WHERE org_id = ? AND status = 'PENDING') AS n`,
    orgId,
    orgId
  )!.n

const seatLimit = (ctx: EmulatorContext, orgId: string): number | null =>
  one<{ seat_limit: number | null }>(ctx.db, "SELECT seat_limit FROM organizations WHERE id = ?", orgId)?.seat_limit ??
  ctx.limits.seats

const checkSeat = (ctx: EmulatorContext, orgId: string): void => {
  const limit = seatLimit(ctx, orgId)
  if (limit === null) return
  const used = seatsInUse(ctx, orgId)
  if (used + 1 > limit) {
    throw gqlError("PLAN_LIMIT_REACHED", `Seat limit reached: ${used} of ${limit} seats are in use`)
  }
}

const isWorkspaceMember = (ctx: EmulatorContext, workspaceId: string, userId: string): boolean =>
  one(ctx.db, "SELECT 1 FROM workspace_members WHERE workspace_id = ? AND user_id = ?", workspaceId, userId) !== undefined

const addOrgMember = (ctx: EmulatorContext, orgId: string, userId: string, level: AccessLevel) => {
  // Ownership is single-slot (R-LIMIT-10): an invitation never makes a second owner.
  const orgLevelOf: AccessLevel = level === "OWNER" ? "ADMIN" : level
  exec(
    ctx.db,
    "INSERT OR IGNORE INTO org_members (org_id, user_id, level, created_at) VALUES (?, ?, ?, ?)",
    orgId,
    userId,
    orgLevelOf,
    ctx.clock.iso()
  )
}

const addWorkspaceMember = (ctx: EmulatorContext, orgId: string, workspaceId: string, userId: string, level: AccessLevel, roleId: string | null) => {
  // An organization owner joins a workspace as ADMIN whatever was asked (R-INVITE-10).
  const effective: AccessLevel = orgLevel(ctx, orgId, userId) === "OWNER" ? "ADMIN" : level
  const role = roleId === null ? undefined : roleById(ctx, roleId)
  exec(
    ctx.db,
    "INSERT INTO workspace_members (workspace_id, user_id, level, role_id, files_disabled, created_at) VALUES (?, ?, ?, ?, ?, ?)",
    workspaceId,
    userId,
    effective,
    role === undefined ? null : roleId,
    roleDisablesFiles(role) ? 1 : 0,
    ctx.clock.iso()
  )
}

const insertInvitation = (
  g: GqlContext,
  fields: {
    email: string
    level: AccessLevel
    orgId: string
    workspaceId: string | null
    projectIds: ReadonlyArray<string>
    roleId: string | null
    accepted: boolean
  }
): string => {
  const id = g.ctx.ids.id()
  const now = g.ctx.clock.iso()
  exec(
    g.ctx.db,
    `INSERT INTO invitations (id, email, access_level, org_id, workspace_id, project_ids, role_id, invited_by, status,
       expired_at, accepted_at, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    id,
    fields.email,
    fields.level,
    fields.orgId,
    fields.workspaceId,
    JSON.stringify(fields.projectIds),
    fields.roleId,
    g.principal.userId,
    fields.accepted ? "ACCEPTED" : "PENDING",
    expiryFrom(g.ctx),
    fields.accepted ? now : null,
    now,
    now
  )
  return id
}

const inviteEmail = (g: GqlContext, kind: "INVITATION" | "INVITATION_RESENT", invitationId: string, email: string) => {
  const inviter = userById(g.ctx, g.principal.userId)
  sendEmail(g.ctx, {
    kind,
    toEmail: email,
    toUserId: userByEmail(g.ctx, email)?.id ?? null,
    subject: `${inviter?.fullName ?? "Someone"} invited you`,
    body: `You have been invited. Invitation ${invitationId}.`,
    refId: invitationId
  })
}

/** The role named by `roleId`, which must belong to one of `workspaceIds` (R-GQL-ERR-19). */
const roleIn = (ctx: EmulatorContext, roleId: string | null | undefined, workspaceIds: ReadonlyArray<string>) => {
  if (roleId === null || roleId === undefined || roleId === "") return null
  const role = roleById(ctx, roleId)
  if (role === undefined || !workspaceIds.includes(role.workspace_id)) {
    throw gqlError("PROJECT_USER_ROLE_NOT_FOUND", "The role does not exist in the target workspace")
  }
  return role
}

const inviteToWorkspace = (g: GqlContext, input: InviteInput, scope: WorkspaceScope, email: string) => {
  if (!ASSIGNABLE[scope.level].includes(input.accessLevel)) {
    throw forbidden(`A ${scope.level} cannot invite at level ${input.accessLevel}`)
  }
  const role = roleIn(g.ctx, input.roleId, [scope.workspace.id])
  const orgId = scope.workspace.org_id
  const existing = userByEmail(g.ctx, email)
  if (existing !== null) {
    if (isWorkspaceMember(g.ctx, scope.workspace.id, existing.id)) {
      throw gqlError("USER_ALREADY_IN_THE_PROJECT", "The user already belongs to this workspace")
    }
  }
  // INVITE_EXISTING_USERS: the reference adds an existing user at once; the alt variant
  // invites them like a new address, except the organization OWNER, whom the document
  // adds at once as ADMIN (R-INVITE-10).
  if (existing !== null && (g.ctx.variant !== "alt" || orgLevel(g.ctx, orgId, existing.id) === "OWNER")) {
    const inOrg = orgLevel(g.ctx, orgId, existing.id) !== null
    if (!inOrg) checkSeat(g.ctx, orgId)
    g.ctx.db.transaction(() => {
      if (!inOrg) addOrgMember(g.ctx, orgId, existing.id, input.accessLevel)
      addWorkspaceMember(g.ctx, orgId, scope.workspace.id, existing.id, input.accessLevel, role?.id ?? null)
      insertInvitation(g, {
        email: existing.email,
        level: input.accessLevel,
        orgId,
        workspaceId: scope.workspace.id,
        projectIds: [],
        roleId: role?.id ?? null,
        accepted: true
      })
    })()
    return true
  }
  const pending = one<{ id: string }>(
    g.ctx.db,
    "SELECT id FROM invitations WHERE lower(email) = lower(?) AND workspace_id = ? AND status = 'PENDING'",
    email,
    scope.workspace.id
  )
  if (pending !== undefined) {
    // Inviting the same address again refreshes the pending invitation.
    exec(
      g.ctx.db,
      "UPDATE invitations SET access_level = ?, role_id = ?, expired_at = ?, updated_at = ? WHERE id = ?",
      input.accessLevel,
      role?.id ?? null,
      expiryFrom(g.ctx),
      g.ctx.clock.iso(),
      pending.id
    )
    inviteEmail(g, "INVITATION", pending.id, email)
    return true
  }
  const alreadyPending = one(g.ctx.db, "SELECT 1 FROM invitations WHERE lower(email) = lower(?) AND org_id = ? AND status = 'PENDING'", email, orgId)
  // An organization member (invited to a workspace in the alt variant) already holds a seat.
  const member = existing !== null && orgLevel(g.ctx, orgId, existing.id) !== null
  if (alreadyPending === undefined && !member) checkSeat(g.ctx, orgId)
  const id = insertInvitation(g, {
    email,
    level: input.accessLevel,
    orgId,
    workspaceId: scope.workspace.id,
    projectIds: [],
    roleId: role?.id ?? null,
    accepted: false
  })
  inviteEmail(g, "INVITATION", id, email)
  return true
}

const inviteToOrganization = (g: GqlContext, input: InviteInput, email: string) => {
  const scope = requireOrg(g, input.companyId)
  if (scope.level !== "OWNER") throw forbidden("Only the organization OWNER may invite at organization level")
  const workspaceIds = (input.projectIds ?? []).map((ref) => {
    const w = requireWorkspace(g, ref)
    if (w.workspace.org_id !== scope.org.id) throw projectNotFound("The workspace is not in this organization")
    return w.workspace.id
  })
  const role = roleIn(g.ctx, input.roleId, workspaceIds)
  const orgId = scope.org.id
  const existing = userByEmail(g.ctx, email)
  if (existing !== null) {
    const inOrg = orgLevel(g.ctx, orgId, existing.id) !== null
    const toAdd = workspaceIds.filter((w) => !isWorkspaceMember(g.ctx, w, existing.id))
    if (inOrg && toAdd.length === 0) {
      throw gqlError("USER_ALREADY_IN_THE_PROJECT", "The user already belongs to the organization and the workspaces")
    }
  }
  if (existing !== null && g.ctx.variant !== "alt") {
    const inOrg = orgLevel(g.ctx, orgId, existing.id) !== null
    const toAdd = workspaceIds.filter((w) => !isWorkspaceMember(g.ctx, w, existing.id))
    if (!inOrg) checkSeat(g.ctx, orgId)
    g.ctx.db.transaction(() => {
      if (!inOrg) addOrgMember(g.ctx, orgId, existing.id, input.accessLevel)
      for (const w of toAdd) {
        addWorkspaceMember(g.ctx, orgId, w, existing.id, input.accessLevel, role !== null && role.workspace_id === w ? role.id : null)
      }
      insertInvitation(g, {
        email: existing.email,
        level: input.accessLevel,
        orgId,
        workspaceId: null,
        projectIds: workspaceIds,
        roleId: role?.id ?? null,
        accepted: true
      })
    })()
    return true
  }
  const alreadyPending = one(g.ctx.db, "SELECT 1 FROM invitations WHERE lower(email) = lower(?) AND org_id = ? AND status = 'PENDING'", email, orgId)
  if (alreadyPending === undefined) checkSeat(g.ctx, orgId)
  const id = insertInvitation(g, {
    email,
    level: input.accessLevel,
    orgId,
    workspaceId: null,
    projectIds: workspaceIds,
    roleId: role?.id ?? null,
    accepted: false
  })
  inviteEmail(g, "INVITATION", id, email)
  return true
}

/** May the caller manage invitation `row` (resend, cancel)? Its inviter or a workspace/org admin. */
const checkManage = (g: GqlContext, row: InvitationSql): void => {
  if (row.invited_by === g.principal.userId) return
  const level =
    row.workspace_id !== null
      ? workspaceLevel(g.ctx, row.workspace_id, g.principal.userId)
      : orgLevel(g.ctx, row.org_id, g.principal.userId)
  if (!atLeast(level, "ADMIN")) throw gqlError("INVITATION_NOT_FOUND", "Invitation not found")
}

const pendingInvitation = (g: GqlContext, id: string): InvitationSql => {
  const row = invitationById(g.ctx, id)
  if (row === undefined || row.status === "REVOKED") throw gqlError("INVITATION_NOT_FOUND", "Invitation not found")
  checkManage(g, row)
  if (row.status !== "PENDING") throw badInput("The invitation was already accepted")
  return row
}

export const invitationQueries = {
  invitations: (_: unknown, args: { projectId?: string | null; pending?: boolean | null }, g: GqlContext) => {
    const scope = requireWorkspace(g, args.projectId)
    const statuses = args.pending === true ? ["PENDING"] : ["PENDING", "ACCEPTED"]
    return many<InvitationSql>(
      g.ctx.db,
      `SELECT i.* FROM invitations i
        WHERE i.status IN (SELECT value FROM json_each(?))
          AND (i.workspace_id = ? OR (i.workspace_id IS NULL AND EXISTS (SELECT 1 FROM json_each(i.project_ids) p WHERE p.value = ?)))
        ORDER BY i.created_at, i.id`,
      JSON.stringify(statuses),
      scope.workspace.id,
      scope.workspace.id
    ).map((r) => invitationModel(g.ctx, r))
  },

  myInvitations: (_: unknown, __: unknown, g: GqlContext) => {
    const me = userById(g.ctx, g.principal.userId)
    if (me === null) return []
    return many<InvitationSql>(
      g.ctx.db,
      "SELECT * FROM invitations WHERE lower(email) = lower(?) AND status = 'PENDING' ORDER BY created_at, id",
      me.email
    ).map((r) => invitationModel(g.ctx, r))
  }
}

export const userMutations = {
  inviteUser: (_: unknown, args: { input: InviteInput }, g: GqlContext) => {
    // INVITE_USER_INPUT: the alt schema makes accessLevel optional, MEMBER when omitted.
    const input: InviteInput = { ...args.input, accessLevel: args.input.accessLevel ?? "MEMBER" }
    const email = input.email.trim()
    const projectRef = input.projectId?.trim() ?? ""
    const companyRef = input.companyId?.trim() ?? ""
    if (projectRef === "" && companyRef === "") throw gqlError("COMPANY_NOT_FOUND", "companyId or projectId is required")
    // Scope first: an unknown workspace or organization is reported before anything else.
    const workspaceScope = projectRef !== "" ? requireWorkspace(g, projectRef) : null
    if (workspaceScope !== null && companyRef !== "") {
      const org = requireOrg(g, companyRef)
      if (org.org.id !== workspaceScope.workspace.org_id) throw projectNotFound("The workspace is not in this organization")
    }
    if (!EMAIL.test(email)) throw badInput("email is not an email address")
    const me = userById(g.ctx, g.principal.userId)
    if (me !== null && me.email.toLowerCase() === email.toLowerCase()) throw gqlError("ADD_SELF", "You cannot invite yourself")
    return workspaceScope !== null ? inviteToWorkspace(g, input, workspaceScope, email) : inviteToOrganization(g, input, email)
  },

  resendInvitation: (_: unknown, args: { id: string }, g: GqlContext) => {
    const row = pendingInvitation(g, args.id)
    exec(g.ctx.db, "UPDATE invitations SET expired_at = ?, updated_at = ? WHERE id = ?", expiryFrom(g.ctx), g.ctx.clock.iso(), row.id)
    inviteEmail(g, "INVITATION_RESENT", row.id, row.email)
    return invitationModel(g.ctx, invitationById(g.ctx, row.id)!)
  },

  cancelInvitation: (_: unknown, args: { id: string }, g: GqlContext) => {
    const row = pendingInvitation(g, args.id)
    exec(g.ctx.db, "UPDATE invitations SET status = 'REVOKED', updated_at = ? WHERE id = ?", g.ctx.clock.iso(), row.id)
    return true
  },

  removeProjectUser: (_: unknown, args: { input: { projectId: string; userId: string } }, g: GqlContext) => {
    const scope = requireWorkspace(g, args.input.projectId)
    if (!atLeast(scope.level, "ADMIN")) throw forbidden("Only workspace owners and admins remove users")
    const target = one<{ level: AccessLevel }>(
      g.ctx.db,
      "SELECT level FROM workspace_members WHERE workspace_id = ? AND user_id = ?",
      scope.workspace.id,
      args.input.userId
    )
    if (target === undefined) throw gqlError("USER_NOT_FOUND", "The user is not in this workspace")
    if (target.level === "OWNER" || orgLevel(g.ctx, scope.workspace.org_id, args.input.userId) === "OWNER") {
      throw forbidden("An OWNER cannot be removed; transfer ownership first")
    }
    exec(g.ctx.db, "DELETE FROM workspace_members WHERE workspace_id = ? AND user_id = ?", scope.workspace.id, args.input.userId)
    // USER_REMOVAL: the alt variant reads a removal as synchronous, with no operation id.
    return { success: true, operationId: g.ctx.variant === "alt" ? null : g.ctx.ids.id() }
  },

  removeOrganizationUser: (_: unknown, args: { input: { companyId: string; userId: string } }, g: GqlContext) => {
    const scope = requireOrg(g, args.input.companyId)
    if (!atLeast(scope.level, "ADMIN")) throw forbidden("Only organization owners and admins remove users")
    const target = orgLevel(g.ctx, scope.org.id, args.input.userId)
    if (target === null) throw gqlError("USER_NOT_FOUND", "The user is not in this organization")
    if (target === "OWNER") throw forbidden("The OWNER cannot be removed; transfer ownership first")
    g.ctx.db.transaction(() => {
      exec(
        g.ctx.db,
        "DELETE FROM workspace_members WHERE user_id = ? AND workspace_id IN (SELECT id FROM workspaces WHERE org_id = ?)",
        args.input.userId,
        scope.org.id
      )
      exec(g.ctx.db, "DELETE FROM org_members WHERE org_id = ? AND user_id = ?", scope.org.id, args.input.userId)
    })()
    return true
  }
}
