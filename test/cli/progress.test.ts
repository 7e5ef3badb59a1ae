/**
 * src/cli/progress.ts without a terminal: plain lines at an interval, and one closing
 * line that does not repeat the last one.
 */
import * as Effect from "effect/Effect"
import { describe, expect, it } from "vitest"
import { describeProgress, formatCount, makeProgress } from "../../src/cli/progress.ts"

const capture = (plainEveryMs: number) => {
  const lines: Array<string> = []
  const progress = Effect.runSync(
    makeProgress({ label: "rows read", unit: "items", verbosity: "normal", tty: false, plainEveryMs, write: (t) => void lines.push(t) })
  )
  const run = (e: Effect.Effect<void>) => Effect.runSync(e)
  return { lines, progress, run }
}

describe("progress without a terminal", () => {
  it("a phase whose count did not move since its last line closes without printing it again", () => {
    const { lines, progress, run } = capture(60_000)
    run(progress.advance(3))
    run(progress.done())
    run(progress.done())
    expect(lines).toHaveLength(1)
    expect(lines[0]).toMatch(/^rows read: 3 /)
  })

  it("a phase that moved since its last line closes with the final count", () => {
    const { lines, progress, run } = capture(60_000)
    run(progress.advance(3))
    run(progress.advance(2))
    run(progress.done())
    expect(lines.map((l) => l.replace(/ [\d.,]+\/s.*$/s, ""))).toEqual(["rows read: 3", "rows read: 5"])
  })

  it("a total set after the last line is reported by the closing line", () => {
    const { lines, progress, run } = capture(60_000)
    run(progress.advance(1))
    run(progress.setTotal(1))
    run(progress.done())
    expect(lines).toHaveLength(2)
    expect(lines[1]).toMatch(/^rows read: 1\/1 100% /)
  })

  it("counts and rates read with thousands separators", () => {
    expect(describeProgress({ label: "rows read", unit: "items" }, 400_000, undefined, 1_392)).toBe("rows read: 400,000 287,356/s")
    expect(describeProgress({ label: "rows read", unit: "items" }, 3, 10, 1_000)).toBe("rows read: 3/10 30% 3.0/s ETA 0:02")
  })

  it("a count is grouped as English does it, from 0 to past a billion", () => {
    const english = new Intl.NumberFormat("en-US", { maximumFractionDigits: 0 })
    for (const n of [0, 7, 999, 1_000, 10_000, 999_999, 1_000_000, 1_234_567_890, 12.4, 999.6]) {
      expect(formatCount(n)).toBe(english.format(Math.round(n)))
    }
  })

  it("quiet prints nothing", () => {
    const lines: Array<string> = []
    const progress = Effect.runSync(
      makeProgress({ label: "x", unit: "items", verbosity: "quiet", tty: false, write: (t) => void lines.push(t) })
    )
    Effect.runSync(Effect.andThen(progress.advance(5), progress.done()))
    expect(lines).toEqual([])
  })
})
