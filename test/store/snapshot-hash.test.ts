/**
 * The canonical JSON that content hashes are taken over (store/snapshot-hash.ts) is the
 * text of a copy with its keys sorted at every depth, as JSON.stringify writes it: the
 * hashes stored in snapshots were taken over that text, so a change here would make every
 * stored version look changed.
 */
import { describe, expect, it } from "vitest"
import { canonicalJson, contentHash } from "../../src/store/snapshot-hash.ts"
import { activityOf, detailOf } from "./snapshot-fixtures.ts"

/** The definition: a sorted copy, written by JSON.stringify. */
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
const reference = (value: unknown): string => JSON.stringify(sortKeys(value))

describe("canonical JSON", () => {
  it("is the text of a copy with sorted keys, whatever the input", () => {
    const values: Array<unknown> = [
      null,
      0,
      -0,
      1.5e300,
      Number.NaN,
      "plain",
      "quote \" backslash \\ newline \n tab \t control \u0001 lone \ud800 emoji 😀",
      true,
      [],
      {},
      [1, undefined, null, () => 1, Symbol("s"), [{}]],
      { b: 1, a: { d: [3, { z: 1, y: undefined }], c: "x" }, u: undefined, f: () => 1, s: Symbol("s") },
      // Array-index keys are listed first, in numeric order, by any object.
      { b: 1, 10: "ten", 2: "two", a: 2, "01": "not an index", "-1": "nor this", 4294967295: "nor this", 4294967294: "an index" },
      { "": 1, " ": 2, Z: 3, a: 4, é: 5, "\u00e9x": 6 },
      { detail: { ...detailOf("r1", 3), workspaceId: "w1" }, activity: activityOf("r1", 3) },
      new Date(0),
      Object.assign(Object.create({ inherited: 1 }) as object, { own: 2 })
    ]
    for (const value of values) expect(canonicalJson(value)).toBe(reference(value))
  })

  it("hashes the same content the same, in any key order", () => {
    const a = { x: 1, y: { p: [1, 2], q: null } }
    const b = { y: { q: null, p: [1, 2] }, x: 1 }
    expect(contentHash(a)).toBe(contentHash(b))
    expect(contentHash(a)).toMatch(/^[0-9a-f]{32}$/)
    expect(contentHash(a)).not.toBe(contentHash({ ...a, x: 2 }))
  })
})
