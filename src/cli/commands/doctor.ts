/**
 * `worksync doctor [connection flags] [--snapshot FILE] [--journal FILE] [--json]`: one
 * line per check, `ok` or what to do: Node.js, the endpoints, the clock, the tokens, the
 * organization, the caller's level in each workspace, and the snapshot's or journal's
 * health and lock. Exit 0 when every check holds; 1 otherwise, with the first failing
 * check's line on stderr.
 *
 * The definition only; the work is in ../run/doctor.ts, loaded when the command runs.
 */
import * as Command from "effect/cli/Command"
import * as Flag from "effect/cli/Flag"
import * as Effect from "effect/Effect"
import { connectionOptions, jsonOption } from "../common-options.ts"
import { withExamples } from "../help-doc.ts"

export const options = {
  ...connectionOptions,
  snapshot: Flag.String("snapshot").pipe(Flag.withDescription("also check this snapshot file: opens, schema, integrity, lock"), Flag.optional),
  journal: Flag.String("journal").pipe(Flag.withDescription("also check this journal file: opens, schema, integrity, lock"), Flag.optional),
  json: jsonOption.pipe(Flag.withDescription(`print {"ok": bool, "checks": [{"name", "ok", "detail"}]} on stdout`))
}

export type DoctorFlags = Command.Command.Config.Infer<typeof options>

export const doctorCommand = Command.make("doctor", options, (flags) =>
  Effect.flatMap(Effect.promise(() => import("../run/doctor.ts")), (run) => run.doctorRun(flags))).pipe(
    Command.withDescription(
      withExamples("check the connection, the tokens, your level in each workspace, and a snapshot or journal", [
        "worksync doctor                                   # connection from WORKSYNC_* or worksync.config.json",
        "worksync doctor --profile prod --snapshot backup.sqlite --journal import.sqlite",
        "worksync doctor --json"
      ], ["Exit 0 when every check holds; 1 with the first failing check's line on stderr."])
    )
  )
