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
 */
import * as Arr from "effect/Array"
import * as CliConfig from "effect/cli/CliConfig"
import * as CliError from "effect/cli/CliError"
import * as CliOutput from "effect/cli/CliOutput"
import * as Flag from "effect/cli/Flag"
import * as GlobalFlag from "effect/cli/GlobalFlag"
import type * as HelpDoc from "effect/cli/HelpDoc"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { firstLine } from "./exit.ts"
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
 * The subcommand listing as worksync has always shown it: each entry marked `- NAME`
 * (what scripts and the package test look for), and a blank line after each multi-line
 * entry (a description with its examples, help-doc.ts) so the commands stand apart.
 */
const listed = (doc: HelpDoc.HelpDoc): HelpDoc.HelpDoc =>
  doc.subcommands === undefined ? doc : {
    ...doc,
    subcommands: doc.subcommands.map((group) => ({
      ...group,
      commands: Arr.map(group.commands, (c) => ({
        ...c,
        name: `- ${c.name}`,
        description: c.description.includes("\n") ? `${c.description}\n` : c.description
      }))
    }))
  }

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
        return CliOutput.defaultPresenter.present({ ...event, helpDoc: listed(event.helpDoc) })
    }
  }
}

/** The settings above, for `Command.runWith`. */
export const runnerLayer: Layer.Layer<never> = Layer.mergeAll(
  CliConfig.layer({ builtIns }),
  CliOutput.layerPresenter(presenter)
)
