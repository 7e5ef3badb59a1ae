/** `worksync worker`: the work behind the definition in ../commands/worker.ts. */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as os from "node:os"
import { openEngine, parseEngineUrl } from "../../engine/engine.ts"
import { runWorker } from "../../engine/worker.ts"
import type { WorkerFlags } from "../commands/worker.ts"
import { CliExit, ExitCode, treatInterruptAsSuccess, usageError } from "../exit.ts"
import { printable } from "../output.ts"

const DEFAULT_CONCURRENCY = 2

export const workerRun = (flags: WorkerFlags) =>
  Effect.scoped(Effect.gen(function*() {
    const location = parseEngineUrl(flags.engine)
    if (typeof location === "string") return yield* Effect.fail(usageError(location))
    const concurrency = Option.getOrElse(flags.concurrency, () => DEFAULT_CONCURRENCY)
    if (concurrency < 1) return yield* Effect.fail(usageError(`--concurrency ${concurrency}: must be 1 or more`))
    const name = Option.getOrElse(flags.name, () => `${os.hostname()}:${process.pid}`)
    const engine = yield* openEngine(location, { worker: true, concurrency }).pipe(
      Effect.mapError((e) => new CliExit({ code: ExitCode.failed, message: e.message }))
    )
    const log = (line: string) => process.stderr.write(`worker ${printable(name)}: ${printable(line)}\n`)
    log(`joined the pool at ${location.display} (${concurrency} at once)`)
    // SIGINT/SIGTERM is this command's normal end: the jobs at hand go back, exit 0.
    treatInterruptAsSuccess()
    return yield* runWorker(engine, { name, concurrency, bin: process.argv[1] ?? "worksync", log })
  }))
