/**
 * The config file: connections as named profiles, so a cron line stays short.
 *
 *     { "defaultProfile": "prod",
 *       "profiles": { "prod": { "restUrl": "...", "baseUrl": "...", "token": "...", "org": "acme" } } }
 *
 * Which file: `--config FILE`, else `WORKSYNC_CONFIG`, else `worksync.config.json` in the
 * working directory when it exists. Which profile: `--profile NAME`, else
 * `WORKSYNC_PROFILE`, else the file's `defaultProfile`, else a profile named `default`.
 * `--to-profile NAME` picks the target connection of copy-files from the same file.
 *
 * Precedence for each setting: flag, then the profile, then the WORKSYNC_* variable.
 *
 * The connection options read the profile as their fallback while effect/cli parses, so
 * before the parsed `--config` and `--profile` exist: these two are therefore read from
 * argv directly (both `--config FILE` and `--config=FILE`). A broken file does not stop
 * parsing; `configProblem` reports it as the command's one-line usage error.
 */
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Result from "effect/Result"
import * as fs from "node:fs"
import * as path from "node:path"
import { parseJsonText } from "../schema/json-text.ts"

export const DEFAULT_CONFIG_FILE = "worksync.config.json"

/**
 * The file's shape. Checked by hand rather than with effect/Schema: every command reads
 * this file while parsing its flags, and Schema is the largest part of Effect a start
 * would otherwise load (`worksync --help` from cron). The messages are those Schema's
 * array formatter gives for the same shape.
 */
export const PROFILE_FIELDS = [
  "restUrl",
  "baseUrl",
  "token",
  "tokenId",
  "tokenSecret",
  "org",
  "headerPrefix",
  "maxRetryWait",
  "bodyIdleTimeout",
  "requestTimeout",
  "notifyUrl"
] as const
export type ProfileField = (typeof PROFILE_FIELDS)[number]
/** Keys holding seconds: written as a number or a string (`"maxRetryWait": 600`). */
const SECONDS_FIELDS: ReadonlyArray<ProfileField> = ["maxRetryWait", "bodyIdleTimeout", "requestTimeout"]
export type Profile = { readonly [K in ProfileField]?: string }

export interface ConfigFile {
  readonly defaultProfile?: string
  readonly profiles: { readonly [name: string]: Profile }
}

/** The settings chosen for one run, or why there are none. */
export interface LoadedConfig {
  /** Absolute path of the file read; undefined when no file is in use. */
  readonly file: string | undefined
  readonly profileName: string | undefined
  readonly profile: Profile | undefined
  /** The target profile of copy-files (`--to-profile`). */
  readonly targetProfileName: string | undefined
  readonly targetProfile: Profile | undefined
  /** A one-line usage error (missing file, bad JSON, unknown profile). */
  readonly problem: string | undefined
  /** A selected profile holds a secret and the file is readable by group or others. */
  readonly readableBy: "group" | "others" | undefined
}

export interface Sources {
  readonly argv: ReadonlyArray<string>
  readonly env: Readonly<Record<string, string | undefined>>
  readonly cwd: string
}

/** The value of `--name VALUE` or `--name=VALUE` (the last one wins, like repeated flags). */
export const argValue = (argv: ReadonlyArray<string>, name: string): string | undefined => {
  let value: string | undefined
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!
    if (arg === "--") break
    if (arg === `--${name}`) value = argv[i + 1]
    else if (arg.startsWith(`--${name}=`)) value = arg.slice(name.length + 3)
  }
  return value
}

const none = (problem?: string): LoadedConfig => ({
  file: undefined,
  profileName: undefined,
  profile: undefined,
  targetProfileName: undefined,
  targetProfile: undefined,
  problem,
  readableBy: undefined
})

interface Issue {
  readonly path: ReadonlyArray<string>
  readonly message: string
}

const PROFILE_TYPE = `{ ${PROFILE_FIELDS.map((f) => `readonly ${f}?: string | undefined`).join("; ")} }`
const PROFILES_TYPE = `{ readonly [x: string]: ${PROFILE_TYPE} }`
const FILE_TYPE = `{ readonly defaultProfile?: string | undefined; readonly profiles: ${PROFILES_TYPE} }`

const isObject = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

/** The first key that is not one of `known`, as an issue. */
const excess = (value: Record<string, unknown>, known: ReadonlyArray<string>, at: ReadonlyArray<string>): Issue | undefined => {
  const extra = Object.keys(value).find((k) => !known.includes(k))
  return extra === undefined
    ? undefined
    : { path: [...at, extra], message: `is unexpected, expected: ${known.map((k) => JSON.stringify(k)).join(" | ")}` }
}

const decodeProfile = (value: unknown, at: ReadonlyArray<string>): Result.Result<Profile, Issue> => {
  if (!isObject(value)) return Result.fail({ path: at, message: `Expected ${PROFILE_TYPE}` })
  const extra = excess(value, PROFILE_FIELDS, at)
  if (extra !== undefined) return Result.fail(extra)
  const profile: { [K in ProfileField]?: string } = {}
  for (const field of PROFILE_FIELDS) {
    if (!Object.hasOwn(value, field) || value[field] === undefined) continue
    const v = value[field]
    if (typeof v === "number" && SECONDS_FIELDS.includes(field)) {
      profile[field] = String(v)
      continue
    }
    if (typeof v !== "string") {
      return Result.fail({ path: [...at, field], message: SECONDS_FIELDS.includes(field) ? "Expected number" : "Expected string" })
    }
    profile[field] = v
  }
  return Result.succeed(profile)
}

const decode = (json: unknown): Result.Result<ConfigFile, Issue> => {
  if (!isObject(json)) return Result.fail({ path: [], message: `Expected ${FILE_TYPE}` })
  const extra = excess(json, ["defaultProfile", "profiles"], [])
  if (extra !== undefined) return Result.fail(extra)
  const defaultProfile = json.defaultProfile
  if (defaultProfile !== undefined && typeof defaultProfile !== "string") {
    return Result.fail({ path: ["defaultProfile"], message: "Expected string" })
  }
  if (!Object.hasOwn(json, "profiles")) return Result.fail({ path: ["profiles"], message: "is missing" })
  if (!isObject(json.profiles)) return Result.fail({ path: ["profiles"], message: `Expected ${PROFILES_TYPE}` })
  // No prototype: a profile named like an Object method ("constructor") is just a name.
  const profiles: Record<string, Profile> = Object.create(null)
  for (const [name, value] of Object.entries(json.profiles)) {
    const profile = decodeProfile(value, ["profiles", name])
    if (Result.isFailure(profile)) return Result.fail(profile.failure)
    profiles[name] = profile.success
  }
  return Result.succeed(defaultProfile === undefined ? { profiles } : { defaultProfile, profiles })
}

/** Parses a config file's text; the error names the file and the bad field. */
export const parseConfigFile = (file: string, text: string): Result.Result<ConfigFile, string> => {
  const parsed = parseJsonText(text)
  if (Result.isFailure(parsed)) return Result.fail(`${file}: ${parsed.failure}; fix the file or pass --config`)
  const json = parsed.success
  return Result.mapError(decode(json), (issue) => {
    const where = issue.path.length > 0 ? ` at ${issue.path.join(".")}` : ""
    // Never the actual value: it may be a token.
    const expected = issue.message
    return `${file}: not a worksync config${where}: ${expected}; expected {"profiles": {"NAME": {"restUrl": ..., "token": ...}}}`
  })
}

const pick = (config: ConfigFile, file: string, name: string, flag: string) => {
  const profile = config.profiles[name]
  if (profile !== undefined) return Result.succeed(profile)
  const known = Object.keys(config.profiles)
  return Result.fail(
    `${flag} ${name}: no such profile in ${file} (${known.length > 0 ? `profiles: ${known.join(", ")}` : "it has no profiles"})`
  )
}

/** Finds, reads and selects; never throws. */
export const loadConfig = (sources: Sources): LoadedConfig => {
  const explicit = argValue(sources.argv, "config") ?? nonEmpty(sources.env.WORKSYNC_CONFIG)
  const flagName = argValue(sources.argv, "config") !== undefined ? "--config" : "WORKSYNC_CONFIG"
  const file = path.resolve(sources.cwd, explicit ?? DEFAULT_CONFIG_FILE)
  const profileFlag = argValue(sources.argv, "profile")
  const profileName = profileFlag ?? nonEmpty(sources.env.WORKSYNC_PROFILE)
  const targetProfileName = argValue(sources.argv, "to-profile")

  let text: string
  try {
    text = fs.readFileSync(file, "utf8")
  } catch (e) {
    const missing = (e as NodeJS.ErrnoException).code === "ENOENT"
    if (explicit === undefined && missing) {
      // No file is fine, unless a profile was asked for.
      if (profileFlag !== undefined || targetProfileName !== undefined) {
        return none(
          `${profileFlag !== undefined ? "--profile" : "--to-profile"} needs a config file: create ${DEFAULT_CONFIG_FILE} or pass --config FILE`
        )
      }
      return none()
    }
    return none(`${flagName} ${explicit ?? file}: ${missing ? "file not found" : `cannot read (${(e as Error).message})`}`)
  }
  const parsed = parseConfigFile(file, text)
  if (Result.isFailure(parsed)) return none(parsed.failure)
  const config = parsed.success

  const chosen = profileName ?? config.defaultProfile ?? (config.profiles.default !== undefined ? "default" : undefined)
  const flagOfChosen = profileFlag !== undefined ? "--profile" : profileName !== undefined ? "WORKSYNC_PROFILE" : "defaultProfile"
  const profile = chosen === undefined ? Result.succeed(undefined) : pick(config, file, chosen, flagOfChosen)
  if (Result.isFailure(profile)) return { ...none(profile.failure), file }
  const target = targetProfileName === undefined ? Result.succeed(undefined) : pick(config, file, targetProfileName, "--to-profile")
  if (Result.isFailure(target)) return { ...none(target.failure), file }

  const holdsSecret = [profile.success, target.success].some((p) => p?.token !== undefined || p?.tokenSecret !== undefined)
  return {
    file,
    profileName: profile.success === undefined ? undefined : chosen,
    profile: profile.success,
    targetProfileName: target.success === undefined ? undefined : targetProfileName,
    targetProfile: target.success,
    problem: undefined,
    readableBy: holdsSecret ? readableBy(file) : undefined
  }
}

const nonEmpty = (s: string | undefined): string | undefined => (s === undefined || s.trim() === "" ? undefined : s)

const readableBy = (file: string): "group" | "others" | undefined => {
  if (process.platform === "win32") return undefined
  try {
    const mode = fs.statSync(file).mode
    if ((mode & 0o004) !== 0) return "others"
    if ((mode & 0o040) !== 0) return "group"
  } catch {
    // Checked when read; a race here is not worth a warning.
  }
  return undefined
}

let cached: LoadedConfig | undefined

/** The config of this process (argv, env and working directory at first use). */
export const processConfig = (): LoadedConfig => {
  cached ??= loadConfig({ argv: process.argv.slice(2), env: process.env, cwd: process.cwd() })
  return cached
}

/** For tests of the CLI in-process: forget the cached config. */
export const resetProcessConfig = () => {
  cached = undefined
}

const fromProfile = (which: "source" | "target", field: ProfileField): string | undefined => {
  const loaded = processConfig()
  return (which === "source" ? loaded.profile : loaded.targetProfile)?.[field]
}

/**
 * What a flag that is not given falls back to: a value, none (the flag stays unset), or a
 * one-line problem (a usage error). Read when the command line is parsed, straight from
 * the profile and `process.env`: an empty variable counts as given, as it always did.
 */
export type Fallback<A> = () => Result.Result<Option.Option<A>, string>

const some = <A>(value: A): Result.Result<Option.Option<A>, string> => Result.succeed(Option.some(value))
const fromEnv = (env: string): Result.Result<Option.Option<string>, string> => Result.succeed(Option.fromUndefinedOr(process.env[env]))

/** Fallback of a source connection flag: the profile's value, else the environment variable. */
export const profileThenEnv = (field: ProfileField, env: string): Fallback<string> => () => {
  const value = fromProfile("source", field)
  return value !== undefined ? some(value) : fromEnv(env)
}

export const secretProfileThenEnv = (field: ProfileField, env: string): Fallback<Redacted.Redacted<string>> => () =>
  Result.map(profileThenEnv(field, env)(), Option.map(Redacted.make))

/**
 * Fallback of a flag in seconds: the profile's value, else the environment variable; a
 * value that is not a number of seconds (whole ones when `whole`) is a usage error
 * naming where it came from.
 */
export const secondsProfileThenEnv = (field: ProfileField, env: string, whole: boolean): Fallback<number> => () => {
  const value = fromProfile("source", field)
  const where = value !== undefined ? `${field} of profile ${processConfig().profileName ?? ""}` : env
  const text = value ?? process.env[env]
  if (text === undefined) return Result.succeed(Option.none())
  const t = text.trim()
  return (whole ? /^\d+$/ : /^\d+(\.\d+)?$/).test(t)
    ? some(Number(t))
    : Result.fail(`${where}=${t}: expected a number of ${whole ? "whole " : ""}seconds`)
}

/**
 * Fallback of a `--to-*` flag: the `--to-profile` profile's value, else the environment
 * variable (`WORKSYNC_TARGET_*`); an empty variable is not given.
 */
export const targetProfile = (field: ProfileField, env: string): Fallback<string> => () => {
  const value = fromProfile("target", field)
  if (value !== undefined) return some(value)
  const fromEnv = process.env[env]
  return Result.succeed(fromEnv !== undefined && fromEnv !== "" ? Option.some(fromEnv) : Option.none())
}

export const secretTargetProfile = (field: ProfileField, env: string): Fallback<Redacted.Redacted<string>> => () =>
  Result.map(targetProfile(field, env)(), Option.map(Redacted.make))

/**
 * The problem with the config file, if any, as one line; also warns once on stderr when
 * a file holding a token can be read by other users.
 */
export const configProblem = (): string | undefined => {
  const loaded = processConfig()
  if (loaded.readableBy !== undefined && !warned) {
    warned = true
    process.stderr.write(
      `worksync: warning: ${loaded.file} holds a token and is readable by ${loaded.readableBy}; run chmod 600 on it\n`
    )
  }
  return loaded.problem
}
let warned = false
