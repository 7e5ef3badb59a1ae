import { createHmac } from "node:crypto"
import { Redacted } from "effect"
import * as fc from "fast-check"
import { describe, expect, it } from "vitest"
import { signBody, verifySignature } from "../../src/webhooks/signature.ts"

const hmac = (body: Uint8Array, secret: string) => createHmac("sha256", secret).update(body).digest("hex")

describe("verifySignature", () => {
  it("R-WEBHOOK-DELIVERY-09: accepts the hex HMAC-SHA256 of the exact raw body keyed by the secret", () => {
    const body = Buffer.from('{"event":"TODO_CREATED","currentValue":{"title":"é"}}', "utf8")
    expect(verifySignature(body, hmac(body, "s3cret"), "s3cret")).toBe(true)
    expect(verifySignature(body, hmac(body, "s3cret").toUpperCase(), "s3cret")).toBe(true)
    expect(verifySignature(body, hmac(body, "s3cret"), Redacted.make("s3cret"))).toBe(true)
    expect(signBody(body, "s3cret")).toBe(hmac(body, "s3cret"))
  })

  it("R-WEBHOOK-DELIVERY-10: a signature computed over a re-serialized body does not verify", () => {
    const raw = Buffer.from('{ "event": "TODO_CREATED",  "previousValue": null }', "utf8")
    const reserialized = Buffer.from(JSON.stringify(JSON.parse(raw.toString("utf8"))), "utf8")
    expect(verifySignature(raw, hmac(reserialized, "k"), "k")).toBe(false)
    expect(verifySignature(reserialized, hmac(reserialized, "k"), "k")).toBe(true)
  })

  it("R-WEBHOOK-DELIVERY-09: wrong secret, wrong length, non-hex and empty signatures are false, never a throw", () => {
    const body = Buffer.from("{}")
    const good = hmac(body, "k")
    expect(verifySignature(body, hmac(body, "other"), "k")).toBe(false)
    expect(verifySignature(body, good.slice(0, 62), "k")).toBe(false)
    expect(verifySignature(body, `${good}00`, "k")).toBe(false)
    expect(verifySignature(body, `${good.slice(0, 63)}z`, "k")).toBe(false)
    expect(verifySignature(body, "", "k")).toBe(false)
  })

  it("R-WEBHOOK-DELIVERY-09: any body verifies under its own signature and fails after any one-byte change", () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 1, maxLength: 200 }), fc.string(), fc.nat(), (bytes, secret, at) => {
        const sig = hmac(bytes, secret)
        expect(verifySignature(bytes, sig, secret)).toBe(true)
        const changed = Uint8Array.from(bytes)
        const i = at % changed.length
        changed[i] = (changed[i]! + 1) % 256
        expect(verifySignature(changed, sig, secret)).toBe(false)
      }),
      { numRuns: 200 }
    )
  })
})
