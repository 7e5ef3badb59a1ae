/**
 * The `worksync` command line. Thin: parse, call the library, render.
 */
import * as Command from "@effect/cli/Command"
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as Effect from "effect/Effect"
import { commands } from "./commands/index.ts"
import { teardown } from "./exit.ts"

const root = Command.make("worksync").pipe(
  Command.withDescription(
    "Backup, diff, export, CSV import and file copy for the work-management service, and a local emulator of it."
  ),
  Command.withSubcommands(commands)
)

const cli = Command.run(root, { name: "worksync", version: "0.1.0" })

cli(process.argv).pipe(
  Effect.provide(NodeContext.layer),
  NodeRuntime.runMain({ disableErrorReporting: true, disablePrettyLogger: true, teardown })
)
