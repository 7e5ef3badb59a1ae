/**
 * The `worksync` command line. Thin: parse, call the library, render.
 *
 * Start-up matters (cron starts the CLI often): the commands in ./commands/ are
 * definitions only and load their work (./run/) when they run, and the platform layer is
 * the services effect/cli needs rather than NodeServices (whose child-process spawner
 * loads machinery no command uses: see `noSpawner`).
 */
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as NodePath from "@effect/platform-node/NodePath"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as NodeStdio from "@effect/platform-node/NodeStdio"
import * as NodeTerminal from "@effect/platform-node/NodeTerminal"
import * as Command from "effect/cli/Command"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as ChildProcessSpawner from "effect/process/ChildProcessSpawner"
import { commands } from "./commands/index.ts"
import { teardown } from "./exit.ts"
import { withPlainTextWhereNoColour } from "./plain-text.ts"
import { runnerLayer } from "./runner.ts"
import { VERSION } from "./version.ts"

const root = Command.make("worksync").pipe(
  Command.withDescription(
    [
      "Back up, restore and move the data of the work-management service: snapshots, migrations between accounts, CSV imports, file copies, and a local emulator of the service.",
      "worksync doctor checks a connection; worksync COMMAND --help shows a command's flags and examples, worksync help connection the flags they share."
    ].join("\n")
  ),
  Command.withSubcommands(commands)
)

const cli = Command.runWith(root, { version: VERSION })

// A job run by a worker of the pool dies with its worker, however the worker dies, so
// the job's stores are free for the worker that takes the job over (engine/worker.ts).
if (process.env.WORKSYNC_EXIT_WITH_PARENT === "1" && process.send !== undefined) {
  process.on("disconnect", () => process.kill(process.pid, "SIGKILL"))
  process.channel?.unref()
}

/**
 * effect/cli's services include a child-process spawner for the commands that spawn
 * through it; none of ours does (a worker forks jobs with node:child_process itself), so
 * this one only says so, and start-up does not load the real one.
 */
const noSpawner = Layer.succeed(
  ChildProcessSpawner.ChildProcessSpawner,
  ChildProcessSpawner.make(() => Effect.die(new Error("worksync: no command spawns processes through effect/cli")))
)

const platform = Layer.mergeAll(NodeFileSystem.layer, NodePath.layer, NodeTerminal.layer, NodeStdio.layer, noSpawner, runnerLayer)

cli(process.argv.slice(2)).pipe(
  withPlainTextWhereNoColour,
  Effect.provide(platform),
  NodeRuntime.runMain({ disableErrorReporting: true, teardown })
)
