/**
 * `worksync prune --snapshot FILE [--files DIR] [--keep-last N] [--keep-daily N]
 *  [--keep-weekly N] [--keep-monthly N] [--dry-run] [--json]`: forgets the complete runs no
 * rule keeps (restic's rules), removes what only they held, compacts the snapshot.
 *
 * Exit: 0 done (or listed, with --dry-run); 1 the snapshot or DIR is in use by another
 * run, or a store failed (a rerun finishes the job); 64 bad invocation (no rule, a
 * negative count, a missing snapshot or files directory).
 *
 * The definition only; the work is in ../run/prune.ts, loaded when the command runs.
 */
import * as Command from "effect/cli/Command"
import * as Flag from "effect/cli/Flag"
import * as Effect from "effect/Effect"
import { booleanFlag, jsonOption, notifyOption, verbosityOptions } from "../common-options.ts"
import { withExamples } from "../help-doc.ts"

const count = (name: string, what: string) =>
  Flag.Int(name).pipe(Flag.withDescription(what), Flag.optional)

export const options = {
  snapshot: Flag.String("snapshot").pipe(Flag.withDescription("snapshot written by worksync backup: a SQLite file or a PostgreSQL URL")),
  files: Flag.String("files").pipe(
    Flag.withDescription("the files directory of backup --files: remove the objects no remaining run holds"),
    Flag.optional
  ),
  keepLast: count("keep-last", "keep the N newest complete runs"),
  keepDaily: count("keep-daily", "keep the newest complete run of each of the last N days (UTC) that have one"),
  keepWeekly: count("keep-weekly", "keep the newest complete run of each of the last N ISO weeks that have one"),
  keepMonthly: count("keep-monthly", "keep the newest complete run of each of the last N months (UTC) that have one"),
  dryRun: booleanFlag("dry-run").pipe(Flag.withDescription("list every run with keep or forget and why; change nothing")),
  json: jsonOption,
  ...notifyOption,
  ...verbosityOptions
}

export type PruneFlags = Command.Command.Config.Infer<typeof options>

export const pruneCommand = Command.make("prune", options, (flags) =>
  Effect.flatMap(Effect.promise(() => import("../run/prune.ts")), (run) => run.pruneRun(flags))).pipe(
    Command.withDescription(
      withExamples("forget old runs of a snapshot by retention rules, remove what only they held, and compact it", [
        "worksync prune --snapshot backup.sqlite --keep-daily 7 --keep-weekly 5 --keep-monthly 12 --dry-run",
        "worksync prune --snapshot backup.sqlite --files files/ --keep-last 3 --keep-daily 14 --json"
      ], [
        "restic's rules, by each run's start time in UTC and per scope (the workspaces a run backed up): a run kept by any rule stays; only the newest run of a day, week or month counts; a count left over keeps the oldest run too.",
        "The newest complete run always stays; running and failed runs are left alone. At least one rule is required."
      ])
    )
  )
