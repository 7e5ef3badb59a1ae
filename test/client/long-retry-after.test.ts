/**
 * A Retry-After of hours or days (seconds or a far-future HTTP date) is not waited: the
 * call fails at once with RetryWaitTooLong, naming the operation and the wait, and the
 * limiter holds no other call for it. A wait within `maxRetryWaitMs` is still honoured.
 *
 * No wall clock: a wrong client would wait for hours, so these tests would not finish;
 * each has a small timeout instead of measuring time.
 */
import * as Effect from "effect/Effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { DEFAULT_LIMITER } from "../../src/client/config.ts"
import { formatWait, RateLimited, RetryWaitTooLong } from "../../src/client/errors.ts"
import { GraphqlClient } from "../../src/client/graphql-client.ts"
import { makeLimiter } from "../../src/client/limiter.ts"
import { RestClient } from "../../src/client/rest-client.ts"
import { isRetryable, writeOutcome } from "../../src/client/retry.ts"
import { Uploads } from "../../src/client/uploads.ts"
import type { EmulatorHandle } from "../../src/emulator/index.ts"
import { layerFor, run, runFailure, startTestEmulator } from "./helpers.ts"

const THREE_HOURS_S = 3 * 3600
/** Long enough for the calls themselves, far too short for any Retry-After of these tests. */
const QUICK = { timeout: 10_000 }

let emu: EmulatorHandle
let ws: string
beforeAll(async () => {
  emu = await startTestEmulator({ seed: "demo" })
  ws = emu.workspaces[0]!
})
afterAll(() => emu?.close())

const tooLong = (e: unknown): RetryWaitTooLong => {
  expect(e).toBeInstanceOf(RetryWaitTooLong)
  return e as RetryWaitTooLong
}

describe("R-REST-ERR-05: a Retry-After beyond --max-retry-wait is not waited", () => {
  it("Retry-After of 3 hours (seconds): list-records fails at once, naming the operation and the wait; sent once", QUICK, async () => {
    emu.resetStats()
    emu.faults.inject({ route: "list-records", kind: "429", retryAfter: THREE_HOURS_S })
    const e = tooLong(await runFailure(layerFor(emu), Effect.flatMap(RestClient, (c) => c.listRecords({ workspaceId: ws }))))
    expect(e.operation).toBe("list-records")
    expect(e.requestedMs).toBe(THREE_HOURS_S * 1000)
    expect(e.maxMs).toBe(120_000)
    expect(e.message).toBe(
      "list-records: the service asked to wait 3 h 0 min (Retry-After), more than --max-retry-wait 120 s; rerun later to resume"
    )
    expect(emu.stats().byRoute["list-records"]).toBe(1)
  })

  it("Retry-After as an HTTP date two days ahead: fails at once too", QUICK, async () => {
    const date = new Date(Date.now() + 2 * 86_400_000).toUTCString()
    emu.faults.inject({ route: "list-workspaces", kind: "429", retryAfter: date })
    const e = tooLong(await runFailure(layerFor(emu), Effect.flatMap(RestClient, (c) => c.listWorkspaces())))
    expect(e.message).toMatch(/^list-workspaces: the service asked to wait (1 d 23 h|2 d 0 h) \(Retry-After\)/)
  })

  it("the emulator's rate limit with a chosen Retry-After (FaultOptions.retryAfter, HTTP-date form) ends the run at once", QUICK, async () => {
    const limited = await startTestEmulator({
      seed: "empty",
      faults: { rateLimit: 1, retryAfter: THREE_HOURS_S, retryAfterForm: "http-date" }
    })
    try {
      const e = tooLong(
        await runFailure(
          layerFor(limited),
          Effect.flatMap(RestClient, (c) => Effect.forEach([1, 2, 3], () => c.listWorkspaces(), { discard: true }))
        )
      )
      expect(e.operation).toBe("list-workspaces")
      expect(e.message).toMatch(/wait (2 h 59 min|3 h 0 min) \(Retry-After\)/)
    } finally {
      await limited.close()
    }
  })

  it("GraphQL and uploads end the same way", QUICK, async () => {
    emu.faults.inject({ route: "/graphql", kind: "429", retryAfter: THREE_HOURS_S })
    const g = tooLong(await runFailure(layerFor(emu), Effect.flatMap(GraphqlClient, (c) => c.currentUser())))
    expect(g.operation).toBe("currentUser")
    emu.faults.inject({ route: /^\/(rest\/)?uploads$/, kind: "429", retryAfter: THREE_HOURS_S })
    const u = tooLong(
      await runFailure(layerFor(emu), Effect.flatMap(Uploads, (c) => c.presign({ filename: "a.txt", size: 1, workspaceId: ws })))
    )
    expect(u.operation).toBe("presign upload")
  })

  it("the limiter holds no other call for such a wait: the next calls go out at once", QUICK, async () => {
    emu.resetStats()
    emu.faults.inject({ route: "list-records", kind: "429", retryAfter: THREE_HOURS_S })
    const [first, next] = await run(
      layerFor(emu),
      Effect.flatMap(RestClient, (c) =>
        Effect.all([
          Effect.flip(c.listRecords({ workspaceId: ws })),
          Effect.andThen(c.listWorkspaces(), c.countRecords({ workspaceId: ws }))
        ], { concurrency: 1 }))
    )
    tooLong(first)
    expect(next).toBeDefined()
    expect(emu.stats().byRouteStatus).toMatchObject({ "list-records 429": 1, "list-workspaces 200": 1, "count-records 200": 1 })
  })

  it("a wait within the cap is honoured: Retry-After 1 s is waited and the call succeeds", QUICK, async () => {
    emu.resetStats()
    emu.faults.inject({ route: "list-workspaces", kind: "429", retryAfter: 1 })
    const page = await run(layerFor(emu), Effect.flatMap(RestClient, (c) => c.listWorkspaces()))
    expect(page.items.length).toBeGreaterThan(0)
    expect(emu.stats().byRouteStatus).toMatchObject({ "list-workspaces 429": 1, "list-workspaces 200": 1 })
  })

  it("maxRetryWaitMs is the cap: Retry-After 2 s against a cap of 1 s fails at once", QUICK, async () => {
    emu.faults.inject({ route: "list-workspaces", kind: "429", retryAfter: 2 })
    const e = tooLong(
      await runFailure(layerFor(emu, { maxRetryWaitMs: 1000 }), Effect.flatMap(RestClient, (c) => c.listWorkspaces()))
    )
    expect(e.message).toBe(
      "list-workspaces: the service asked to wait 2 s (Retry-After), more than --max-retry-wait 1 s; rerun later to resume"
    )
  })

  it("a create refused that way was not applied: definite, not retried, and the record is not there", QUICK, async () => {
    const before = emu.admin.countRecords(ws)
    emu.faults.inject({ route: "create-record", kind: "429", retryAfter: THREE_HOURS_S })
    const e = tooLong(
      await runFailure(layerFor(emu), Effect.flatMap(RestClient, (c) => c.createRecord({ workspaceId: ws, title: "later" })))
    )
    expect(writeOutcome(e)).toBe("not-applied")
    expect(isRetryable(e, true)).toBe(false)
    expect(emu.admin.countRecords(ws)).toBe(before)
  })
})

describe("the limiter and the wait cap", () => {
  it("a Retry-After beyond the cap pauses nobody", QUICK, async () => {
    const limiter = await Effect.runPromise(makeLimiter({ ...DEFAULT_LIMITER, initialRps: 1000 }, 1000))
    await Effect.runPromise(limiter.onRateLimited(THREE_HOURS_S * 1000))
    // Would sleep three hours if the pause were taken.
    await Effect.runPromise(limiter.withPermit(Effect.void))
    expect((await Effect.runPromise(limiter.stats)).rateLimited).toBe(1)
  })

  it("waits read as people read them", () => {
    expect(formatWait(45_000)).toBe("45 s")
    expect(formatWait(125_000)).toBe("2 min 5 s")
    expect(formatWait(THREE_HOURS_S * 1000)).toBe("3 h 0 min")
    expect(formatWait(52 * 3600_000)).toBe("2 d 4 h")
    expect(formatWait(1)).toBe("1 s")
  })

  it("RateLimited within the cap stays retryable", () => {
    expect(isRetryable(new RateLimited({ operation: "x", retryAfterMs: 1000 }), false)).toBe(true)
  })
})
