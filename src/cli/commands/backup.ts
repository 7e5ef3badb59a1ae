/**
 * `worksync backup --snapshot FILE [--workspace ID]... [--full] [--json]`: a new run of
 * the snapshot from every workspace (or those named).
 *
 * Exit: 0 the run is complete; 1 it could not finish (the run is marked failed, nothing
 * is marked deleted, the next run resumes); 64 bad invocation (unknown workspace, a file
 * that is not a snapshot).
 */
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { SnapshotStore } from "../../store/snapshot.ts"
import { backup, type BackupResult, WorkspaceNotFound } from "../../sync/backup.ts"
import { connectionOptions, jsonOption, verbosityOf, verbosityOptions } from "../common-options.ts"
import { clientLayerFromFlags, nextStepSuffix } from "../connection.ts"
import { CliExit, ExitCode, usageError } from "../exit.ts"
import { logLine, printJson } from "../output.ts"
import { makeProgress } from "../progress.ts"
import { snapshotFailure } from "./diff.ts"
import { withExamples } from "../help-doc.ts"

const options = {
  ...connectionOptions,
  snapshot: Options.text("snapshot").pipe(Options.withDescription("SQLite snapshot file (created if missing)")),
  workspace: Options.text("workspace").pipe(
    Options.withDescription("workspace id or slug to back up (repeatable); default: every workspace"),
    Options.repeated
  ),
  full: Options.boolean("full").pipe(
    Options.withDescription("refetch every record detail and activity, not only what changed")
  ),
  json: jsonOption,
  ...verbosityOptions
}

const summary = (r: BackupResult): string =>
  `backup: run ${r.runId} complete: ${r.workspaces} workspace${r.workspaces === 1 ? "" : "s"}, ${r.records} records ` +
  `(${r.changes.created} created, ${r.changes.updated} updated, ${r.changes.deleted} deleted), ` +
  `${r.activities} activity items, ${r.files} files`

export const backupCommand = Command.make("backup", options, (flags) =>
  Effect.gen(function*() {
    const verbosity = verbosityOf(flags)
    const client = yield* clientLayerFromFlags(flags, { rest: true })
    const progress = yield* makeProgress({ label: "records", unit: "items", verbosity })
    const result = yield* backup({
      workspaces: flags.workspace,
      full: flags.full,
      progress: { advance: (n) => progress.advance(n), setTotal: (n) => progress.setTotal(n) }
    }).pipe(
      Effect.provide(Layer.merge(client, SnapshotStore.layer(flags.snapshot))),
      Effect.ensuring(progress.done()),
      Effect.catchAll((e): Effect.Effect<never, unknown> => {
        if (e instanceof WorkspaceNotFound) return Effect.fail(usageError(`--workspace ${e.workspace}: ${e.message}`))
        const mapped = snapshotFailure(e, flags.snapshot)
        if (mapped !== undefined) return Effect.fail(mapped)
        return Effect.fail(
          new CliExit({
            code: ExitCode.failed,
            message: `backup failed: ${messageOf(e)}${nextStepSuffix(e)}; nothing was marked deleted, a rerun resumes`
          })
        )
      })
    )
    if (flags.json) yield* printJson(result)
    yield* logLine(verbosity, summary(result))
  })).pipe(Command.withDescription(
    withExamples("back up workspaces, records, activity and file metadata into a SQLite snapshot", [
      "worksync backup --snapshot backup.sqlite                      # connection from WORKSYNC_* or worksync.config.json",
      "worksync backup --profile prod --snapshot backup.sqlite --json",
      "worksync backup --snapshot backup.sqlite --workspace website --workspace mobile"
    ], ["Each run is compared with the previous complete run of the same scope; a failed run marks nothing deleted and the next run resumes."])
  ))

const messageOf = (e: unknown): string =>
  typeof e === "object" && e !== null && "message" in e ? String((e as { message: unknown }).message) : String(e)
