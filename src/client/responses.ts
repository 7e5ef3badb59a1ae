/**
 * Reading answers of the service: the parts of an error body and the tagged error of a
 * status. Shared by the REST, GraphQL and upload clients: `failureOfStatus` is the one
 * place a status becomes an error, each interface adding what its 4xx mean.
 */
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import { formatPath } from "../schema/decode.ts"
import { RestErrorBody, restErrorParts, type TolerantIssue } from "../schema/errors.ts"
import { redact } from "./config.ts"
import {
  Forbidden,
  type HttpFailure,
  InvalidInput,
  type Issue,
  NotAvailable,
  NotFound,
  RateLimited,
  ServerError,
  Unauthorized,
  UnexpectedStatus,
  ValidationFailed
} from "./errors.ts"
import { parseRetryAfter } from "./retry.ts"
import type { Answer } from "./transport.ts"

const issuePath = (path: TolerantIssue["path"]): string => {
  if (path === undefined || path === null) return ""
  if (typeof path === "string") return path
  return path.length === 0 ? "" : formatPath(path)
}

interface ErrorParts {
  readonly code: string | null
  readonly message: string
  readonly issues: ReadonlyArray<Issue>
}

/** The code, message and issues of an error body, whatever its form. */
export const errorPartsOf = (text: string): ErrorParts => {
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch {
    return { code: null, message: redact(text.slice(0, 300)), issues: [] }
  }
  const decoded = decodeRestErrorBody(json)
  if (decoded === null) return { code: null, message: redact(text.slice(0, 300)), issues: [] }
  const parts = restErrorParts(decoded)
  // Server text is echoed into errors: scrub secrets from it at the source.
  return {
    code: parts.code === null ? null : redact(parts.code),
    message: redact(parts.message ?? ""),
    issues: parts.issues.map((i) => ({ path: redact(issuePath(i.path)), message: redact(i.message ?? "invalid") }))
  }
}

const decodeRestErrorBodyResult = Schema.decodeUnknownResult(RestErrorBody)
const decodeRestErrorBody = (u: unknown): RestErrorBody | null => Result.getOrNull(decodeRestErrorBodyResult(u))

/**
 * The tagged error of a non-2xx answer. Every interface answers 429 (with its Retry-After)
 * and 5xx alike; `byStatus` says what the interface's other statuses mean, and a status it
 * does not know is unexpected. `detail` is the server's message as the interface reads it.
 */
export const failureOfStatus = <E>(
  operation: string,
  answer: Answer,
  nowMs: number,
  detail: string,
  byStatus: (status: number) => E | undefined
): E | RateLimited | ServerError | UnexpectedStatus => {
  if (answer.status === 429) return new RateLimited({ operation, retryAfterMs: parseRetryAfter(answer.headers["retry-after"], nowMs) })
  if (answer.status >= 500) return new ServerError({ operation, status: answer.status, detail })
  return byStatus(answer.status) ?? new UnexpectedStatus({ operation, status: answer.status, detail })
}

/** Maps a non-2xx REST answer to its tagged error. */
export const restFailure = (operation: string, answer: Answer, nowMs: number): HttpFailure => {
  const parts = errorPartsOf(answer.text)
  return failureOfStatus(operation, answer, nowMs, parts.message, (status): HttpFailure | undefined => {
    switch (status) {
      case 400:
        return new InvalidInput({ operation, issues: parts.issues, detail: parts.message })
      case 401:
        return new Unauthorized({ operation, detail: parts.message })
      case 403:
        return new Forbidden({ operation, code: parts.code, detail: parts.message })
      case 404:
        // Not in the status table; another reading's "not found" (decoding policy 7).
        return new NotFound({ operation, status: 404, code: parts.code, detail: parts.message })
      case 422:
        return parts.code === "NOT_FOUND"
          ? new NotFound({ operation, status: 422, code: parts.code, detail: parts.message })
          : new ValidationFailed({ operation, code: parts.code ?? "VALIDATION_FAILED", serverMessage: parts.message })
      default:
        return undefined
    }
  })
}

/** What a 400 says when the operation itself is unknown (not the input). */
const UNKNOWN_OPERATION =
  /unknown (operation|endpoint|route|method|path|procedure)|no such (operation|endpoint|route|method)|(operation|endpoint|route|method) (is )?(not found|unknown|not supported|not implemented)|not implemented|unsupported (operation|endpoint|method)|UNKNOWN_OPERATION|NOT_IMPLEMENTED/i

/**
 * Whether a failed answer says the service has no such operation: 404, 405, 501, or a
 * 400 whose code or message says the operation (not the input) is unknown.
 */
export const isUnknownOperationAnswer = (answer: Answer): boolean => {
  if (answer.status === 404 || answer.status === 405 || answer.status === 501) return true
  if (answer.status !== 400) return false
  const parts = errorPartsOf(answer.text)
  return UNKNOWN_OPERATION.test(`${parts.code ?? ""} ${parts.message}`)
}

/**
 * Maps a non-2xx answer of an operation beyond the documents: "no such operation" is
 * NotAvailable, anything else as for any REST call.
 */
export const beyondDocumentsFailure = (operation: string, answer: Answer, nowMs: number): HttpFailure | NotAvailable =>
  isUnknownOperationAnswer(answer)
    ? new NotAvailable({ operation, status: answer.status, detail: errorPartsOf(answer.text).message })
    : restFailure(operation, answer, nowMs)
