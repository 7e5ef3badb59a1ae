/**
 * One check of `verify`, as the command-line contract prints it: what was examined, how
 * much of it failed, and the first failure in words (what a cron mail's one line names).
 */

/** A check's outcome (the contract's `checks` item). */
export interface CheckResult {
  readonly name: string
  readonly ok: boolean
  readonly checked: number
  readonly failed: number
  /** The first failure, one line; null when none. */
  readonly first: string | null
}

/** What a restore would leave behind, as the rehearsal saw it (restore's `notRestored`, counted again). */
export interface NotCarried {
  readonly what: string
  readonly count: number
  readonly why: string
}

/** Counts one check's items as they are examined; keeps the first failure. */
export class Tally {
  checked = 0
  failed = 0
  first: string | null = null

  constructor(readonly name: string) {}

  pass(n = 1): void {
    this.checked += n
  }

  fail(line: string): void {
    this.checked++
    this.failed++
    this.first ??= line
  }

  result(): CheckResult {
    return { name: this.name, ok: this.failed === 0, checked: this.checked, failed: this.failed, first: this.first }
  }
}

const messageOf = (e: unknown): string =>
  typeof e === "object" && e !== null && "message" in e ? String((e as { message: unknown }).message) : String(e)

/** A check that could not run to its end: it failed, and says why. */
export const brokenCheck = (name: string, error: unknown, checked = 0): CheckResult => ({
  name,
  ok: false,
  checked,
  failed: 1,
  first: `could not finish: ${messageOf(error).replace(/\s*\n\s*/g, " ")}`
})
