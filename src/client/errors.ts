/**
 * Every way a call to the service can fail, one tagged error per cause a caller may
 * handle differently. Each message names the operation and what failed, and passes
 * through `redact` so no configured secret can leak through server text either.
 */
import * as Data from "effect/Data"
import { redact } from "./config.ts"

/** One entry of a 400 `issues` array, path joined with dots (`input.title`, `assigneeIds.0`). */
export interface Issue {
  readonly path: string
  readonly message: string
}

const clip = (s: string, max = 300): string => (s.length > max ? `${s.slice(0, max)}…` : s)

/** 400: the service rejected the input (schema validation). */
export class InvalidInput extends Data.TaggedError("InvalidInput")<{
  readonly operation: string
  readonly issues: ReadonlyArray<Issue>
  readonly detail: string
}> {
  override get message(): string {
    const issues = this.issues.map((i) => (i.path ? `${i.path}: ${i.message}` : i.message)).join("; ")
    return redact(`${this.operation}: invalid input (HTTP 400)${issues ? `: ${clip(issues)}` : this.detail ? `: ${clip(this.detail)}` : ""}`)
  }
}

/** 401: no token, or one the service does not know. */
export class Unauthorized extends Data.TaggedError("Unauthorized")<{
  readonly operation: string
  readonly detail: string
}> {
  override get message(): string {
    return redact(`${this.operation}: not authenticated (HTTP 401)${this.detail ? `: ${clip(this.detail)}` : ""}`)
  }
}

/** 403: a known token without access to what was asked. */
export class Forbidden extends Data.TaggedError("Forbidden")<{
  readonly operation: string
  readonly code: string | null
  readonly detail: string
}> {
  override get message(): string {
    return redact(
      `${this.operation}: forbidden (HTTP 403${this.code ? `, ${this.code}` : ""})${this.detail ? `: ${clip(this.detail)}` : ""}`
    )
  }
}

/**
 * Not found: an id a documented operation was given does not resolve. The documents'
 * status table has 422 with code `NOT_FOUND` (our reading, assumptions.ts
 * NOT_FOUND_STATUS); another reading answers 404. Both are this error (decoding policy
 * 7). An extra operation's 404 is `NotAvailable` instead, never this.
 */
export class NotFound extends Data.TaggedError("NotFound")<{
  readonly operation: string
  readonly status: number
  /** The error code the service sent (`NOT_FOUND` in our reading), if any. */
  readonly code: string | null
  readonly detail: string
}> {
  override get message(): string {
    const how = this.code !== null ? `HTTP ${this.status}, ${this.code}` : `HTTP ${this.status}`
    return redact(`${this.operation}: not found (${how})${this.detail ? `: ${clip(this.detail)}` : ""}`)
  }
}

/** 422: the operation ran but failed its own validation (an id that does not resolve is `NotFound`). */
export class ValidationFailed extends Data.TaggedError("ValidationFailed")<{
  readonly operation: string
  readonly code: string
  readonly serverMessage: string
}> {
  override get message(): string {
    return redact(`${this.operation}: rejected by the service (HTTP 422, ${this.code})${this.serverMessage ? `: ${clip(this.serverMessage)}` : ""}`)
  }
}

/** 429: rate limited; `retryAfterMs` from Retry-After when the service sent one. */
export class RateLimited extends Data.TaggedError("RateLimited")<{
  readonly operation: string
  readonly retryAfterMs: number | null
}> {
  override get message(): string {
    return `${this.operation}: rate limited (HTTP 429)${this.retryAfterMs !== null ? `, retry after ${Math.ceil(this.retryAfterMs / 1000)} s` : ""}`
  }
}

/** A wait as people read it: `45 s`, `2 min 5 s`, `3 h 0 min`, `2 d 4 h`. */
export const formatWait = (ms: number): string => {
  const total = Math.ceil(Math.max(0, ms) / 1000)
  const d = Math.floor(total / 86_400)
  const h = Math.floor((total % 86_400) / 3600)
  const m = Math.floor((total % 3600) / 60)
  const s = total % 60
  if (d > 0) return `${d} d ${h} h`
  if (h > 0) return `${h} h ${m} min`
  if (m > 0) return `${m} min ${s} s`
  return `${s} s`
}

/**
 * 429 with a Retry-After longer than the connection's `maxRetryWaitMs` (the CLI's
 * `--max-retry-wait`): not waited, so one answer cannot stall the whole process for hours.
 * Nothing was applied; a later rerun resumes.
 */
export class RetryWaitTooLong extends Data.TaggedError("RetryWaitTooLong")<{
  readonly operation: string
  /** What the service asked for. */
  readonly requestedMs: number
  /** The most this connection waits. */
  readonly maxMs: number
}> {
  override get message(): string {
    // The limit in the flag's own unit, so the line says what to pass to wait longer.
    const max = String(Math.round(this.maxMs) / 1000)
    return redact(
      `${this.operation}: the service asked to wait ${formatWait(this.requestedMs)} (Retry-After), more than --max-retry-wait ${max} s; rerun later to resume`
    )
  }
}

/** 5xx from the service. */
export class ServerError extends Data.TaggedError("ServerError")<{
  readonly operation: string
  readonly status: number
  readonly detail: string
}> {
  override get message(): string {
    return redact(`${this.operation}: server error (HTTP ${this.status})${this.detail ? `: ${clip(this.detail)}` : ""}`)
  }
}

/** A status the documents do not list for this call (a REST 404 is `NotFound`). */
export class UnexpectedStatus extends Data.TaggedError("UnexpectedStatus")<{
  readonly operation: string
  readonly status: number
  readonly detail: string
}> {
  override get message(): string {
    return redact(`${this.operation}: unexpected HTTP ${this.status}${this.detail ? `: ${clip(this.detail)}` : ""}`)
  }
}

/**
 * An operation beyond the documents (assumptions.ts EXTRA_OPERATIONS) that this service
 * does not have: it answered 404, 405 or 501, or a 400 saying the operation is unknown.
 * Only the feature needing it stops; it reports `notAvailableLine` and the job goes on.
 */
export class NotAvailable extends Data.TaggedError("NotAvailable")<{
  readonly operation: string
  readonly status: number
  readonly detail: string
}> {
  override get message(): string {
    return redact(`${this.operation}: not available from this service (HTTP ${this.status})${this.detail ? `: ${clip(this.detail, 120)}` : ""}`)
  }
}

/** The one line a feature reports when an operation it needs is not available. */
export const notAvailableLine = (feature: string, e: { readonly operation: string }): string =>
  redact(`${feature}: not available from this service (${e.operation})`)

/** "Not found" from a documented operation (`NotFound`); the predicates live in predicates.ts. */
export { isNotFound } from "./predicates.ts"

/** Every code of the GraphQL errors table. */
export const GRAPHQL_ERROR_CODES = [
  "BAD_USER_INPUT",
  "PLAN_LIMIT_REACHED",
  "FILES_DISABLED_FOR_ROLE",
  "PROJECT_NOT_FOUND",
  "COMPANY_NOT_FOUND",
  "FORBIDDEN",
  "USER_ALREADY_IN_THE_PROJECT",
  "ADD_SELF",
  "USER_NOT_FOUND",
  "PROJECT_USER_ROLE_NOT_FOUND",
  "COMPANY_BANNED"
] as const
export type KnownGraphqlErrorCode = (typeof GRAPHQL_ERROR_CODES)[number]
/** Known codes autocomplete; unknown codes (role/webhook errors are undocumented) still type-check. */
export type GraphqlErrorCode = KnownGraphqlErrorCode | (string & {})

/** An entry of a GraphQL `errors` array (the first one; `others` counts the rest). */
export class GraphqlError extends Data.TaggedError("GraphqlError")<{
  readonly operation: string
  readonly code: GraphqlErrorCode
  readonly serverMessage: string
  readonly path: ReadonlyArray<string | number> | null
  readonly others: number
}> {
  override get message(): string {
    const where = this.path && this.path.length > 0 ? ` at ${this.path.join(".")}` : ""
    const more = this.others > 0 ? ` (+${this.others} more)` : ""
    return redact(`${this.operation}: GraphQL error ${this.code}${where}: ${clip(this.serverMessage)}${more}`)
  }
}

/** Presign/confirm/download answered 400/401/403/404. */
export class UploadRejected extends Data.TaggedError("UploadRejected")<{
  readonly operation: string
  readonly status: number
  readonly code: string | null
  readonly detail: string
}> {
  override get message(): string {
    return redact(
      `${this.operation}: upload rejected (HTTP ${this.status}${this.code ? `, ${this.code}` : ""})${this.detail ? `: ${clip(this.detail)}` : ""}`
    )
  }
}

/** Confirm answered 400 because the stored size differs from the declared one: upload again. */
export class UploadSizeMismatch extends Data.TaggedError("UploadSizeMismatch")<{
  readonly operation: string
  readonly uid: string
  readonly detail: string
}> {
  override get message(): string {
    return redact(`${this.operation}: stored size of file ${this.uid} differs from the declared size (HTTP 400)${this.detail ? `: ${clip(this.detail)}` : ""}`)
  }
}

/**
 * The connection failed. `sent` is false when the request provably never left (refused,
 * DNS), so even a create may be repeated.
 */
export class TransportError extends Data.TaggedError("TransportError")<{
  readonly operation: string
  readonly detail: string
  readonly sent: boolean
}> {
  override get message(): string {
    return redact(`${this.operation}: connection failed${this.sent ? "" : " before sending"}: ${clip(this.detail)}`)
  }
}

/**
 * No answer within the per-request timeout; with `idleBody`, an answer whose body (a
 * download) stalled: no byte came for `timeoutMs`.
 */
export class Timeout extends Data.TaggedError("Timeout")<{
  readonly operation: string
  readonly timeoutMs: number
  readonly idleBody?: boolean
}> {
  override get message(): string {
    return this.idleBody === true
      ? redact(`${this.operation}: the answer stalled: no bytes for ${this.timeoutMs} ms`)
      : redact(`${this.operation}: no answer within ${this.timeoutMs} ms`)
  }
}

/**
 * A write that is not safe to repeat was sent but its answer was lost (connection dropped,
 * timeout, 5xx): it may or may not have been applied. Never retried automatically.
 */
export class OutcomeUnknown extends Data.TaggedError("OutcomeUnknown")<{
  readonly operation: string
  /** ISO time the attempt of unknown outcome was sent (it left the limiter; see retry.ts). */
  readonly attemptedAt: string
  /** What was sent, without secrets (e.g. `workspaceId=..., title="..."`). */
  readonly inputSummary: string
  /** What happened: the message of the underlying failure. */
  readonly reason: string
}> {
  override get message(): string {
    return redact(
      `${this.operation}: outcome unknown (sent at ${this.attemptedAt}, ${clip(this.reason, 200)}); input ${clip(this.inputSummary, 200)}`
    )
  }
}

/** The answer did not match the expected shape; `path` names the bad field. */
export class DecodeError extends Data.TaggedError("DecodeError")<{
  readonly operation: string
  readonly path: string
  readonly detail: string
}> {
  override get message(): string {
    return redact(`${this.operation}: unexpected response${this.path ? ` at ${this.path}` : ""}: ${clip(this.detail)}`)
  }
}

/** A documented limit checked client-side before anything is sent. */
export class LimitExceeded extends Data.TaggedError("LimitExceeded")<{
  readonly operation: string
  /** Which limit, e.g. "256 MB per multipart file". */
  readonly limit: string
  /** The file or batch concerned. */
  readonly subject: string
  readonly actual: number
  readonly max: number
}> {
  override get message(): string {
    return redact(`${this.operation}: ${this.subject} exceeds the limit of ${this.limit} (${this.actual} > ${this.max})`)
  }
}

/** Inputs that the documents say must not be sent together (R-REST-RECORD-33). */
export class ConflictingInput extends Data.TaggedError("ConflictingInput")<{
  readonly operation: string
  readonly fields: ReadonlyArray<string>
  readonly detail: string
}> {
  override get message(): string {
    return redact(`${this.operation}: ${this.fields.join(" and ")} cannot be sent together${this.detail ? `: ${this.detail}` : ""}`)
  }
}

/** Input rejected client-side by the input schema, before sending. */
export class InputRejected extends Data.TaggedError("InputRejected")<{
  readonly operation: string
  readonly path: string
  readonly detail: string
}> {
  override get message(): string {
    return redact(`${this.operation}: invalid input${this.path ? ` at ${this.path}` : ""}: ${clip(this.detail)}`)
  }
}

/** Failures of one HTTP exchange with the service (before retry classification). */
export type HttpFailure =
  | InvalidInput
  | Unauthorized
  | Forbidden
  | NotFound
  | ValidationFailed
  | RateLimited
  | RetryWaitTooLong
  | ServerError
  | UnexpectedStatus
  | TransportError
  | Timeout
  | DecodeError

/**
 * The PUT of a file's bytes to its presigned url failed. The url is single-use
 * (R-UPLOAD-PRESIGN-07), so it is never sent again: with `outcome` "unknown" (no answer,
 * or a 5xx) the bytes may have landed, so confirm `uid` first; with "not-stored" (storage
 * refused, or nothing was sent) they did not. Either way a new attempt presigns afresh.
 */
export class StoragePutFailed extends Data.TaggedError("StoragePutFailed")<{
  readonly operation: string
  readonly uid: string
  /** Storage's answer, or null when none came (dropped, timed out, never connected). */
  readonly status: number | null
  readonly outcome: "unknown" | "not-stored"
  readonly detail: string
}> {
  override get message(): string {
    const what = this.status === null ? "no answer" : `HTTP ${this.status}`
    const next = this.outcome === "unknown" ? "confirm it, else presign afresh" : "presign afresh"
    return redact(`${this.operation} of ${this.uid} failed (${what}${this.detail ? `: ${this.detail.slice(0, 300)}` : ""}); the url is single-use: ${next}`)
  }
}

export type ClientError =
  | HttpFailure
  | GraphqlError
  | UploadRejected
  | UploadSizeMismatch
  | OutcomeUnknown
  | LimitExceeded
  | ConflictingInput
  | InputRejected
  | StoragePutFailed
  | NotAvailable

const TAGS: ReadonlySet<string> = new Set([
  "InvalidInput",
  "Unauthorized",
  "Forbidden",
  "NotFound",
  "ValidationFailed",
  "RateLimited",
  "RetryWaitTooLong",
  "ServerError",
  "UnexpectedStatus",
  "TransportError",
  "Timeout",
  "DecodeError",
  "GraphqlError",
  "UploadRejected",
  "StoragePutFailed",
  "UploadSizeMismatch",
  "OutcomeUnknown",
  "LimitExceeded",
  "ConflictingInput",
  "InputRejected",
  "NotAvailable"
])

export const isClientError = (u: unknown): u is ClientError =>
  typeof u === "object" && u !== null && "_tag" in u && typeof u._tag === "string" && TAGS.has(u._tag)

/** One line for the CLI's stderr: what failed, the operation, the status or code. */
export const describeError = (e: unknown): string => {
  if (isClientError(e)) return redact(e.message.replace(/\s*\n\s*/g, " "))
  if (e instanceof Error) return redact(e.message.replace(/\s*\n\s*/g, " "))
  return redact(String(e))
}
