/**
 * `worksync worker --engine postgres://... [--concurrency N]`: joins the pool of workers
 * of that database and runs its jobs until SIGINT/SIGTERM, then hands back the work at
 * hand and exits 0.
 *
 * The definition only; the work is in ../run/worker.ts, loaded when the command runs.
 */
import * as Command from "effect/cli/Command"
import * as Flag from "effect/cli/Flag"
import * as Effect from "effect/Effect"
import { withExamples } from "../help-doc.ts"

export const options = {
  engine: Flag.String("engine").pipe(Flag.withDescription("PostgreSQL URL of the pool (optional ?schema=NAME, default worksync_engine)")),
  concurrency: Flag.Int("concurrency").pipe(
    Flag.withDescription("jobs this worker runs at once (default 2)"),
    Flag.optional
  ),
  name: Flag.String("name").pipe(
    Flag.withDescription("this worker's name in the jobs' output (default: host and process id)"),
    Flag.optional
  )
}

export type WorkerFlags = Command.Command.Config.Infer<typeof options>

export const workerCommand = Command.make("worker", options, (flags) =>
  Effect.flatMap(Effect.promise(() => import("../run/worker.ts")), (run) => run.workerRun(flags))).pipe(
    Command.withDescription(
      withExamples("run jobs of a pool of workers (backup, copy-files, import-csv, restore, migrate given --engine)", [
        "worksync worker --engine postgres://worksync@db:5432/worksync",
        "worksync worker --engine postgres://worksync@db:5432/worksync --concurrency 4"
      ], [
        "Start workers with the connection settings the commands use (WORKSYNC_* or a config file): jobs never carry secrets.",
        "A killed worker's job is taken by another within seconds and resumes; SIGTERM hands the jobs at hand back, then exits 0."
      ])
    )
  )
