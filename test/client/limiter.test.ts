import { describe, expect, it } from "vitest"
import * as Effect from "effect/Effect"
import { Limiter, makeLimiter } from "../../src/client/limiter.ts"
import { RestClient } from "../../src/client/rest-client.ts"
import { DEFAULT_LIMITER } from "../../src/client/config.ts"
import { json, layerFor, run, startRecordingServer } from "./helpers.ts"

const EMPTY_PAGE = { items: [], totalCount: 0 }
const fakeEmu = (url: string) => ({ restUrl: url, baseUrl: url, token: "t0ken-for-tests", tokenId: "tid-0001", tokenSecret: "tsecret-0001", org: "org" })

describe("Limiter", () => {
  it("keeps requests in flight at or below maxInFlight across fibers (counted server-side)", async () => {
    const server = await startRecordingServer((_r, res) => {
      setTimeout(() => json(res, 200, EMPTY_PAGE), 40)
    })
    try {
      const layer = layerFor(fakeEmu(server.url), { limiter: { maxInFlight: 3, initialRps: 10_000 } })
      const stats = await run(
        layer,
        Effect.gen(function*() {
          const rest = yield* RestClient
          yield* Effect.forEach(Array.from({ length: 24 }), () => rest.listWorkspaces(), { concurrency: "unbounded" })
          return yield* Effect.flatMap(Limiter, (l) => l.stats)
        })
      )
      expect(server.requests.length).toBe(24)
      expect(server.concurrency.peak).toBeLessThanOrEqual(3)
      expect(server.concurrency.peak).toBe(3)
      expect(stats.peakInFlight).toBe(3)
      expect(stats.sent).toBe(24)
    } finally {
      await server.close()
    }
  })

  it("AIMD: 429s halve the rate and Retry-After pauses every caller", async () => {
    const server = await startRecordingServer((_r, res, i) =>
      i === 0 ? json(res, 429, { error: { code: "RATE_LIMITED", message: "x" } }, { "retry-after": "1" }) : json(res, 200, EMPTY_PAGE)
    )
    try {
      const layer = layerFor(fakeEmu(server.url), { limiter: { maxInFlight: 1, initialRps: 40, adaptive: true, increasePerSuccess: 0 } })
      const stats = await run(
        layer,
        Effect.gen(function*() {
          const rest = yield* RestClient
          yield* Effect.forEach(Array.from({ length: 4 }), () => rest.listWorkspaces(), { concurrency: "unbounded" })
          return yield* Effect.flatMap(Limiter, (l) => l.stats)
        })
      )
      expect(stats.rateLimited).toBe(1)
      expect(stats.currentRps).toBe(20)
      // Every request after the 429 (the retry and the three others) waited out the pause.
      const t0 = server.requests[0]!.at
      for (const r of server.requests.slice(1)) expect(r.at - t0).toBeGreaterThanOrEqual(1000)
      expect(server.requests.length).toBe(5)
    } finally {
      await server.close()
    }
  })

  it("AIMD: successes add to the rate up to maxRps; 429s without Retry-After still cut it", async () => {
    const rates = await Effect.runPromise(
      Effect.gen(function*() {
        const l = yield* makeLimiter({ ...DEFAULT_LIMITER, initialRps: 10, maxRps: 12, increasePerSuccess: 1 })
        for (let i = 0; i < 5; i++) yield* l.onSuccess
        const afterSuccess = (yield* l.stats).currentRps
        yield* l.onRateLimited(null)
        const afterCut = (yield* l.stats).currentRps
        // A second 429 inside the same window is the same signal: no second cut.
        yield* l.onRateLimited(null)
        const afterSecond = (yield* l.stats).currentRps
        return { afterSuccess, afterCut, afterSecond }
      })
    )
    expect(rates).toEqual({ afterSuccess: 12, afterCut: 6, afterSecond: 6 })
  })

  it("the token bucket spaces requests at the configured rate (server-side timestamps)", async () => {
    const server = await startRecordingServer((_r, res) => json(res, 200, EMPTY_PAGE))
    try {
      const layer = layerFor(fakeEmu(server.url), { limiter: { maxInFlight: 8, initialRps: 5, adaptive: false } })
      await run(
        layer,
        Effect.flatMap(RestClient, (rest) => Effect.forEach(Array.from({ length: 10 }), () => rest.listWorkspaces(), { concurrency: "unbounded" }))
      )
      const times = server.requests.map((r) => r.at).sort((a, b) => a - b)
      // A burst of 5, then one every 200 ms: the tenth starts about a second after the first.
      expect(times[9]! - times[0]!).toBeGreaterThanOrEqual(900)
    } finally {
      await server.close()
    }
  })

  it("waiting for a slot is interruptible", async () => {
    const exit = await Effect.runPromiseExit(
      Effect.gen(function*() {
        const l = yield* makeLimiter({ ...DEFAULT_LIMITER, maxInFlight: 1 })
        yield* Effect.fork(l.withPermit(Effect.never))
        yield* Effect.sleep(10)
        return yield* l.withPermit(Effect.succeed(1)).pipe(Effect.timeout(50))
      })
    )
    expect(exit._tag).toBe("Failure")
  })
})
