/**
 * The scratch file of keys (src/store/scratch-keys.ts): keys noted once, counted, walked
 * by key across pages while the file is written, emptied, and the file gone on remove.
 */
import { describe, expect, it } from "@effect/vitest"
import * as fs from "node:fs"
import * as os from "node:os"
import { openScratchKeys } from "../../src/store/scratch-keys.ts"

describe("scratch keys", () => {
  it("notes each key once, walks them by key over several pages, empties, and leaves no file", () => {
    const dirsBefore = new Set(fs.readdirSync(os.tmpdir()).filter((d) => d.startsWith("worksync-keys-test-")))
    const keys = openScratchKeys("keys-test")
    try {
      const all = Array.from({ length: 2_345 }, (_, i) => `k${String((i * 7919) % 2_345).padStart(5, "0")}`)
      const fresh = keys.batch(() => all.map((k) => keys.see(k)))
      expect(fresh.every((f) => f)).toBe(true)
      // Noted again: not new, not counted twice.
      expect(keys.batch(() => keys.see(all[0]!))).toBe(false)
      expect(keys.count()).toBe(all.length)
      expect(keys.has(all[10]!)).toBe(true)
      expect(keys.has("missing")).toBe(false)
      // A walk over more than two pages, with the file written meanwhile (a key before the walk's place and one after).
      const walked: Array<string> = []
      for (const k of keys.keys()) {
        if (walked.length === 1500) keys.batch(() => [keys.see("a-before"), keys.see("z-after")])
        walked.push(k)
      }
      expect(walked.slice(0, all.length)).toEqual([...all].sort())
      expect(walked.slice(all.length)).toEqual(["z-after"])
      keys.clear()
      expect(keys.count()).toBe(0)
      expect([...keys.keys()]).toEqual([])
      expect(keys.see(all[0]!)).toBe(true)
    } finally {
      keys.remove()
    }
    const dirsAfter = fs.readdirSync(os.tmpdir()).filter((d) => d.startsWith("worksync-keys-test-") && !dirsBefore.has(d))
    expect(dirsAfter).toEqual([])
  })
})
