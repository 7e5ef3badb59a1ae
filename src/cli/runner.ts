/**
 * How effect/cli runs worksync: its built-in global flags, and what it prints for help,
 * `--version` and a bad invocation.
 *
 * - `-v` is `--verbose` on every command, so `--version` keeps no short alias here
 *   (effect/cli's own `--version` takes `-v`), and prints the bare version as it always
 *   did. `--help`/`-h`, `--wizard`, `--completions` and `--log-level` are effect/cli's.
 * - A bad invocation (unknown flag or subcommand, bad or missing value) prints one line
 *   on stderr and no help, and exit.ts ends it with 64: a cron mail or a script gets the
 *   problem, not screens of help (effect/cli would print the whole help on stdout too).
 * - Help is laid out by help-doc.ts: the commands one line each, grouped by job.
 */
import * as CliConfig from "effect/cli/CliConfig"
import * as CliError from "effect/cli/CliError"
import * as CliOutput from "effect/cli/CliOutput"
import * as Flag from "effect/cli/Flag"
import * as GlobalFlag from "effect/cli/GlobalFlag"
import * as TerminalCapabilities from "effect/cli/TerminalCapabilities"
import * as Console from "effect/Console"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { firstLine } from "./exit.ts"
import { renderHelp } from "./help-doc.ts"
import { printable } from "./output.ts"

const Version = GlobalFlag.Action({
  flag: Flag.Boolean("version").pipe(
    Flag.withDescription("Show the version of the application"),
    Flag.withDefault(false)
  ),
  run: (_, { command, version }) =>
    Effect.gen(function*() {
      const presenter = yield* CliOutput.Presenter
      yield* presenter.present({ _tag: "Version", name: command.name, version })
    })
})

/** effect/cli's built-ins in their order, with worksync's `--version`. */
const builtIns: ReadonlyArray<GlobalFlag.BuiltIn> = [
  GlobalFlag.Help,
  Version,
  GlobalFlag.Wizard,
  GlobalFlag.Completions,
  GlobalFlag.LogLevel
]

/** One line for a parse error: its message without the suggestion block, the suggestions inline. */
export const usageLine = (error: CliError.NonShowHelpErrors): string => {
  const suggestions = error._tag === "UnrecognizedOption" || error._tag === "UnknownSubcommand" ? error.suggestions : []
  const hint = suggestions.length > 0 ? ` (did you mean ${suggestions.join(" or ")}?)` : ""
  return printable(`${firstLine(error.message)}${hint}`)
}

/**
 * Prints help text rendered with effect/cli's formatter (colour where the terminal takes
 * it). Below the top level the built-in global flags are one line pointing to
 * `worksync --help`: a command's help is about its own flags.
 */
export const printHelp = (render: (formatter: CliOutput.Formatter) => string) =>
  Effect.flatMap(Effect.context<never>(), (context) => {
    const colors = Context.get(context, TerminalCapabilities.TerminalCapabilities).canColor
    return Console.log(render(CliOutput.defaultFormatter({ colors, globalFlags: "summary" })))
  })

const presenter: CliOutput.Presenter = {
  present: (event) => {
    switch (event._tag) {
      case "InvalidInvocation": {
        const first = event.errors[0]
        return first === undefined ? Effect.void : Console.error(`worksync: ${usageLine(first)}`)
      }
      case "Version":
        return Console.log(event.version)
      case "Help":
        return printHelp((formatter) => renderHelp(formatter, event.helpDoc))
    }
  }
}

/** The settings above, for `Command.runWith`. */
export const runnerLayer: Layer.Layer<never> = Layer.mergeAll(
  CliConfig.layer({ builtIns }),
  CliOutput.layerPresenter(presenter)
)
