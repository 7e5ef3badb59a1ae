/**
 * The emulator's clock: real time by default; a test may pin the start, after which the
 * clock advances with real elapsed time (so timestamps stay ordered and plausible).
 */
import type { Clock } from "./context.ts"

export const makeClock = (start?: number): Clock => {
  const offset = start === undefined ? 0 : start - Date.now()
  const now = () => Date.now() + offset
  return { now, iso: () => new Date(now()).toISOString() }
}
