/**
 * `worksync backup --snapshot FILE [--workspace ID]... [--files DIR] [--full] [--refresh-every N] [--json]`:
 * a new run of the snapshot from every workspace (or those named); with `--files`, the
 * bytes of their CONFIRMED files too.
 *
 * Exit: 0 the run is complete and holds everything it was asked for; 1 it could not
 * finish (the run is marked failed, nothing is marked deleted, the next run resumes), or
 * it is complete but skipped something (a record listed and then not found), named on
 * stderr; 64 bad invocation (unknown workspace, a file that is not a snapshot).
 *
 * The definition only; the work is in ../run/backup.ts, loaded when the command runs.
 */
import * as Command from "effect/cli/Command"
import * as Flag from "effect/cli/Flag"
import * as Effect from "effect/Effect"
import { booleanFlag, connectionOptions, jsonOption, notifyOption, verbosityOptions } from "../common-options.ts"
import { engineOption, onEngineOr } from "../engine-option.ts"
import { withExamples } from "../help-doc.ts"

export const options = {
  ...connectionOptions,
  snapshot: Flag.String("snapshot").pipe(Flag.withDescription("snapshot: a SQLite file or a PostgreSQL URL (postgres://USER@HOST:PORT/DB[?schema=NAME]), created if missing")),
  workspace: Flag.String("workspace").pipe(
    Flag.withDescription("workspace id to back up, or its slug when the service lists slugs (repeatable); default: every workspace"),
    Flag.atLeast(0)
  ),
  full: booleanFlag("full").pipe(
    Flag.withDescription("refetch every record detail and activity, not only what changed")
  ),
  files: Flag.String("files").pipe(
    Flag.withDescription(
      "also store the bytes of every CONFIRMED file in DIR, one object per distinct content (by sha256, kept across runs, verified while written); downloads use --base-url"
    ),
    Flag.optional
  ),
  refreshEvery: Flag.Int("refresh-every").pipe(
    Flag.withDescription(
      "re-read each record's detail and activity at least every N runs, whatever its updatedAt says (rolling, about 1/N of the records a run; default 7, 0 never)"
    ),
    Flag.optional
  ),
  json: jsonOption,
  ...notifyOption,
  ...engineOption,
  ...verbosityOptions
}

export type BackupFlags = Command.Command.Config.Infer<typeof options>

export const backupCommand = Command.make("backup", options, (flags) =>
  onEngineOr("backup", flags, () => Effect.flatMap(Effect.promise(() => import("../run/backup.ts")), (run) => run.backupRun(flags)))).pipe(
    Command.withDescription(
      withExamples("back up workspaces, records, activity and files (metadata; their bytes with --files) into a snapshot", [
        "worksync backup --snapshot backup.sqlite                      # connection from WORKSYNC_* or worksync.config.json",
        "worksync backup --profile prod --snapshot backup.sqlite --json",
        "worksync backup --snapshot backup.sqlite --workspace website --workspace mobile",
        "worksync backup --snapshot backup.sqlite --files files/ --json   # file bytes too"
      ], ["Each run is compared with the previous complete run of the same scope; a failed run marks nothing deleted and the next run resumes."])
    )
  )
