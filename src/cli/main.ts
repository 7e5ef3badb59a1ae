/**
 * The `worksync` command line. Thin: parse, call the library, render.
 *
 * Start-up matters (cron starts the CLI often): the commands in ./commands/ are
 * definitions only and load their work (./run/) when they run, and the platform layer is
 * the three services @effect/cli needs rather than NodeContext (which also loads the
 * child-process and worker machinery no command uses).
 */
import * as Command from "@effect/cli/Command"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as NodePath from "@effect/platform-node/NodePath"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as NodeTerminal from "@effect/platform-node/NodeTerminal"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { commands } from "./commands/index.ts"
import { teardown } from "./exit.ts"
import { withPlainTextWhereNoColour } from "./plain-text.ts"

const root = Command.make("worksync").pipe(
  Command.withDescription(
    "Backup, diff, export, CSV import and file copy for the work-management service, and a local emulator of it."
  ),
  Command.withSubcommands(commands)
)

const cli = Command.run(root, { name: "worksync", version: "0.1.0" })

// A job run by a worker of the pool dies with its worker, however the worker dies, so
// the job's stores are free for the worker that takes the job over (engine/worker.ts).
if (process.env.WORKSYNC_EXIT_WITH_PARENT === "1" && process.send !== undefined) {
  process.on("disconnect", () => process.kill(process.pid, "SIGKILL"))
  process.channel?.unref()
}

const platform = Layer.mergeAll(NodeFileSystem.layer, NodePath.layer, NodeTerminal.layer)

cli(process.argv).pipe(
  withPlainTextWhereNoColour,
  Effect.provide(platform),
  NodeRuntime.runMain({ disableErrorReporting: true, disablePrettyLogger: true, teardown })
)
