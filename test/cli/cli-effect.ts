/** The CLI child processes of test/support/cli.ts as Effects, for tests written with @effect/vitest. */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { runCli } from "../support/cli.ts"
import { tempDir } from "../support/effect.ts"

/** Runs the real binary to its end; a spawn failure fails the test as a defect. */
export const cli = (...args: Parameters<typeof runCli>) => Effect.promise(() => runCli(...args))

/** A working directory shared by the tests of a file (later tests read what earlier ones wrote). */
export class WorkDir extends Context.Service<WorkDir, string>()("test/cli/WorkDir") {}

/** Creates the shared directory when the layer is built and removes it when it is released. */
export const workDirLayer = (prefix: string): Layer.Layer<WorkDir> => Layer.effect(WorkDir, tempDir(prefix))
