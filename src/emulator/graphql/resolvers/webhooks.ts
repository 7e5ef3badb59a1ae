/**
 * Webhook management (R-WEBHOOK-01..14, R-GQL-AUTH-09/10). `createWebhook` needs the
 * organization header (webhook counts are per organization); every other operation
 * is per user: a caller sees and changes only the webhooks they created.
 */
import { WEBHOOK_HEALTH_CHECK } from "../../../schema/webhooks.ts"
import { readingOf } from "../../readings.ts"
import { getWebhook, viewOf, type WebhookRow } from "../../webhooks/store.ts"
import { requireOrg, requireWorkspace } from "../access.ts"
import { badInput, gqlError, projectNotFound } from "../errors.ts"
import type { GqlContext } from "../request.ts"
import { exec, many, one } from "../sql.ts"

interface CreateInput {
  readonly url: string
  readonly name?: string | null
  readonly events?: ReadonlyArray<string> | null
  readonly projectIds?: ReadonlyArray<string> | null
}

interface UpdateInput {
  readonly id: string
  readonly url?: string | null
  readonly name?: string | null
  readonly events?: ReadonlyArray<string> | null
  readonly projectIds?: ReadonlyArray<string> | null
  readonly enabled?: boolean | null
}

/** The GraphQL Webhook: `secret` only when `withSecret` (the createWebhook result, R-WEBHOOK-03/04). */
const webhookModel = (row: WebhookRow, withSecret = false) => {
  const view = viewOf(row)
  return { ...view, secret: withSecret ? row.secret : null }
}

const checkUrl = (url: string): string => {
  let parsed: URL
  try {
    parsed = new URL(url.trim())
  } catch {
    throw badInput("url is not a URL")
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") throw badInput("url must be http or https")
  return parsed.toString()
}

/** Workspace ids (ids or slugs given) within the organization; duplicates dropped. */
const scopedWorkspaces = (g: GqlContext, orgId: string, refs: ReadonlyArray<string>): Array<string> => {
  const ids = refs.map((ref) => {
    const scope = requireWorkspace(g, ref)
    if (scope.workspace.org_id !== orgId) throw projectNotFound("The workspace is not in this organization")
    return scope.workspace.id
  })
  return [...new Set(ids)]
}

const own = (g: GqlContext, id: string): WebhookRow => {
  const row = getWebhook(g.ctx, id)
  if (row === undefined || row.user_id !== g.principal.userId) throw gqlError("WEBHOOK_NOT_FOUND", "Webhook not found")
  return row
}

export const webhookQueries = {
  webhooks: (_: unknown, __: unknown, g: GqlContext) => {
    const rows = many<WebhookRow>(
      g.ctx.db,
      "SELECT * FROM webhooks WHERE user_id = ? ORDER BY created_at, id",
      g.principal.userId
    )
    return { items: rows.map((r) => webhookModel(r)), totalCount: rows.length }
  },
  webhook: (_: unknown, args: { id: string }, g: GqlContext) => webhookModel(own(g, args.id))
}

export const webhookMutations = {
  createWebhook: (_: unknown, args: { input: CreateInput }, g: GqlContext) => {
    if (g.principal.orgRef === null || g.principal.orgRef === undefined) {
      throw gqlError("COMPANY_NOT_FOUND", `createWebhook requires the ${g.ctx.prefix}-org-id header`)
    }
    const org = requireOrg(g, g.principal.orgRef)
    const url = checkUrl(args.input.url)
    const projectIds = scopedWorkspaces(g, org.org.id, args.input.projectIds ?? [])
    const events = [...new Set(args.input.events ?? [])]
    const count = one<{ n: number }>(g.ctx.db, "SELECT count(*) AS n FROM webhooks WHERE organization_id = ?", org.org.id)!.n
    const limit = readingOf(g.ctx).webhooksPerOrganization
    if (count >= limit) {
      throw gqlError("PLAN_LIMIT_REACHED", `Webhook limit reached: ${count} of ${limit} in this organization`)
    }
    const id = g.ctx.ids.id()
    const now = g.ctx.clock.iso()
    exec(
      g.ctx.db,
      `INSERT INTO webhooks (id, uid, name, url, secret, status, enabled, events, project_ids, organization_id, user_id, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, 'HEALTHY', 1, ?, ?, ?, ?, ?, ?)`,
      id,
      g.ctx.ids.uid(),
      args.input.name ?? null,
      url,
      g.ctx.ids.secret(32),
      JSON.stringify(events),
      JSON.stringify(projectIds),
      org.org.id,
      g.principal.userId,
      now,
      now
    )
    return webhookModel(getWebhook(g.ctx, id)!, true)
  },

  updateWebhook: (_: unknown, args: { input: UpdateInput }, g: GqlContext) => {
    const row = own(g, args.input.id)
    const input = args.input
    const sets: Array<string> = []
    const values: Array<unknown> = []
    if (typeof input.url === "string") {
      sets.push("url = ?")
      values.push(checkUrl(input.url))
    }
    if (input.name !== undefined) {
      sets.push("name = ?")
      values.push(input.name)
    }
    if (input.events !== undefined && input.events !== null) {
      sets.push("events = ?")
      values.push(JSON.stringify([...new Set(input.events)]))
    }
    if (input.projectIds !== undefined && input.projectIds !== null) {
      sets.push("project_ids = ?")
      values.push(JSON.stringify(scopedWorkspaces(g, row.organization_id, input.projectIds)))
    }
    // Re-enabling a disabled or UNHEALTHY webhook makes it HEALTHY and probes it
    // (R-WEBHOOK-14, assumptions.ts WEBHOOK_STATUS_AFTER_REENABLE); in the alt variant it
    // stays UNHEALTHY until a delivery succeeds (the delivery engine heals it).
    const reenable = input.enabled === true && (row.enabled !== 1 || row.status === "UNHEALTHY")
    if (input.enabled === true) sets.push(g.ctx.variant === "alt" ? "enabled = 1" : "enabled = 1, status = 'HEALTHY'")
    if (input.enabled === false) sets.push("enabled = 0")
    sets.push("updated_at = ?")
    values.push(g.ctx.clock.iso())
    exec(g.ctx.db, `UPDATE webhooks SET ${sets.join(", ")} WHERE id = ?`, ...values, row.id)
    const updated = getWebhook(g.ctx, row.id)!
    if (reenable) {
      const view = viewOf(updated)
      g.ctx.events.emit({
        event: WEBHOOK_HEALTH_CHECK,
        workspaceId: "",
        previousValue: null,
        currentValue: { id: view.id, uid: view.uid, url: view.url, status: view.status, enabled: view.enabled, metadata: view.metadata }
      })
    }
    return webhookModel(updated)
  },

  disableWebhook: (_: unknown, args: { id: string }, g: GqlContext) => {
    const row = own(g, args.id)
    exec(g.ctx.db, "UPDATE webhooks SET enabled = 0, status = 'UNHEALTHY', updated_at = ? WHERE id = ?", g.ctx.clock.iso(), row.id)
    // WEBHOOK_INPUTS: the alt schema's disableWebhook returns Boolean.
    return g.ctx.variant === "alt" ? true : webhookModel(getWebhook(g.ctx, row.id)!)
  },

  deleteWebhook: (_: unknown, args: { id: string }, g: GqlContext) => {
    const row = own(g, args.id)
    exec(g.ctx.db, "DELETE FROM webhooks WHERE id = ?", row.id)
    return true
  }
}
