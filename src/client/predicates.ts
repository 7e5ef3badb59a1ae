/**
 * What a failure means, judged in one place and by tag (`Predicate.isTagged`), so every
 * caller (the retry policy, the journal's replay, the file copy, the CLI) reads a failure
 * the same way, whatever wraps it or however it was built:
 *
 * - not found: `NotFound` (a 422 NOT_FOUND or a 404, see errors.ts);
 * - definite / outcome unknown: whether a write that failed was applied (a create
 *   refused with 4xx was not; one that met a 5xx, a timeout or a drop after sending may
 *   have been);
 * - retryable: what the retry policy repeats, for calls safe (or not) to repeat;
 * - transient: a failure a caller may meet again and simply try again (a file copy);
 * - abort: a failure no other call of the job will escape (the token refused, the
 *   service asking to wait longer than we will), so a job stops instead of failing item
 *   after item.
 */
import * as Predicate from "effect/Predicate"
import type { NotFound } from "./errors.ts"

/** Just enough of an error to classify it (every ClientError qualifies). */
export interface Classifiable {
  readonly _tag: string
  readonly sent?: boolean
  readonly retryAfterMs?: number | null
  readonly message: string
}

const anyOf = (tags: ReadonlyArray<string>) => (u: unknown): boolean => tags.some((tag) => Predicate.isTagged(u, tag))

/** A connection error proving the request never left (refused, DNS): nothing can have been applied. */
const isUnsent = (u: unknown): boolean => Predicate.isTagged(u, "TransportError") && (u as { sent?: unknown }).sent === false

/** Not found: a documented operation's 422 NOT_FOUND or 404. */
export const isNotFound = (u: unknown): u is NotFound => Predicate.isTagged(u, "NotFound")

/** The call may or may not have been applied: a 5xx, a timeout, a drop after sending. */
export const isAmbiguousFailure = (u: unknown): boolean =>
  anyOf(["ServerError", "Timeout"])(u) || (Predicate.isTagged(u, "TransportError") && !isUnsent(u))

/** A write whose outcome is unknown: reported so (`OutcomeUnknown`), or ambiguous by nature. */
export const isOutcomeUnknown = (u: unknown): boolean => Predicate.isTagged(u, "OutcomeUnknown") || isAmbiguousFailure(u)

/**
 * The service (or our checks) definitely did not apply the call. A DecodeError is a 2xx
 * we could not read: not definite.
 */
export const isDefiniteFailure = (u: unknown): boolean => !isOutcomeUnknown(u) && !Predicate.isTagged(u, "DecodeError")

/** Whether the retry policy repeats `u` for a call that is (or is not) safe to repeat. */
export const isRetryable = (u: unknown, idempotent: boolean): boolean =>
  Predicate.isTagged(u, "RateLimited") || isUnsent(u) || (idempotent && isAmbiguousFailure(u))

/**
 * For a write, what a failure says about whether it was applied: "not-applied" (safe to
 * send again), or "unknown" (look before sending again).
 */
export type WriteOutcome = "not-applied" | "unknown"
export const writeOutcome = (u: unknown): WriteOutcome => (isDefiniteFailure(u) ? "not-applied" : "unknown")

/**
 * The answer was lost, the service stumbled or asked for a short pause: the same thing
 * may simply be tried again (after the client's own retries gave up).
 */
export const isTransient: (u: unknown) => boolean = anyOf([
  "OutcomeUnknown",
  "TransportError",
  "Timeout",
  "ServerError",
  "RateLimited",
  "StoragePutFailed"
])

/** Tags of the failures that end a whole job (see `isAbort`). */
export const ABORT_TAGS: ReadonlyArray<string> = ["Unauthorized", "RetryWaitTooLong"]

/** No other call of the job would succeed now: stop the job, keep what is done, let a rerun resume. */
export const isAbort: (u: unknown) => boolean = anyOf(ABORT_TAGS)
