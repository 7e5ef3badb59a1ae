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
    process.stderr.write(printable(line) + "\n")
  })

/**
 * Text as it may reach a terminal: control characters (escape sequences, carriage
 * returns, newlines, bidirectional overrides) from server-supplied names are shown as
 * `\u001b`-style escapes, so a name can neither redraw the screen nor forge a line.
 */
export const printable = (text: string): string =>
  text.replace(
    // eslint-disable-next-line no-control-regex
    /[\u0000-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`
  )
