/**
 * A download whose body stalls after the headers (storage sends the headers and half the
 * bytes, then nothing) fails once no byte came for `bodyIdleTimeoutMs`, with a Timeout
 * naming the file; callers retry it like any timeout. A wrong client waits forever: the
 * small test timeout is the check, no time is measured.
 */
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { fromBytes } from "../../src/client/multipart.ts"
import { isRetryable } from "../../src/client/retry.ts"
import { Uploads } from "../../src/client/uploads.ts"
import { Timeout } from "../../src/client/errors.ts"
import type { EmulatorHandle } from "../../src/emulator/index.ts"
import { layerFor, run, runFailure, startTestEmulator } from "./helpers.ts"

const QUICK = { timeout: 10_000 }
const collect = (s: Stream.Stream<Uint8Array, unknown>) =>
  Effect.map(Stream.runCollect(s), (chunks) => Buffer.concat(Chunk.toReadonlyArray(chunks).map((c) => Buffer.from(c))))

let emu: EmulatorHandle
let ws: string
const bytes = Buffer.from("0123456789".repeat(1000))
let uid: string
beforeAll(async () => {
  emu = await startTestEmulator({ seed: "empty" })
  ws = emu.workspaces[0]!
  uid = (await run(layerFor(emu), Effect.flatMap(Uploads, (u) => u.upload(fromBytes("stalls.bin", bytes), { workspaceId: ws })))).uid
})
afterAll(() => emu?.close())

describe("R-FILE-SERVE-02: a download body that stalls", () => {
  it("fails with an idle Timeout naming the file, after the bytes that came", QUICK, async () => {
    emu.faults.inject({ route: /^\/o\//, kind: "stall-body" })
    let received = 0
    const e = await runFailure(
      layerFor(emu, { bodyIdleTimeoutMs: 200 }),
      Effect.flatMap(Uploads, (u) => Stream.runForEach(u.download(uid, "stalls.bin"), (c) => Effect.sync(() => (received += c.length))))
    )
    expect(e).toBeInstanceOf(Timeout)
    expect((e as Timeout).message).toBe(`download "stalls.bin": the answer stalled: no bytes for 200 ms`)
    expect(received).toBe(bytes.length / 2)
    // Transient: a caller retries it as it retries any timeout.
    expect(isRetryable(e as Timeout, true)).toBe(true)
  })

  it("the one-shot is spent: the next download brings every byte", QUICK, async () => {
    emu.faults.inject({ route: /^\/o\//, kind: "stall-body" })
    const layer = layerFor(emu, { bodyIdleTimeoutMs: 200 })
    await runFailure(layer, Effect.flatMap(Uploads, (u) => collect(u.download(uid, "stalls.bin"))))
    const back = await run(layer, Effect.flatMap(Uploads, (u) => collect(u.download(uid, "stalls.bin"))))
    expect(back.equals(bytes)).toBe(true)
  })
})
