/**
 * Flags shared by the commands: the connection of the command-line contract and the
 * output switches. Each connection setting comes from its flag, else the config file's
 * profile (config-file.ts), else its WORKSYNC_* environment variable.
 */
import * as CliError from "effect/cli/CliError"
import * as Flag from "effect/cli/Flag"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type * as Redacted from "effect/Redacted"
import * as Result from "effect/Result"
import {
  DEFAULT_CONFIG_FILE,
  type Fallback,
  type ProfileField,
  profileThenEnv,
  secondsProfileThenEnv,
  secretProfileThenEnv,
  secretTargetProfile,
  targetProfile
} from "./config-file.ts"
import type { Verbosity } from "./output.ts"

/**
 * An optional flag that, when not given, takes its fallback's value (config file profile,
 * environment); a fallback's problem is a usage error.
 */
export const withFallback = <A>(fallback: Fallback<A>) => (flag: Flag.Flag<A>): Flag.Flag<Option.Option<A>> =>
  flag.pipe(
    Flag.optional,
    Flag.mapEffect((given) =>
      Option.isSome(given)
        ? Effect.succeed(given)
        : Result.match(fallback(), {
          onSuccess: Effect.succeed,
          onFailure: (message) => Effect.fail(new CliError.ValidationError({ message }))
        })
    )
  )

/** A switch: false unless given. No `--no-NAME` form (effect/cli adds one by default). */
export const booleanFlag = (name: string) => Flag.Boolean(name).pipe(Flag.withoutNegation, Flag.withDefault(false))

const fromEnv = (flag: string, env: string, description: string, field: ProfileField) =>
  Flag.String(flag).pipe(
    Flag.withDescription(`${description} (profile key ${field}, env ${env})`),
    withFallback(profileThenEnv(field, env))
  )

const secretFromEnv = (flag: string, env: string, description: string, field: ProfileField) =>
  Flag.Redacted(flag).pipe(
    Flag.withDescription(`${description} (profile key ${field}, env ${env})`),
    withFallback(secretProfileThenEnv(field, env))
  )

export interface ConnectionFlags {
  readonly restUrl: Option.Option<string>
  readonly baseUrl: Option.Option<string>
  readonly token: Option.Option<Redacted.Redacted<string>>
  readonly tokenId: Option.Option<string>
  readonly tokenSecret: Option.Option<Redacted.Redacted<string>>
  readonly org: Option.Option<string>
  readonly headerPrefix: Option.Option<string>
  /** `--max-retry-wait SECONDS`: the longest Retry-After waited (the source's, for both ends). */
  readonly maxRetryWait?: Option.Option<number>
  /** `--body-idle-timeout SECONDS`: a download that brings no byte for this long has stalled. */
  readonly bodyIdleTimeout?: Option.Option<number>
  /** `--request-timeout SECONDS`: one attempt of a request, and how long a write whose answer was lost is looked for. */
  readonly requestTimeout?: Option.Option<number>
}

/**
 * `--config` and `--profile` are read from argv by config-file.ts (the other options'
 * fallbacks need them during parsing); they are declared here so that help lists them
 * and the parser accepts them.
 */
export const configOptions = {
  config: Flag.String("config").pipe(
    Flag.withDescription(`config file of connection profiles (env WORKSYNC_CONFIG; default ./${DEFAULT_CONFIG_FILE} when present)`),
    Flag.optional
  ),
  profile: Flag.String("profile").pipe(
    Flag.withDescription("profile of the config file to connect with (env WORKSYNC_PROFILE; default: the file's defaultProfile)"),
    Flag.optional
  )
}

/**
 * The longest `--request-timeout`: the client's default (DEFAULT_REQUEST_TIMEOUT_MS, not
 * imported: this file is read before any command runs). restore, migrate and undo look
 * for a write whose answer was lost for that default before sending it again, so a longer
 * attempt could be sent twice; import-csv looks for the connection's own timeout.
 */
export const MAX_REQUEST_TIMEOUT_SECONDS = 30

/** The source connection: `--rest-url`, `--token`, ... with profile and WORKSYNC_* env fallbacks. */
export const connectionOptions = {
  restUrl: fromEnv("rest-url", "WORKSYNC_REST_URL", "REST base URL; /v1/<operation> is appended", "restUrl"),
  baseUrl: fromEnv("base-url", "WORKSYNC_BASE_URL", "GraphQL/app base URL; /graphql and /uploads are appended", "baseUrl"),
  token: secretFromEnv("token", "WORKSYNC_TOKEN", "REST personal access token", "token"),
  tokenId: fromEnv("token-id", "WORKSYNC_TOKEN_ID", "GraphQL token id", "tokenId"),
  tokenSecret: secretFromEnv("token-secret", "WORKSYNC_TOKEN_SECRET", "GraphQL token secret", "tokenSecret"),
  org: fromEnv("org", "WORKSYNC_ORG", "organization id or slug", "org"),
  headerPrefix: fromEnv("header-prefix", "WORKSYNC_HEADER_PREFIX", "header prefix, default svc", "headerPrefix"),
  maxRetryWait: Flag.Int("max-retry-wait").pipe(
    Flag.withDescription(
      "longest wait a 429 Retry-After may ask for, in seconds (default 120); a longer one fails the run at once, and a rerun resumes (profile key maxRetryWait, env WORKSYNC_MAX_RETRY_WAIT)"
    ),
    withFallback(secondsProfileThenEnv("maxRetryWait", "WORKSYNC_MAX_RETRY_WAIT", true))
  ),
  bodyIdleTimeout: Flag.Finite("body-idle-timeout").pipe(
    Flag.withDescription(
      "seconds without a byte after which a download has stalled and is retried (default 30; profile key bodyIdleTimeout, env WORKSYNC_BODY_IDLE_TIMEOUT)"
    ),
    withFallback(secondsProfileThenEnv("bodyIdleTimeout", "WORKSYNC_BODY_IDLE_TIMEOUT", false))
  ),
  requestTimeout: Flag.Finite("request-timeout").pipe(
    Flag.withDescription(
      `seconds one attempt of a request may take (default and most ${MAX_REQUEST_TIMEOUT_SECONDS}); import-csv looks this long for a write whose answer was lost before sending it again (profile key requestTimeout, env WORKSYNC_REQUEST_TIMEOUT)`
    ),
    withFallback(secondsProfileThenEnv("requestTimeout", "WORKSYNC_REQUEST_TIMEOUT", false))
  ),
  ...configOptions
}

/** `to-rest-url` -> `WORKSYNC_TARGET_REST_URL`. */
const targetEnv = (flag: string) => `WORKSYNC_TARGET_${flag.slice(3).toUpperCase().replace(/-/g, "_")}`

const target = (flag: string, description: string, field: ProfileField) =>
  Flag.String(flag).pipe(
    Flag.withDescription(`${description} (or key ${field} of the --to-profile profile, or env ${targetEnv(flag)})`),
    withFallback(targetProfile(field, targetEnv(flag)))
  )
const secretTarget = (flag: string, description: string, field: ProfileField) =>
  Flag.Redacted(flag).pipe(
    Flag.withDescription(`${description} (or key ${field} of the --to-profile profile, or env ${targetEnv(flag)})`),
    withFallback(secretTargetProfile(field, targetEnv(flag)))
  )

/**
 * The target connection of `copy-files`, `restore` and `migrate` (`--to-rest-url`, ... or
 * `--to-profile NAME`, or `WORKSYNC_TARGET_*`); each defaults to the source's.
 */
export const targetConnectionOptions = {
  restUrl: target("to-rest-url", "target REST base URL", "restUrl"),
  baseUrl: target("to-base-url", "target GraphQL/app base URL", "baseUrl"),
  token: secretTarget("to-token", "target REST token", "token"),
  tokenId: target("to-token-id", "target GraphQL token id", "tokenId"),
  tokenSecret: secretTarget("to-token-secret", "target GraphQL token secret", "tokenSecret"),
  org: target("to-org", "target organization id or slug", "org"),
  headerPrefix: target("to-header-prefix", "target header prefix", "headerPrefix"),
  // Read from argv by config-file.ts (the fallbacks above need it while parsing); declared for help and parsing.
  profile: Flag.String("to-profile").pipe(
    Flag.withDescription("profile of the config file for the target connection"),
    Flag.optional
  )
}

/**
 * `--notify URL` of the commands a scheduler runs (backup, prune, verify): pings in
 * healthchecks.io's convention around the run (notify.ts).
 */
export const notifyOption = {
  notify: Flag.String("notify").pipe(
    Flag.withDescription(
      "ping URL/start when the run starts, URL when it succeeds, URL/fail (with the one-line summary) when it fails; a ping that fails is only a warning (profile key notifyUrl, env WORKSYNC_NOTIFY_URL)"
    ),
    withFallback(profileThenEnv("notifyUrl", "WORKSYNC_NOTIFY_URL"))
  )
}

/**
 * The options of the commands that run in passes over a journal (import-csv, migrate;
 * the contract's "Delta passes and plans"), the same for both.
 */
export const passOptions = {
  overwriteTargetEdits: booleanFlag("overwrite-target-edits").pipe(
    Flag.withDescription("on a rerun with the same journal: replace fields edited on the target since the last pass (default: keep and report them)")
  ),
  titleMap: Flag.String("title-map").pipe(
    Flag.withDescription("JSON file {\"lists\": {\"SOURCE\": \"TARGET\"}, \"tags\": {...}}: lists and tags under other titles on the target (two may map onto one)"),
    Flag.optional
  )
}

export const jsonOption = booleanFlag("json").pipe(
  Flag.withDescription("print one JSON result object on stdout")
)

export const verbosityOptions = {
  quiet: booleanFlag("quiet").pipe(Flag.withAlias("q"), Flag.withDescription("no progress output")),
  verbose: booleanFlag("verbose").pipe(Flag.withAlias("v"), Flag.withDescription("more detail on stderr"))
}

export const verbosityOf = (flags: { readonly quiet: boolean; readonly verbose: boolean }): Verbosity =>
  flags.quiet ? "quiet" : flags.verbose ? "verbose" : "normal"
