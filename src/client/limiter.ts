/**
 * The one limiter every request to the service passes through: a cap on requests in
 * flight (a semaphore) and a token bucket on requests per second, shared by all fibers.
 *
 * The rate adapts without the user naming a ceiling (AIMD, shaped like TCP):
 *
 * - Slow start: until the first 429 nothing is known about the limit, so each success
 *   adds `increasePerSuccess` (the rate doubles about every second) to find it quickly.
 *   A configured `maxRps` is a known ceiling: there is no slow start then.
 * - The first 429 ends slow start. The rate goes back to what was in force a second
 *   before, the last rate known to be served: at most half (it doubles each second), at
 *   least the ordinary cut below. That becomes the rate and the soft ceiling (as TCP's
 *   ssthresh).
 * - Later 429s: the soft ceiling becomes the rate at which 429s began, the rate is cut
 *   to `DECREASE_FACTOR` (0.8) of it. Halving is not needed: the Retry-After pause that
 *   follows already lets the service's window refill, and past slow start the rate only
 *   creeps, so it is close above the limit when refused; 0.8 lands below it and loses
 *   less than halving.
 * - Increase is additive per round of successes, not per success: each success adds
 *   `step / rate`, so the rate grows by about `step` per second whatever it is (TCP's
 *   cwnd += 1/cwnd). Below `APPROACH` (0.9) of the soft ceiling the step is large (it
 *   closes the gap within seconds); from there on it is small, `PROBE_PER_SECOND` of the
 *   ceiling per second, so the ceiling is approached and then exceeded slowly: a
 *   service's burst allowance hides its limit until it is spent, and a slow climb spends
 *   it late and overshoots little. A long job thus meets a 429 rarely.
 * - At most one decrease per Retry-After window: 429s of requests sent before the cut
 *   are the same signal.
 * - The rate grows only while callers actually wait on it (the bucket is at most half
 *   full), so a job limited by its own concurrency does not inflate it.
 * - Every 429's Retry-After pauses every caller, and no tokens accrue during the pause:
 *   its end does not release a burst. A Retry-After beyond `maxWaitMs` (the connection's
 *   `maxRetryWaitMs`) pauses nobody: its own call fails at once (RetryWaitTooLong), and
 *   holding every other call for hours on one answer would stall the whole process.
 *
 * The bucket's state lives in a `BucketStore`, apart from its rules (the transitions
 * below, the same code for every store). By default it is a Ref in this process. With
 * `sharedLimiter` (a PostgreSQL URL, limiter-postgres.ts) it is one row in that database,
 * shared by every process using the same token: the parts of one job spread over workers
 * on several machines must together stay under the token's limit, so they share one rate,
 * one bucket of tokens and every pause. Each change is then one transaction (row locked,
 * rule applied, row written) on the database server's clock, so machines whose clocks
 * differ agree. The in-flight cap and the counters of `stats` stay per process.
 *
 * Built from Effect primitives, so waiting is interruptible (a shared store's transaction,
 * a few milliseconds, runs to its end first).
 */
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Ref from "effect/Ref"
import * as Semaphore from "effect/Semaphore"
import { createHash } from "node:crypto"
import { Connection, type ConnectionConfig, DEFAULT_MAX_RETRY_WAIT_MS, type LimiterSettings } from "./config.ts"

export interface LimiterStats {
  /** Requests let through. */
  readonly sent: number
  /** 429 answers reported. */
  readonly rateLimited: number
  /** Current allowed rate, requests per second. */
  readonly currentRps: number
  /** The soft ceiling: the rate at which 429s began (null before the first 429). */
  readonly softCeilingRps: number | null
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
  /** A request got 429: multiplicative decrease and a pause of every caller for `retryAfterMs`. */
  readonly onRateLimited: (retryAfterMs: number | null) => Effect.Effect<void>
  readonly stats: Effect.Effect<LimiterStats>
}

export class Limiter extends Context.Service<Limiter, LimiterApi>()("worksync/Limiter") {}

/** The token bucket's state: what a BucketStore holds. Times are in the store's clock (ms). */
export interface Bucket {
  readonly tokens: number
  readonly lastRefill: number
  readonly rate: number
  /** The rate at which 429s began; null while still in slow start. */
  readonly ceiling: number | null
  readonly pausedUntil: number
  /** Until when further 429s count as the signal already acted on. */
  readonly cutWindowEnd: number
  /** Rates sampled about once a second in slow start: what was served a second ago. */
  readonly sampledAt: number
  readonly sampledRate: number
  readonly previousSample: number | null
}

/**
 * Where the bucket's state lives. `modify` applies one transition atomically and gives its
 * result; `now` is the store's clock in ms (the local store: Effect's Clock; a shared
 * store: its server's clock, so processes on different machines agree). The limiter API
 * has no error channel: a store that cannot reach its state dies.
 */
export interface BucketStore {
  readonly modify: <A>(f: (bucket: Bucket, now: number) => readonly [A, Bucket]) => Effect.Effect<A>
  readonly get: Effect.Effect<Bucket>
}

interface Counters {
  readonly sent: number
  readonly rateLimited: number
  readonly inFlight: number
  readonly peakInFlight: number
}

/** Cut factor on the 429 that ends slow start: the rate doubled within the last second. */
export const SLOW_START_CUT = 0.5
/** Cut factor on later 429s (see the module comment for why not 0.5). */
export const DECREASE_FACTOR = 0.8
/** Share of the soft ceiling reached quickly; beyond it the rate only probes. */
export const APPROACH = 0.9
/** Probing pace near the soft ceiling: this share of it per second (half that above it). */
export const PROBE_PER_SECOND = 0.01
/** Past this multiple of the soft ceiling without a 429 the ceiling is stale: it follows the rate up. */
export const STALE_CEILING = 1.2
/** Without Retry-After, 429s within this long of a cut are the same signal. */
const MIN_CUT_WINDOW_MS = 1000

const burstOf = (rate: number): number => Math.max(1, rate)

/** The rate after one more success at `rate` (before the caps). */
const grown = (rate: number, ceiling: number | null, increase: number): number => {
  if (ceiling === null) return rate + increase
  const target = APPROACH * ceiling
  if (rate < target) return Math.min(target, rate + (increase * Math.max(1, target - rate)) / rate)
  // Past the ceiling, more cautiously still.
  const pace = rate < ceiling ? PROBE_PER_SECOND : PROBE_PER_SECOND / 2
  return rate + (increase * pace * ceiling) / rate
}


/** The bucket a limiter starts with at `now` (a full burst at the starting rate). */
export const initialBucket = (settings: LimiterSettings, now: number): Bucket => {
  const maxRps = settings.maxRps ?? Number.POSITIVE_INFINITY
  const initialRate = Math.min(maxRps, Math.max(settings.minRps, settings.initialRps))
  return {
    tokens: burstOf(initialRate),
    lastRefill: now,
    rate: initialRate,
    // A configured ceiling is a known one: no slow start towards it.
    ceiling: settings.maxRps,
    pausedUntil: 0,
    cutWindowEnd: Number.NEGATIVE_INFINITY,
    sampledAt: now,
    sampledRate: initialRate,
    previousSample: null
  }
}

/** The bucket in a Ref of this process, on Effect's Clock (so the TestClock drives it). */
export const localBucketStore = (initial: Bucket): Effect.Effect<BucketStore> =>
  Effect.map(Ref.make(initial), (ref) => ({
    modify: <A>(f: (bucket: Bucket, now: number) => readonly [A, Bucket]) =>
      Effect.flatMap(Clock.currentTimeMillis, (now) => Ref.modify(ref, (b) => f(b, now))),
    get: Ref.get(ref)
  }))

/** The bucket's rules: pure transitions `(bucket, now) => [result, bucket]`, the same for every store. */
export const bucketTransitions = (settings: LimiterSettings, maxWaitMs: number) => {
  const maxRps = settings.maxRps ?? Number.POSITIVE_INFINITY

  /**
   * A shared bucket may have been left by processes with other settings (an earlier job,
   * another `maxRps`): this process keeps to its own bounds. A no-op for a bucket that only
   * these rules have changed (whichever of minRps and maxRps is the larger).
   */
  const lowest = Math.min(settings.minRps, maxRps)
  const highest = Math.max(settings.minRps, maxRps)
  const within = (b: Bucket): Bucket => {
    const rate = Math.min(highest, Math.max(lowest, b.rate))
    const tokens = Math.min(burstOf(rate), b.tokens)
    return rate === b.rate && tokens === b.tokens ? b : { ...b, rate, tokens }
  }

  // Nothing accrues during a pause: its end must not release a saved-up burst.
  const refill = (b0: Bucket, now: number): Bucket => {
    const b = within(b0)
    const from = Math.max(b.lastRefill, b.pausedUntil)
    if (now <= from) return b
    const tokens = Math.min(burstOf(b.rate), b.tokens + ((now - from) * b.rate) / 1000)
    return { ...b, tokens, lastRefill: now }
  }

  /** The highest rate known to have been in force at least a second ago (slow start only grows). */
  const servedSecondAgo = (b: Bucket, now: number): number | null =>
    now - b.sampledAt >= 1000 ? b.sampledRate : b.previousSample

  /** Milliseconds to wait before trying again; 0 when a token was taken. */
  const take = (b0: Bucket, now: number): readonly [number, Bucket] => {
    const b = refill(b0, now)
    if (now < b.pausedUntil) return [b.pausedUntil - now, b]
    if (b.tokens >= 1) return [0, { ...b, tokens: b.tokens - 1 }]
    return [Math.max(1, Math.ceil(((1 - b.tokens) * 1000) / b.rate)), b]
  }

  /** A non-429 answer: additive increase (only while callers wait on the rate). */
  const success = (b0: Bucket, now: number): readonly [void, Bucket] => {
    const b1 = refill(b0, now)
    const b = now - b1.sampledAt >= 1000
      ? { ...b1, sampledAt: now, sampledRate: b1.rate, previousSample: b1.sampledRate }
      : b1
    // Nobody waits on the rate (the job is limited elsewhere): raising it proves nothing.
    if (b.tokens > burstOf(b.rate) / 2) return [undefined, b]
    const rate = Math.max(settings.minRps, Math.min(maxRps, grown(b.rate, b.ceiling, settings.increasePerSuccess)))
    const ceiling = b.ceiling !== null && rate > b.ceiling * STALE_CEILING ? rate / STALE_CEILING : b.ceiling
    return [undefined, { ...b, rate, ceiling }]
  }

  /** A 429: multiplicative decrease (once per window) and a pause of every caller. */
  const rateLimited = (retryAfterMs: number | null) => (b0: Bucket, now: number): readonly [void, Bucket] => {
    // A wait beyond the cap is not honoured (its call fails at once): no pause for it.
    const wait = retryAfterMs !== null && retryAfterMs <= maxWaitMs ? retryAfterMs : null
    const b = refill(b0, now)
    const pausedUntil = wait !== null ? Math.max(b.pausedUntil, now + wait) : b.pausedUntil
    // No saved-up burst right after being told to slow down.
    const paused = { ...b, tokens: 0, pausedUntil }
    if (!settings.adaptive || now < b.cutWindowEnd) return [undefined, paused]
    const slowStart = b.ceiling === null
    // Ending slow start: back to what was served a second ago, between half (the rate
    // doubles each second) and the ordinary cut (when it had stopped growing).
    const cut = b.rate * DECREASE_FACTOR
    const rate = Math.max(
      settings.minRps,
      slowStart ? Math.min(cut, Math.max(b.rate * SLOW_START_CUT, servedSecondAgo(b, now) ?? 0)) : cut
    )
    return [undefined, {
      ...paused,
      rate,
      ceiling: slowStart ? rate : b.rate,
      cutWindowEnd: now + Math.max(MIN_CUT_WINDOW_MS, wait ?? 0)
    }]
  }

  return { take, success, rateLimited }
}

/**
 * A limiter: the in-flight semaphore and counters of this process over the bucket in
 * `store` (a local Ref, started from `settings`, when none is given).
 */
export const makeLimiter = (
  settings: LimiterSettings,
  maxWaitMs: number = DEFAULT_MAX_RETRY_WAIT_MS,
  store?: BucketStore
): Effect.Effect<LimiterApi> =>
  Effect.gen(function*() {
    const maxInFlight = Math.max(1, Math.floor(settings.maxInFlight))
    const semaphore = yield* Semaphore.make(maxInFlight)
    const bucket = store ?? (yield* localBucketStore(initialBucket(settings, yield* Clock.currentTimeMillis)))
    const rules = bucketTransitions(settings, maxWaitMs)
    const counters = yield* Ref.make<Counters>({ sent: 0, rateLimited: 0, inFlight: 0, peakInFlight: 0 })

    const takeToken: Effect.Effect<void> = Effect.gen(function*() {
      for (;;) {
        const wait = yield* bucket.modify(rules.take)
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
        Effect.andThen(takeToken, Effect.acquireUseRelease(enter, () => self, () => leave))
      )

    const onSuccess: Effect.Effect<void> = settings.adaptive ? bucket.modify(rules.success) : Effect.void

    const onRateLimited = (retryAfterMs: number | null): Effect.Effect<void> =>
      Effect.andThen(
        Ref.update(counters, (c) => ({ ...c, rateLimited: c.rateLimited + 1 })),
        bucket.modify(rules.rateLimited(retryAfterMs))
      )

    const stats = Effect.gen(function*() {
      const c = yield* Ref.get(counters)
      const b = yield* bucket.get
      return {
        sent: c.sent,
        rateLimited: c.rateLimited,
        currentRps: b.rate,
        softCeilingRps: b.ceiling,
        inFlight: c.inFlight,
        peakInFlight: c.peakInFlight
      } satisfies LimiterStats
    })

    return { withPermit, onSuccess, onRateLimited, stats } satisfies LimiterApi
  })

/**
 * The key of a token's shared bucket: sha256 (hex) of the REST base URL, the organization
 * ("" when none) and the token, joined with NUL bytes; without a REST token, the GraphQL
 * token id and secret stand in for it. Opaque: no credential can be read back from it.
 */
export const accountKey = (config: ConnectionConfig): string => {
  const secret = (o: Option.Option<Redacted.Redacted<string>>) => Option.match(o, { onNone: () => "", onSome: Redacted.value })
  const credential = Option.isSome(config.token)
    ? [secret(config.token)]
    : [Option.getOrElse(config.tokenId, () => ""), secret(config.tokenSecret)]
  return createHash("sha256")
    .update([config.restUrl, Option.getOrElse(config.org, () => ""), ...credential].join("\u0000"))
    .digest("hex")
}

/**
 * The limiter of a connection, for the layer's scope: over the shared PostgreSQL bucket
 * when `sharedLimiter` is set (loaded only then), else over a local one.
 */
export const limiterLayer: Layer.Layer<Limiter, never, Connection> = Layer.effect(
  Limiter,
  Effect.gen(function*() {
    const c = yield* Connection
    if (c.sharedLimiter === undefined) return yield* makeLimiter(c.limiter, c.maxRetryWaitMs)
    const { postgresBucketStore } = yield* Effect.promise(() => import("./limiter-postgres.ts"))
    const store = yield* postgresBucketStore(c.sharedLimiter, accountKey(c), (now) => initialBucket(c.limiter, now))
    return yield* makeLimiter(c.limiter, c.maxRetryWaitMs, store)
  })
)
