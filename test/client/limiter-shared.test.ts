/**
 * The rate limiter's bucket shared through PostgreSQL (limiter-postgres.ts): two limiters
 * over the same URL and account stand for two processes working for one token. A real
 * server (test/support/postgres.ts), no mocks. The shared store runs on the server's
 * clock, so these tests run live and assert on state and order, not on durations.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Cause from "effect/Cause"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Ref from "effect/Ref"
import * as TestClock from "effect/testing/TestClock"
import { connectionConfigFromEnv, connectionLayer, DEFAULT_LIMITER, type LimiterSettings, makeConnectionConfig } from "../../src/client/config.ts"
import { accountKey, initialBucket, Limiter, limiterLayer, makeLimiter } from "../../src/client/limiter.ts"
import { decodeBucket, encodeBucket, postgresBucketStore } from "../../src/client/limiter-postgres.ts"
import { freshDatabase, freshSchema, pgClient, query } from "../support/postgres.ts"

/** Two "processes" (a store and a limiter each) over the bucket of `account` at `url`. */
const limiterOver = (url: string, account: string, settings: LimiterSettings) =>
  Effect.gen(function*() {
    const store = yield* postgresBucketStore(url, account, (now) => initialBucket(settings, now))
    const limiter = yield* makeLimiter(settings, undefined, store)
    return { store, limiter }
  })

/** The server's clock in ms, as the shared store reads it. */
const serverNow = (url: string) =>
  Effect.scoped(
    Effect.flatMap(pgClient(url.replace(/[?&]schema=[^&]*/, "")), (client) =>
      Effect.map(
        query<{ now: number }>(client, "SELECT (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS now"),
        (rows) => rows[0]!.now
      ))
  ).pipe(Effect.orDie)

const drain = (l: { withPermit: <A, E, R>(self: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R> }, n: number) =>
  Effect.forEach(Array.from({ length: n }), () => l.withPermit(Effect.void), { discard: true })

describe("shared rate limiter (PostgreSQL)", () => {
  it.live("a 429 reported to one process cuts the rate the other sees; its Retry-After pauses the other", () =>
    Effect.gen(function*() {
      const url = yield* freshSchema
      const settings: LimiterSettings = { ...DEFAULT_LIMITER, initialRps: 10, increasePerSuccess: 1 }
      const a = yield* limiterOver(url, "account-1", settings)
      const b = yield* limiterOver(url, "account-1", settings)

      // Growth needs demand: A takes the burst, then its successes raise the shared rate.
      yield* drain(a.limiter, 10)
      for (let i = 0; i < 5; i++) yield* a.limiter.onSuccess
      const grown = yield* b.limiter.stats
      expect(grown.currentRps).toBeGreaterThan(10)
      expect(grown.softCeilingRps).toBeNull()
      expect(grown.sent).toBe(0)

      yield* a.limiter.onRateLimited(null)
      const seenByB = yield* b.limiter.stats
      expect(seenByB.currentRps).toBeLessThan(grown.currentRps)
      expect(seenByB.softCeilingRps).toBe(seenByB.currentRps)
      expect(seenByB).toMatchObject({ rateLimited: 0, sent: 0 })
      expect((yield* a.limiter.stats).rateLimited).toBe(1)

      // A Retry-After answered to A holds B's next call until the pause ends (server clock).
      yield* a.limiter.onRateLimited(700)
      const pausedUntil = (yield* b.store.get).pausedUntil
      expect(pausedUntil).toBeGreaterThan(yield* serverNow(url))
      const startedAt = yield* Ref.make<number | null>(null)
      const fiber = yield* Effect.forkChild(b.limiter.withPermit(Effect.flatMap(serverNow(url), (t) => Ref.set(startedAt, t))))
      yield* Effect.sleep(50)
      expect(yield* Ref.get(startedAt)).toBeNull()
      yield* Fiber.join(fiber)
      expect(yield* Ref.get(startedAt)).toBeGreaterThanOrEqual(pausedUntil)
      expect((yield* b.limiter.stats).sent).toBe(1)
    }))

  it.live("tokens are shared: a call through A takes the burst, a call through B waits for the refill", () =>
    Effect.gen(function*() {
      const url = yield* freshSchema
      // A known ceiling of 0.5 rps, fixed: a burst of one call, then one token every 2 s. The
      // slow refill keeps the checks below far from the next token even on a loaded machine.
      const settings: LimiterSettings = { ...DEFAULT_LIMITER, adaptive: false, minRps: 0.5, initialRps: 0.5, maxRps: 0.5 }
      const a = yield* limiterOver(url, "account-1", settings)
      const b = yield* limiterOver(url, "account-1", settings)
      const order = yield* Ref.make<ReadonlyArray<string>>([])
      const mark = (name: string) => Ref.update(order, (o) => [...o, name])

      yield* a.limiter.withPermit(mark("a"))
      expect(yield* Ref.get(order)).toEqual(["a"])
      expect((yield* b.store.get).tokens).toBeLessThan(1)

      const second = yield* Effect.forkChild(b.limiter.withPermit(mark("b")))
      yield* Effect.sleep(20)
      // A's call has run, B's has not: the burst was A's, and B sees it spent.
      expect(yield* Ref.get(order)).toEqual(["a"])
      expect((yield* b.limiter.stats).sent).toBe(0)
      yield* Fiber.join(second)
      expect(yield* Ref.get(order)).toEqual(["a", "b"])
      expect((yield* a.limiter.stats).sent).toBe(1)
      expect((yield* b.limiter.stats).sent).toBe(1)
    }))

  it.live("another account has a bucket of its own", () =>
    Effect.gen(function*() {
      const url = yield* freshSchema
      const settings: LimiterSettings = { ...DEFAULT_LIMITER, initialRps: 10, increasePerSuccess: 1 }
      const a = yield* limiterOver(url, "account-1", settings)
      const other = yield* limiterOver(url, "account-2", settings)
      yield* drain(a.limiter, 10)
      for (let i = 0; i < 5; i++) yield* a.limiter.onSuccess
      yield* a.limiter.onRateLimited(60_000)
      const mine = yield* a.store.get
      expect(mine.ceiling).not.toBeNull()
      expect(mine.pausedUntil).toBeGreaterThan(0)

      const theirs = yield* other.store.get
      expect(theirs).toMatchObject({ rate: 10, ceiling: null, pausedUntil: 0, tokens: 10 })
      expect(yield* other.limiter.stats).toMatchObject({ currentRps: 10, softCeilingRps: null })
      // Not paused by account-1's minute-long Retry-After: its burst is there to take.
      yield* drain(other.limiter, 10)
      expect((yield* other.limiter.stats).sent).toBe(10)
    }))

  it.live("a process keeps to its own maxRps over a bucket left at a higher rate", () =>
    Effect.gen(function*() {
      const url = yield* freshSchema
      const fast = yield* limiterOver(url, "account-1", { ...DEFAULT_LIMITER, initialRps: 40 })
      expect((yield* fast.store.get).rate).toBe(40)
      const capped = yield* limiterOver(url, "account-1", { ...DEFAULT_LIMITER, initialRps: 5, maxRps: 5 })
      yield* capped.limiter.withPermit(Effect.void)
      const after = yield* capped.store.get
      expect(after.rate).toBe(5)
      expect(after.tokens).toBeLessThanOrEqual(4.5)
    }))

  it.live("the table: created in the URL's schema by two processes at once, one row per account, no secret in it", () =>
    Effect.gen(function*() {
      const url = yield* freshSchema
      const settings: LimiterSettings = { ...DEFAULT_LIMITER }
      yield* Effect.all([limiterOver(url, "k1", settings), limiterOver(url, "k1", settings), limiterOver(url, "k2", settings)], {
        concurrency: "unbounded"
      })
      const client = yield* pgClient(url.replace(/\?schema=worksync$/, ""))
      const rows = yield* query<{ account: string; bucket: string; updated: boolean }>(
        client,
        "SELECT account, bucket::text AS bucket, updated_at IS NOT NULL AS updated FROM worksync.worksync_rate_limits ORDER BY account"
      )
      expect(rows.map((r) => r.account)).toEqual(["k1", "k2"])
      expect(rows.every((r) => r.updated)).toBe(true)
      // -Infinity has no JSON form: it is kept as a string and read back as the number.
      expect(JSON.parse(rows[0]!.bucket).cutWindowEnd).toBe("-Infinity")
      expect(decodeBucket(rows[0]!.bucket)?.cutWindowEnd).toBe(Number.NEGATIVE_INFINITY)
      const b = initialBucket(settings, 1234)
      expect(decodeBucket(encodeBucket(b))).toEqual(b)
      expect(decodeBucket("{\"tokens\": \"x\"}")).toBeUndefined()
    }))

  it.live("the layer: WORKSYNC_SHARED_LIMITER puts the limiter's state in the default schema under a hash of the account", () =>
    Effect.gen(function*() {
      const dbUrl = yield* freshDatabase
      const token = "secret-token-for-shared-limiter"
      const config = yield* Effect.provideService(
        connectionConfigFromEnv,
        ConfigProvider.ConfigProvider,
        ConfigProvider.fromEnv({
          env: {
            WORKSYNC_REST_URL: "http://service.invalid/rest",
            WORKSYNC_BASE_URL: "http://service.invalid",
            WORKSYNC_TOKEN: token,
            WORKSYNC_ORG: "acme",
            WORKSYNC_SHARED_LIMITER: dbUrl
          }
        })
      )
      expect(config.sharedLimiter).toBe(dbUrl)
      const key = accountKey(config)
      expect(key).toMatch(/^[0-9a-f]{64}$/)
      // The same token elsewhere, or in another organization, is another account.
      expect(accountKey(makeConnectionConfig({ restUrl: "http://service.invalid/rest", baseUrl: "x", token, org: "other" }))).not.toBe(key)
      expect(accountKey(makeConnectionConfig({ restUrl: "http://service.invalid/rest", baseUrl: "x", token, org: "acme" }))).toBe(key)

      const layer = limiterLayer.pipe(Layer.provide(connectionLayer(config)))
      yield* Effect.scoped(Effect.flatMap(Layer.build(layer), (ctx) =>
        Effect.flatMap(Effect.provide(Limiter, ctx), (l) => l.withPermit(Effect.void))))
      const client = yield* pgClient(dbUrl)
      const rows = yield* query<{ account: string; bucket: string }>(
        client,
        "SELECT account, bucket::text AS bucket FROM worksync_engine.worksync_rate_limits"
      )
      expect(rows.map((r) => r.account)).toEqual([key])
      expect(JSON.stringify(rows)).not.toContain(token)
      expect(decodeBucket(rows[0]!.bucket)?.rate).toBe(DEFAULT_LIMITER.initialRps)

      // Unset, the limiter is local as before.
      const local = yield* Effect.provideService(
        connectionConfigFromEnv,
        ConfigProvider.ConfigProvider,
        ConfigProvider.fromEnv({ env: { WORKSYNC_REST_URL: "http://h", WORKSYNC_BASE_URL: "http://h", WORKSYNC_SHARED_LIMITER: "" } })
      )
      expect(local.sharedLimiter).toBeUndefined()
    }))

  it.live("a database it cannot reach is a defect naming the URL without its password", () =>
    Effect.gen(function*() {
      const password = "pg-password-not-to-show"
      const url = `postgres://someone:${password}@127.0.0.1:1/nowhere?schema=limits`
      const exit = yield* Effect.exit(Effect.scoped(postgresBucketStore(url, "k", initialBucket(DEFAULT_LIMITER, 0))))
      expect(exit._tag).toBe("Failure")
      const text = exit._tag === "Failure" ? String(Cause.squash(exit.cause)) : ""
      expect(text).toContain("someone:***@127.0.0.1:1/nowhere")
      expect(text).not.toContain(password)
    }))
})

describe("local limiter (no store given)", () => {
  // The TestClock drives the local store: no token accrues until it is moved.
  it.effect("still takes the burst, then waits for the refill on Effect's clock", () =>
    Effect.gen(function*() {
      const l = yield* makeLimiter({ ...DEFAULT_LIMITER, adaptive: false, initialRps: 5, maxRps: 5 })
      yield* drain(l, 5)
      const sixth = yield* Effect.forkChild(l.withPermit(Effect.void))
      yield* TestClock.adjust(199)
      expect((yield* l.stats).sent).toBe(5)
      yield* TestClock.adjust(1)
      yield* Fiber.join(sixth)
      expect(yield* l.stats).toMatchObject({ sent: 6, currentRps: 5, softCeilingRps: 5 })
    }))
})
