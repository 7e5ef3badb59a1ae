/**
 * The rate limiter's bucket in PostgreSQL, shared by every process that uses the same
 * token (see limiter.ts): the bucket as JSON text in its account's row, which
 * store/limiter-bucket.ts keeps (one transaction per change, the row locked, the
 * transition on the database server's clock). This file holds what a bucket's text is.
 */
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import { limiterBucketRow } from "../store/limiter-bucket.ts"
import type { Bucket, BucketStore } from "./limiter.ts"

// JSON has no Infinity (a new bucket's cutWindowEnd is -Infinity): non-finite numbers are
// kept as the strings "Infinity", "-Infinity" and "NaN". A Bucket has no string field, so
// the strings cannot be confused with anything.
const NON_FINITE = new Set(["Infinity", "-Infinity", "NaN"])

export const encodeBucket = (bucket: Bucket): string =>
  JSON.stringify(bucket, (_key, v: unknown) => (typeof v === "number" && !Number.isFinite(v) ? String(v) : v))

const NUMBER_FIELDS = ["tokens", "lastRefill", "rate", "pausedUntil", "cutWindowEnd", "sampledAt", "sampledRate"] as const
const NULLABLE_FIELDS = ["ceiling", "previousSample"] as const

/** The bucket of a row, or undefined when the row does not hold one (then it starts afresh). */
export const decodeBucket = (text: string): Bucket | undefined => {
  let value: unknown
  try {
    value = JSON.parse(text, (_key, v: unknown) => (typeof v === "string" && NON_FINITE.has(v) ? Number(v) : v))
  } catch {
    return undefined
  }
  if (value === null || typeof value !== "object") return undefined
  const o = value as Record<string, unknown>
  if (!NUMBER_FIELDS.every((k) => typeof o[k] === "number")) return undefined
  if (!NULLABLE_FIELDS.every((k) => o[k] === null || typeof o[k] === "number")) return undefined
  const b: Bucket = {
    tokens: o.tokens as number,
    lastRefill: o.lastRefill as number,
    rate: o.rate as number,
    ceiling: o.ceiling as number | null,
    pausedUntil: o.pausedUntil as number,
    cutWindowEnd: o.cutWindowEnd as number,
    sampledAt: o.sampledAt as number,
    sampledRate: o.sampledRate as number,
    previousSample: o.previousSample as number | null
  }
  return b
}

/**
 * The bucket of `account` in the PostgreSQL database at `url`, for the scope (its row:
 * store/limiter-bucket.ts). `initial` is the bucket a missing row starts with; given as a
 * function it gets the server's clock, so its times are the server's.
 *
 * The limiter has no error channel: an operation that still fails after a few quick tries
 * dies with an Error naming the URL without its password.
 */
export const postgresBucketStore = (
  url: string,
  account: string,
  initial: Bucket | ((now: number) => Bucket)
): Effect.Effect<BucketStore, never, Scope.Scope> =>
  Effect.gen(function*() {
    const row = yield* limiterBucketRow(url, account)
    const initialAt = (now: number): Bucket => (typeof initial === "function" ? initial(now) : initial)

    const modify = <A>(f: (bucket: Bucket, now: number) => readonly [A, Bucket]): Effect.Effect<A> =>
      row.modify(
        (now) => encodeBucket(initialAt(now)),
        (text, now) => {
          // A row that holds no bucket starts afresh, and is written back.
          const stored = decodeBucket(text)
          const bucket = stored ?? initialAt(now)
          const [a, next] = f(bucket, now)
          return [a, next !== bucket || stored === undefined ? encodeBucket(next) : undefined] as const
        }
      )

    const get: Effect.Effect<Bucket> = Effect.flatMap(
      Effect.map(row.read, (text) => (text === undefined ? undefined : decodeBucket(text))),
      // A missing (or unreadable) row is made by the first change.
      (bucket) => (bucket !== undefined ? Effect.succeed(bucket) : modify((b) => [b, b] as const))
    )

    // The row exists from the start, so the first request does not create it.
    yield* get
    return { modify, get } satisfies BucketStore
  })
