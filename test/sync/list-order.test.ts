/**
 * A migration's check of each list's order (src/sync/migrate/list-order.ts), fed as the
 * verification reads the run (a list at a time, by position, ids of one position in the
 * store's order), against its definition: the target records, in the source's order,
 * are the target records sorted by their own position. The verification's use of it
 * is tested through the emulator in migrate-report.test.ts and migrate-batches.test.ts.
 */
import { describe, expect, it } from "@effect/vitest"
import { type OrderCheck, orderCheckAdd, orderCheckKept, orderCheckOf, type OrderPair } from "../../src/sync/migrate/list-order.ts"
import { byPosition } from "../../src/sync/restore-target.ts"

/** The definition: every pair held, both sides sorted, the target ids compared. */
const byDefinition = (pairs: ReadonlyArray<OrderPair>): boolean => {
  const want = [...pairs].sort((a, b) => a.list - b.list || byPosition(a.source, b.source)).map((p) => p.target.id)
  const got = pairs.map((p) => p.target).sort(byPosition).map((t) => t.id)
  return want.join("\n") === got.join("\n")
}

/** The order the store reads a run in: list, numeric positions first, then by id as bytes. */
const storeOrder = (a: OrderPair, b: OrderPair): number => {
  const numeric = (p: OrderPair) => typeof p.source.position === "number"
  if (a.list !== b.list) return a.list - b.list
  if (numeric(a) !== numeric(b)) return numeric(a) ? -1 : 1
  if (numeric(a) && a.source.position !== b.source.position) return (a.source.position as number) - (b.source.position as number)
  const x = String(a.source.id)
  const y = String(b.source.id)
  return x < y ? -1 : x > y ? 1 : 0
}

const streamed = (pairs: ReadonlyArray<OrderPair>): boolean => {
  let check: OrderCheck | undefined
  for (const pair of [...pairs].sort(storeOrder)) {
    if (check === undefined) check = orderCheckOf(pair)
    else orderCheckAdd(check, pair)
  }
  return orderCheckKept(check!)
}

/** A deterministic generator (xorshift): the same cases on every run. */
const random = (seed: number) => () => {
  seed ^= seed << 13
  seed ^= seed >>> 17
  seed ^= seed << 5
  return (seed >>> 0) / 4294967296
}

describe("list order", () => {
  it("kept exactly when the definition says so: lists of two source lists, repeated positions, records without a position, ids whose byte order is not byPosition's", () => {
    const next = random(29)
    // Ids differing in case and punctuation: their byte order and localeCompare differ.
    const ids = ["a", "B", "c", "_d", "E", "f-1", "F2", "g", "h", "I"]
    let kept = 0
    for (let n = 0; n < 3000; n++) {
      const size = 1 + Math.floor(next() * 8)
      const used = [...ids].sort(() => next() - 0.5).slice(0, size)
      const position = (spread: number) => (next() < 0.15 ? undefined : Math.floor(next() * spread))
      const pairs = used.map((id, i): OrderPair => {
        const source = position(n % 3 === 0 ? 2 : 10)
        // Half the cases: the target in the source's order (kept), the others shuffled.
        const target = n % 2 === 0 ? (source === undefined ? 1000 + i : source * 10) : position(6)
        return { list: next() < 0.3 ? 1 : 0, source: { position: source, id }, target: { position: target, id: `t${id}` } }
      })
      const want = byDefinition(pairs)
      if (want) kept++
      expect({ n, kept: streamed(pairs) }).toEqual({ n, kept: want })
    }
    // Both answers were given many times.
    expect(kept).toBeGreaterThan(300)
    expect(kept).toBeLessThan(2700)
  })
})
