/**
 * The one retry policy of the code base (an Effect Schedule); nothing else retries.
 *
 * - 429 is always retried: the service refused the call, nothing was applied. The wait is
 *   the Retry-After the service gave (seconds or HTTP-date), else exponential backoff. A
 *   Retry-After beyond the connection's `maxRetryWaitMs` is not waited: the call fails at
 *   once with `RetryWaitTooLong` (a rerun resumes), rather than stalling for hours.
 * - 5xx, timeouts and dropped connections are retried only for calls safe to repeat
 *   (reads; update/move/delete to a fixed value; confirm; presign).
 * - For a call NOT safe to repeat (a create), those same failures are ambiguous: the
 *   service may have applied the write before the answer was lost. We choose that only
 *   400/401/403/422/429 (and a connection refused before sending) are definite for a
 *   create; a 5xx, a timeout or a drop after sending surfaces as `OutcomeUnknown` and is
 *   not retried, so a caller (the journal) can check before writing again.
 *
 * The classification (predicates.ts) is exported so the journal applies the same judgement.
 */
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Schedule from "effect/Schedule"
import type { RetrySettings } from "./config.ts"
import { OutcomeUnknown, RetryWaitTooLong } from "./errors.ts"
import { type Classifiable, isAmbiguousFailure, isRetryable } from "./predicates.ts"

// The classification lives in predicates.ts; re-exported here, where callers met it first.
export {
  type Classifiable,
  isAmbiguousFailure,
  isDefiniteFailure,
  isRetryable,
  type WriteOutcome,
  writeOutcome
} from "./predicates.ts"

/** Parses a Retry-After value (delta seconds or HTTP-date) into milliseconds from `nowMs`. */
export const parseRetryAfter = (value: string | undefined | null, nowMs: number): number | null => {
  if (value === undefined || value === null) return null
  const v = value.trim()
  if (v === "") return null
  if (/^\d+(\.\d+)?$/.test(v)) return Math.round(Number(v) * 1000)
  const at = Date.parse(v)
  if (Number.isNaN(at)) return null
  return Math.max(0, at - nowMs)
}

/**
 * A 429 asking for a longer wait than `maxWaitMs` becomes `RetryWaitTooLong` (not
 * retried); anything else is returned as it is.
 */
export const beyondMaxWait = <E extends Classifiable>(e: E, maxWaitMs: number): E | RetryWaitTooLong =>
  e._tag === "RateLimited" && typeof e.retryAfterMs === "number" && e.retryAfterMs > maxWaitMs
    ? new RetryWaitTooLong({ operation: operationOf(e), requestedMs: e.retryAfterMs, maxMs: maxWaitMs })
    : e

const operationOf = (e: Classifiable): string => {
  const op = (e as { readonly operation?: unknown }).operation
  return typeof op === "string" ? op : "request"
}

/**
 * The delay before the next attempt after `e`, given the backoff's proposal. A
 * Retry-After reaching here is at most `maxRetryWaitMs` (see `beyondMaxWait`).
 */
const delayFor = (e: Classifiable, backoff: Duration.Duration, settings: RetrySettings): Duration.Duration => {
  if (e._tag === "RateLimited" && typeof e.retryAfterMs === "number") return Duration.millis(e.retryAfterMs)
  return Duration.min(backoff, Duration.millis(settings.capDelayMs))
}

/**
 * The schedule: exponential backoff from `baseDelayMs`, jittered, capped at `capDelayMs`,
 * at most `maxRetries` retries, only while the failure is retryable; a 429 with
 * Retry-After waits exactly what the service asked.
 */
export const retrySchedule = <E extends Classifiable>(
  settings: RetrySettings,
  idempotent: boolean
): Schedule.Schedule<Duration.Duration, E> =>
  Schedule.exponential(Duration.millis(settings.baseDelayMs), 2).pipe(
    Schedule.jittered,
    Schedule.setInputType<E>(),
    // `attempt` counts retries from 1: at most `maxRetries` of them.
    Schedule.upTo({ times: settings.maxRetries }),
    Schedule.while(({ input }) => isRetryable(input, idempotent)),
    Schedule.modifyDelay(({ duration, input }) => Effect.succeed(delayFor(input, duration, settings)))
  )

export interface RetryOptions {
  readonly operation: string
  /** Safe to repeat: reads, update/move/delete to a fixed value, confirm, presign. */
  readonly idempotent: boolean
  readonly settings: RetrySettings
  /** Secret-free summary of the input, for OutcomeUnknown. */
  readonly inputSummary: string
  /** The longest Retry-After waited (the connection's `maxRetryWaitMs`). */
  readonly maxWaitMs: number
  /**
   * When the latest attempt left (epoch ms), past the limiter's wait, once it has; the
   * caller's send step notes it. An attempt not told of is taken as sent when it began.
   */
  readonly sentAt?: () => number | undefined
}

/**
 * Runs one attempt under the policy. An ambiguous failure of a call not safe to repeat
 * becomes `OutcomeUnknown` and ends the retries: it carries when that attempt left (not
 * when the call began: the limiter's waits and 429 retries come before, and a write the
 * service commits late commits after its send), from which the journal's settle window
 * runs. A 429 asking for more than `maxWaitMs` becomes `RetryWaitTooLong` and ends the
 * retries too.
 */
export const withRetry = <A, E extends Classifiable, R>(
  attempt: Effect.Effect<A, E, R>,
  options: RetryOptions
): Effect.Effect<A, E | OutcomeUnknown | RetryWaitTooLong, R> => {
  const checked = Effect.mapError(attempt, (e) => beyondMaxWait(e, options.maxWaitMs))
  const once: Effect.Effect<A, E | OutcomeUnknown | RetryWaitTooLong, R> = options.idempotent
    ? checked
    : Effect.flatMap(Clock.currentTimeMillis, (startedAt) =>
      Effect.catchIf(
        checked,
        (e): e is E => isAmbiguousFailure(e),
        (e) =>
          Effect.fail(
            new OutcomeUnknown({
              operation: options.operation,
              attemptedAt: new Date(Math.max(startedAt, options.sentAt?.() ?? startedAt)).toISOString(),
              inputSummary: options.inputSummary,
              reason: e.message
            })
          )
      ))
  // Most calls succeed at once: the schedule is stepped only from a first failure, which
  // its first attempt gives back as it came (no second request), so the waits and the
  // count of retries are those of retrying from the start.
  return Effect.catch(once, (first) => {
    let replay = true
    const again = Effect.suspend(() => {
      if (!replay) return once
      replay = false
      return Effect.fail(first)
    })
    return Effect.retry(again, scheduleOf<E | OutcomeUnknown | RetryWaitTooLong>(options.settings, options.idempotent))
  })
}

/** The schedules of a connection's settings, made once (a schedule is a description, reused by every call). */
const schedules = new WeakMap<RetrySettings, { readonly idempotent: unknown; readonly other: unknown }>()
const scheduleOf = <E extends Classifiable>(settings: RetrySettings, idempotent: boolean): Schedule.Schedule<Duration.Duration, E> => {
  let made = schedules.get(settings)
  if (made === undefined) {
    made = { idempotent: retrySchedule<Classifiable>(settings, true), other: retrySchedule<Classifiable>(settings, false) }
    schedules.set(settings, made)
  }
  return (idempotent ? made.idempotent : made.other) as Schedule.Schedule<Duration.Duration, E>
}

const SECRET_KEY = /token|secret|password|authorization/i

/** `key=value` pairs of a request body, values clipped, anything secret-looking left out. */
export const summarizeInput = (body: unknown): string => {
  if (body === null || typeof body !== "object") return body === undefined ? "{}" : clipValue(body)
  const parts: Array<string> = []
  for (const [k, v] of Object.entries(body as Record<string, unknown>)) {
    if (v === undefined) continue
    parts.push(SECRET_KEY.test(k) ? `${k}=<redacted>` : `${k}=${clipValue(v)}`)
  }
  return parts.length === 0 ? "{}" : parts.join(", ")
}

const clipValue = (v: unknown): string => {
  let s: string
  try {
    s = JSON.stringify(v) ?? String(v)
  } catch {
    s = String(v)
  }
  return s.length > 60 ? `${s.slice(0, 57)}...` : s
}
