/**
 * `--engine postgres://...` on the commands whose work can run on a pool of workers
 * (backup, copy-files, import-csv, restore, migrate): with it, the command queues its job
 * on the pool and waits for it (run/on-engine.ts) instead of doing the work itself.
 */
import * as Flag from "effect/cli/Flag"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type { EngineCommand } from "../engine/job.ts"

export const engineOption = {
  engine: Flag.String("engine").pipe(
    Flag.withDescription(
      "PostgreSQL URL of a pool of workers (worksync worker): the job runs there and this command waits for it; " +
        "rerunning the command attaches to the job in progress"
    ),
    Flag.optional
  )
}

interface EngineFlags {
  readonly engine: Option.Option<string>
  readonly json: boolean
  readonly quiet: boolean
}

/** The command's job on the pool when `--engine` is given, else `local`. */
export const onEngineOr = <A, E, R>(
  command: EngineCommand,
  flags: EngineFlags,
  local: () => Effect.Effect<A, E, R>
): Effect.Effect<A | void, unknown, R> =>
  Option.match(flags.engine, {
    onNone: local,
    onSome: (engine) =>
      Effect.flatMap(Effect.promise(() => import("./run/on-engine.ts")), (run) => run.runOnEngine(command, engine, flags))
  })
