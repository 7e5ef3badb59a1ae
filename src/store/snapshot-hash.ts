/**
 * Content hashes for change detection: SHA-256 over a canonical JSON form (keys
 * sorted at every depth), so the same content always hashes the same whatever the
 * key order the service sent.
 */
import { createHash } from "node:crypto"

/** JSON with object keys sorted recursively; arrays keep their order. */
export const canonicalJson = (value: unknown): string => JSON.stringify(sortKeys(value))

const sortKeys = (value: unknown): unknown => {
  if (Array.isArray(value)) return value.map(sortKeys)
  if (value !== null && typeof value === "object") {
    const out: Record<string, unknown> = {}
    for (const key of Object.keys(value).sort()) {
      const v = (value as Record<string, unknown>)[key]
      if (v !== undefined) out[key] = sortKeys(v)
    }
    return out
  }
  return value
}

/** 128 bits of SHA-256 in hex: ample for telling versions of one id apart. */
export const contentHash = (value: unknown): string =>
  createHash("sha256").update(canonicalJson(value)).digest("hex").slice(0, 32)
