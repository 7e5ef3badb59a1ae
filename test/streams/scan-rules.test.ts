/**
 * The stable scan's decisions, as pure functions (src/streams/scan-rules.ts). The
 * behaviour they give the scan is tested through the emulator, with real moves during a
 * scan, in stable-scan-moves.test.ts and stable-scan.test.ts.
 */
import { describe, expect, it } from "@effect/vitest"
import { needsVerification, type PassFacts, passSettles, stampOf, stepShift } from "../../src/streams/scan-rules.ts"

/** A verification pass over a still listing of 400 items, read with the usual overlap. */
const still: PassFacts = { overlap: 3, grew: 0, shrank: 0, countBefore: 400, countAfter: 400, seen: 400, moved: 0, created: 0 }

describe("scan rules", () => {
  it("stepShift: the planned overlap is no shift; more shared items were placed behind the reading, fewer were taken away; items met again count as placed", () => {
    expect(stepShift(3, 3, 0)).toEqual({ grew: 0, shrank: 0 })
    expect(stepShift(5, 3, 0)).toEqual({ grew: 2, shrank: 0 })
    expect(stepShift(1, 3, 0)).toEqual({ grew: 0, shrank: 2 })
    expect(stepShift(3, 3, 2)).toEqual({ grew: 2, shrank: 0 })
  })

  it("needsVerification: a first pass that saw no shift and whose counts agree is trusted; any shift, gap, repeat or count that moved asks for a verification pass", () => {
    const steady = { shifts: 0, gapsRepaired: 0, duplicates: 0, countBefore: 400, countAfter: 400, seen: 400, overlap: 3 }
    expect(needsVerification(steady)).toBe(false)
    expect(needsVerification({ ...steady, shifts: 1 })).toBe(true)
    expect(needsVerification({ ...steady, gapsRepaired: 1 })).toBe(true)
    expect(needsVerification({ ...steady, duplicates: 1 })).toBe(true)
    expect(needsVerification({ ...steady, countAfter: 401 })).toBe(true)
    expect(needsVerification({ ...steady, seen: 399 })).toBe(true)
    // Pages of one item show no shift: without a count nothing can be trusted.
    expect(needsVerification({ ...steady, overlap: 0, countBefore: null, countAfter: null })).toBe(true)
  })

  it("passSettles: a pass over which nothing shifted settles, even when it found what the one before missed", () => {
    expect(passSettles(still)).toBe(true)
    expect(passSettles({ ...still, moved: 1, seen: 401, countBefore: 401, countAfter: 401 })).toBe(true)
    expect(passSettles({ ...still, countBefore: null, countAfter: null })).toBe(true)
  })

  it("passSettles: an item placed behind the reading with the count unchanged (a move) does not settle: the pass may have missed the record that moved", () => {
    expect(passSettles({ ...still, grew: 1 })).toBe(false)
    // Nor when a deletion elsewhere in the pass changes the count the other way.
    expect(passSettles({ ...still, grew: 1, shrank: 1, countAfter: 399 })).toBe(false)
    // Without a count, growth cannot be accounted for.
    expect(passSettles({ ...still, grew: 1, countBefore: null, countAfter: null })).toBe(false)
  })

  it("passSettles: insertions behind the reading that the count's growth accounts for settle; creations the pass saw ahead of it take their share of the growth", () => {
    expect(passSettles({ ...still, grew: 8, countAfter: 410 })).toBe(true)
    expect(passSettles({ ...still, grew: 8, countAfter: 408 })).toBe(true)
    expect(passSettles({ ...still, grew: 8, countAfter: 410, created: 3 })).toBe(false)
  })

  it("passSettles: deletions alone settle; a pass that found items older than the one before it does not, unless nothing shifted under it", () => {
    expect(passSettles({ ...still, shrank: 5, countAfter: 395 })).toBe(true)
    expect(passSettles({ ...still, shrank: 5, countAfter: 395, moved: 2 })).toBe(false)
    expect(passSettles({ ...still, grew: 2, countAfter: 410, moved: 2 })).toBe(false)
  })

  it("passSettles: pages of one item settle only over a steady count with every counted id seen and nothing older found", () => {
    const single: PassFacts = { ...still, overlap: 0 }
    expect(passSettles(single)).toBe(true)
    expect(passSettles({ ...single, countAfter: 401 })).toBe(false)
    expect(passSettles({ ...single, seen: 399 })).toBe(false)
    expect(passSettles({ ...single, moved: 1 })).toBe(false)
    expect(passSettles({ ...single, countBefore: null, countAfter: null })).toBe(false)
  })

  it("stampOf: the newer of createdAt and updatedAt; a timestamp that does not parse is ignored", () => {
    expect(stampOf({ createdAt: "2024-01-01T00:00:00.000Z", updatedAt: "2024-02-01T00:00:00.000Z" })).toBe(Date.parse("2024-02-01T00:00:00.000Z"))
    expect(stampOf({ createdAt: "2024-01-01T00:00:00.000Z", updatedAt: "not a date" })).toBe(Date.parse("2024-01-01T00:00:00.000Z"))
    expect(stampOf({ createdAt: "", updatedAt: "" })).toBe(-Infinity)
  })
})
