/**
 * stdout carries only the `--json` result; everything for people goes to stderr.
 */
import * as Effect from "effect/Effect"

export const printJson = (value: unknown) =>
  Effect.sync(() => {
    process.stdout.write(JSON.stringify(value) + "\n")
  })

export type Verbosity = "quiet" | "normal" | "verbose"

export const logLine = (verbosity: Verbosity, line: string, level: "info" | "detail" = "info") =>
  Effect.sync(() => {
    if (verbosity === "quiet") return
    if (level === "detail" && verbosity !== "verbose") return
    process.stderr.write(line + "\n")
  })
