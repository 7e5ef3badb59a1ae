/**
 * Webhook signatures: `X-Signature` is the hex HMAC-SHA256 of the exact raw body bytes,
 * keyed by the webhook secret (R-WEBHOOK-DELIVERY-09). Verification works on bytes, never
 * on a re-serialized body (R-WEBHOOK-DELIVERY-10).
 */
import { createHmac, timingSafeEqual } from "node:crypto"
import * as Redacted from "effect/Redacted"

/** The header a delivery carries its signature in (node lower-cases incoming names). */
export const SIGNATURE_HEADER = "x-signature"

const secretValue = (secret: string | Redacted.Redacted<string>): string =>
  Redacted.isRedacted(secret) ? Redacted.value(secret) : secret

/** Hex HMAC-SHA256 of `rawBody` keyed by `secret`. */
export const signBody = (rawBody: Uint8Array, secret: string | Redacted.Redacted<string>): string =>
  createHmac("sha256", secretValue(secret)).update(rawBody).digest("hex")

const HEX = /^[0-9a-fA-F]+$/

/**
 * True when `signatureHex` is the signature of `rawBody` under `secret`. The comparison
 * is constant-time; a malformed or wrong-length signature is false, never a throw.
 */
export const verifySignature = (
  rawBody: Uint8Array,
  signatureHex: string,
  secret: string | Redacted.Redacted<string>
): boolean => {
  const expected = createHmac("sha256", secretValue(secret)).update(rawBody).digest()
  const given = signatureHex.trim()
  if (given.length !== expected.length * 2 || !HEX.test(given)) return false
  const givenBytes = Buffer.from(given, "hex")
  if (givenBytes.length !== expected.length) return false
  return timingSafeEqual(givenBytes, expected)
}
