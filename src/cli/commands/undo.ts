/**
 * `worksync undo --journal FILE [--dry-run] [--json]`: reverses what the runs of a
 * journal (import-csv, migrate or restore) wrote to the target: deletes the records and
 * comments they created, puts back the fields they updated; anything changed on the
 * target since is kept and reported. The connection is the one of the command that
 * wrote the journal (the target flags, `--to-*`, for migrate and restore; each defaults
 * to the connection's).
 *
 * Exit: 0 done; 1 could not finish (a rerun with the same journal resumes, sending
 * nothing twice); 64 bad invocation (a journal that does not exist or holds no run).
 *
 * The definition only; the work is in ../run/undo.ts, loaded when the command runs.
 */
import * as Command from "effect/cli/Command"
import * as Flag from "effect/cli/Flag"
import * as Effect from "effect/Effect"
import { booleanFlag, connectionOptions, jsonOption, targetConnectionOptions, verbosityOptions } from "../common-options.ts"
import { withExamples } from "../help-doc.ts"

export const options = {
  ...connectionOptions,
  to_: targetConnectionOptions,
  journal: Flag.String("journal").pipe(
    Flag.withDescription("journal of the import-csv, migrate or restore to reverse: a SQLite file or a PostgreSQL URL")
  ),
  dryRun: booleanFlag("dry-run").pipe(Flag.withDescription("say what undo would do (reads the target), write nothing")),
  json: jsonOption,
  ...verbosityOptions
}

export type UndoFlags = Command.Command.Config.Infer<typeof options>

export const undoCommand = Command.make("undo", options, (flags) =>
  Effect.flatMap(Effect.promise(() => import("../run/undo.ts")), (run) => run.undoRun(flags))).pipe(
    Command.withDescription(
      withExamples("reverse what an import-csv, migrate or restore wrote, keeping later edits (resumable)", [
        "worksync undo --journal import.sqlite --dry-run",
        "worksync undo --journal migrate.sqlite --to-profile other-account --json"
      ], ["Rerun with the same --journal to resume: nothing is sent twice."])
    )
  )
