/**
 * `worksync help [TOPIC]`: `help connection` prints the connection flags every command
 * shares; `help COMMAND` is `COMMAND --help`; `help` alone is `worksync --help`.
 */
import * as Argument from "effect/cli/Argument"
import * as CliError from "effect/cli/CliError"
import * as Command from "effect/cli/Command"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { type CliExit, usageError } from "../exit.ts"
import { renderConnectionHelp, withExamples } from "../help-doc.ts"
import { printHelp } from "../runner.ts"

const CONNECTION = "connection"

/** effect/cli prints the help of `path` when a command ends with this (exit 0, exit.ts). */
const helpOf = (path: ReadonlyArray<string>): Effect.Effect<never, CliError.ShowHelp> => Effect.fail(new CliError.ShowHelp({ commandPath: ["worksync", ...path], errors: [] }))

export const helpCommand = Command.make(
  "help",
  { topic: Argument.String("topic").pipe(Argument.withDescription(`${CONNECTION} or a command`), Argument.optional) },
  // Typed here: the command list it reads includes this command.
  ({ topic }): Effect.Effect<void, CliExit | CliError.ShowHelp> =>
    Option.match(topic, {
      onNone: () => helpOf([]),
      onSome: (name) =>
        name === CONNECTION
          ? printHelp(renderConnectionHelp)
          : Effect.flatMap(Effect.promise(() => import("./index.ts")), ({ commands }): Effect.Effect<never, CliExit | CliError.ShowHelp> =>
            commands.some((c) => c.name === name)
              ? helpOf([name])
              : Effect.fail(usageError(`help: no command or topic "${name}": use ${CONNECTION} or one of ${commands.map((c) => c.name).join(", ")}`)))
    })
).pipe(
  Command.withDescription(
    withExamples("help on a command, or on the connection flags every command shares", [
      "worksync help connection",
      "worksync help backup"
    ])
  )
)
