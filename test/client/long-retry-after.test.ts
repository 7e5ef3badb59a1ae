/**
 * A Retry-After of hours or days (seconds or a far-future HTTP date) is not waited: the
 * call fails at once with RetryWaitTooLong, naming the operation and the wait, and the
 * limiter holds no other call for it. A wait within `maxRetryWaitMs` is still honoured.
 *
 * No wall clock: a wrong client would wait for hours, so these tests would not finish;
 * each has a small timeout instead of measuring time.
 */
import * as Effect from "effect/Effect"
import { describe, expect, layer } from "@effect/vitest"
import { DEFAULT_LIMITER } from "../../src/client/config.ts"
import { formatWait, RateLimited, RetryWaitTooLong } from "../../src/client/errors.ts"
import { GraphqlClient } from "../../src/client/graphql-client.ts"
import { makeLimiter } from "../../src/client/limiter.ts"
import { RestClient } from "../../src/client/rest-client.ts"
import { isRetryable, writeOutcome } from "../../src/client/retry.ts"
import { Uploads } from "../../src/client/uploads.ts"
import { Emulator } from "../support/effect.ts"
import { clientFailure, layerFor, scopedTestEmulator, testEmulatorLayer, withClient } from "./helpers.ts"

const THREE_HOURS_S = 3 * 3600
/** Long enough for the calls themselves, far too short for any Retry-After of these tests. */
const QUICK = { timeout: 10_000 }

const tooLong = (e: unknown): RetryWaitTooLong => {
  expect(e).toBeInstanceOf(RetryWaitTooLong)
  return e as RetryWaitTooLong
}

// The client talks to a real server: the live clock (no TestClock), or its timeouts and
// retries would never fire.
layer(testEmulatorLayer({ seed: "demo" }), { timeout: 30_000, excludeTestServices: true })((it) => {
  describe("R-REST-ERR-05: a Retry-After beyond --max-retry-wait is not waited", () => {
    it.effect("Retry-After of 3 hours (seconds): list-records fails at once, naming the operation and the wait; sent once", () =>
      Effect.gen(function*() {
        const emu = yield* Emulator
        const ws = emu.workspaces[0]!
        emu.resetStats()
        emu.faults.inject({ route: "list-records", kind: "429", retryAfter: THREE_HOURS_S })
        const e = tooLong(yield* clientFailure(layerFor(emu), Effect.flatMap(RestClient, (c) => c.listRecords({ workspaceId: ws }))))
        expect(e.operation).toBe("list-records")
        expect(e.requestedMs).toBe(THREE_HOURS_S * 1000)
        expect(e.maxMs).toBe(120_000)
        expect(e.message).toBe(
          "list-records: the service asked to wait 3 h 0 min (Retry-After), more than --max-retry-wait 120 s; rerun later to resume"
        )
        expect(emu.stats().byRoute["list-records"]).toBe(1)
      }), QUICK)

    it.effect("Retry-After as an HTTP date two days ahead: fails at once too", () =>
      Effect.gen(function*() {
        const emu = yield* Emulator
        const date = new Date(Date.now() + 2 * 86_400_000).toUTCString()
        emu.faults.inject({ route: "list-workspaces", kind: "429", retryAfter: date })
        const e = tooLong(yield* clientFailure(layerFor(emu), Effect.flatMap(RestClient, (c) => c.listWorkspaces())))
        expect(e.message).toMatch(/^list-workspaces: the service asked to wait (1 d 23 h|2 d 0 h) \(Retry-After\)/)
      }), QUICK)

    it.effect("the emulator's rate limit with a chosen Retry-After (FaultOptions.retryAfter, HTTP-date form) ends the run at once", () =>
      Effect.gen(function*() {
        const limited = yield* scopedTestEmulator({
          seed: "empty",
          faults: { rateLimit: 1, retryAfter: THREE_HOURS_S, retryAfterForm: "http-date" }
        })
        const e = tooLong(
          yield* clientFailure(
            layerFor(limited),
            Effect.flatMap(RestClient, (c) => Effect.forEach([1, 2, 3], () => c.listWorkspaces(), { discard: true }))
          )
        )
        expect(e.operation).toBe("list-workspaces")
        expect(e.message).toMatch(/wait (2 h 59 min|3 h 0 min) \(Retry-After\)/)
      }), QUICK)

    it.effect("GraphQL and uploads end the same way", () =>
      Effect.gen(function*() {
        const emu = yield* Emulator
        const ws = emu.workspaces[0]!
        emu.faults.inject({ route: "/graphql", kind: "429", retryAfter: THREE_HOURS_S })
        const g = tooLong(yield* clientFailure(layerFor(emu), Effect.flatMap(GraphqlClient, (c) => c.currentUser())))
        expect(g.operation).toBe("currentUser")
        emu.faults.inject({ route: /^\/(rest\/)?uploads$/, kind: "429", retryAfter: THREE_HOURS_S })
        const u = tooLong(
          yield* clientFailure(layerFor(emu), Effect.flatMap(Uploads, (c) => c.presign({ filename: "a.txt", size: 1, workspaceId: ws })))
        )
        expect(u.operation).toBe("presign upload")
      }), QUICK)

    it.effect("the limiter holds no other call for such a wait: the next calls go out at once", () =>
      Effect.gen(function*() {
        const emu = yield* Emulator
        const ws = emu.workspaces[0]!
        emu.resetStats()
        emu.faults.inject({ route: "list-records", kind: "429", retryAfter: THREE_HOURS_S })
        const [first, next] = yield* withClient(
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
      }), QUICK)

    it.effect("a wait within the cap is honoured: Retry-After 1 s is waited and the call succeeds", () =>
      Effect.gen(function*() {
        const emu = yield* Emulator
        emu.resetStats()
        emu.faults.inject({ route: "list-workspaces", kind: "429", retryAfter: 1 })
        const page = yield* withClient(layerFor(emu), Effect.flatMap(RestClient, (c) => c.listWorkspaces()))
        expect(page.items.length).toBeGreaterThan(0)
        expect(emu.stats().byRouteStatus).toMatchObject({ "list-workspaces 429": 1, "list-workspaces 200": 1 })
      }), QUICK)

    it.effect("maxRetryWaitMs is the cap: Retry-After 2 s against a cap of 1 s fails at once", () =>
      Effect.gen(function*() {
        const emu = yield* Emulator
        emu.faults.inject({ route: "list-workspaces", kind: "429", retryAfter: 2 })
        const e = tooLong(
          yield* clientFailure(layerFor(emu, { maxRetryWaitMs: 1000 }), Effect.flatMap(RestClient, (c) => c.listWorkspaces()))
        )
        expect(e.message).toBe(
          "list-workspaces: the service asked to wait 2 s (Retry-After), more than --max-retry-wait 1 s; rerun later to resume"
        )
      }), QUICK)

    it.effect("a create refused that way was not applied: definite, not retried, and the record is not there", () =>
      Effect.gen(function*() {
        const emu = yield* Emulator
        const ws = emu.workspaces[0]!
        const before = emu.admin.countRecords(ws)
        emu.faults.inject({ route: "create-record", kind: "429", retryAfter: THREE_HOURS_S })
        const e = tooLong(
          yield* clientFailure(layerFor(emu), Effect.flatMap(RestClient, (c) => c.createRecord({ workspaceId: ws, title: "later" })))
        )
        expect(writeOutcome(e)).toBe("not-applied")
        expect(isRetryable(e, true)).toBe(false)
        expect(emu.admin.countRecords(ws)).toBe(before)
      }), QUICK)
  })

  describe("the limiter and the wait cap", () => {
    it.effect("a Retry-After beyond the cap pauses nobody", () =>
      Effect.gen(function*() {
        const limiter = yield* makeLimiter({ ...DEFAULT_LIMITER, initialRps: 1000 }, 1000)
        yield* limiter.onRateLimited(THREE_HOURS_S * 1000)
        // Would sleep three hours if the pause were taken.
        yield* limiter.withPermit(Effect.void)
        expect((yield* limiter.stats).rateLimited).toBe(1)
      }), QUICK)

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
})
