/**
 * Test resources in Effect's style, for @effect/vitest: the emulator as a scoped Layer
 * shared by the tests of a file (`layer(emulatorLayer(...))`), and scoped temporary
 * directories that are removed when the test ends.
 *
 * ```ts
 * import { expect, layer } from "@effect/vitest"
 * layer(emulatorLayer({ seed: "demo" }))("backup", (it) => {
 *   it.effect("reads every record", () =>
 *     Effect.gen(function*() {
 *       const handle = yield* Emulator
 *       const dir = yield* tempDir("ws-backup-")
 *       ...
 *     }))
 * })
 * ```
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { type EmulatorHandle, type EmulatorOptions, startEmulator } from "../../src/emulator/index.ts"

/** The running emulator of a test file. */
export class Emulator extends Context.Service<Emulator, EmulatorHandle>()("test/Emulator") {}

/** Starts the emulator when the layer is built, closes it when the layer is released. */
export const emulatorLayer = (options: EmulatorOptions = {}): Layer.Layer<Emulator> =>
  Layer.effect(
    Emulator,
    Effect.acquireRelease(
      Effect.promise(() => startEmulator(options)),
      (handle) => Effect.promise(() => handle.close())
    )
  )

/** A fresh temporary directory, removed with everything in it when the scope closes. */
export const tempDir = (prefix = "ws-test-") =>
  Effect.acquireRelease(
    Effect.sync(() => fs.mkdtempSync(path.join(os.tmpdir(), prefix))),
    (dir) => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true }))
  )

/**
 * Runs `effect` with the system's temporary directory (where scratch files go) a new empty
 * one named `prefix...`, so a test can watch its scratch files come and go. A vitest worker
 * runs one file at a time: only the running file's tests see the change.
 */
export const withOwnTmpdir = <A, E, R>(prefix: string, effect: Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    const own = yield* tempDir(prefix)
    const was = process.env["TMPDIR"]
    return yield* Effect.acquireUseRelease(
      Effect.sync(() => void (process.env["TMPDIR"] = own)),
      () => effect,
      () => Effect.sync(() => void (was === undefined ? delete process.env["TMPDIR"] : (process.env["TMPDIR"] = was)))
    )
  })
