/**
 * How the CLI ends: one clear line on stderr and an exit code, never a stack trace.
 *
 * Exit codes (the command-line contract defines 0, 1 and 2):
 * - 0  success
 * - 1  the command could not finish (a rerun resumes where it applies)
 * - 2  `import-csv` finished but rejected some rows
 * - 64 the invocation itself is wrong (unknown flag, bad value, missing input file)
 * - 130 interrupted by SIGINT/SIGTERM
 */
import * as Cause from "effect/Cause"
import * as CliError from "effect/cli/CliError"
import * as Data from "effect/Data"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import { printable } from "./output.ts"

export const ExitCode = {
  ok: 0,
  failed: 1,
  rejected: 2,
  usage: 64,
  interrupted: 130
} as const

/** A command's deliberate non-zero end, with the one line to print. */
export class CliExit extends Data.TaggedError("CliExit")<{
  readonly code: number
  readonly message: string
}> {}

/** Bad invocation: what is wrong, where, and what to do. */
export const usageError = (message: string) => new CliExit({ code: ExitCode.usage, message })

/** Long-running servers (the emulator) stop on SIGINT/SIGTERM as their normal end. */
let interruptIsNormalEnd = false
export const treatInterruptAsSuccess = () => {
  interruptIsNormalEnd = true
}

type Describe = (error: unknown) => string | undefined

/** Error describers registered by the layers the CLI uses (client errors, store errors...). */
const describers: Array<Describe> = []
export const registerDescriber = (describe: Describe) => {
  describers.push(describe)
}

const messageOf = (error: unknown): string => {
  for (const describe of describers) {
    const text = describe(error)
    if (text !== undefined) return text
  }
  if (error instanceof Error && error.message) return error.message
  if (typeof error === "object" && error !== null && "_tag" in error) return String((error as { _tag: unknown })._tag)
  return String(error)
}

/**
 * effect/cli ends a bad invocation with `ShowHelp` holding the parse errors (already
 * printed as one line by the CLI's presenter, main.ts), and a bare `worksync` (no
 * subcommand) with an empty `ShowHelp` after printing the help.
 */
const isShowHelp = (error: unknown): error is CliError.ShowHelp =>
  CliError.isCliError(error) && error._tag === "ShowHelp"

/** The first line of a message (effect/cli appends suggestions on further lines). */
export const firstLine = (text: string): string => text.split("\n", 1)[0]!.trim()

/** Maps the end of the program to an exit code, printing one line on stderr for failures. */
export const teardown = (exit: Exit.Exit<unknown, unknown>, onExit: (code: number) => void) => {
  if (Exit.isSuccess(exit)) return onExit(typeof process.exitCode === "number" ? process.exitCode : 0)
  const cause = exit.cause
  if (Cause.hasInterruptsOnly(cause)) {
    if (interruptIsNormalEnd) return onExit(ExitCode.ok)
    process.stderr.write("worksync: interrupted\n")
    return onExit(ExitCode.interrupted)
  }
  const failure = Cause.findErrorOption(cause)
  if (Option.isSome(failure)) {
    const error = failure.value
    if (error instanceof CliExit) {
      if (error.message) process.stderr.write(`worksync: ${printable(error.message)}\n`)
      return onExit(error.code)
    }
    // effect/cli has already printed the help, or the usage problem (main.ts's presenter).
    if (isShowHelp(error)) return onExit(error.errors.length === 0 ? ExitCode.ok : ExitCode.usage)
    // Any other parse error (not wrapped in ShowHelp): one line, a usage error.
    if (CliError.isCliError(error)) {
      process.stderr.write(`worksync: ${printable(firstLine(error.message))}\n`)
      return onExit(ExitCode.usage)
    }
    process.stderr.write(`worksync: ${printable(messageOf(error))}\n`)
    return onExit(ExitCode.failed)
  }
  const defect = Cause.squash(cause)
  const verbose = process.argv.includes("--verbose")
  process.stderr.write(
    `worksync: internal error: ${defect instanceof Error ? defect.message : String(defect)}` +
      (verbose && defect instanceof Error && defect.stack ? `\n${defect.stack}` : " (run with --verbose for details)") +
      "\n"
  )
  return onExit(ExitCode.failed)
}
