/**
 * Authentication of both interfaces (shared by every area).
 *
 * REST: `Authorization: Bearer <token>` (R-REST-AUTH-01), organization from `<p>-org-id`
 * or `x-<p>-company-id` (id or slug; R-REST-AUTH-02/03), workspace from `x-<p>-project-id`
 * or `<p>-workspace-id`. GraphQL and app routes: `<p>-token-id` + `<p>-token-secret`,
 * `<p>-org-id`, `<p>-workspace-id`. Both credentials are columns of one personal access
 * token row (R-REST-AUTH-06). Node lowercases header names, so lookups are
 * case-insensitive (R-REST-AUTH-05, R-GQL-AUTH-08).
 *
 * 401 versus 403 follows assumptions.ts: 401 for a missing or unknown token, 403 for a
 * known token without access to what it names.
 */
import type { IncomingMessage } from "node:http"
import type { AccessLevel, EmulatorContext, Principal } from "./context.ts"
import { get } from "./core/sql.ts"
import { untilWrite } from "./core/until-write.ts"
import { forbidden, noAccess, unauthorized } from "./http.ts"

export interface OrganizationRow {
  readonly id: string
  readonly slug: string
  readonly name: string
  readonly banned: number
  readonly seat_limit: number | null
}

export interface WorkspaceRow {
  readonly id: string
  readonly slug: string
  readonly name: string
  readonly org_id: string
  readonly created_at: string
  readonly updated_at: string
}

/** First value of a header (names are lowercase in node). */
export const header = (req: IncomingMessage, name: string): string | undefined => {
  const value = req.headers[name.toLowerCase()]
  const first = Array.isArray(value) ? value[0] : value
  return first === undefined || first.trim() === "" ? undefined : first.trim()
}

const organizations = untilWrite<OrganizationRow | null>()

/** An organization by id or slug. */
export const resolveOrganization = (ctx: EmulatorContext, ref: string): OrganizationRow | null =>
  organizations(
    ctx.db,
    ref,
    () => get<OrganizationRow>(ctx.db, "SELECT id, slug, name, banned, seat_limit FROM organizations WHERE id = ? OR slug = ?", ref, ref) ?? null
  )

/** A workspace by id or slug. */
export const resolveWorkspace = (ctx: EmulatorContext, ref: string): WorkspaceRow | null =>
  get<WorkspaceRow>(
    ctx.db,
    "SELECT id, slug, name, org_id, created_at, updated_at FROM workspaces WHERE id = ? OR slug = ? LIMIT 1",
    ref,
    ref
  ) ?? null

const orgLevels = untilWrite<AccessLevel | null>()

export const orgLevel = (ctx: EmulatorContext, orgId: string, userId: string): AccessLevel | null =>
  orgLevels(
    ctx.db,
    `${orgId}\u0000${userId}`,
    () => get<{ level: AccessLevel }>(ctx.db, "SELECT level FROM org_members WHERE org_id = ? AND user_id = ?", orgId, userId)?.level ?? null
  )

/**
 * A user's level in a workspace: the membership level, or for an organization OWNER or
 * ADMIN without a membership row, their organization level (they see every workspace).
 */
export const workspaceLevel = (ctx: EmulatorContext, workspaceId: string, userId: string): AccessLevel | null => {
  const row = get<{ level: AccessLevel | null; org_level: AccessLevel | null }>(
    ctx.db,
    `SELECT wm.level AS level, om.level AS org_level
       FROM workspaces w
       LEFT JOIN workspace_members wm ON wm.workspace_id = w.id AND wm.user_id = ?
       LEFT JOIN org_members om ON om.org_id = w.org_id AND om.user_id = ?
      WHERE w.id = ?`,
    userId,
    userId,
    workspaceId
  )
  if (row === undefined) return null
  if (row.level !== null) return row.level
  return row.org_level === "OWNER" || row.org_level === "ADMIN" ? row.org_level : null
}

interface TokenRow {
  readonly token_id: string
  readonly user_id: string
}

const bearerTokens = untilWrite<TokenRow | undefined>()

/** The token row of a bearer token, if it is known. */
const bearerToken = (ctx: EmulatorContext, token: string): TokenRow | undefined =>
  bearerTokens(ctx.db, token, () => get<TokenRow>(ctx.db, "SELECT token_id, user_id FROM tokens WHERE token = ?", token))

const bearer = (req: IncomingMessage): string | undefined => {
  const value = header(req, "authorization")
  if (value === undefined) return undefined
  const match = /^bearer\s+(\S+)$/i.exec(value)
  return match?.[1]
}

/** Where a request arrives: `/v1` calls, REST `/uploads`, or GraphQL and the app's `/uploads`. */
export type Surface = "rpc" | "rest-uploads" | "app"

/**
 * The header names that name the organization on a surface (CANONICAL_ORG_HEADER): the
 * reference takes either spelling everywhere; the alt variant only the one each surface's
 * document shows (`x-<p>-company-id` on REST `/uploads`, `<p>-org-id` elsewhere).
 */
export const orgHeaderNames = (ctx: EmulatorContext, surface: Surface): ReadonlyArray<string> => {
  const p = ctx.prefix
  if (ctx.variant !== "alt") return [`${p}-org-id`, `x-${p}-company-id`]
  return surface === "rest-uploads" ? [`x-${p}-company-id`] : [`${p}-org-id`]
}

/** Likewise for the workspace (the alt variant's `/v1` calls name it in the body only). */
export const workspaceHeaderNames = (ctx: EmulatorContext, surface: Surface): ReadonlyArray<string> => {
  const p = ctx.prefix
  if (ctx.variant !== "alt") return [`${p}-workspace-id`, `x-${p}-project-id`]
  if (surface === "rest-uploads") return [`x-${p}-project-id`]
  return surface === "app" ? [`${p}-workspace-id`] : []
}

/** The first of `names` the request carries. */
export const firstHeader = (req: IncomingMessage, names: ReadonlyArray<string>): string | undefined => {
  for (const name of names) {
    const value = header(req, name)
    if (value !== undefined) return value
  }
  return undefined
}

const orgHeader = (ctx: EmulatorContext, req: IncomingMessage, surface: Surface): string | undefined =>
  firstHeader(req, orgHeaderNames(ctx, surface))

const workspaceHeader = (ctx: EmulatorContext, req: IncomingMessage, surface: Surface): string | undefined =>
  firstHeader(req, workspaceHeaderNames(ctx, surface))

/** The user's first organization (the alt variant's `/v1` calls act in it without a header). */
const firstOrgOf = (ctx: EmulatorContext, userId: string): string | null =>
  get<{ org_id: string }>(ctx.db, "SELECT org_id FROM org_members WHERE user_id = ? ORDER BY created_at, org_id LIMIT 1", userId)
    ?.org_id ?? null

/** The token id (rate-limit key) of a request's credential, or null without a known one. */
export const tokenKeyOf = (ctx: EmulatorContext, req: IncomingMessage): string | null => {
  const token = bearer(req)
  if (token !== undefined) {
    return bearerToken(ctx, token)?.token_id ?? null
  }
  return header(req, `${ctx.prefix}-token-id`) ?? null
}

/**
 * REST caller. Throws 401 without a known bearer token; 403 when the organization header
 * names an organization the user does not belong to (or that is suspended).
 * The workspace header is resolved when it exists; access to it is checked by the
 * operation that uses it.
 */
export const authenticateRest = (ctx: EmulatorContext, req: IncomingMessage, surface: Surface = "rpc"): Principal => {
  const token = bearer(req)
  if (token === undefined) throw unauthorized()
  const row = bearerToken(ctx, token)
  if (row === undefined) throw unauthorized()
  const orgRef = orgHeader(ctx, req, surface) ?? null
  let orgId: string | null = null
  if (orgRef !== null) {
    const org = resolveOrganization(ctx, orgRef)
    if (org === null || orgLevel(ctx, org.id, row.user_id) === null) {
      throw noAccess("The token has no access to this organization")
    }
    if (org.banned) throw forbidden("The organization account is suspended", "COMPANY_BANNED")
    orgId = org.id
  } else if (ctx.variant === "alt" && surface === "rpc") {
    // REST_TRANSPORT_DETAILS, alt: without the header a call acts in the user's first organization.
    orgId = firstOrgOf(ctx, row.user_id)
  }
  const workspaceRef = workspaceHeader(ctx, req, surface) ?? null
  const workspaceId = workspaceRef === null ? null : (resolveWorkspace(ctx, workspaceRef)?.id ?? null)
  return { userId: row.user_id, tokenKey: row.token_id, orgId, workspaceId, orgRef, workspaceRef }
}

/**
 * GraphQL and app caller (token id + secret). Throws 401 only: organization and
 * workspace headers are resolved (id or slug) when they exist and left null otherwise,
 * with the raw values in `orgRef`/`workspaceRef`, so the caller can answer with its own
 * codes (COMPANY_NOT_FOUND, PROJECT_NOT_FOUND, ...).
 */
export const authenticateApp = (ctx: EmulatorContext, req: IncomingMessage): Principal => {
  const tokenId = header(req, `${ctx.prefix}-token-id`)
  const secret = header(req, `${ctx.prefix}-token-secret`)
  if (tokenId === undefined || secret === undefined) throw unauthorized()
  const row = get<TokenRow & { token_secret: string }>(
    ctx.db,
    "SELECT token_id, user_id, token_secret FROM tokens WHERE token_id = ?",
    tokenId
  )
  if (row === undefined || row.token_secret !== secret) throw unauthorized()
  const orgRef = orgHeader(ctx, req, "app") ?? null
  const workspaceRef = workspaceHeader(ctx, req, "app") ?? null
  const orgId = orgRef === null ? null : (resolveOrganization(ctx, orgRef)?.id ?? null)
  const workspaceId = workspaceRef === null ? null : (resolveWorkspace(ctx, workspaceRef)?.id ?? null)
  return { userId: row.user_id, tokenKey: row.token_id, orgId, workspaceId, orgRef, workspaceRef }
}

/** Either credential: bearer first, then token id/secret. */
export const authenticateAny = (ctx: EmulatorContext, req: IncomingMessage): Principal =>
  bearer(req) !== undefined ? authenticateRest(ctx, req) : authenticateApp(ctx, req)
