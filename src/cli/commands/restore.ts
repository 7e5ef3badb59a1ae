/**
 * `worksync restore --snapshot FILE --to workspace:ID --journal FILE [--run RUN]
 *  [--from-workspace ID] [--record ID]... [--delete-missing] [--files DIR] [--dry-run] [--json]`:
 * makes the target workspace hold the records of one snapshot run (or the records named),
 * and with `--files DIR` the run's files it lacks, uploaded from `backup --files DIR`.
 * The target account may differ (`--to-rest-url`, `--to-token`, ...; each defaults to the
 * source connection's).
 *
 * Exit: 0 done; 1 could not finish (a rerun with the same journal resumes); 64 bad
 * invocation.
 *
 * The definition only; the work is in ../run/restore.ts, loaded when the command runs.
 */
import * as Command from "effect/cli/Command"
import * as Flag from "effect/cli/Flag"
import * as Effect from "effect/Effect"
import { booleanFlag, connectionOptions, jsonOption, targetConnectionOptions, verbosityOptions } from "../common-options.ts"
import { engineOption, onEngineOr } from "../engine-option.ts"
import { withExamples } from "../help-doc.ts"

export const options = {
  ...connectionOptions,
  to_: targetConnectionOptions,
  snapshot: Flag.String("snapshot").pipe(Flag.withDescription("snapshot written by worksync backup: a SQLite file or a PostgreSQL URL")),
  to: Flag.String("to").pipe(Flag.withDescription("target: workspace:ID")),
  journal: Flag.String("journal").pipe(
    Flag.withDescription("journal: a SQLite file or a PostgreSQL URL, created if missing; rerun with the same journal to resume")
  ),
  run: Flag.String("run").pipe(Flag.withDescription("run id; default the latest complete run"), Flag.optional),
  fromWorkspace: Flag.String("from-workspace").pipe(
    Flag.withDescription("the run's source workspace (required when the run holds several)"),
    Flag.optional
  ),
  record: Flag.String("record").pipe(
    Flag.withDescription("restore only this record of the run (repeatable)"),
    Flag.atLeast(0)
  ),
  deleteMissing: booleanFlag("delete-missing").pipe(
    Flag.withDescription("also delete target records that are not in the run (in the source workspace: those created after it)")
  ),
  files: Flag.String("files").pipe(
    Flag.withDescription("files directory of backup --files: upload the run's files the target lacks from their stored bytes"),
    Flag.optional
  ),
  dryRun: booleanFlag("dry-run").pipe(Flag.withDescription("print the plan's counts and send nothing")),
  json: jsonOption,
  ...engineOption,
  ...verbosityOptions
}

export type RestoreFlags = Command.Command.Config.Infer<typeof options>

export const restoreCommand = Command.make("restore", options, (flags) =>
  onEngineOr("restore", flags, () => Effect.flatMap(Effect.promise(() => import("../run/restore.ts")), (run) => run.restoreRun(flags)))).pipe(
    Command.withDescription(
      withExamples("restore the records of a snapshot run into a workspace (in place or elsewhere, resumable)", [
        "worksync restore --snapshot backup.sqlite --to workspace:website --journal restore.sqlite --dry-run",
        "worksync restore --snapshot backup.sqlite --to workspace:website --journal restore.sqlite --record 123 --run 4",
        "worksync restore --snapshot backup.sqlite --to workspace:archive --to-profile other-account --journal restore.sqlite",
        "worksync restore --snapshot backup.sqlite --files backup-files --to workspace:website --journal restore.sqlite"
      ], ["Rerun with the same --journal to resume: nothing is sent twice."])
    )
  )
