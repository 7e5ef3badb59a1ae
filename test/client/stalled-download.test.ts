/**
 * A download whose body stalls after the headers (storage sends the headers and half the
 * bytes, then nothing) fails once no byte came for `bodyIdleTimeoutMs`, with a Timeout
 * naming the file; callers retry it like any timeout. A wrong client waits forever: the
 * small test timeout is the check, no time is measured.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import { describe, expect, layer } from "@effect/vitest"
import { fromBytes } from "../../src/client/multipart.ts"
import { isRetryable } from "../../src/client/retry.ts"
import { Uploads } from "../../src/client/uploads.ts"
import { Timeout } from "../../src/client/errors.ts"
import { Emulator } from "../support/effect.ts"
import { clientFailure, withClient, layerFor, testEmulatorLayer } from "./helpers.ts"

const QUICK = { timeout: 10_000 }
const collect = (s: Stream.Stream<Uint8Array, unknown>) =>
  Effect.map(Stream.runCollect(s), (chunks) => Buffer.concat(chunks.map((c) => Buffer.from(c))))

const bytes = Buffer.from("0123456789".repeat(1000))

/** The file every test downloads, uploaded once when the file's emulator starts. */
class Stalls extends Context.Service<Stalls, { readonly uid: string }>()("test/Stalls") {}

const stallsLayer = Layer.effect(
  Stalls,
  Effect.gen(function*() {
    const emu = yield* Emulator
    const ws = emu.workspaces[0]!
    const file = yield* withClient(layerFor(emu), Effect.flatMap(Uploads, (u) => u.upload(fromBytes("stalls.bin", bytes), { workspaceId: ws })))
    return { uid: file.uid }
  })
).pipe(Layer.provideMerge(testEmulatorLayer({ seed: "empty" })))

// Real HTTP to the emulator: the live clock (no TestClock), or the client's timeouts and
// retries would never fire.
layer(stallsLayer, { timeout: 30_000, excludeTestServices: true })((it) => {
  describe("R-FILE-SERVE-02: a download body that stalls", () => {
    it.effect("fails with an idle Timeout naming the file, after the bytes that came", () =>
      Effect.gen(function*() {
        const emu = yield* Emulator
        const { uid } = yield* Stalls
        emu.faults.inject({ route: /^\/o\//, kind: "stall-body" })
        let received = 0
        const e = yield* clientFailure(
          layerFor(emu, { bodyIdleTimeoutMs: 200 }),
          Effect.flatMap(Uploads, (u) => Stream.runForEach(u.download(uid, "stalls.bin"), (c) => Effect.sync(() => (received += c.length))))
        )
        expect(e).toBeInstanceOf(Timeout)
        expect((e as Timeout).message).toBe(`download "stalls.bin": the answer stalled: no bytes for 200 ms`)
        expect(received).toBe(bytes.length / 2)
        // Transient: a caller retries it as it retries any timeout.
        expect(isRetryable(e as Timeout, true)).toBe(true)
      }), QUICK)

    it.effect("the one-shot is spent: the next download brings every byte", () =>
      Effect.gen(function*() {
        const emu = yield* Emulator
        const { uid } = yield* Stalls
        emu.faults.inject({ route: /^\/o\//, kind: "stall-body" })
        const layer = layerFor(emu, { bodyIdleTimeoutMs: 200 })
        yield* clientFailure(layer, Effect.flatMap(Uploads, (u) => collect(u.download(uid, "stalls.bin"))))
        const back = yield* withClient(layer, Effect.flatMap(Uploads, (u) => collect(u.download(uid, "stalls.bin"))))
        expect(back.equals(bytes)).toBe(true)
      }), QUICK)
  })
})
