/**
 * From the contract's connection flags to the client layer. A missing URL or token fails
 * before any request, naming the flag and its environment variable.
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { type ClientServices, clientLayer } from "../client/layer.ts"
import { describeError, isClientError } from "../client/errors.ts"
import type { ConnectionFlags } from "./common-options.ts"
import { configProblem, DEFAULT_CONFIG_FILE } from "./config-file.ts"
import { CliExit, registerDescriber, usageError } from "./exit.ts"

registerDescriber((e) => (isClientError(e) ? describeError(e) : undefined))

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

const checkUrl = (url: string, flag: string): Effect.Effect<string, CliExit> =>
  Effect.try({
    try: () => {
      const parsed = new URL(url)
      if (parsed.protocol !== "http:" && parsed.protocol !== "https:") throw new Error("not http(s)")
      return url
    },
    catch: () => usageError(`--${flag} ${url}: not an http(s) URL`)
  })

/** The client layer for the connection given by flags (and env), checked up front. */
export const clientLayerFromFlags = (
  flags: ConnectionFlags,
  needs: Needs = { rest: true },
  names: { readonly prefix: string; readonly envPrefix: string } = { prefix: "", envPrefix: "WORKSYNC_" }
): Effect.Effect<Layer.Layer<ClientServices>, CliExit> =>
  Effect.gen(function*() {
    // A config file that cannot be used is the first thing to fix, before any missing flag.
    const problem = configProblem()
    if (problem !== undefined) return yield* Effect.fail(usageError(problem))
    const flag = (name: string) => `${names.prefix}${name}`
    const env = (name: string) => `${names.envPrefix}${name}`
    const restUrl = needs.rest
      ? yield* requireFlag(flags.restUrl, flag("rest-url"), env("REST_URL"), "the REST base URL").pipe(
        Effect.flatMap((u) => checkUrl(u, flag("rest-url")))
      )
      : Option.getOrElse(flags.restUrl, () => "")
    const baseUrl = needs.app
      ? yield* requireFlag(flags.baseUrl, flag("base-url"), env("BASE_URL"), "the GraphQL/app base URL").pipe(
        Effect.flatMap((u) => checkUrl(u, flag("base-url")))
      )
      : Option.getOrElse(flags.baseUrl, () => "")
    if (needs.rest) yield* requireFlag(flags.token, flag("token"), env("TOKEN"), "the REST token")
    if (needs.app) {
      yield* requireFlag(flags.tokenId, flag("token-id"), env("TOKEN_ID"), "the GraphQL token id")
      yield* requireFlag(flags.tokenSecret, flag("token-secret"), env("TOKEN_SECRET"), "the GraphQL token secret")
    }
    return clientLayer({
      restUrl,
      baseUrl,
      token: flags.token,
      tokenId: flags.tokenId,
      tokenSecret: flags.tokenSecret,
      org: flags.org,
      ...Option.match(flags.headerPrefix, { onNone: () => ({}), onSome: (headerPrefix) => ({ headerPrefix }) })
    })
  })

/** The `--to-*` connection of copy-files: each flag falls back to the source connection's. */
export const targetFlags = (source: ConnectionFlags, target: ConnectionFlags): ConnectionFlags => ({
  restUrl: Option.orElse(target.restUrl, () => source.restUrl),
  baseUrl: Option.orElse(target.baseUrl, () => source.baseUrl),
  token: Option.orElse(target.token, () => source.token),
  tokenId: Option.orElse(target.tokenId, () => source.tokenId),
  tokenSecret: Option.orElse(target.tokenSecret, () => source.tokenSecret),
  org: Option.orElse(target.org, () => source.org),
  headerPrefix: Option.orElse(target.headerPrefix, () => source.headerPrefix)
})
