/**
 * The delivery engine: turns domain events into signed POSTs to matching webhooks,
 * with the documented delay, timeout and retries, and disables a webhook whose
 * attempts all fail (R-WEBHOOK-12, R-WEBHOOK-DELIVERY-11..17).
 */
import { createHmac } from "node:crypto"
import { WEBHOOK_MIN_TIMEOUT_MS } from "../../schema/assumptions.ts"
import { altEventValue } from "../alt/events.ts"
import type { DomainEvent, EmulatorContext } from "../context.ts"
import { deliveryFaultsOf } from "../faults.ts"
import { readingOf } from "../readings.ts"
import { isWorkspaceMember, userEmail } from "./membership.ts"
import { WEBHOOK_ATTEMPTS, WEBHOOK_FIRST_DELAY_MS, WEBHOOK_HEALTH_CHECK_EVENT, WEBHOOK_TIMEOUT_MS } from "./timing.ts"
import { enabledWebhooks, getWebhook, sendEmail, viewOf, type WebhookRow } from "./store.ts"

interface Pending {
  readonly deliveryId: string
  readonly webhookId: string
  readonly url: string
  readonly body: string
  readonly signature: string
}

export interface DeliveryEngine {
  readonly stop: () => void
}

/** Does webhook `row` take `event` (R-WEBHOOK-DELIVERY-13..16)? */
export const matches = (ctx: EmulatorContext, row: WebhookRow, event: DomainEvent): boolean => {
  if (row.enabled !== 1) return false
  const view = viewOf(row)
  if (view.events.length > 0 && !view.events.includes(event.event)) return false
  if (view.projectIds.length > 0 && !view.projectIds.includes(event.workspaceId)) return false
  return isWorkspaceMember(ctx, row.user_id, event.workspaceId)
}

/** The exact body bytes a delivery sends: the webhook's configuration never carries the secret. */
export const deliveryBody = (row: WebhookRow, event: string, previousValue: unknown, currentValue: unknown): string => {
  const view = viewOf(row)
  return JSON.stringify({
    event,
    webhook: {
      id: view.id,
      uid: view.uid,
      url: view.url,
      status: view.status,
      enabled: view.enabled,
      metadata: view.metadata
    },
    previousValue: previousValue ?? null,
    currentValue: currentValue ?? null
  })
}

const sign = (body: string, secret: string): string => createHmac("sha256", secret).update(body, "utf8").digest("hex")

export const startDelivery = (ctx: EmulatorContext): DeliveryEngine => {
  const timers = new Set<NodeJS.Timeout>()
  const inflight = new Set<AbortController>()
  let stopped = false
  const scale = (ms: number) => Math.max(0, Math.round(ms * ctx.timeScale))

  const later = (ms: number, f: () => void) => {
    const t = setTimeout(() => {
      timers.delete(t)
      if (!stopped) f()
    }, ms)
    timers.add(t)
  }

  const enqueue = (row: WebhookRow, event: string, workspaceId: string | null, prev: unknown, cur: unknown) => {
    // EVENT_VALUE_SHAPES, WEBHOOK_HEALTH_CHECK_BODY: the alt variant's values.
    const body =
      ctx.variant === "alt"
        ? deliveryBody(row, event, altEventValue(ctx.db, event, prev), altEventValue(ctx.db, event, cur))
        : deliveryBody(row, event, prev, cur)
    const pending: Pending = {
      deliveryId: ctx.ids.id(),
      webhookId: row.id,
      url: row.url,
      body,
      signature: sign(body, row.secret)
    }
    ctx.db
      .prepare(
        "INSERT INTO webhook_deliveries (id, webhook_id, event, workspace_id, body, signature, status, attempts, created_at) VALUES (?, ?, ?, ?, ?, ?, 'QUEUED', 0, ?)"
      )
      .run(pending.deliveryId, row.id, event, workspaceId, body, pending.signature, ctx.clock.iso())
    const faults = deliveryFaultsOf(ctx)
    const jitter = () => (faults.jitterMs > 0 ? scale(Math.floor(Math.random() * faults.jitterMs)) : 0)
    schedule(pending, 1, scale(WEBHOOK_FIRST_DELAY_MS) + jitter())
    // The same body and signature again, as its own delivery.
    if (faults.duplicate) later(jitter(), () => schedule({ ...pending, deliveryId: duplicateOf(pending) }, 1, scale(WEBHOOK_FIRST_DELAY_MS) + jitter()))
  }

  const duplicateOf = (p: Pending): string => {
    const id = ctx.ids.id()
    ctx.db
      .prepare(
        "INSERT INTO webhook_deliveries (id, webhook_id, event, workspace_id, body, signature, status, attempts, created_at) SELECT ?, webhook_id, event, workspace_id, body, signature, 'QUEUED', 0, ? FROM webhook_deliveries WHERE id = ?"
      )
      .run(id, ctx.clock.iso(), p.deliveryId)
    return id
  }

  const schedule = (p: Pending, attempt: number, delayMs: number) => {
    // A scaled timeout still leaves room for one real HTTP exchange on a busy machine.
    const timeoutMs = Math.max(scale(WEBHOOK_TIMEOUT_MS), Math.min(WEBHOOK_TIMEOUT_MS, WEBHOOK_MIN_TIMEOUT_MS))
    ctx.db
      .prepare(
        "INSERT INTO webhook_delivery_attempts (delivery_id, attempt, delay_ms, timeout_ms, at) VALUES (?, ?, ?, ?, ?)"
      )
      .run(p.deliveryId, attempt, delayMs, timeoutMs, ctx.clock.iso())
    later(delayMs, () => void attemptOnce(p, attempt, timeoutMs))
  }

  const finish = (p: Pending, status: "DELIVERED" | "FAILED" | "DROPPED", attempts: number) => {
    ctx.db
      .prepare("UPDATE webhook_deliveries SET status = ?, attempts = ?, finished_at = ? WHERE id = ?")
      .run(status, attempts, ctx.clock.iso(), p.deliveryId)
  }

  const attemptOnce = async (p: Pending, attempt: number, timeoutMs: number) => {
    // A webhook disabled or deleted while the delivery waited gets nothing more.
    const row = getWebhook(ctx, p.webhookId)
    if (row === undefined || row.enabled !== 1) return finish(p, "DROPPED", attempt - 1)
    const controller = new AbortController()
    inflight.add(controller)
    const timer = setTimeout(() => controller.abort(), timeoutMs)
    let statusCode: number | null = null
    let error: string | null = null
    try {
      const res = await fetch(p.url, {
        method: "POST",
        headers: { "content-type": "application/json", "x-signature": p.signature },
        body: p.body,
        signal: controller.signal,
        redirect: "manual"
      })
      statusCode = res.status
      await res.arrayBuffer().catch(() => undefined)
    } catch (e) {
      error = controller.signal.aborted ? "timeout" : e instanceof Error ? e.message : String(e)
    } finally {
      clearTimeout(timer)
      inflight.delete(controller)
    }
    if (stopped) return
    ctx.db
      .prepare("UPDATE webhook_delivery_attempts SET status_code = ?, error = ? WHERE delivery_id = ? AND attempt = ?")
      .run(statusCode, error, p.deliveryId, attempt)
    if (statusCode !== null && statusCode >= 200 && statusCode < 300) {
      // WEBHOOK_STATUS_AFTER_REENABLE, alt: a re-enabled webhook is HEALTHY once a delivery succeeds.
      if (ctx.variant === "alt") {
        ctx.db
          .prepare("UPDATE webhooks SET status = 'HEALTHY', updated_at = ? WHERE id = ? AND enabled = 1 AND status = 'UNHEALTHY'")
          .run(ctx.clock.iso(), p.webhookId)
      }
      return finish(p, "DELIVERED", attempt)
    }
    if (attempt < WEBHOOK_ATTEMPTS) {
      const backoffs = readingOf(ctx).webhookRetryBackoffMs
      const backoff = backoffs[attempt - 1] ?? backoffs[backoffs.length - 1] ?? 0
      ctx.db.prepare("UPDATE webhook_deliveries SET attempts = ? WHERE id = ?").run(attempt, p.deliveryId)
      return schedule(p, attempt + 1, scale(backoff))
    }
    finish(p, "FAILED", attempt)
    markUnhealthy(p.webhookId)
  }

  const markUnhealthy = (webhookId: string) => {
    const row = getWebhook(ctx, webhookId)
    if (row === undefined || (row.enabled === 0 && row.status === "UNHEALTHY")) return
    ctx.db
      .prepare("UPDATE webhooks SET enabled = 0, status = 'UNHEALTHY', updated_at = ? WHERE id = ?")
      .run(ctx.clock.iso(), webhookId)
    const email = userEmail(ctx, row.user_id)
    if (email !== null) {
      sendEmail(ctx, {
        kind: "WEBHOOK_DISABLED",
        toEmail: email,
        toUserId: row.user_id,
        subject: `Webhook ${row.name ?? row.uid} was disabled`,
        body: `Every delivery attempt to ${row.url} failed; the webhook is now disabled and UNHEALTHY. Re-enable it once the endpoint answers 2xx.`,
        refId: row.id
      })
    }
  }

  const unsubscribe = ctx.events.subscribe((event) => {
    if (stopped) return
    if (event.event === WEBHOOK_HEALTH_CHECK_EVENT) {
      // Addressed to one webhook only, and not subject to the subscription filters.
      const target = (event.currentValue as { id?: unknown } | null)?.id
      const row = typeof target === "string" ? getWebhook(ctx, target) : undefined
      if (row !== undefined && row.enabled === 1) enqueue(row, event.event, null, event.previousValue, event.currentValue)
      return
    }
    for (const row of enabledWebhooks(ctx)) {
      if (matches(ctx, row, event)) enqueue(row, event.event, event.workspaceId, event.previousValue, event.currentValue)
    }
  })

  return {
    stop: () => {
      stopped = true
      unsubscribe()
      for (const t of timers) clearTimeout(t)
      timers.clear()
      for (const c of inflight) c.abort()
      inflight.clear()
    }
  }
}
