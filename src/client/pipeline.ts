/**
 * One HTTP pipeline per connection. Each credential family's headers go on through
 * `HttpClient.mapRequest` (a request may still name its own organization), and every
 * call to the service passes the one limiter and the one retry policy here, once: the
 * REST client, the GraphQL client and the uploads only build requests and read answers.
 *
 * - `rest`: the bearer token and both organization headers (the documents do not say
 *   which is canonical, assumptions.ts CANONICAL_ORG_HEADER: either reading accepts it).
 * - `app`: the GraphQL token id and secret and the organization header.
 * - `bare`: nothing at all, for storage and file serving (another origin: it must see no
 *   service credential) and no tracing headers either.
 */
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as HttpClient from "effect/http/HttpClient"
import * as HttpClientRequest from "effect/http/HttpClientRequest"
import type * as HttpClientResponse from "effect/http/HttpClientResponse"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Predicate from "effect/Predicate"
import * as Redacted from "effect/Redacted"
import { Connection, type ConnectionConfig, headerNames } from "./config.ts"
import type { OutcomeUnknown, RetryWaitTooLong, Timeout, TransportError } from "./errors.ts"
import { Limiter, type LimiterApi } from "./limiter.ts"
import { type Classifiable, writeOutcome } from "./predicates.ts"
import { withRetry } from "./retry.ts"
import { type Answer, exchange, exchangeHead, headersOf, plainClient } from "./transport.ts"
import { WriteWitness } from "./write-witness.ts"

/** One call to the service, as the pipeline runs it. */
export interface ServiceCall<F> {
  /** Named in every failure. */
  readonly operation: string
  /** Built afresh for each attempt (a streamed body is read again from its start). */
  readonly request: () => HttpClientRequest.HttpClientRequest
  /** Safe to repeat: reads; updates, moves, deletes to a fixed value; confirm; presign. */
  readonly idempotent: boolean
  /** Secret-free summary of the input, for OutcomeUnknown. */
  readonly inputSummary: string
  /** The tagged error of an answer that is not the success. */
  readonly failureOf: (answer: Answer, nowMs: number) => F
}

/** How a call may fail besides the answers `failureOf` maps. */
export type CallFailure<F> = F | TransportError | Timeout | OutcomeUnknown | RetryWaitTooLong

export interface PipelineApi {
  /** To the REST base (`{restUrl}/v1/...`, `{restUrl}/uploads`). */
  readonly rest: HttpClient.HttpClient
  /** To the app base (`{baseUrl}/graphql`, `{baseUrl}/uploads`). */
  readonly app: HttpClient.HttpClient
  /** Without any credential: storage, file serving. */
  readonly bare: HttpClient.HttpClient
  /** A call read whole: through the limiter, within the request timeout, under the retry policy; a 2xx is the success. */
  readonly call: <F extends Classifiable>(client: HttpClient.HttpClient, spec: ServiceCall<F>) => Effect.Effect<Answer, CallFailure<F>>
  /**
   * A call whose body the caller streams: the same, but only the headers are awaited and
   * any status below 400 is the answer (a redirect to follow). `limited: false` for
   * storage, which is not the service and has no share of its rate.
   */
  readonly open: <F extends Classifiable>(
    client: HttpClient.HttpClient,
    spec: ServiceCall<F> & { readonly limited: boolean }
  ) => Effect.Effect<HttpClientResponse.HttpClientResponse, CallFailure<F>>
}

export class Pipeline extends Context.Service<Pipeline, PipelineApi>()("worksync/Pipeline") {}

/**
 * Sets each of the family's headers that the request does not set itself. The names are
 * known once, lowercased as a request's headers are; the values are read per request.
 */
const withDefaults = (family: (config: ConnectionConfig) => Record<string, string>, config: ConnectionConfig) => {
  const names = Object.keys(family(config)).map((name) => name.toLowerCase())
  return (request: HttpClientRequest.HttpClientRequest) => {
    if (names.every((name) => request.headers[name] !== undefined)) return request
    const missing: Record<string, string> = {}
    for (const [name, value] of Object.entries(family(config))) {
      if (request.headers[name.toLowerCase()] === undefined) missing[name] = value
    }
    return HttpClientRequest.setHeaders(request, missing)
  }
}

/** The REST family's credentials. */
export const restHeaders = (config: ConnectionConfig): Record<string, string> => {
  const names = headerNames(config.headerPrefix)
  const h: Record<string, string> = {}
  if (Option.isSome(config.token)) h["authorization"] = `Bearer ${Redacted.value(config.token.value)}`
  if (Option.isSome(config.org)) {
    h[names.orgId] = config.org.value
    h[names.companyId] = config.org.value
  }
  return h
}

/** The app family's credentials. */
export const appHeaders = (config: ConnectionConfig): Record<string, string> => {
  const names = headerNames(config.headerPrefix)
  const h: Record<string, string> = {}
  if (Option.isSome(config.tokenId)) h[names.tokenId] = config.tokenId.value
  if (Option.isSome(config.tokenSecret)) h[names.tokenSecret] = Redacted.value(config.tokenSecret.value)
  if (Option.isSome(config.org)) h[names.orgId] = config.org.value
  return h
}

export const makePipeline = (config: ConnectionConfig, limiter: LimiterApi, httpClient: HttpClient.HttpClient): PipelineApi => {
  const bare = plainClient(httpClient)
  // Headers computed per request: the secrets stay Redacted until a request needs them.
  const rest = HttpClient.mapRequest(bare, withDefaults(restHeaders, config))
  const app = HttpClient.mapRequest(bare, withDefaults(appHeaders, config))

  /**
   * One attempt: through the limiter (when `limited`), reporting the answer to it (429:
   * back off; other answers below 500: speed up), and mapping a refused one to its error.
   */
  const attempt = <R, F extends Classifiable>(
    spec: ServiceCall<F>,
    send: Effect.Effect<R, TransportError | Timeout>,
    limited: boolean,
    statusOf: (r: R) => number,
    accepted: (status: number) => boolean,
    answerOf: (r: R) => Effect.Effect<Answer>
  ): Effect.Effect<R, F | TransportError | Timeout> =>
    Effect.flatMap(limited ? limiter.withPermit(send) : send, (r) => {
      const status = statusOf(r)
      if (accepted(status)) return limited ? Effect.as(limiter.onSuccess, r) : Effect.succeed(r)
      return Effect.flatMap(answerOf(r), (answer) =>
        Effect.flatMap(Clock.currentTimeMillis, (now) => {
          const failure = spec.failureOf(answer, now)
          const told = limited && status === 429
            ? limiter.onRateLimited(Predicate.isTagged(failure, "RateLimited") ? failure.retryAfterMs ?? null : null)
            : limited && status < 500
            ? limiter.onSuccess
            : Effect.void
          return Effect.andThen(told, Effect.fail(failure))
        }))
    })

  /**
   * One call under the retry policy. `send` is one attempt's request, run past the
   * limiter; the time it starts is noted, so an outcome the policy cannot know is dated
   * from the send of its attempt, not from the call's start. A write not safe to repeat
   * is told to the fiber's WriteWitness as it leaves, and again if its answer shows it
   * was not applied.
   */
  const policy = <A, F extends Classifiable>(
    spec: ServiceCall<F>,
    once: (send: <S, E>(request: Effect.Effect<S, E>) => Effect.Effect<S, E>) => Effect.Effect<A, F | TransportError | Timeout>
  ) =>
    WriteWitness.use((witness) => {
      let sentAt: number | undefined
      let unanswered = false
      const noted = <S, E>(request: Effect.Effect<S, E>) =>
        Effect.flatMap(Clock.currentTimeMillis, (now) => {
          sentAt = now
          if (!spec.idempotent) {
            unanswered = true
            witness.leaving()
          }
          return request
        })
      // An interruption is no answer: the write stays one that may have been applied.
      const attempt = Effect.tapError(once(noted), (e) =>
        Effect.sync(() => {
          if (unanswered && writeOutcome(e) === "not-applied") witness.refused()
          unanswered = false
        }))
      return withRetry(attempt, {
        operation: spec.operation,
        idempotent: spec.idempotent,
        settings: config.retry,
        maxWaitMs: config.maxRetryWaitMs,
        inputSummary: spec.inputSummary,
        sentAt: () => sentAt
      })
    })

  const call: PipelineApi["call"] = (client, spec) =>
    policy(spec, (noted) =>
      attempt(
        spec,
        noted(Effect.suspend(() => exchange(client, spec.request(), spec.operation, config.requestTimeoutMs))),
        true,
        (a) => a.status,
        (status) => status >= 200 && status < 300,
        Effect.succeed
      ))

  const open: PipelineApi["open"] = (client, spec) =>
    policy(spec, (noted) =>
      attempt(
        spec,
        noted(Effect.suspend(() => exchangeHead(client, spec.request(), spec.operation, config.requestTimeoutMs))),
        spec.limited,
        (r) => r.status,
        (status) => status < 400,
        // Read (and so drain) the refusal: its text names the cause, its headers the wait.
        (r) => Effect.map(Effect.orElseSucceed(r.text, () => ""), (text): Answer => ({ status: r.status, headers: headersOf(r), text }))
      ))

  return { rest, app, bare, call, open }
}

export const pipelineLayer: Layer.Layer<Pipeline, never, Connection | Limiter | HttpClient.HttpClient> = Layer.effect(
  Pipeline,
  Effect.gen(function*() {
    return makePipeline(yield* Connection, yield* Limiter, yield* HttpClient.HttpClient)
  })
)
