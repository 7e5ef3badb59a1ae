/**
 * The one limiter every request to the service passes through: a cap on requests in
 * flight (a semaphore) and a token bucket on requests per second, shared by all fibers.
 * The rate adapts (AIMD): each success adds a little, a 429 halves it and pauses
 * everyone until the server's Retry-After has passed. Built from Effect primitives, so
 * waiting is interruptible.
 */
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Ref from "effect/Ref"
import { Connection, type LimiterSettings } from "./config.ts"

export interface LimiterStats {
  /** Requests let through. */
  readonly sent: number
  /** 429 answers reported. */
  readonly rateLimited: number
  /** Current allowed rate, requests per second. */
  readonly currentRps: number
  /** Requests in flight right now. */
  readonly inFlight: number
  /** Highest number of requests seen in flight at once. */
  readonly peakInFlight: number
}

export interface LimiterApi {
  /** Runs `self` holding one in-flight slot, after taking one token from the bucket. */
  readonly withPermit: <A, E, R>(self: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
  /** A request got a non-429 answer: additive increase. */
  readonly onSuccess: Effect.Effect<void>
  /** A request got 429: halve the rate and pause every caller for `retryAfterMs`. */
  readonly onRateLimited: (retryAfterMs: number | null) => Effect.Effect<void>
  readonly stats: Effect.Effect<LimiterStats>
}

export class Limiter extends Context.Tag("worksync/Limiter")<Limiter, LimiterApi>() {}

interface Bucket {
  readonly tokens: number
  readonly lastRefill: number
  readonly rate: number
  readonly pausedUntil: number
  readonly lastCut: number
}

interface Counters {
  readonly sent: number
  readonly rateLimited: number
  readonly inFlight: number
  readonly peakInFlight: number
}

/** Several 429s from requests already in flight are one signal: cut at most once per window. */
const CUT_WINDOW_MS = 1000

const burstOf = (rate: number): number => Math.max(1, rate)

export const makeLimiter = (settings: LimiterSettings): Effect.Effect<LimiterApi> =>
  Effect.gen(function*() {
    const maxInFlight = Math.max(1, Math.floor(settings.maxInFlight))
    const semaphore = yield* Effect.makeSemaphore(maxInFlight)
    const start = yield* Clock.currentTimeMillis
    const initialRate = Math.max(settings.minRps, settings.initialRps)
    const bucket = yield* Ref.make<Bucket>({
      tokens: burstOf(initialRate),
      lastRefill: start,
      rate: initialRate,
      pausedUntil: 0,
      lastCut: Number.NEGATIVE_INFINITY
    })
    const counters = yield* Ref.make<Counters>({ sent: 0, rateLimited: 0, inFlight: 0, peakInFlight: 0 })

    const refill = (b: Bucket, now: number): Bucket => {
      if (now <= b.lastRefill) return b
      const tokens = Math.min(burstOf(b.rate), b.tokens + ((now - b.lastRefill) * b.rate) / 1000)
      return { ...b, tokens, lastRefill: now }
    }

    /** Milliseconds to wait before trying again; 0 when a token was taken. */
    const tryTake = (now: number) =>
      Ref.modify(bucket, (b0): [number, Bucket] => {
        const b = refill(b0, now)
        if (now < b.pausedUntil) return [b.pausedUntil - now, b]
        if (b.tokens >= 1) return [0, { ...b, tokens: b.tokens - 1 }]
        return [Math.max(1, Math.ceil(((1 - b.tokens) * 1000) / b.rate)), b]
      })

    const takeToken: Effect.Effect<void> = Effect.gen(function*() {
      for (;;) {
        const now = yield* Clock.currentTimeMillis
        const wait = yield* tryTake(now)
        if (wait === 0) return
        yield* Effect.sleep(wait)
      }
    })

    const enter = Ref.update(counters, (c) => ({
      ...c,
      sent: c.sent + 1,
      inFlight: c.inFlight + 1,
      peakInFlight: Math.max(c.peakInFlight, c.inFlight + 1)
    }))
    const leave = Ref.update(counters, (c) => ({ ...c, inFlight: c.inFlight - 1 }))

    const withPermit = <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
      semaphore.withPermits(1)(
        Effect.zipRight(takeToken, Effect.acquireUseRelease(enter, () => self, () => leave))
      )

    const ceiling = settings.maxRps ?? Number.POSITIVE_INFINITY

    const onSuccess: Effect.Effect<void> = settings.adaptive
      ? Ref.update(bucket, (b) => ({ ...b, rate: Math.min(ceiling, b.rate + settings.increasePerSuccess) }))
      : Effect.void

    const onRateLimited = (retryAfterMs: number | null): Effect.Effect<void> =>
      Effect.gen(function*() {
        const now = yield* Clock.currentTimeMillis
        yield* Ref.update(counters, (c) => ({ ...c, rateLimited: c.rateLimited + 1 }))
        yield* Ref.update(bucket, (b0) => {
          const b = refill(b0, now)
          const pausedUntil = retryAfterMs !== null ? Math.max(b.pausedUntil, now + retryAfterMs) : b.pausedUntil
          const cut = settings.adaptive && now - b.lastCut >= CUT_WINDOW_MS
          return {
            ...b,
            rate: cut ? Math.max(settings.minRps, b.rate * 0.5) : b.rate,
            lastCut: cut ? now : b.lastCut,
            // No saved-up burst right after being told to slow down.
            tokens: 0,
            pausedUntil
          }
        })
      })

    const stats = Effect.gen(function*() {
      const c = yield* Ref.get(counters)
      const b = yield* Ref.get(bucket)
      return {
        sent: c.sent,
        rateLimited: c.rateLimited,
        currentRps: b.rate,
        inFlight: c.inFlight,
        peakInFlight: c.peakInFlight
      } satisfies LimiterStats
    })

    return { withPermit, onSuccess, onRateLimited, stats } satisfies LimiterApi
  })

export const limiterLayer: Layer.Layer<Limiter, never, Connection> = Layer.effect(
  Limiter,
  Effect.flatMap(Connection, (c) => makeLimiter(c.limiter))
)
