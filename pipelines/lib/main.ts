/**
 * The edge of a pipeline run from a shell, cron or a systemd timer: parse flags, run the
 * Effect, print the JSON result on stdout (with --json) and one summary line on stderr,
 * and end with the exit code of the command-line contract:
 * 0 done, 1 incomplete (a rerun resumes), 2 rows rejected, 64 bad invocation.
 * Never a stack trace: one line naming what failed.
 */
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as fs from "node:fs"
import { pathToFileURL } from "node:url"
import { parseArgs, type ParseArgsConfig } from "node:util"
import { messageOf, PipelineUsage } from "./errors.ts"

export interface PipelineOutcome<A> {
  readonly result: A
  /** The line for people (stderr). */
  readonly summary: string
}

type Values = Record<string, string | boolean | Array<string | boolean> | undefined>

export const exitCodeOf = (error: unknown): number => {
  const tag = typeof error === "object" && error !== null && "_tag" in error ? (error as { _tag: unknown })._tag : undefined
  return tag === "PipelineUsage" ? 64 : tag === "PipelineRejected" ? 2 : 1
}

/** Runs `program` with the parsed flags as a process's whole life. */
export const runPipelineMain = async <A>(
  name: string,
  usage: string,
  options: ParseArgsConfig["options"],
  program: (values: Values) => Effect.Effect<PipelineOutcome<A>, unknown>
): Promise<void> => {
  let values: Values
  try {
    values = parseArgs({ args: process.argv.slice(2), options: { ...options, json: { type: "boolean" }, help: { type: "boolean" } }, strict: true }).values as Values
  } catch (e) {
    process.stderr.write(`${name}: ${messageOf(e)}\nusage: ${usage}\n`)
    process.exitCode = 64
    return
  }
  if (values.help === true) {
    process.stdout.write(`usage: ${usage}\n`)
    return
  }
  const exit = await Effect.runPromiseExit(program(values))
  if (Exit.isSuccess(exit)) {
    if (values.json === true) process.stdout.write(JSON.stringify(exit.value.result) + "\n")
    process.stderr.write(`${name}: ${exit.value.summary}\n`)
    return
  }
  const failure = Cause.findErrorOption(exit.cause)
  const error = Option.isSome(failure) ? failure.value : Cause.squash(exit.cause)
  process.stderr.write(`${name}: ${Option.isSome(failure) ? messageOf(error) : `internal error: ${messageOf(error)}`}\n`)
  process.exitCode = Option.isSome(failure) ? exitCodeOf(error) : 1
}

/** A required string flag, or a usage error naming it. */
export const required = (values: Values, flag: string): Effect.Effect<string, PipelineUsage> => {
  const v = values[flag]
  return typeof v === "string" && v !== ""
    ? Effect.succeed(v)
    : Effect.fail(new PipelineUsage({ message: `missing --${flag}` }))
}

export const optionalString = (values: Values, flag: string): string | undefined => {
  const v = values[flag]
  return typeof v === "string" && v !== "" ? v : undefined
}

export const strings = (values: Values, flag: string): Array<string> => {
  const v = values[flag]
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === "string") : typeof v === "string" ? [v] : []
}

/** True when this module is the script node was started with. */
export const isMain = (url: string): boolean => {
  const entry = process.argv[1]
  if (entry === undefined) return false
  try {
    return url === pathToFileURL(fs.realpathSync(entry)).href || url === pathToFileURL(entry).href
  } catch {
    return false
  }
}
