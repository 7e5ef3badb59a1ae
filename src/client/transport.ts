/**
 * One HTTP exchange: send under the per-request timeout, read the whole body as text,
 * and turn transport failures into `TransportError` / `Timeout`. Shared by the REST,
 * GraphQL and upload clients; status interpretation stays with each of them.
 */
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as HttpClient from "effect/http/HttpClient"
import type * as HttpClientError from "effect/http/HttpClientError"
import type * as HttpClientRequest from "effect/http/HttpClientRequest"
import type * as HttpClientResponse from "effect/http/HttpClientResponse"
import * as Result from "effect/Result"
import type * as Schema from "effect/Schema"
import { decodeUnknown, decodeUnknownEither, describeParseError } from "../schema/decode.ts"
import { redact } from "./config.ts"
import { DecodeError, Timeout, TransportError } from "./errors.ts"

/** A fully read answer. */
export interface Answer {
  readonly status: number
  readonly headers: Readonly<Record<string, string>>
  readonly text: string
}

/** Errors (by code) proving the request never reached the server. */
const NOT_SENT_CODES = new Set([
  "ECONNREFUSED",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "UND_ERR_CONNECT_TIMEOUT",
  "ERR_INVALID_URL"
])

const codesOf = (u: unknown): Array<string> => {
  const out: Array<string> = []
  let cur: unknown = u
  for (let depth = 0; depth < 6 && typeof cur === "object" && cur !== null; depth++) {
    const code = (cur as { code?: unknown }).code
    if (typeof code === "string") out.push(code)
    const errors = (cur as { errors?: unknown }).errors
    if (Array.isArray(errors)) for (const e of errors) out.push(...codesOf(e))
    cur = (cur as { cause?: unknown }).cause
  }
  return out
}

const messagesOf = (u: unknown): string => {
  const parts: Array<string> = []
  let cur: unknown = u
  for (let depth = 0; depth < 6 && typeof cur === "object" && cur !== null; depth++) {
    const m = (cur as { message?: unknown }).message
    if (typeof m === "string" && m !== "" && !parts.includes(m)) parts.push(m)
    cur = (cur as { cause?: unknown }).cause
  }
  return parts.join(": ")
}

/** Never keep the HttpClient error itself: its request carries the credential headers. */
export const toTransportError = (operation: string, error: HttpClientError.HttpClientError): TransportError => {
  const reason = error.reason
  const cause = reason.cause
  const codes = codesOf(cause)
  // A response error (status, decode, empty body) means an answer came: the request was sent.
  const answered = reason._tag === "StatusCodeError" || reason._tag === "DecodeError" || reason._tag === "EmptyBodyError"
  const sent = answered || !codes.some((c) => NOT_SENT_CODES.has(c))
  // The reason's tag without "Error" ("Transport", "InvalidUrl", ...): the word a detail shows
  // when the cause has no message.
  const reasonName = reason._tag.replace(/Error$/, "")
  const detail = [codes[0], messagesOf(cause) || reasonName].filter((s) => s !== undefined && s !== "").join(" ")
  return new TransportError({ operation, detail: redact(detail), sent })
}

export const headersOf = (response: HttpClientResponse.HttpClientResponse): Record<string, string> => {
  const out: Record<string, string> = {}
  for (const [k, v] of Object.entries(response.headers)) out[k.toLowerCase()] = String(v)
  return out
}

/**
 * `self` within `timeoutMs`, else interrupted (an HTTP exchange is aborted) and failing
 * with `Timeout`. As `Effect.timeoutOrElse`, but running `self` in one child fiber under a
 * plain timer, rather than racing it against a second fiber that sleeps: every request
 * passes here. The timer runs on the live clock, as requests do.
 */
export const withinTimeout = <A, E>(
  self: Effect.Effect<A, E>,
  operation: string,
  timeoutMs: number
): Effect.Effect<A, E | Timeout> =>
  Effect.flatMap(Effect.forkChild(self, { startImmediately: true }), (fiber) =>
    Effect.callback<A, E | Timeout>((resume) => {
      const timer = setTimeout(() => {
        removeObserver()
        resume(Effect.andThen(Fiber.interrupt(fiber), Effect.fail(new Timeout({ operation, timeoutMs }))))
      }, timeoutMs)
      const removeObserver = fiber.addObserver((exit) => {
        clearTimeout(timer)
        resume(exit)
      })
      // The caller interrupted: so is the exchange.
      return Effect.suspend(() => {
        clearTimeout(timer)
        removeObserver()
        return Fiber.interrupt(fiber)
      })
    }))

/**
 * Sends `request` and reads the answer fully, all within `timeoutMs`. Interruption (and
 * the timeout) aborts the underlying request.
 */
export const exchange = (
  client: HttpClient.HttpClient,
  request: HttpClientRequest.HttpClientRequest,
  operation: string,
  timeoutMs: number
): Effect.Effect<Answer, TransportError | Timeout> =>
  client.execute(request).pipe(
    Effect.flatMap((response) =>
      Effect.map(response.text, (text): Answer => ({ status: response.status, headers: headersOf(response), text }))
    ),
    Effect.mapError((e) => toTransportError(operation, e)),
    (sent) => withinTimeout(sent, operation, timeoutMs)
  )

/**
 * Sends `request` and returns the response once the headers arrive (the body is left to
 * the caller, e.g. to stream a download). The timeout covers only the wait for headers.
 */
export const exchangeHead = (
  client: HttpClient.HttpClient,
  request: HttpClientRequest.HttpClientRequest,
  operation: string,
  timeoutMs: number
): Effect.Effect<HttpClientResponse.HttpClientResponse, TransportError | Timeout> =>
  client.execute(request).pipe(
    Effect.mapError((e) => toTransportError(operation, e)),
    Effect.timeoutOrElse({ duration: timeoutMs, orElse: () => Effect.fail(new Timeout({ operation, timeoutMs })) })
  )

/** Our clients send exactly the headers we set: no tracing headers, no spans holding header values. */
export const plainClient = (client: HttpClient.HttpClient): HttpClient.HttpClient =>
  // Effect reads these switches from the fiber at execute time, so each execution gets them.
  HttpClient.transformResponse(
    client,
    (effect) =>
      effect.pipe(
        Effect.provideService(HttpClient.TracerPropagationEnabled, false),
        Effect.provideService(HttpClient.TracerDisabledWhen, () => true)
      )
  )

/** Parses a JSON body, failing with a DecodeError that names the operation. */
export const parseJson = (operation: string, text: string): Effect.Effect<unknown, DecodeError> =>
  Effect.try({
    try: () => (text === "" ? null : (JSON.parse(text) as unknown)),
    catch: () => new DecodeError({ operation, path: "(root)", detail: redact(`not JSON: ${text.slice(0, 120)}`) })
  })

/**
 * Decodes `value` with `schema` through the project's decoder (src/schema/decode.ts: its
 * options, extra keys kept); a bad field fails naming its path.
 */
export const decodeWith = <A>(
  operation: string,
  schema: Schema.Decoder<A>,
  value: unknown
): Effect.Effect<A, DecodeError> =>
  decodeUnknown(schema)(value).pipe(Effect.mapError((error) => decodeErrorOf(operation, error)))

const decodeErrorOf = (operation: string, error: Schema.SchemaError): DecodeError => {
  const line = describeParseError(error)
  const idx = line.indexOf(": ")
  return new DecodeError({
    operation,
    path: idx > 0 ? line.slice(0, idx) : "(root)",
    detail: redact(idx > 0 ? line.slice(idx + 2) : line)
  })
}

/** Each answer schema's decoder, made once: answers are decoded at every call. */
const decoders = new WeakMap<Schema.Decoder<unknown>, (u: unknown) => Result.Result<unknown, Schema.SchemaError>>()
const decoderOf = <A>(schema: Schema.Decoder<A>): (u: unknown) => Result.Result<A, Schema.SchemaError> => {
  let decoder = decoders.get(schema)
  if (decoder === undefined) {
    decoder = decodeUnknownEither(schema)
    decoders.set(schema, decoder)
  }
  return decoder as (u: unknown) => Result.Result<A, Schema.SchemaError>
}

/**
 * A whole answer's text, parsed and decoded in one synchronous step, as `parseJson` and
 * `decodeWith` would (answer schemas need no service). A body that is not JSON fails,
 * unless the schema reads any answer (one the documents do not show): then it gets the
 * text as sent.
 */
export const readAnswer = <A>(operation: string, schema: Schema.Decoder<A>, text: string): Effect.Effect<A, DecodeError> => {
  const decode = decoderOf(schema)
  let json: unknown
  try {
    json = text === "" ? null : JSON.parse(text)
  } catch {
    const asText = decode(text)
    return Result.isSuccess(asText)
      ? Effect.succeed(asText.success)
      : Effect.fail(new DecodeError({ operation, path: "(root)", detail: redact(`not JSON: ${text.slice(0, 120)}`) }))
  }
  const decoded = decode(json)
  return Result.isSuccess(decoded) ? Effect.succeed(decoded.success) : Effect.fail(decodeErrorOf(operation, decoded.failure))
}
