import { createHmac } from "node:crypto"
import { Effect, Queue } from "effect"
import { describe, expect, it, layer } from "@effect/vitest"
import { serveWebhookBatches, serveWebhooks, WebhookDeliveries, WebhookDeliveriesLive, webhookQueue } from "../../src/webhooks/receiver.ts"

const SECRET = "receiver-test-secret"
const sign = (body: string, secret = SECRET) => createHmac("sha256", secret).update(body, "utf8").digest("hex")

const delivery = (event: string) =>
  JSON.stringify({
    event,
    webhook: {
      id: "w1",
      uid: "abc",
      url: "http://x",
      status: "HEALTHY",
      enabled: true,
      metadata: { events: [], projectIds: [] }
    },
    previousValue: null,
    currentValue: { id: "r1", title: "A" }
  })

const post = (url: string, body: string, headers: Record<string, string>) =>
  Effect.promise(() =>
    fetch(url, { method: "POST", body, headers: { "content-type": "application/json", ...headers } }).then(async (r) => ({
      status: r.status,
      text: await r.text()
    }))
  )

describe("webhook receiver", () => {
  it.effect("R-WEBHOOK-DELIVERY-09: a correctly signed delivery is decoded and queued with its raw bytes", () =>
    Effect.gen(function* () {
      const receiver = yield* webhookQueue({ secret: SECRET })
      const body = delivery("TODO_CREATED")
      const res = yield* post(receiver.url, body, { "X-Signature": sign(body) })
      expect(res.status).toBe(200)
      const got = yield* Queue.take(receiver.deliveries)
      expect(got.delivery.event).toBe("TODO_CREATED")
      expect(got.delivery.currentValue).toEqual({ id: "r1", title: "A" })
      expect(Buffer.from(got.rawBody).toString("utf8")).toBe(body)
      // With the signature it verified with, in lower case: what the mirror knows a duplicate by.
      expect(got.signature).toBe(sign(body))
      expect((yield* post(receiver.url, body, { "X-Signature": sign(body).toUpperCase() })).status).toBe(200)
      expect((yield* Queue.take(receiver.deliveries)).signature).toBe(sign(body))
    })
  )

  it.effect("R-WEBHOOK-DELIVERY-09: a bad or missing signature is 401 and nothing is delivered", () =>
    Effect.gen(function* () {
      const receiver = yield* webhookQueue({ secret: SECRET })
      const body = delivery("TODO_CREATED")
      expect((yield* post(receiver.url, body, { "X-Signature": sign(body, "wrong") })).status).toBe(401)
      expect((yield* post(receiver.url, body, {})).status).toBe(401)
      // R-WEBHOOK-DELIVERY-10: the signature of a re-serialized body does not pass either.
      const spaced = body.replace(/,/g, ", ")
      expect((yield* post(receiver.url, spaced, { "X-Signature": sign(body) })).status).toBe(401)
      expect((yield* Queue.clear(receiver.deliveries)).length).toBe(0)
    })
  )

  it.effect("R-WEBHOOK-DELIVERY-09: while a secret rotates, deliveries signed with either verify; one altered byte or another secret does not", () =>
    Effect.gen(function* () {
      let secrets = [SECRET]
      const receiver = yield* webhookQueue({ secret: () => secrets })
      const body = delivery("TODO_CREATED")
      expect((yield* post(receiver.url, body, { "X-Signature": sign(body, "next-secret") })).status).toBe(401)
      secrets = ["next-secret", SECRET]
      expect((yield* post(receiver.url, body, { "X-Signature": sign(body) })).status).toBe(200)
      expect((yield* post(receiver.url, body, { "X-Signature": sign(body, "next-secret") })).status).toBe(200)
      const altered = body.replace("\"A\"", "\"B\"")
      expect((yield* post(receiver.url, altered, { "X-Signature": sign(body, "next-secret") })).status).toBe(401)
      expect((yield* post(receiver.url, body, { "X-Signature": sign(body, "a third one") })).status).toBe(401)
      secrets = ["next-secret"]
      expect((yield* post(receiver.url, body, { "X-Signature": sign(body) })).status).toBe(401)
      expect((yield* Queue.clear(receiver.deliveries)).length).toBe(2)
    })
  )

  it.effect("R-WEBHOOK-DELIVERY-18: an unknown event string such as WEBHOOK_HEALTH_CHECK is delivered, not rejected", () =>
    Effect.gen(function* () {
      const receiver = yield* webhookQueue({ secret: SECRET })
      for (const event of ["WEBHOOK_HEALTH_CHECK", "SOMETHING_NEW_LATER"]) {
        const body = delivery(event)
        expect((yield* post(receiver.url, body, { "x-signature": sign(body) })).status).toBe(200)
      }
      const events = (yield* Queue.clear(receiver.deliveries)).map((d) => d.delivery.event)
      expect(events).toEqual(["WEBHOOK_HEALTH_CHECK", "SOMETHING_NEW_LATER"])
    })
  )

  it.effect("R-WEBHOOK-DELIVERY-03: a signed body that is not a delivery is 400 and not delivered", () =>
    Effect.gen(function* () {
      const receiver = yield* webhookQueue({ secret: SECRET })
      const body = JSON.stringify({ event: "TODO_CREATED" })
      const res = yield* post(receiver.url, body, { "x-signature": sign(body) })
      expect(res.status).toBe(400)
      expect(res.text).toContain("webhook")
      expect((yield* Queue.clear(receiver.deliveries)).length).toBe(0)
    })
  )

  it.effect("R-WEBHOOK-DELIVERY-17: a failing handler answers 500 so the sender retries", () =>
    Effect.gen(function* () {
      const receiver = yield* serveWebhooks({ secret: SECRET }, () => Effect.fail("down"))
      const body = delivery("TAG_CREATED")
      expect((yield* post(receiver.url, body, { "x-signature": sign(body) })).status).toBe(500)
    })
  )

  it.effect("R-WEBHOOK-DELIVERY-17: batches: every verified delivery is handed on once, in a batch answered 200 once it is handled; a failing batch is 500 to each", () =>
    Effect.gen(function* () {
      const batches: Array<Array<string>> = []
      let down = false
      const receiver = yield* serveWebhookBatches({ secret: SECRET }, (batch) =>
        down ? Effect.fail("down") : Effect.sync(() => void batches.push(batch.map((d) => d.delivery.event))))
      const events = Array.from({ length: 12 }, (_, i) => `EVENT_${i}`)
      const bad = delivery("NOT_SIGNED")
      const answers = yield* Effect.all(
        [
          ...events.map((event) => {
            const body = delivery(event)
            return post(receiver.url, body, { "x-signature": sign(body) })
          }),
          post(receiver.url, bad, { "x-signature": sign(bad, "wrong") })
        ],
        { concurrency: "unbounded" }
      )
      expect(answers.map((a) => a.status)).toEqual([...events.map(() => 200), 401])
      // Each once, none of the refused one; no batch is empty.
      expect(batches.flat().sort()).toEqual([...events].sort())
      expect(batches.every((b) => b.length > 0)).toBe(true)
      down = true
      const again = yield* Effect.all(
        events.slice(0, 3).map((event) => {
          const body = delivery(event)
          return post(receiver.url, body, { "x-signature": sign(body) })
        }),
        { concurrency: "unbounded" }
      )
      expect(again.map((a) => a.status)).toEqual([500, 500, 500])
    })
  )

  it("the server closes with its scope", async () => {
    const url = await Effect.runPromise(Effect.scoped(webhookQueue({ secret: SECRET }).pipe(Effect.map((r) => r.url))))
    await expect(fetch(url, { method: "POST", body: "{}" })).rejects.toThrow()
  })
})

layer(WebhookDeliveriesLive({ secret: SECRET, path: "/hooks/worksync" }))("WebhookDeliveriesLive", (it) => {
  it.effect("R-WEBHOOK-DELIVERY-09: the layer serves verified deliveries on its path only", () =>
    Effect.gen(function* () {
      const receiver = yield* WebhookDeliveries
      expect(receiver.url.endsWith("/hooks/worksync")).toBe(true)
      const body = delivery("COMMENT_CREATED")
      expect((yield* post(receiver.url, body, { "x-signature": sign(body) })).status).toBe(200)
      expect((yield* post(receiver.url.replace("/hooks/worksync", "/other"), body, { "x-signature": sign(body) })).status).toBe(404)
      const got = yield* Queue.take(receiver.deliveries)
      expect(got.delivery.event).toBe("COMMENT_CREATED")
    })
  )
})
