/** Organizations, users, tokens and memberships (seed and admin helpers). */
import type { AccessLevel, EmulatorContext } from "../context.ts"
import { run } from "./sql.ts"

export interface IssuedToken {
  readonly userId: string
  /** REST bearer token. */
  readonly token: string
  /** GraphQL token id and secret: the same personal access token (R-REST-AUTH-06). */
  readonly tokenId: string
  readonly tokenSecret: string
}

export const insertOrganization = (
  ctx: EmulatorContext,
  o: { name: string; slug: string; seatLimit?: number | null; at?: string }
): string => {
  const id = ctx.ids.id()
  run(
    ctx.db,
    "INSERT INTO organizations (id, slug, name, banned, seat_limit, created_at) VALUES (?, ?, ?, 0, ?, ?)",
    id,
    o.slug,
    o.name,
    o.seatLimit ?? null,
    o.at ?? ctx.clock.iso()
  )
  return id
}

/** Creates a user with one personal access token. */
export const insertUser = (
  ctx: EmulatorContext,
  u: { email: string; firstName: string; lastName: string; at?: string }
): IssuedToken => {
  const userId = ctx.ids.id()
  const at = u.at ?? ctx.clock.iso()
  run(
    ctx.db,
    "INSERT INTO users (id, email, first_name, last_name, created_at) VALUES (?, ?, ?, ?, ?)",
    userId,
    u.email,
    u.firstName,
    u.lastName,
    at
  )
  const token = `pat_${ctx.ids.secret(20)}`
  const tokenId = `tid_${ctx.ids.secret(8)}`
  const tokenSecret = ctx.ids.secret(24)
  run(
    ctx.db,
    "INSERT INTO tokens (token_id, token, token_secret, user_id, created_at) VALUES (?, ?, ?, ?, ?)",
    tokenId,
    token,
    tokenSecret,
    userId,
    at
  )
  return { userId, token, tokenId, tokenSecret }
}

export const setOrgMember = (ctx: EmulatorContext, orgId: string, userId: string, level: AccessLevel, at = ctx.clock.iso()): void => {
  run(
    ctx.db,
    `INSERT INTO org_members (org_id, user_id, level, created_at) VALUES (?, ?, ?, ?)
     ON CONFLICT (org_id, user_id) DO UPDATE SET level = excluded.level`,
    orgId,
    userId,
    level,
    at
  )
}

export const setWorkspaceMember = (
  ctx: EmulatorContext,
  workspaceId: string,
  userId: string,
  level: AccessLevel,
  at = ctx.clock.iso()
): void => {
  run(
    ctx.db,
    `INSERT INTO workspace_members (workspace_id, user_id, level, created_at) VALUES (?, ?, ?, ?)
     ON CONFLICT (workspace_id, user_id) DO UPDATE SET level = excluded.level`,
    workspaceId,
    userId,
    level,
    at
  )
}
