/**
 * Signed storage URLs. A presigned PUT is bound to method, key, expiry and Content-Type;
 * a signed GET to method, key, expiry, disposition, download name and type. The HMAC
 * key is random per emulator instance and never leaves the process.
 */
import { createHmac, randomBytes, timingSafeEqual } from "node:crypto"
import type { EmulatorContext } from "../context.ts"

// Keyed by the database handle: one emulator, one handle, one secret.
const secrets = new WeakMap<object, Buffer>()

const secretOf = (ctx: Pick<EmulatorContext, "db">): Buffer => {
  let secret = secrets.get(ctx.db)
  if (secret === undefined) {
    secret = randomBytes(32)
    secrets.set(ctx.db, secret)
  }
  return secret
}

const sign = (ctx: Pick<EmulatorContext, "db">, parts: ReadonlyArray<string>): string =>
  createHmac("sha256", secretOf(ctx)).update(parts.join("\n")).digest("hex")

const sameHex = (a: string, b: string): boolean => {
  if (a.length !== b.length || !/^[0-9a-f]+$/.test(a)) return false
  return timingSafeEqual(Buffer.from(a, "hex"), Buffer.from(b, "hex"))
}

/** The path of an object on the storage origin; the key is one encoded segment. */
export const objectPath = (key: string): string => `/o/${encodeURIComponent(key)}`

export const signPut = (ctx: Pick<EmulatorContext, "db">, key: string, expiresAt: number, contentType: string): string =>
  sign(ctx, ["PUT", key, String(expiresAt), contentType])

export const signGet = (
  ctx: Pick<EmulatorContext, "db">,
  key: string,
  expiresAt: number,
  disposition: string,
  name: string,
  contentType: string
): string => sign(ctx, ["GET", key, String(expiresAt), disposition, name, contentType])

export const presignedPutUrl = (
  ctx: Pick<EmulatorContext, "db" | "urls">,
  key: string,
  expiresAt: number,
  contentType: string
): string => {
  const q = new URLSearchParams({ exp: String(expiresAt), ct: contentType, sig: signPut(ctx, key, expiresAt, contentType) })
  return `${ctx.urls.storageUrl}${objectPath(key)}?${q.toString()}`
}

export type Disposition = "attachment" | "inline"

export const signedGetUrl = (
  ctx: Pick<EmulatorContext, "db" | "urls">,
  key: string,
  expiresAt: number,
  disposition: Disposition,
  name: string,
  contentType: string
): string => {
  const q = new URLSearchParams({
    exp: String(expiresAt),
    disposition,
    name,
    ct: contentType,
    sig: signGet(ctx, key, expiresAt, disposition, name, contentType)
  })
  return `${ctx.urls.storageUrl}${objectPath(key)}?${q.toString()}`
}

export const verifyPut = (
  ctx: Pick<EmulatorContext, "db">,
  key: string,
  expiresAt: number,
  contentType: string,
  sig: string
): boolean => sameHex(sig, signPut(ctx, key, expiresAt, contentType))

export const verifyGet = (
  ctx: Pick<EmulatorContext, "db">,
  key: string,
  expiresAt: number,
  disposition: string,
  name: string,
  contentType: string,
  sig: string
): boolean => sameHex(sig, signGet(ctx, key, expiresAt, disposition, name, contentType))

/** `Content-Disposition` with an ASCII fallback and the exact name as RFC 5987 `filename*`. */
export const contentDisposition = (disposition: Disposition, name: string): string => {
  const fallback = name.replace(/[^\x20-\x7e]/g, "_").replace(/["\\]/g, "_")
  const encoded = encodeURIComponent(name).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)
  return `${disposition}; filename="${fallback}"; filename*=UTF-8''${encoded}`
}
