/**
 * `worksync worker --engine postgres://... [--concurrency N]`: joins the pool of workers
 * of that database and runs its jobs until SIGINT/SIGTERM, then hands back the work at
 * hand and exits 0.
 *
 * The definition only; the work is in ../run/worker.ts, loaded when the command runs.
 */
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import * as Effect from "effect/Effect"
import { withExamples } from "../help-doc.ts"

export const options = {
  engine: Options.text("engine").pipe(Options.withDescription("PostgreSQL URL of the pool (optional ?schema=NAME, default worksync_engine)")),
  concurrency: Options.integer("concurrency").pipe(
    Options.withDescription("jobs this worker runs at once (default 2)"),
    Options.optional
  ),
  name: Options.text("name").pipe(
    Options.withDescription("this worker's name in the jobs' output (default: host and process id)"),
    Options.optional
  )
}

export type WorkerFlags = Command.Command.ParseConfig<typeof options>

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
