/**
 * From the contract's connection flags to the client layer. A missing URL or token fails
 * before any request, naming the flag and its environment variable.
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Predicate from "effect/Predicate"
import type { ClientServices } from "../client/layer.ts"
import { describeError, isClientError } from "../client/errors.ts"
import { isNotFound } from "../client/predicates.ts"
import { type ConnectionFlags, MAX_REQUEST_TIMEOUT_SECONDS } from "./common-options.ts"
import { configProblem, DEFAULT_CONFIG_FILE } from "./config-file.ts"
import { CliExit, registerDescriber, usageError } from "./exit.ts"

registerDescriber((e) => (isClientError(e) ? `${describeError(e)}${nextStepSuffix(e)}` : undefined))

/**
 * What to do next about the failures only the user can fix (token, URL, ids), found
 * anywhere in the chain of causes (a paging error wraps the HTTP one).
 */
export const nextStep = (error: unknown): string | undefined => {
  let e: unknown = error
  for (let depth = 0; depth < 6 && e !== undefined && e !== null; depth++) {
    const code = (e as { code?: unknown }).code
    if (Predicate.isTagged(e, "Unauthorized") || (Predicate.isTagged(e, "GraphqlError") && code === "UNAUTHENTICATED")) {
      return "the token was refused: check --token / --token-id / --token-secret (or WORKSYNC_TOKEN..., or the profile in the config file)"
    }
    if (Predicate.isTagged(e, "Forbidden")) return "the token has no access there: check --org and the workspace id, or use a token of a member"
    if (Predicate.isTagged(e, "TransportError")) {
      return "the service could not be reached: check --rest-url / --base-url and the network, then rerun"
    }
    if (Predicate.isTagged(e, "Timeout")) return "the service did not answer in time: check --rest-url, or rerun later"
    if (isNotFound(e)) return "an id does not exist: check the workspace id or slug"
    e = (e as { cause?: unknown }).cause
  }
  return undefined
}

/** `nextStep` as a suffix for a one-line message ("" when there is none). */
export const nextStepSuffix = (error: unknown): string => {
  const step = nextStep(error)
  return step === undefined ? "" : `; ${step}`
}

export interface Needs {
  /** REST calls (`--rest-url`, `--token`). */
  readonly rest?: boolean
  /** GraphQL or app calls (`--base-url`, `--token-id`, `--token-secret`). */
  readonly app?: boolean
}

const requireFlag = <A>(value: Option.Option<A>, flag: string, env: string, what: string): Effect.Effect<A, CliExit> =>
  Option.match(value, {
    onNone: () => Effect.fail(usageError(`missing ${what}: pass --${flag}, set ${env}, or add it to a profile of ${DEFAULT_CONFIG_FILE}`)),
    onSome: Effect.succeed
  })

/** A URL as it may be shown: without any user-info (credentials) it carries. */
export const shownUrl = (url: string): string => {
  try {
    const parsed = new URL(url)
    if (parsed.username === "" && parsed.password === "") return url
    parsed.username = ""
    parsed.password = ""
    return parsed.toString()
  } catch {
    return url.replace(/\/\/[^/@]*@/, "//")
  }
}

const checkUrl = (url: string, flag: string): Effect.Effect<string, CliExit> =>
  Effect.try({
    try: () => {
      const parsed = new URL(url)
      if (parsed.protocol !== "http:" && parsed.protocol !== "https:") throw new Error("not http(s)")
      return url
    },
    catch: () => usageError(`--${flag} ${shownUrl(url)}: not an http(s) URL`)
  })

/** Fails with the config file's problem (missing, malformed, unknown profile), if any. */
export const checkConfigFile: Effect.Effect<void, CliExit> = Effect.suspend(() => {
  const problem = configProblem()
  return problem === undefined ? Effect.void : Effect.fail(usageError(problem))
})

/** The client layer for the connection given by flags (and env), checked up front. */
export const clientLayerFromFlags = (
  flags: ConnectionFlags,
  needs: Needs = { rest: true },
  names: { readonly prefix: string; readonly envPrefix: string } = { prefix: "", envPrefix: "WORKSYNC_" }
): Effect.Effect<Layer.Layer<ClientServices>, CliExit> =>
  Effect.gen(function*() {
    // A config file that cannot be used is the first thing to fix, before any missing flag.
    yield* checkConfigFile
    const flag = (name: string) => `${names.prefix}${name}`
    const env = (name: string) => `${names.envPrefix}${name}`
    // A URL that is given is checked even when this command may not need it, so a typo
    // fails here, once, rather than on every file later.
    const url = (value: Option.Option<string>, needed: boolean | undefined, name: string, envName: string, what: string) =>
      needed
        ? requireFlag(value, flag(name), env(envName), what).pipe(Effect.flatMap((u) => checkUrl(u, flag(name))))
        : Option.match(value, { onNone: () => Effect.succeed(""), onSome: (u) => checkUrl(u, flag(name)) })
    // GraphQL credentials without a base URL would send every app call nowhere.
    const appCredentials = Option.isSome(flags.tokenId) && Option.isSome(flags.tokenSecret)
    const restUrl = yield* url(flags.restUrl, needs.rest, "rest-url", "REST_URL", "the REST base URL")
    const baseUrl = yield* url(flags.baseUrl, needs.app || appCredentials, "base-url", "BASE_URL", "the GraphQL/app base URL")
    if (needs.rest) yield* requireFlag(flags.token, flag("token"), env("TOKEN"), "the REST token")
    if (needs.app) {
      yield* requireFlag(flags.tokenId, flag("token-id"), env("TOKEN_ID"), "the GraphQL token id")
      yield* requireFlag(flags.tokenSecret, flag("token-secret"), env("TOKEN_SECRET"), "the GraphQL token secret")
    }
    const maxRetryWait = Option.getOrUndefined(flags.maxRetryWait ?? Option.none())
    if (maxRetryWait !== undefined && maxRetryWait < 0) {
      return yield* Effect.fail(usageError(`--max-retry-wait ${maxRetryWait}: must be 0 or more seconds`))
    }
    const bodyIdleTimeout = Option.getOrUndefined(flags.bodyIdleTimeout ?? Option.none())
    if (bodyIdleTimeout !== undefined && !(bodyIdleTimeout > 0)) {
      return yield* Effect.fail(usageError(`--body-idle-timeout ${bodyIdleTimeout}: must be more than 0 seconds`))
    }
    const requestTimeout = Option.getOrUndefined(flags.requestTimeout ?? Option.none())
    if (requestTimeout !== undefined && !(requestTimeout > 0 && requestTimeout <= MAX_REQUEST_TIMEOUT_SECONDS)) {
      return yield* Effect.fail(usageError(`--request-timeout ${requestTimeout}: must be more than 0 and at most ${MAX_REQUEST_TIMEOUT_SECONDS} seconds`))
    }
    // Loaded on use: the HTTP stack (undici) is most of the CLI's start-up cost, and
    // `--help` or a bad invocation never needs it.
    const { clientLayer } = yield* Effect.promise(() => import("../client/layer.ts"))
    return clientLayer({
      restUrl,
      baseUrl,
      token: flags.token,
      tokenId: flags.tokenId,
      tokenSecret: flags.tokenSecret,
      org: flags.org,
      ...Option.match(flags.headerPrefix, { onNone: () => ({}), onSome: (headerPrefix) => ({ headerPrefix }) }),
      ...(maxRetryWait === undefined ? {} : { maxRetryWaitMs: maxRetryWait * 1000 }),
      ...(bodyIdleTimeout === undefined ? {} : { bodyIdleTimeoutMs: Math.max(1, Math.round(bodyIdleTimeout * 1000)) }),
      ...(requestTimeout === undefined ? {} : { requestTimeoutMs: Math.max(1, Math.round(requestTimeout * 1000)) }),
      // Set by a worker for its jobs (engine/worker.ts): one token's limit shared by every process.
      sharedLimiter: process.env.WORKSYNC_SHARED_LIMITER
    })
  })

/** Downloads go through the app base URL, which the REST-only check does not cover. */
export const requireBaseUrl = (flags: ConnectionFlags, flag: string, env: string): Effect.Effect<void, CliExit> => {
  const url = Option.getOrElse(flags.baseUrl, () => "").trim()
  if (url === "") {
    return Effect.fail(usageError(`missing the GraphQL/app base URL (downloads use it): pass --${flag} or set ${env}`))
  }
  try {
    const parsed = new URL(url)
    if (parsed.protocol === "http:" || parsed.protocol === "https:") return Effect.void
  } catch {
    // reported below
  }
  return Effect.fail(usageError(`--${flag} ${shownUrl(url)}: not an http(s) URL`))
}

/** The `--to-*` connection of copy-files: each flag falls back to the source connection's. */
export const targetFlags = (source: ConnectionFlags, target: ConnectionFlags): ConnectionFlags => ({
  restUrl: Option.orElse(target.restUrl, () => source.restUrl),
  baseUrl: Option.orElse(target.baseUrl, () => source.baseUrl),
  token: Option.orElse(target.token, () => source.token),
  tokenId: Option.orElse(target.tokenId, () => source.tokenId),
  tokenSecret: Option.orElse(target.tokenSecret, () => source.tokenSecret),
  org: Option.orElse(target.org, () => source.org),
  headerPrefix: Option.orElse(target.headerPrefix, () => source.headerPrefix),
  // How long to wait is the run's choice, not an account's: both ends take the source's.
  maxRetryWait: source.maxRetryWait ?? Option.none(),
  bodyIdleTimeout: source.bodyIdleTimeout ?? Option.none(),
  requestTimeout: source.requestTimeout ?? Option.none()
})
