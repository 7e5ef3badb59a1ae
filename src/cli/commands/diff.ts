/**
 * `worksync diff --snapshot FILE [--from RUN] [--to RUN] --json`: records and files
 * created, updated and deleted between two runs. Defaults: `--to` the latest complete
 * run, `--from` the complete run of the same scope before it.
 *
 * The definition only; the work is in ../run/diff.ts, loaded when the command runs.
 */
import * as Command from "effect/cli/Command"
import * as Flag from "effect/cli/Flag"
import * as Effect from "effect/Effect"
import { jsonOption, verbosityOptions } from "../common-options.ts"
import { withExamples } from "../help-doc.ts"

export const options = {
  snapshot: Flag.String("snapshot").pipe(Flag.withDescription("snapshot written by worksync backup: a SQLite file or a PostgreSQL URL")),
  from: Flag.String("from").pipe(
    Flag.withDescription("earlier run id; default the complete run of the same scope before --to"),
    Flag.optional
  ),
  to: Flag.String("to").pipe(Flag.withDescription("later run id; default the latest complete run"), Flag.optional),
  json: jsonOption,
  ...verbosityOptions
}

export type DiffFlags = Command.Command.Config.Infer<typeof options>

export const diffCommand = Command.make("diff", options, (flags) =>
  Effect.flatMap(Effect.promise(() => import("../run/diff.ts")), (run) => run.diffRun(flags))).pipe(
    Command.withDescription(
      withExamples("records and files created, updated and deleted between two snapshot runs", [
        "worksync diff --snapshot backup.sqlite --json                # the latest run against the one before",
        "worksync diff --snapshot backup.sqlite --from 3 --to 7 --json --verbose"
      ])
    )
  )
