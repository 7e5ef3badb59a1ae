/**
 * Webhook signatures are checked in constant time on the raw bytes
 * (R-WEBHOOK-DELIVERY-09/10): `verifySignature` accepts only the hex HMAC-SHA256 of the
 * exact bytes received, in either hex case (hex digits carry no case meaning), and
 * rejects re-serialized bodies, truncated or padded signatures and anything that is not
 * 64 hex digits, without ever throwing. End to end, a delivery the emulator signs is
 * accepted by the library's receiver and the same delivery re-serialized is refused.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Queue from "effect/Queue"
import { createHmac } from "node:crypto"
import * as fs from "node:fs"
import { emulatorScoped } from "../../src/emulator/index.ts"
import { webhookQueue } from "../../src/webhooks/receiver.ts"
import { verifySignature } from "../../src/webhooks/signature.ts"

const SECRET = "whsec-security-review"
const hmacHex = (body: Uint8Array | string, secret = SECRET) => createHmac("sha256", secret).update(body).digest("hex")

const RAW = Buffer.from('{"event":"TODO_CREATED",  "previousValue":null,"currentValue":{"title":"Caf\\u00e9 \u00e9","n":1.0}}', "utf8")
const GOOD = hmacHex(RAW)

describe("verifySignature (library, src/webhooks/signature.ts)", () => {
  it("R-WEBHOOK-DELIVERY-09: the hex HMAC-SHA256 of the exact raw bytes verifies, in lower, upper or mixed hex case", () => {
    expect(verifySignature(RAW, GOOD, SECRET)).toBe(true)
    expect(verifySignature(RAW, GOOD.toUpperCase(), SECRET)).toBe(true)
    const mixed = [...GOOD].map((c, i) => (i % 2 === 0 ? c.toUpperCase() : c)).join("")
    expect(verifySignature(RAW, mixed, SECRET)).toBe(true)
    expect(verifySignature(new Uint8Array(RAW), GOOD, SECRET)).toBe(true)
  })

  it("R-WEBHOOK-DELIVERY-10: the same JSON re-serialized (spacing, escapes, number form, key order) does not verify", () => {
    const parsed = JSON.parse(RAW.toString("utf8")) as Record<string, unknown>
    const variants = [
      JSON.stringify(parsed),
      JSON.stringify(parsed, null, 2),
      JSON.stringify({ previousValue: parsed["previousValue"], event: parsed["event"], currentValue: parsed["currentValue"] }),
      RAW.toString("utf8").replace("\\u00e9", "\u00e9"),
      RAW.toString("utf8").replace("1.0", "1"),
      `${RAW.toString("utf8")}\n`
    ]
    for (const v of variants) {
      expect(Buffer.from(v).equals(RAW)).toBe(false)
      expect(verifySignature(Buffer.from(v), GOOD, SECRET), v).toBe(false)
    }
    // The body decoded as latin1 and re-encoded is other bytes too.
    expect(verifySignature(Buffer.from(RAW.toString("latin1"), "utf8"), GOOD, SECRET)).toBe(false)
  })

  it("R-WEBHOOK-DELIVERY-09: truncated, padded, odd-length, non-hex, prefixed and empty signatures are false, never a throw", () => {
    const bad = [
      GOOD.slice(0, 63),
      GOOD.slice(0, 62),
      GOOD.slice(0, 32),
      GOOD.slice(0, 1),
      `${GOOD}0`,
      `${GOOD}00`,
      GOOD + GOOD,
      `${GOOD.slice(0, 63)}g`,
      `${GOOD.slice(0, 62)}zz`,
      `sha256=${GOOD}`,
      `0x${GOOD.slice(2)}`,
      Buffer.from(GOOD, "hex").toString("base64"),
      Buffer.from(GOOD, "hex").toString("latin1"),
      GOOD.replace(/./g, "\u0660"),
      "",
      " "
    ]
    for (const sig of bad) {
      expect(() => verifySignature(RAW, sig, SECRET)).not.toThrow()
      expect(verifySignature(RAW, sig, SECRET), JSON.stringify(sig)).toBe(false)
    }
    // Every length of hex from 0 to 130 digits: only the right 64 pass, nothing throws
    // (timingSafeEqual throws on unequal lengths, so this proves the length check).
    for (let n = 0; n <= 130; n++) {
      const sig = (GOOD + GOOD + GOOD).slice(0, n)
      expect(verifySignature(RAW, sig, SECRET)).toBe(n === 64)
    }
  })

  it("R-WEBHOOK-DELIVERY-09: a signature under another secret, or over one changed byte, is false", () => {
    expect(verifySignature(RAW, hmacHex(RAW, `${SECRET}x`), SECRET)).toBe(false)
    expect(verifySignature(RAW, GOOD, `${SECRET} `)).toBe(false)
    const flipped = Buffer.from(RAW)
    flipped[5] = flipped[5]! ^ 1
    expect(verifySignature(flipped, GOOD, SECRET)).toBe(false)
    // One hex digit changed, at the start and at the end.
    const change = (s: string, i: number) => s.slice(0, i) + (s[i] === "0" ? "1" : "0") + s.slice(i + 1)
    expect(verifySignature(RAW, change(GOOD, 0), SECRET)).toBe(false)
    expect(verifySignature(RAW, change(GOOD, 63), SECRET)).toBe(false)
  })

  it("R-WEBHOOK-DELIVERY-09 (review): the comparison is crypto.timingSafeEqual on equal-length byte buffers, never a string compare", () => {
    const source = fs.readFileSync(new URL("../../src/webhooks/signature.ts", import.meta.url), "utf8")
    const body = source.slice(source.indexOf("export const verifySignature"))
    expect(source).toMatch(/import\s*\{[^}]*\btimingSafeEqual\b[^}]*\}\s*from\s*"node:crypto"/)
    expect(body).toMatch(/return timingSafeEqual\(/)
    // A length check guards the call (timingSafeEqual throws on unequal lengths).
    expect(body.indexOf(".length !== expected.length")).toBeGreaterThan(-1)
    expect(body.indexOf(".length !== expected.length")).toBeLessThan(body.indexOf("timingSafeEqual("))
    // No early-exit comparison of the signature text itself.
    expect(body).not.toMatch(/given\s*===|===\s*given|expected(Hex)?\s*===|\.equals\(/)
  })
})

describe("webhook signatures end to end (emulator -> library receiver)", () => {
  it.live("R-WEBHOOK-DELIVERY-09/10: the emulator's signed delivery is accepted on its raw bytes; the same delivery re-serialized, truncated or re-signed wrongly is 401", () =>
    Effect.gen(function*() {
      const emu = yield* emulatorScoped({ seed: "demo", timeScale: 0.01 })
      const ws = emu.workspaces[0]!
      const app = { "svc-token-id": emu.tokenId, "svc-token-secret": emu.tokenSecret, "svc-org-id": emu.org }
      // The receiver needs the secret, known only once the webhook exists: create the
      // webhook first, then point it at the receiver.
      const created = yield* Effect.promise(() =>
        fetch(`${emu.baseUrl}/graphql`, {
          method: "POST",
          headers: { "content-type": "application/json", ...app },
          body: JSON.stringify({
            query: "mutation($input: CreateWebhookInput!) { createWebhook(input: $input) { id secret } }",
            variables: { input: { url: "http://127.0.0.1:9/unused", projectIds: [ws] } }
          })
        }).then((r) => r.json() as Promise<{ data: { createWebhook: { id: string; secret: string } } }>)
      )
      const { id: hookId, secret } = created.data.createWebhook
      const receiver = yield* webhookQueue({ secret })
      // Point the webhook at the receiver now that it listens.
      const edited = yield* Effect.promise(() =>
        fetch(`${emu.baseUrl}/graphql`, {
          method: "POST",
          headers: { "content-type": "application/json", ...app },
          body: JSON.stringify({
            query: "mutation($input: UpdateWebhookInput!) { updateWebhook(input: $input) { id url } }",
            variables: { input: { id: hookId, url: receiver.url } }
          })
        }).then((r) => r.json() as Promise<{ data?: { updateWebhook: { url: string } }; errors?: unknown }>)
      )
      expect(edited.errors, JSON.stringify(edited.errors)).toBeUndefined()
      const rec = yield* Effect.promise(() =>
        fetch(`${emu.restUrl}/v1/create-record`, {
          method: "POST",
          headers: { authorization: `Bearer ${emu.token}`, "content-type": "application/json", "svc-org-id": emu.org },
          body: JSON.stringify({ workspaceId: ws, title: "signed \u00e9 delivery" })
        })
      )
      expect(rec.status).toBe(200)
      // Waits on the delivery itself, with no deadline of its own: the test's timeout ends a wait for one that never comes.
      const got = yield* Queue.take(receiver.deliveries)
      const raw = Buffer.from(got.rawBody)
      const signature = hmacHex(raw, secret)
      expect(verifySignature(raw, signature, secret)).toBe(true)

      const post = (body: Uint8Array | string, sig: string) =>
        Effect.promise(() =>
          fetch(receiver.url, { method: "POST", headers: { "content-type": "application/json", "x-signature": sig }, body })
            .then((r) => r.status)
        )
      const reserialized = JSON.stringify(JSON.parse(raw.toString("utf8")))
      const pretty = JSON.stringify(JSON.parse(raw.toString("utf8")), null, 1)
      expect(yield* post(pretty, signature)).toBe(401)
      if (reserialized !== raw.toString("utf8")) expect(yield* post(reserialized, signature)).toBe(401)
      expect(yield* post(raw, signature.slice(0, 63))).toBe(401)
      expect(yield* post(raw, `${signature}00`)).toBe(401)
      expect(yield* post(raw, hmacHex(raw, `${secret}x`))).toBe(401)
      expect(yield* post(raw, signature.toUpperCase())).toBe(200)
      expect(yield* post(raw, signature)).toBe(200)
      // Only the two good posts (plus the emulator's own, taken above) were delivered.
      yield* Effect.sleep(Duration.millis(50))
      const rest = yield* Queue.clear(receiver.deliveries)
      expect(rest.filter((d) => Buffer.from(d.rawBody).equals(raw)).length).toBeGreaterThanOrEqual(2)
      expect(rest.every((d) => Buffer.from(d.rawBody).equals(raw) || d.delivery.event !== got.delivery.event)).toBe(true)
    }), 20_000)
})
