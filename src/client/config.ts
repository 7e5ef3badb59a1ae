/**
 * Connection settings: where the service is, who we are, and how hard we may push it.
 * Secrets are `Redacted` from the moment they are read; `redact` scrubs any configured
 * secret from free text as a last line of defence for error messages.
 */
import * as Config from "effect/Config"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import * as SchemaIssue from "effect/SchemaIssue"
import { DEFAULT_HEADER_PREFIX } from "../schema/assumptions.ts"

/** How many requests may run at once and how fast they may start. */
export interface LimiterSettings {
  /** Requests in flight at once, across every fiber sharing the client. */
  readonly maxInFlight: number
  /** Starting rate in requests per second (token bucket refill and burst). */
  readonly initialRps: number
  /**
   * Hard ceiling for the adaptive rate. Not needed to avoid 429s: null lets the limiter
   * find the service's limit itself (it remembers where 429s began, see limiter.ts).
   */
  readonly maxRps: number | null
  /** AIMD (see limiter.ts): cut on 429, add to the rate per round of successes. */
  readonly adaptive: boolean
  /**
   * Pace of increase: in slow start each success adds this many rps; afterwards each adds
   * this over the current rate, so the rate grows by about this (scaled per phase) each second.
   */
  readonly increasePerSuccess: number
  /** The rate never drops below this (requests per second). */
  readonly minRps: number
}

/** The one retry policy's knobs (see retry.ts). */
export interface RetrySettings {
  readonly maxRetries: number
  readonly baseDelayMs: number
  readonly capDelayMs: number
}

export interface ConnectionConfig {
  /** REST base; calls go to `{restUrl}/v1/<operation>` and `{restUrl}/uploads`. */
  readonly restUrl: string
  /** App base; `{baseUrl}/graphql`, `{baseUrl}/uploads...`. */
  readonly baseUrl: string
  /** REST personal access token (`Authorization: Bearer`). */
  readonly token: Option.Option<Redacted.Redacted<string>>
  /** GraphQL token id header value. */
  readonly tokenId: Option.Option<string>
  /** GraphQL token secret header value. */
  readonly tokenSecret: Option.Option<Redacted.Redacted<string>>
  /** Organization id or slug. */
  readonly org: Option.Option<string>
  /** Header prefix: `svc` gives `svc-org-id`, `x-svc-company-id`, ... */
  readonly headerPrefix: string
  /** Per-attempt timeout of one HTTP request (not counting time queued in the limiter). */
  readonly requestTimeoutMs: number
  /**
   * The longest wait the service may ask for (429 Retry-After) that is honoured. A longer
   * one is not waited at all: the call fails at once with RetryWaitTooLong, and the
   * limiter does not pause the other calls for it either.
   */
  readonly maxRetryWaitMs: number
  /**
   * A streamed answer body (a download) that brings no byte for this long has stalled:
   * it fails with an idle Timeout, which callers retry like any timeout.
   */
  readonly bodyIdleTimeoutMs: number
  readonly limiter: LimiterSettings
  readonly retry: RetrySettings
  /**
   * A PostgreSQL URL (`postgres://USER@HOST:PORT/DB`, optional `?schema=NAME`, default
   * schema `worksync_engine`): the rate limiter's state lives there, shared by every
   * process that uses the same token (see limiter.ts). Unset: each process has its own.
   */
  readonly sharedLimiter?: string | undefined
}

export const DEFAULT_REQUEST_TIMEOUT_MS = 30_000
/** The command-line contract's default for `--max-retry-wait` (120 s). */
export const DEFAULT_MAX_RETRY_WAIT_MS = 120_000
export const DEFAULT_BODY_IDLE_TIMEOUT_MS = 30_000

export const DEFAULT_LIMITER: LimiterSettings = {
  maxInFlight: 8,
  initialRps: 20,
  maxRps: null,
  adaptive: true,
  increasePerSuccess: 1,
  minRps: 0.5
}

export const DEFAULT_RETRY: RetrySettings = {
  maxRetries: 6,
  baseDelayMs: 200,
  capDelayMs: 30_000
}

/** What a caller may give: plain strings are accepted for secrets and wrapped at once. */
export interface ConnectionInput {
  readonly restUrl: string
  readonly baseUrl: string
  readonly token?: string | Redacted.Redacted<string> | Option.Option<Redacted.Redacted<string>> | undefined
  readonly tokenId?: string | Option.Option<string> | undefined
  readonly tokenSecret?: string | Redacted.Redacted<string> | Option.Option<Redacted.Redacted<string>> | undefined
  readonly org?: string | Option.Option<string> | undefined
  readonly headerPrefix?: string | undefined
  readonly requestTimeoutMs?: number | undefined
  readonly maxRetryWaitMs?: number | undefined
  readonly bodyIdleTimeoutMs?: number | undefined
  readonly limiter?: Partial<LimiterSettings> | undefined
  readonly retry?: Partial<RetrySettings> | undefined
  /** See ConnectionConfig.sharedLimiter; empty counts as unset. */
  readonly sharedLimiter?: string | undefined
}

export class Connection extends Context.Service<Connection, ConnectionConfig>()("worksync/Connection") {}

const toSecret = (
  v: string | Redacted.Redacted<string> | Option.Option<Redacted.Redacted<string>> | undefined
): Option.Option<Redacted.Redacted<string>> => {
  if (v === undefined) return Option.none()
  if (typeof v === "string") return v === "" ? Option.none() : Option.some(Redacted.make(v))
  if (Option.isOption(v)) return v
  return Option.some(v)
}

const toOpt = (v: string | Option.Option<string> | undefined): Option.Option<string> => {
  if (v === undefined) return Option.none()
  if (typeof v === "string") return v === "" ? Option.none() : Option.some(v)
  return v
}

const trimSlash = (url: string): string => url.replace(/\/+$/, "")

/** Builds a full config from partial input, applying every default, and registers its secrets with `redact`. */
export const makeConnectionConfig = (input: ConnectionInput): ConnectionConfig => {
  const limiter: LimiterSettings = { ...DEFAULT_LIMITER, ...stripUndefined(input.limiter ?? {}) }
  const config: ConnectionConfig = {
    restUrl: trimSlash(input.restUrl),
    baseUrl: trimSlash(input.baseUrl),
    token: toSecret(input.token),
    tokenId: toOpt(input.tokenId),
    tokenSecret: toSecret(input.tokenSecret),
    org: toOpt(input.org),
    headerPrefix: input.headerPrefix ?? DEFAULT_HEADER_PREFIX,
    requestTimeoutMs: input.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS,
    maxRetryWaitMs: input.maxRetryWaitMs ?? DEFAULT_MAX_RETRY_WAIT_MS,
    bodyIdleTimeoutMs: input.bodyIdleTimeoutMs ?? DEFAULT_BODY_IDLE_TIMEOUT_MS,
    limiter: {
      ...limiter,
      // A user ceiling below the default start means starting at the ceiling.
      initialRps: limiter.maxRps === null ? limiter.initialRps : Math.min(limiter.initialRps, limiter.maxRps)
    },
    retry: { ...DEFAULT_RETRY, ...stripUndefined(input.retry ?? {}) },
    ...(input.sharedLimiter === undefined || input.sharedLimiter === "" ? {} : { sharedLimiter: input.sharedLimiter })
  }
  registerSecrets(config)
  return config
}

const stripUndefined = <T extends object>(o: T): { [K in keyof T]: Exclude<T[K], undefined> } =>
  Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as never

const isFullConfig = (c: ConnectionInput | ConnectionConfig): c is ConnectionConfig =>
  "limiter" in c && c.limiter !== undefined && "maxInFlight" in c.limiter &&
  "retry" in c && c.retry !== undefined && "capDelayMs" in c.retry &&
  typeof c.maxRetryWaitMs === "number" && typeof c.bodyIdleTimeoutMs === "number" &&
  Option.isOption(c.token) && Option.isOption(c.tokenId) && Option.isOption(c.org) && typeof c.headerPrefix === "string"

export const connectionLayer = (config: ConnectionInput | ConnectionConfig): Layer.Layer<Connection> =>
  Layer.sync(Connection, () => {
    if (isFullConfig(config)) {
      registerSecrets(config)
      return config
    }
    return makeConnectionConfig(config)
  })

const optString = (name: string) => Config.option(Config.String(name))

/** Whole or decimal seconds (`120`, `0.5`) as milliseconds; unset or empty gives none. */
const optSeconds = (name: string) =>
  Config.option(
    Config.String(name).pipe(
      Config.mapEffect((text) => {
        const t = text.trim()
        if (t === "") return Effect.succeed(undefined)
        const n = Number(t)
        return /^\d+(\.\d+)?$/.test(t) && Number.isFinite(n)
          ? Effect.succeed(Math.round(n * 1000))
          : Effect.fail(
            new Config.ConfigError(
              new Schema.SchemaError(
                new SchemaIssue.InvalidValue({ message: `${name}=${t}: expected a number of seconds (e.g. 120)` }, t)
              )
            )
          )
      })
    )
  )
const optSecret = (name: string) => Config.option(Config.Redacted(name))

/**
 * Reads the `WORKSYNC_*` variables of the CLI contract (through effect's ConfigProvider,
 * so tests can supply a map). Empty values count as unset.
 */
export const connectionConfigFromEnv: Effect.Effect<ConnectionConfig, Config.ConfigError> = Effect.gen(
  function*() {
    const restUrl = yield* Config.String("WORKSYNC_REST_URL")
    const baseUrl = yield* Config.String("WORKSYNC_BASE_URL")
    const token = yield* optSecret("WORKSYNC_TOKEN")
    const tokenId = yield* optString("WORKSYNC_TOKEN_ID")
    const tokenSecret = yield* optSecret("WORKSYNC_TOKEN_SECRET")
    const org = yield* optString("WORKSYNC_ORG")
    const headerPrefix = yield* optString("WORKSYNC_HEADER_PREFIX")
    const maxRetryWaitMs = yield* optSeconds("WORKSYNC_MAX_RETRY_WAIT")
    const bodyIdleTimeoutMs = yield* optSeconds("WORKSYNC_BODY_IDLE_TIMEOUT")
    const sharedLimiter = yield* optString("WORKSYNC_SHARED_LIMITER")
    const nonEmpty = (o: Option.Option<Redacted.Redacted<string>>) =>
      Option.filter(o, (r) => Redacted.value(r) !== "")
    return makeConnectionConfig({
      restUrl,
      baseUrl,
      token: nonEmpty(token),
      tokenId: Option.filter(tokenId, (s) => s !== ""),
      tokenSecret: nonEmpty(tokenSecret),
      org: Option.filter(org, (s) => s !== ""),
      headerPrefix: Option.getOrUndefined(Option.filter(headerPrefix, (s) => s !== "")),
      maxRetryWaitMs: Option.getOrUndefined(maxRetryWaitMs),
      bodyIdleTimeoutMs: Option.getOrUndefined(bodyIdleTimeoutMs),
      sharedLimiter: Option.getOrUndefined(Option.filter(sharedLimiter, (s) => s.trim() !== ""))
    })
  }
)

export const connectionFromEnv: Layer.Layer<Connection, Config.ConfigError> = Layer.effect(
  Connection,
  connectionConfigFromEnv
)

// ---------------------------------------------------------------------------------------
// Redaction. Every secret any config in this process was built with is remembered, so
// `redact(text)` needs no config at hand (error constructors call it).

const secrets = new Set<string>()

/** Short values would scrub innocent text; real tokens are long. */
const MIN_SECRET_LENGTH = 6

export const registerSecret = (value: string): void => {
  if (value.length >= MIN_SECRET_LENGTH) secrets.add(value)
}

const registerSecrets = (config: ConnectionConfig): void => {
  Option.map(config.token, (t) => registerSecret(Redacted.value(t)))
  Option.map(config.tokenSecret, (t) => registerSecret(Redacted.value(t)))
  // The token id is half of the GraphQL credential; keep it out of messages too.
  Option.map(config.tokenId, registerSecret)
  // The shared limiter's database password, should a message ever quote its URL.
  if (config.sharedLimiter !== undefined) {
    try {
      const password = decodeURIComponent(new URL(config.sharedLimiter).password)
      if (password !== "") registerSecret(password)
    } catch {
      // Not a URL: the limiter's store reports that, without the text.
    }
  }
}

export const REDACTED_MARK = "<redacted>"

/** Removes every configured secret (and anything that looks like a bearer credential) from `text`. */
export const redact = (text: string): string => {
  let out = text
  for (const s of secrets) {
    if (out.includes(s)) out = out.split(s).join(REDACTED_MARK)
  }
  return out.replace(/(Bearer\s+)[^\s"',;]+/gi, `$1${REDACTED_MARK}`)
}

/** Header names built from the prefix, in one place. */
export const headerNames = (prefix: string) => ({
  orgId: `${prefix}-org-id`,
  companyId: `x-${prefix}-company-id`,
  projectId: `x-${prefix}-project-id`,
  tokenId: `${prefix}-token-id`,
  tokenSecret: `${prefix}-token-secret`,
  workspaceId: `${prefix}-workspace-id`
})
