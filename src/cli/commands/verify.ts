/**
 * `worksync verify --snapshot FILE [--run RUN] [--files DIR] [--sample PCT] [--rehearse]
 *  [--against-service] [--json]`: checks one run of the snapshot (default the latest
 * complete run): the snapshot's integrity and every stored hash always; the run's file
 * bytes with `--files`; a restore into a fresh emulator with `--rehearse`; the live
 * service, reading only, with `--against-service`. The outcome is recorded in the
 * snapshot (`runs_summary` shows it).
 *
 * Exit: 0 every check asked for holds; 1 one does not (the first failure named on
 * stderr), or the snapshot is in use; 64 bad invocation (missing snapshot or directory,
 * unknown run, bad --sample).
 *
 * The definition only; the work is in ../run/verify.ts, loaded when the command runs.
 */
import * as Command from "effect/cli/Command"
import * as Flag from "effect/cli/Flag"
import * as Effect from "effect/Effect"
import { booleanFlag, connectionOptions, jsonOption, notifyOption, verbosityOptions } from "../common-options.ts"
import { withExamples } from "../help-doc.ts"

export const options = {
  ...connectionOptions,
  snapshot: Flag.String("snapshot").pipe(Flag.withDescription("snapshot written by worksync backup: a SQLite file or a PostgreSQL URL")),
  run: Flag.String("run").pipe(Flag.withDescription("run id; default the latest complete run"), Flag.optional),
  files: Flag.String("files").pipe(
    Flag.withDescription("directory of the file bytes written by backup --files DIR: every object is read and its sha256 checked"),
    Flag.optional
  ),
  sample: Flag.Finite("sample").pipe(
    Flag.withDescription("with --files: read only this percentage of the objects, picked at random (0 < PCT <= 100)"),
    Flag.optional
  ),
  rehearse: booleanFlag("rehearse").pipe(
    Flag.withDescription("restore the run into a fresh local emulator with the real restore and compare every record, list, tag, comment count and file")
  ),
  againstService: booleanFlag("against-service").pipe(
    Flag.withDescription("compare record counts per workspace and a sample of records with the live service (reads only)")
  ),
  json: jsonOption,
  ...notifyOption,
  ...verbosityOptions
}

export type VerifyFlags = Command.Command.Config.Infer<typeof options>

export const verifyCommand = Command.make("verify", options, (flags) =>
  Effect.flatMap(Effect.promise(() => import("../run/verify.ts")), (run) => run.verifyRun(flags))).pipe(
    Command.withDescription(
      withExamples("check a snapshot run: integrity, hashes, file bytes, a rehearsed restore, the live service", [
        "worksync verify --snapshot backup.sqlite                                # integrity and hashes of the latest run",
        "worksync verify --snapshot backup.sqlite --files /backups/files --sample 10 --json",
        "worksync verify --snapshot backup.sqlite --rehearse --against-service --notify https://hc-ping.com/<uuid>"
      ], ["The outcome is recorded in the snapshot: runs_summary shows last_verified_at and verified_ok."])
    )
  )
