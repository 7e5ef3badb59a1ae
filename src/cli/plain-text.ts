/**
 * Colour only for a terminal. effect/cli renders help with ANSI styles and prints it
 * through Effect's Console service, into a pipe too when FORCE_COLOR is set; this
 * Console drops the styles when the stream is not a TTY or NO_COLOR is set
 * (https://no-color.org), so cron mails, logs and pipes get plain text.
 */
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"

// SGR sequences (colour, bold, reset): the only escapes effect/cli's printer emits.
// eslint-disable-next-line no-control-regex
const SGR = /\u001b\[[0-9;]*m/g

export const stripStyles = (text: string): string => text.replace(SGR, "")

/** Whether styles may go to this stream: a terminal, and NO_COLOR absent or empty. */
export const colourFor = (stream: { readonly isTTY?: boolean }, env: Readonly<Record<string, string | undefined>> = process.env) =>
  stream.isTTY === true && (env.NO_COLOR === undefined || env.NO_COLOR === "")

const plainArgs = (args: ReadonlyArray<unknown>): Array<unknown> => args.map((a) => (typeof a === "string" ? stripStyles(a) : a))

/** Runs `effect` with a Console whose log/info (stdout) and error/warn (stderr) lose their styles where colour is off. */
export const withPlainTextWhereNoColour = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Console.consoleWith((current) => {
    const out = colourFor(process.stdout)
    const err = colourFor(process.stderr)
    if (out && err) return effect
    const o = (f: (...args: ReadonlyArray<unknown>) => void) => out ? f : (...args: ReadonlyArray<unknown>) => f(...plainArgs(args))
    const e = (f: (...args: ReadonlyArray<unknown>) => void) => err ? f : (...args: ReadonlyArray<unknown>) => f(...plainArgs(args))
    // The other methods (table, group, ...) are the current console's, through the prototype.
    const plain: Console.Console = Object.assign(Object.create(current), {
      log: o((...args) => current.log(...args)),
      info: o((...args) => current.info(...args)),
      error: e((...args) => current.error(...args)),
      warn: e((...args) => current.warn(...args))
    })
    return Effect.provideService(effect, Console.Console, plain)
  })
