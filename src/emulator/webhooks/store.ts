/**
 * Webhook rows, their delivery queue and the email outbox: the tables of the webhooks
 * area and the queries both the GraphQL operations and the delivery engine use.
 */
import type { EmulatorContext } from "../context.ts"
import { all, get } from "../core/sql.ts"

export const WEBHOOKS_DDL = `
CREATE TABLE IF NOT EXISTS webhooks (
  id TEXT PRIMARY KEY,
  uid TEXT NOT NULL UNIQUE,
  name TEXT,
  url TEXT NOT NULL,
  secret TEXT NOT NULL,
  status TEXT NOT NULL DEFAULT 'HEALTHY',
  enabled INTEGER NOT NULL DEFAULT 1,
  events TEXT NOT NULL DEFAULT '[]',
  project_ids TEXT NOT NULL DEFAULT '[]',
  organization_id TEXT NOT NULL,
  user_id TEXT NOT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS webhooks_user ON webhooks(user_id);
CREATE TABLE IF NOT EXISTS webhook_deliveries (
  id TEXT PRIMARY KEY,
  webhook_id TEXT NOT NULL,
  event TEXT NOT NULL,
  workspace_id TEXT,
  body TEXT NOT NULL,
  signature TEXT NOT NULL,
  status TEXT NOT NULL DEFAULT 'QUEUED',
  attempts INTEGER NOT NULL DEFAULT 0,
  created_at TEXT NOT NULL,
  finished_at TEXT
);
CREATE INDEX IF NOT EXISTS webhook_deliveries_webhook ON webhook_deliveries(webhook_id);
CREATE TABLE IF NOT EXISTS webhook_delivery_attempts (
  delivery_id TEXT NOT NULL,
  attempt INTEGER NOT NULL,
  delay_ms INTEGER NOT NULL,
  timeout_ms INTEGER NOT NULL,
  status_code INTEGER,
  error TEXT,
  at TEXT NOT NULL,
  PRIMARY KEY (delivery_id, attempt)
);
CREATE TABLE IF NOT EXISTS email_outbox (
  id TEXT PRIMARY KEY,
  kind TEXT NOT NULL,
  to_email TEXT NOT NULL,
  to_user_id TEXT,
  subject TEXT NOT NULL,
  body TEXT NOT NULL,
  ref_id TEXT,
  created_at TEXT NOT NULL
);
`

export type WebhookStatus = "HEALTHY" | "UNHEALTHY"

export interface WebhookRow {
  readonly id: string
  readonly uid: string
  readonly name: string | null
  readonly url: string
  readonly secret: string
  readonly status: WebhookStatus
  readonly enabled: number
  readonly events: string
  readonly project_ids: string
  readonly organization_id: string
  readonly user_id: string
  readonly created_at: string
  readonly updated_at: string
}

/** A webhook as both the GraphQL type and the delivery body see it (secret separate). */
export interface WebhookView {
  readonly id: string
  readonly uid: string
  readonly name: string | null
  readonly url: string
  readonly status: WebhookStatus
  readonly enabled: boolean
  readonly events: ReadonlyArray<string>
  readonly projectIds: ReadonlyArray<string>
  readonly metadata: { readonly events: ReadonlyArray<string>; readonly projectIds: ReadonlyArray<string> }
  readonly createdAt: string
  readonly updatedAt: string
  readonly userId: string
  readonly organizationId: string
}

const parseList = (json: string): ReadonlyArray<string> => {
  const value: unknown = JSON.parse(json)
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === "string") : []
}

export const viewOf = (row: WebhookRow): WebhookView => {
  const events = parseList(row.events)
  const projectIds = parseList(row.project_ids)
  return {
    id: row.id,
    uid: row.uid,
    name: row.name,
    url: row.url,
    status: row.status,
    enabled: row.enabled === 1,
    events,
    projectIds,
    metadata: { events, projectIds },
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    userId: row.user_id,
    organizationId: row.organization_id
  }
}

export const getWebhook = (ctx: EmulatorContext, id: string): WebhookRow | undefined =>
  get<WebhookRow>(ctx.db, "SELECT * FROM webhooks WHERE id = ?", id)

/** Read on every event the emulator announces: a statement prepared once (core/sql.ts). */
export const enabledWebhooks = (ctx: EmulatorContext): ReadonlyArray<WebhookRow> =>
  all<WebhookRow>(ctx.db, "SELECT * FROM webhooks WHERE enabled = 1 ORDER BY created_at, id")

/** Records an email in the outbox (the emulator sends no mail; tests read this table). */
export const sendEmail = (
  ctx: EmulatorContext,
  email: {
    readonly kind: string
    readonly toEmail: string
    readonly toUserId: string | null
    readonly subject: string
    readonly body: string
    readonly refId: string | null
  }
): void => {
  ctx.db
    .prepare(
      "INSERT INTO email_outbox (id, kind, to_email, to_user_id, subject, body, ref_id, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
    )
    .run(ctx.ids.id(), email.kind, email.toEmail, email.toUserId, email.subject, email.body, email.refId, ctx.clock.iso())
}
