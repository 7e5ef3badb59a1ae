import { createHmac } from "node:crypto"
import { Effect, Layer, Queue } from "effect"
import { describe, expect, layer } from "@effect/vitest"
import { startEmulator, type EmulatorHandle } from "../../src/emulator/index.ts"
import { WEBHOOK_ATTEMPTS, WEBHOOK_FIRST_DELAY_MS, WEBHOOK_TIMEOUT_MS } from "../../src/emulator/webhooks/timing.ts"
import { WEBHOOK_MIN_TIMEOUT_MS, WEBHOOK_RETRY_BACKOFF_MS } from "../../src/schema/assumptions.ts"
import { webhookQueue } from "../../src/webhooks/receiver.ts"
import { verifySignature } from "../../src/webhooks/signature.ts"
import { Emulator, emulatorLayer } from "../support/effect.ts"
import { eventually, gql, makeUser, receiver, rest, type Caller } from "./graphql-support.ts"

const SCALE = 0.01
let h: EmulatorHandle

// The helpers below read the file's emulator, and what the set-up derives from it, from these
// bindings: the layer fills them once the emulator is up and closes it after the last test.
const fileLayer = Layer.effectDiscard(
  Effect.gen(function* () {
    h = yield* Emulator
  })
).pipe(Layer.provideMerge(emulatorLayer({ variant: "reference", timeScale: SCALE })))

const CREATE = `mutation($input: CreateWebhookInput!) {
  createWebhook(input: $input) { id uid secret status enabled events projectIds metadata }
}`

const createHook = async (
  url: string,
  input: { events?: Array<string>; projectIds?: Array<string> } = {},
  caller?: Caller
): Promise<{ id: string; uid: string; secret: string }> => {
  const r = await gql(h, CREATE, { input: { url, ...input } }, { headers: { "svc-org-id": h.org }, ...(caller ? { caller } : {}) })
  if (r.body.errors !== undefined) throw new Error(JSON.stringify(r.body.errors))
  return r.body.data!["createWebhook"]
}

let wsCounter = 0
const workspace = () => h.admin.createWorkspace({ name: `Delivery ${++wsCounter}` }).id

const deliveries = (webhookId: string) =>
  h.ctx.db.prepare("SELECT * FROM webhook_deliveries WHERE webhook_id = ? ORDER BY created_at, id").all(webhookId) as Array<{
    id: string
    event: string
    status: string
    attempts: number
  }>

const attempts = (deliveryId: string) =>
  h.ctx.db.prepare("SELECT * FROM webhook_delivery_attempts WHERE delivery_id = ? ORDER BY attempt").all(deliveryId) as Array<{
    attempt: number
    delay_ms: number
    timeout_ms: number
    status_code: number | null
    error: string | null
  }>

const createRecord = async (workspaceId: string, body: Record<string, unknown> = {}) => {
  const r = await rest(h, "create-record", { workspaceId, title: "Webhook record", ...body })
  if (r.status !== 200) throw new Error(JSON.stringify(r.body))
  return r.body as { id: string; list: { id: string } }
}

// Real HTTP and real waits: the live clock (no TestClock), so timers and time scales run.
layer(fileLayer, { timeout: 30_000, excludeTestServices: true })((it) => {
  let post: { method: string; headers: Record<string, unknown>; raw: Buffer; json: any }
  let hook: { id: string; uid: string; secret: string }
  let ws: string
  let recv: Awaited<ReturnType<typeof receiver>>

  // One TAG_CREATED and one TODO_CREATED delivered to a receiver, which closes after the group's last test.
  const delivered = Layer.effectDiscard(
    Effect.gen(function* () {
      ws = workspace()
      recv = yield* Effect.acquireRelease(Effect.promise(() => receiver()), (r) => Effect.promise(() => r.close()))
      yield* Effect.promise(async () => {
        hook = await createHook(recv.url, { projectIds: [ws] })
        const tag = await rest(h, "create-tag", { workspaceId: ws, title: "urgent", color: "red" })
        await recv.next(1) // TAG_CREATED
        await createRecord(ws, { tagIds: [tag.body.id], assigneeIds: [h.ownerUserId] })
        await recv.next(2)
        post = recv.posts[1]!
      })
    })
  )

  it.layer(delivered)("a delivered TODO_CREATED", (it) => {

    it.effect("R-WEBHOOK-DELIVERY-01: a delivery is an HTTP POST with a JSON body", () => Effect.sync(() => {
      expect(post.method).toBe("POST")
      expect(String(post.headers["content-type"])).toContain("application/json")
      expect(post.json).toBeTypeOf("object")
    }))

    it.effect("R-WEBHOOK-DELIVERY-02: `event` is the WebhookEvent value that fired", () => Effect.sync(() => {
      expect(recv.posts[0]!.json.event).toBe("TAG_CREATED")
      expect(post.json.event).toBe("TODO_CREATED")
    }))

    it.effect("R-WEBHOOK-DELIVERY-03: `webhook` is the configuration: id, uid, url, status, enabled, metadata {events, projectIds}", () => Effect.sync(() => {
      expect(post.json.webhook).toEqual({
        id: hook.id,
        uid: hook.uid,
        url: recv.url,
        status: "HEALTHY",
        enabled: true,
        metadata: { events: [], projectIds: [ws] }
      })
    }))

    it.effect("R-WEBHOOK-DELIVERY-04: the secret is removed from the delivered configuration", () => Effect.sync(() => {
      expect("secret" in post.json.webhook).toBe(false)
      expect(post.raw.toString("utf8")).not.toContain(hook.secret)
    }))

    it.effect("R-WEBHOOK-DELIVERY-06: previousValue is null for a create event", () => Effect.sync(() => {
      expect(post.json.previousValue).toBeNull()
      expect(recv.posts[0]!.json.previousValue).toBeNull()
    }))

    it.effect("R-WEBHOOK-DELIVERY-07: currentValue is the state after the change with related rows expanded", () => Effect.sync(() => {
      const current = post.json.currentValue
      expect(current.title).toBe("Webhook record")
      expect(current.todoList).toMatchObject({ id: expect.any(String), title: expect.any(String) })
      expect(current.tags).toEqual([expect.objectContaining({ title: "urgent", color: "red" })])
      expect(current.users).toEqual([expect.objectContaining({ id: h.ownerUserId, email: expect.any(String) })])
    }))

    it.effect("R-WEBHOOK-DELIVERY-09: X-Signature is the hex HMAC-SHA256 of the exact raw body, keyed by the secret", () => Effect.sync(() => {
      const signature = String(post.headers["x-signature"])
      expect(signature).toMatch(/^[0-9a-f]{64}$/)
      expect(signature).toBe(createHmac("sha256", hook.secret).update(post.raw).digest("hex"))
      expect(verifySignature(post.raw, signature, hook.secret)).toBe(true)
    }))

    it.effect("R-WEBHOOK-DELIVERY-10: an HMAC over a re-serialized body does not verify", () => Effect.sync(() => {
      const reserialized = Buffer.from(JSON.stringify(post.json, null, 2), "utf8")
      expect(verifySignature(reserialized, String(post.headers["x-signature"]), hook.secret)).toBe(false)
    }))
  })

  describe("previous and current values", () => {
    it.effect("R-WEBHOOK-DELIVERY-05: previousValue is the state before the change", () => Effect.promise(async () => {
      const ws = workspace()
      const recv = await receiver()
      await createHook(recv.url, { projectIds: [ws], events: ["TODO_NAME_CHANGED"] })
      const record = await createRecord(ws, { title: "Before" })
      await rest(h, "update-record", { workspaceId: ws, recordId: record.id, title: "After" })
      await recv.next(1)
      expect(recv.posts[0]!.json.previousValue.title).toBe("Before")
      expect(recv.posts[0]!.json.currentValue.title).toBe("After")
      await recv.close()
    }))

    it.effect("R-WEBHOOK-DELIVERY-08: currentValue is null for a delete event", () => Effect.promise(async () => {
      const ws = workspace()
      const recv = await receiver()
      await createHook(recv.url, { projectIds: [ws], events: ["TODO_DELETED"] })
      const record = await createRecord(ws, { title: "Doomed" })
      await rest(h, "delete-record", { workspaceId: ws, recordId: record.id })
      await recv.next(1)
      expect(recv.posts[0]!.json.event).toBe("TODO_DELETED")
      expect(recv.posts[0]!.json.currentValue).toBeNull()
      expect(recv.posts[0]!.json.previousValue.title).toBe("Doomed")
      await recv.close()
    }))
  })

  describe("timing and retries", () => {
    it.effect("R-WEBHOOK-DELIVERY-11: each event is queued with a 5-second delay before the first attempt (R-LIMIT-07)", () => Effect.promise(async () => {
      expect(WEBHOOK_FIRST_DELAY_MS).toBe(5_000)
      // A slower emulator, so the queued state is observable right after the write.
      const slow = await startEmulator({ variant: "reference", timeScale: 0.2 })
      try {
        const recv = await receiver()
        const created = await fetch(`${slow.baseUrl}/graphql`, {
          method: "POST",
          headers: { "content-type": "application/json", "svc-token-id": slow.tokenId, "svc-token-secret": slow.tokenSecret, "svc-org-id": slow.org },
          body: JSON.stringify({ query: `mutation { createWebhook(input: { url: "${recv.url}" }) { id } }` })
        })
        const hookId = ((await created.json()) as any).data.createWebhook.id as string
        await fetch(`${slow.restUrl}/v1/create-record`, {
          method: "POST",
          headers: { "content-type": "application/json", authorization: `Bearer ${slow.token}` },
          body: JSON.stringify({ workspaceId: slow.workspaces[0], title: "queued" })
        })
        const queued = slow.ctx.db.prepare("SELECT id, status FROM webhook_deliveries WHERE webhook_id = ?").get(hookId) as { id: string; status: string }
        expect(queued.status).toBe("QUEUED")
        expect(recv.posts).toHaveLength(0)
        const first = slow.ctx.db.prepare("SELECT delay_ms FROM webhook_delivery_attempts WHERE delivery_id = ? AND attempt = 1").get(queued.id) as { delay_ms: number }
        expect(first.delay_ms).toBe(5_000 * 0.2)
        await recv.next(1)
        await recv.close()
      } finally {
        await slow.close()
      }
    }))

    it.effect("R-WEBHOOK-DELIVERY-12: an attempt that gets no answer in 7 seconds times out and is retried (R-LIMIT-08)", () => Effect.promise(async () => {
      expect(WEBHOOK_TIMEOUT_MS).toBe(7_000)
      const ws = workspace()
      const recv = await receiver((i) => (i === 0 ? "hang" : 200))
      const hook = await createHook(recv.url, { projectIds: [ws] })
      await createRecord(ws)
      await recv.next(2)
      const delivery = await eventually(() => deliveries(hook.id).find((d) => d.status === "DELIVERED"))
      const tried = attempts(delivery.id)
      expect(tried[0]).toMatchObject({ attempt: 1, timeout_ms: Math.max(7_000 * SCALE, WEBHOOK_MIN_TIMEOUT_MS), error: "timeout", status_code: null })
      expect(tried[1]).toMatchObject({ attempt: 2, status_code: 200 })
      // The sender dropped the unanswered first request.
      await eventually(() => (recv.closed.includes(0) ? true : undefined))
      await recv.close()
    }))

    it.effect("R-WEBHOOK-DELIVERY-17: a failed attempt is retried with backoff, the same signed body each time", () => Effect.promise(async () => {
      const ws = workspace()
      const recv = await receiver((i) => (i < 2 ? 500 : 204))
      const hook = await createHook(recv.url, { projectIds: [ws] })
      await createRecord(ws)
      await recv.next(3)
      const delivery = await eventually(() => deliveries(hook.id).find((d) => d.status === "DELIVERED"))
      expect(delivery.attempts).toBe(3)
      expect(attempts(delivery.id).map((a) => a.delay_ms)).toEqual([
        5_000 * SCALE,
        WEBHOOK_RETRY_BACKOFF_MS[0] * SCALE,
        WEBHOOK_RETRY_BACKOFF_MS[1] * SCALE
      ])
      expect(attempts(delivery.id).map((a) => a.status_code)).toEqual([500, 500, 204])
      expect(new Set(recv.posts.map((p) => p.raw.toString("utf8"))).size).toBe(1)
      expect(new Set(recv.posts.map((p) => p.headers["x-signature"])).size).toBe(1)
      const status = await gql(h, `query($id: String!) { webhook(id: $id) { status enabled } }`, { id: hook.id })
      expect(status.body.data?.["webhook"]).toEqual({ status: "HEALTHY", enabled: true })
      await recv.close()
    }))

    let recv: Awaited<ReturnType<typeof receiver>>
    let hook: { id: string }
    // A webhook whose receiver answers 503 to every attempt, until its delivery is FAILED.
    const failing = Layer.effectDiscard(
      Effect.gen(function* () {
        const ws = workspace()
        recv = yield* Effect.acquireRelease(Effect.promise(() => receiver(() => 503)), (r) => Effect.promise(() => r.close()))
        yield* Effect.promise(async () => {
          hook = await createHook(recv.url, { projectIds: [ws] })
          await createRecord(ws)
          await recv.next(WEBHOOK_ATTEMPTS)
          await eventually(() => deliveries(hook.id).find((d) => d.status === "FAILED"))
        })
      })
    )

    it.layer(failing)("a webhook whose every attempt fails", (it) => {

      it.effect("R-LIMIT-09: delivery makes 5 attempts by default and no more", () => Effect.promise(async () => {
        expect(WEBHOOK_ATTEMPTS).toBe(5)
        const [delivery] = deliveries(hook.id)
        expect(delivery!.attempts).toBe(5)
        expect(attempts(delivery!.id)).toHaveLength(5)
        expect(recv.posts).toHaveLength(5)
      }))

      it.effect("R-WEBHOOK-12: after the last failure the webhook is UNHEALTHY, enabled false, and its creator is emailed", () => Effect.promise(async () => {
        const r = await gql(h, `query($id: String!) { webhook(id: $id) { status enabled } }`, { id: hook.id })
        expect(r.body.data?.["webhook"]).toEqual({ status: "UNHEALTHY", enabled: false })
        const owner = h.ctx.db.prepare("SELECT email FROM users WHERE id = ?").get(h.ownerUserId) as { email: string }
        const mail = h.ctx.db.prepare("SELECT * FROM email_outbox WHERE kind = 'WEBHOOK_DISABLED' AND ref_id = ?").all(hook.id) as Array<{
          to_email: string
          to_user_id: string
        }>
        expect(mail).toHaveLength(1)
        expect(mail[0]).toMatchObject({ to_email: owner.email, to_user_id: h.ownerUserId })
      }))
    })
  })

  describe("who receives an event", () => {
    it.effect("R-WEBHOOK-DELIVERY-13: a webhook that is not enabled receives no events", () => Effect.promise(async () => {
      const ws = workspace()
      const off = await receiver()
      const on = await receiver()
      const disabled = await createHook(off.url, { projectIds: [ws] })
      const paused = await createHook(off.url, { projectIds: [ws] })
      const control = await createHook(on.url, { projectIds: [ws] })
      await gql(h, `mutation($id: String!) { disableWebhook(id: $id) { id } }`, { id: disabled.id })
      await gql(h, `mutation($i: UpdateWebhookInput!) { updateWebhook(input: $i) { id } }`, { i: { id: paused.id, enabled: false } })
      await createRecord(ws)
      await on.next(1)
      expect(deliveries(control.id)).toHaveLength(1)
      expect(deliveries(disabled.id)).toHaveLength(0)
      expect(deliveries(paused.id)).toHaveLength(0)
      expect(off.posts).toHaveLength(0)
      await off.close()
      await on.close()
    }))

    it.effect("R-WEBHOOK-DELIVERY-14: a webhook receives an event only when its events list contains it or is empty", () => Effect.promise(async () => {
      const ws = workspace()
      const recv = await receiver()
      const tagsOnly = await createHook(recv.url, { projectIds: [ws], events: ["TAG_CREATED"] })
      const all = await createHook(recv.url, { projectIds: [ws], events: [] })
      await createRecord(ws)
      await rest(h, "create-tag", { workspaceId: ws, title: "t" })
      await recv.next(3)
      expect(deliveries(tagsOnly.id).map((d) => d.event)).toEqual(["TAG_CREATED"])
      expect(deliveries(all.id).map((d) => d.event).sort()).toEqual(["TAG_CREATED", "TODO_CREATED"])
      await recv.close()
    }))

    it.effect("R-WEBHOOK-DELIVERY-15: a webhook receives an event only when its projectIds contain the workspace or are empty", () => Effect.promise(async () => {
      const inside = workspace()
      const outside = workspace()
      const recv = await receiver()
      const scoped = await createHook(recv.url, { projectIds: [inside], events: ["TODO_CREATED"] })
      const everywhere = await createHook(recv.url, { events: ["TODO_CREATED"] })
      await createRecord(outside)
      await createRecord(inside)
      await eventually(() => (deliveries(everywhere.id).filter((d) => d.status === "DELIVERED").length >= 2 ? true : undefined))
      expect(deliveries(scoped.id)).toHaveLength(1)
      const delivered = h.ctx.db.prepare("SELECT workspace_id FROM webhook_deliveries WHERE webhook_id = ?").all(scoped.id) as Array<{ workspace_id: string }>
      expect(delivered).toEqual([{ workspace_id: inside }])
      await gql(h, `mutation($id: String!) { deleteWebhook(id: $id) }`, { id: everywhere.id })
      await recv.close()
    }))

    it.effect("R-WEBHOOK-DELIVERY-16: a webhook receives an event only while its creator is a member of the workspace", () => Effect.promise(async () => {
      const ws = workspace()
      const member = makeUser(h, { orgLevel: "MEMBER", workspaces: { [ws]: "MEMBER" } })
      const recv = await receiver()
      const hook = await createHook(recv.url, { projectIds: [ws], events: ["TODO_CREATED"] }, member)
      await createRecord(ws)
      await recv.next(1)
      h.admin.removeWorkspaceMember(ws, member.userId)
      await createRecord(ws)
      expect(deliveries(hook.id)).toHaveLength(1)
      await recv.close()
    }))

    it.effect("R-WEBHOOK-DELIVERY-18: a receiver built on the library takes the WEBHOOK_HEALTH_CHECK the service sends on re-enable", () => Effect.promise(async () => {
      await Effect.runPromise(
        Effect.scoped(
          Effect.gen(function* () {
            // The secret is only known after creation: create against a placeholder, then point the webhook at the receiver.
            const hook = yield* Effect.promise(() => createHook("http://127.0.0.1:9/placeholder", { projectIds: [workspace()] }))
            const lib = yield* webhookQueue({ secret: hook.secret })
            yield* Effect.promise(() => gql(h, `mutation($id: String!) { disableWebhook(id: $id) { id } }`, { id: hook.id }))
            yield* Effect.promise(() =>
              gql(h, `mutation($i: UpdateWebhookInput!) { updateWebhook(input: $i) { id } }`, { i: { id: hook.id, url: lib.url, enabled: true } })
            )
            // Waits on the delivery itself, with no deadline of its own: the test's timeout ends a wait for one that never comes.
            const got = yield* Queue.take(lib.deliveries)
            expect(got.delivery.event).toBe("WEBHOOK_HEALTH_CHECK")
            expect(got.delivery.webhook.id).toBe(hook.id)
            expect(got.delivery.webhook.status).toBe("HEALTHY")
          })
        )
      )
    }))
  })
})
