/**
 * One line of `worksync doctor`: what was checked, whether it holds, and what was found
 * or what to do about it. The `--json` report is `{"ok", "checks": [Check]}`.
 */
import * as Schema from "effect/Schema"

export const Check = Schema.Struct({
  name: Schema.String,
  ok: Schema.Boolean,
  detail: Schema.String
})
export type Check = typeof Check.Type

export const DoctorReport = Schema.Struct({ ok: Schema.Boolean, checks: Schema.Array(Check) })
export type DoctorReport = typeof DoctorReport.Type

export const pass = (name: string, detail: string): Check => ({ name, ok: true, detail })
export const fail = (name: string, detail: string): Check => ({ name, ok: false, detail })

/** A check as its line: `ok` or `FAIL`, its name, what was found or what to do. */
export const lineOf = (check: Check): string => `${check.ok ? "ok  " : "FAIL"}  ${check.name}: ${check.detail}`

export const reportOf = (checks: ReadonlyArray<Check>): DoctorReport => ({ ok: checks.every((c) => c.ok), checks })
