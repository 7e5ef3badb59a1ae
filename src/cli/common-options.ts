/**
 * Flags shared by the commands: the connection of the command-line contract (flags win
 * over env) and the output switches.
 */
import * as Options from "@effect/cli/Options"
import * as Config from "effect/Config"
import type * as Option from "effect/Option"
import type * as Redacted from "effect/Redacted"
import type { Verbosity } from "./output.ts"

const fromEnv = (flag: string, env: string, description: string) =>
  Options.text(flag).pipe(
    Options.withFallbackConfig(Config.string(env)),
    Options.withDescription(`${description} (env ${env})`),
    Options.optional
  )

const secretFromEnv = (flag: string, env: string, description: string) =>
  Options.redacted(flag).pipe(
    Options.withFallbackConfig(Config.redacted(env)),
    Options.withDescription(`${description} (env ${env})`),
    Options.optional
  )

export interface ConnectionFlags {
  readonly restUrl: Option.Option<string>
  readonly baseUrl: Option.Option<string>
  readonly token: Option.Option<Redacted.Redacted<string>>
  readonly tokenId: Option.Option<string>
  readonly tokenSecret: Option.Option<Redacted.Redacted<string>>
  readonly org: Option.Option<string>
  readonly headerPrefix: Option.Option<string>
}

/** The source connection: `--rest-url`, `--token`, ... with WORKSYNC_* env fallbacks. */
export const connectionOptions = {
  restUrl: fromEnv("rest-url", "WORKSYNC_REST_URL", "REST base URL; /v1/<operation> is appended"),
  baseUrl: fromEnv("base-url", "WORKSYNC_BASE_URL", "GraphQL/app base URL; /graphql and /uploads are appended"),
  token: secretFromEnv("token", "WORKSYNC_TOKEN", "REST personal access token"),
  tokenId: fromEnv("token-id", "WORKSYNC_TOKEN_ID", "GraphQL token id"),
  tokenSecret: secretFromEnv("token-secret", "WORKSYNC_TOKEN_SECRET", "GraphQL token secret"),
  org: fromEnv("org", "WORKSYNC_ORG", "organization id or slug"),
  headerPrefix: fromEnv("header-prefix", "WORKSYNC_HEADER_PREFIX", "header prefix, default svc")
}

/** The target connection of `copy-files` (`--to-rest-url`, ...); each defaults to the source's. */
export const targetConnectionOptions = {
  restUrl: Options.text("to-rest-url").pipe(Options.withDescription("target REST base URL"), Options.optional),
  baseUrl: Options.text("to-base-url").pipe(Options.withDescription("target GraphQL/app base URL"), Options.optional),
  token: Options.redacted("to-token").pipe(Options.withDescription("target REST token"), Options.optional),
  tokenId: Options.text("to-token-id").pipe(Options.withDescription("target GraphQL token id"), Options.optional),
  tokenSecret: Options.redacted("to-token-secret").pipe(Options.withDescription("target GraphQL token secret"), Options.optional),
  org: Options.text("to-org").pipe(Options.withDescription("target organization id or slug"), Options.optional),
  headerPrefix: Options.text("to-header-prefix").pipe(Options.withDescription("target header prefix"), Options.optional)
}

export const jsonOption = Options.boolean("json").pipe(
  Options.withDescription("print one JSON result object on stdout")
)

export const verbosityOptions = {
  quiet: Options.boolean("quiet").pipe(Options.withAlias("q"), Options.withDescription("no progress output")),
  verbose: Options.boolean("verbose").pipe(Options.withAlias("v"), Options.withDescription("more detail on stderr"))
}

export const verbosityOf = (flags: { readonly quiet: boolean; readonly verbose: boolean }): Verbosity =>
  flags.quiet ? "quiet" : flags.verbose ? "verbose" : "normal"
