/** `worksync doctor`: the work behind the definition in ../commands/doctor.ts. */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type { DoctorFlags } from "../commands/doctor.ts"
import { type Check, lineOf, reportOf } from "../doctor/check.ts"
import { nodeCheck } from "../doctor/node-version.ts"
import { serviceChecks } from "../doctor/service.ts"
import { storeChecks } from "../doctor/stores.ts"
import { CliExit, ExitCode } from "../exit.ts"
import { printable, printJson } from "../output.ts"

export const doctorRun = (flags: DoctorFlags) =>
  Effect.gen(function*() {
    const checks: Array<Check> = [nodeCheck()]
    checks.push(...(yield* serviceChecks(flags)))
    for (const [what, location] of [["snapshot", flags.snapshot], ["journal", flags.journal]] as const) {
      if (Option.isSome(location)) checks.push(...(yield* storeChecks(what, location.value)))
    }
    const report = reportOf(checks)
    if (flags.json) yield* printJson(report)
    else yield* Effect.sync(() => process.stdout.write(checks.map((c) => `${printable(lineOf(c))}\n`).join("")))
    const first = checks.find((c) => !c.ok)
    if (first !== undefined) return yield* Effect.fail(new CliExit({ code: ExitCode.failed, message: `doctor: ${first.name}: ${first.detail}` }))
  })
