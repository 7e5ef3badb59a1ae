/**
 * A command given `--engine`: its job is queued on the pool (or found there, when the
 * same command is already running), and this process only waits. It shows the job's
 * output lines as the worker running it prints them, then prints the job's result and
 * exits with its code, as the command run here would. Killing this process leaves the
 * job running; running the command again attaches to it.
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import { openEngine, parseEngineUrl } from "../../engine/engine.ts"
import { type EngineCommand, jobSpecOf, passwordUrlIn, secretFlagIn } from "../../engine/job.ts"
import { CliExit, ExitCode, usageError } from "../exit.ts"
import { printable } from "../output.ts"

/** How often the waiting command reads the job's new lines and state. */
const POLL = Duration.millis(300)

/** The arguments after the command's name, as typed. */
const argsAfter = (command: string): Array<string> => {
  const argv = process.argv.slice(2)
  const at = argv.indexOf(command)
  return at < 0 ? [] : argv.slice(at + 1)
}

export const runOnEngine = (
  command: EngineCommand,
  engineUrl: string,
  flags: { readonly json: boolean; readonly quiet: boolean }
) =>
  Effect.scoped(Effect.gen(function*() {
    const location = parseEngineUrl(engineUrl)
    if (typeof location === "string") return yield* Effect.fail(usageError(location))
    const args = argsAfter(command)
    const secret = secretFlagIn(args)
    if (secret !== undefined) {
      return yield* Effect.fail(usageError(
        `${secret}: with --engine the job is stored in the engine's database, so a secret may not be a flag; ` +
          "give it through the environment (WORKSYNC_*) or a config file profile, the same on every worker"
      ))
    }
    if (passwordUrlIn(args) !== undefined) {
      return yield* Effect.fail(usageError(
        "a database URL with a password: with --engine the job is stored in the engine's database, so give the " +
          "password through PGPASSWORD or ~/.pgpass on every worker, not in the URL"
      ))
    }
    const engine = yield* openEngine(location, { worker: false }).pipe(
      Effect.mapError((e) => new CliExit({ code: ExitCode.failed, message: e.message }))
    )
    const spec = jobSpecOf(command, args, process.cwd(), process.env)
    const failed = (e: { readonly message: string }) => new CliExit({ code: ExitCode.failed, message: e.message })
    const job = yield* engine.submit(spec).pipe(Effect.mapError(failed))
    const say = (line: string) => Effect.sync(() => process.stderr.write(`${printable(line)}\n`))
    yield* say(
      job.attached
        ? `worksync: ${command} is already running on the pool as job ${job.id}; waiting for it (killing this command leaves it running)`
        : `worksync: ${command} queued on the pool as job ${job.id}; waiting for it (killing this command leaves it running)`
    )
    let seq = 0
    for (;;) {
      const lines = yield* engine.lines(job.id, seq).pipe(Effect.mapError(failed))
      for (const l of lines) {
        seq = l.seq
        // --quiet keeps the job's own one-line messages and drops its progress.
        if (!flags.quiet || l.line.startsWith("worksync")) yield* say(l.line)
      }
      const state = yield* engine.jobState(job.id).pipe(Effect.mapError(failed))
      if (state === undefined) return yield* Effect.fail(new CliExit({ code: ExitCode.failed, message: `job ${job.id} is gone from the pool` }))
      if (state.state === "completed" && state.outcome !== undefined) {
        // The lines written before completion are all there now.
        for (const l of yield* engine.lines(job.id, seq).pipe(Effect.mapError(failed))) {
          if (!flags.quiet || l.line.startsWith("worksync")) yield* say(l.line)
        }
        if (flags.json && state.outcome.stdout !== "") yield* Effect.sync(() => process.stdout.write(state.outcome!.stdout))
        if (state.outcome.code !== 0) return yield* Effect.fail(new CliExit({ code: state.outcome.code, message: "" }))
        return
      }
      if (state.state === "failed" || state.state === "cancelled") {
        return yield* Effect.fail(new CliExit({
          code: ExitCode.failed,
          message: `job ${job.id} ${state.state} on the pool after every attempt; rerunning the command starts it again and resumes`
        }))
      }
      yield* Effect.sleep(POLL)
    }
  }))
