/**
 * A helper of a spread job (docs/scale.md) as the command line runs it: under a worker,
 * with HELPER_ENV set (engine/worker.ts), `copy-files` and `migrate` take files of the
 * copy their job planned into the shared journal instead of doing the command's work.
 * A line per file, no bar: the bar of the whole job is its main process's.
 */
import * as Effect from "effect/Effect"
import { CopySetupError, type CopyFilesOptions } from "../../connectors/files/copy.ts"
import { helpCopy } from "../../connectors/files/help.ts"
import { HELPER_ENV } from "../../engine/job.ts"
import { usageError } from "../exit.ts"
import { logLine, type Verbosity } from "../output.ts"
import { formatBytes } from "../progress.ts"

/** Whether this process is a helper of a spread job. */
export const isHelper = (): boolean => process.env[HELPER_ENV] === "1"

/** One file's line, as the main process prints it: where it went is a path or a target uid. */
export const copiedLine = (name: string, size: number, where: string, toDir: boolean): string =>
  `copied ${name} (${formatBytes(size)}) -> ${toDir ? where : `uid ${where}`}`

/** Helps with `copy` until no untried file of it is left; `command` names the lines. */
export const runCopyHelper = (command: string, copy: CopyFilesOptions, verbosity: Verbosity) =>
  Effect.gen(function*() {
    const note = (line: string) => Effect.runSync(logLine(verbosity, line))
    const help = yield* helpCopy({
      ...copy,
      reporter: {
        fileDone: (name, size, where) => note(copiedLine(name, size, where, false)),
        fileFailed: (name, reason) => note(`failed ${name}: ${reason}`)
      }
    }).pipe(Effect.catchIf((e) => e instanceof CopySetupError, (e) => Effect.fail(usageError(e.message))))
    yield* logLine(
      verbosity,
      `${command}: helped: ${help.copied} copied (${formatBytes(help.bytes)}), ${help.failed} failed` +
        (help.stopped !== undefined ? `; stopped: ${help.stopped}` : "")
    )
  })
