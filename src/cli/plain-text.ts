/**
 * Colour only for a terminal. @effect/cli renders help and usage errors with ANSI styles
 * and prints them through Effect's Console service whether or not the output is a
 * terminal; this Console drops the styles when the stream is not a TTY or NO_COLOR is
 * set (https://no-color.org), so cron mails, logs and pipes get plain text.
 */
import * as Console from "effect/Console"
import type * as Effect from "effect/Effect"

// SGR sequences (colour, bold, reset): the only escapes @effect/cli's printer emits.
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
    const o = (f: (...args: ReadonlyArray<unknown>) => Effect.Effect<void>) =>
      out ? f : (...args: ReadonlyArray<unknown>) => f(...plainArgs(args))
    const e = (f: (...args: ReadonlyArray<unknown>) => Effect.Effect<void>) =>
      err ? f : (...args: ReadonlyArray<unknown>) => f(...plainArgs(args))
    const uo = (f: (...args: ReadonlyArray<unknown>) => void) => out ? f : (...args: ReadonlyArray<unknown>) => f(...plainArgs(args))
    const ue = (f: (...args: ReadonlyArray<unknown>) => void) => err ? f : (...args: ReadonlyArray<unknown>) => f(...plainArgs(args))
    const plain: Console.Console = {
      ...current,
      log: o((...args) => current.log(...args)),
      info: o((...args) => current.info(...args)),
      error: e((...args) => current.error(...args)),
      warn: e((...args) => current.warn(...args)),
      unsafe: {
        ...current.unsafe,
        log: uo((...args) => current.unsafe.log(...args)),
        info: uo((...args) => current.unsafe.info(...args)),
        error: ue((...args) => current.unsafe.error(...args)),
        warn: ue((...args) => current.unsafe.warn(...args))
      }
    }
    return Console.withConsole(effect, plain)
  })
