/**
 * A job of the pool of workers: one command line (`backup`, `copy-files`, `import-csv`,
 * `restore`, `migrate`) as the user typed it, less `--engine`, run by a worker exactly as
 * it would run on the command's machine. The job is stored in PostgreSQL, so it never
 * holds a secret: tokens reach workers through their own environment or config file,
 * and the job names them only by fingerprint, so a worker can tell it has the same one.
 */
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import { createHash } from "node:crypto"
import { parseEndpoint } from "../connectors/files/spec.ts"
import { isPostgresUrl } from "../store/postgres-url.ts"

/** The commands whose work can run on the pool. */
export const ENGINE_COMMANDS = ["backup", "copy-files", "import-csv", "restore", "migrate"] as const
export type EngineCommand = (typeof ENGINE_COMMANDS)[number]

export const JobSpec = Schema.Struct({
  command: Schema.Literals(ENGINE_COMMANDS),
  /** The arguments after the command name, less `--engine` and the output switches. */
  args: Schema.Array(Schema.String),
  /** The command's working directory: relative paths in `args` are relative to it. */
  cwd: Schema.String,
  /** The command's WORKSYNC_* settings that are not secrets (URLs, organization, profile). */
  env: Schema.Record(Schema.String, Schema.String),
  /** Secret settings by name, as fingerprints (`sha256:` and 16 hex digits), never the values. */
  secrets: Schema.Record(Schema.String, Schema.String),
  /**
   * Set on a helper: a job that takes part of another job's work (`of`, that job's id)
   * from their shared journal; `n` tells a job's helpers apart (see `spreadable`).
   */
  helper: Schema.optional(Schema.Struct({ of: Schema.String, n: Schema.Number }))
})
export type JobSpec = typeof JobSpec.Type

/** What a finished job answers: the command's exit code and its stdout (its `--json` result). */
export const JobOutcome = Schema.Struct({
  code: Schema.Number,
  stdout: Schema.String
})
export type JobOutcome = typeof JobOutcome.Type

/** Output switches: how the waiting command prints, not what the job does. */
const OUTPUT_FLAGS = new Set(["--json", "--quiet", "-q", "--verbose", "-v"])

/** Flags whose value is a secret: with --engine they would be stored in the database. */
export const SECRET_FLAGS = ["--token", "--token-secret", "--to-token", "--to-token-secret"] as const

const isSecretName = (name: string): boolean => /TOKEN(?!_ID)|SECRET|PASSWORD/.test(name)

export const fingerprint = (secret: string): string =>
  `sha256:${createHash("sha256").update(secret).digest("hex").slice(0, 16)}`

/** The argument list without `--engine URL` (either form) and the output switches. */
export const jobArgs = (args: ReadonlyArray<string>): Array<string> => {
  const out: Array<string> = []
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!
    if (a === "--engine") {
      i++
      continue
    }
    if (a.startsWith("--engine=") || OUTPUT_FLAGS.has(a)) continue
    out.push(a)
  }
  return out
}

/** A PostgreSQL URL that carries its password. */
const URL_WITH_PASSWORD = /postgres(ql)?:\/\/[^/@\s]*:[^/@\s]+@/i

/** The argument holding a database URL with a password, if any (shown with the password hidden). */
export const passwordUrlIn = (args: ReadonlyArray<string>): string | undefined =>
  args.find((a) => URL_WITH_PASSWORD.test(a))

/** The secret flag named in `args`, if any (`--token X` or `--token=X`). */
export const secretFlagIn = (args: ReadonlyArray<string>): string | undefined =>
  SECRET_FLAGS.find((flag) => args.some((a) => a === flag || a.startsWith(`${flag}=`)))

/** Set by a worker in a helper's environment: the command helps its job's main process. */
export const HELPER_ENV = "WORKSYNC_HELPER"
/** Set by a worker for the processes of a spread job: the rate limiter's shared state (src/client/limiter.ts). */
export const SHARED_LIMITER_ENV = "WORKSYNC_SHARED_LIMITER"
/** Settings a worker gives its children: never part of a job. */
const WORKER_SETTINGS = new Set(["WORKSYNC_EXIT_WITH_PARENT", HELPER_ENV, SHARED_LIMITER_ENV])

/** The job of a command line typed in `cwd` with `env`. */
export const jobSpecOf = (
  command: EngineCommand,
  args: ReadonlyArray<string>,
  cwd: string,
  env: NodeJS.ProcessEnv
): JobSpec => {
  const plain: Record<string, string> = {}
  const secrets: Record<string, string> = {}
  for (const [name, value] of Object.entries(env)) {
    if (!name.startsWith("WORKSYNC_") || value === undefined || WORKER_SETTINGS.has(name)) continue
    if (isSecretName(name)) secrets[name] = fingerprint(value)
    else plain[name] = value
  }
  return { command, args: jobArgs(args), cwd, env: plain, secrets }
}

/** Sorted keys, so that the same settings always give the same text. */
const canonical = (value: unknown): string =>
  JSON.stringify(value, (_key, v: unknown) =>
    v !== null && typeof v === "object" && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => a.localeCompare(b)))
      : v)

/**
 * A job's identity: what it does (the command, its arguments, where relative paths point,
 * which service and which token). Rerunning the same command gives the same key, so it
 * attaches to the job in progress instead of starting a second one.
 */
export const jobKeyOf = (spec: JobSpec): string =>
  createHash("sha256").update(canonical({
    command: spec.command,
    args: spec.args,
    cwd: spec.cwd,
    env: spec.env,
    secrets: spec.secrets,
    ...(spec.helper !== undefined ? { helper: spec.helper } : {})
  }))
    .digest("hex")

/** The value of `--name VALUE` or `--name=VALUE` in `args` (the last one given). */
const flagValue = (args: ReadonlyArray<string>, name: string): string | undefined => {
  let found: string | undefined
  args.forEach((a, i) => {
    if (a === name && i + 1 < args.length) found = args[i + 1]
    else if (a.startsWith(`${name}=`)) found = a.slice(name.length + 1)
  })
  return found
}

/**
 * Whether helpers may take part of a job's work: the files a job copies from a workspace
 * to a workspace, with its journal in PostgreSQL. That journal holds one op per file,
 * which any process with the same connection can claim; a directory at either end is on
 * one machine, and a SQLite journal has one writer. Such files are a `copy-files` job's
 * whole work, and a `migrate` job's file step (both its ends are workspaces).
 */
export const spreadable = (spec: JobSpec): boolean => {
  if (spec.helper !== undefined) return false
  const journal = flagValue(spec.args, "--journal")
  if (journal === undefined || !isPostgresUrl(journal)) return false
  if (spec.command === "migrate") return true
  const isWorkspace = (flag: string) => {
    const value = flagValue(spec.args, flag)
    return value !== undefined && Result.getOrUndefined(parseEndpoint(flag, value))?.kind === "workspace"
  }
  return spec.command === "copy-files" && isWorkspace("--from") && isWorkspace("--to")
}

/**
 * What a job's child tells its worker over their IPC channel once its plan is stored:
 * `toDo` ops wait, which helpers may now take.
 */
export const PLANNED_MESSAGE = "worksync:planned"
export interface PlannedMessage {
  readonly type: typeof PLANNED_MESSAGE
  readonly toDo: number
}
export const isPlannedMessage = (m: unknown): m is PlannedMessage =>
  typeof m === "object" && m !== null && (m as { type?: unknown }).type === PLANNED_MESSAGE &&
  typeof (m as { toDo?: unknown }).toDo === "number"

/**
 * Tells this process's worker, when it runs under one, that `toDo` files of a spread job
 * are planned in its journal and may be helped with. A command run by hand has no worker.
 */
export const announcePlanned = (toDo: number): void => {
  if (process.env.WORKSYNC_EXIT_WITH_PARENT === "1" && process.send !== undefined) {
    process.send({ type: PLANNED_MESSAGE, toDo } satisfies PlannedMessage)
  }
}

/**
 * The service account a job works as: its service URL, organization, profile and secret
 * fingerprints. The pool runs one job per account at a time, so the account's requests
 * all pass through one process's rate limiter (src/client/limiter.ts), which keeps them
 * under the service's limit and close to it, as on one machine.
 */
export const accountKeyOf = (spec: JobSpec): string => {
  const profile = spec.args.find((a, i) => spec.args[i - 1] === "--profile") ?? spec.env.WORKSYNC_PROFILE ?? ""
  const plain = Object.fromEntries(
    ["WORKSYNC_REST_URL", "WORKSYNC_BASE_URL", "WORKSYNC_ORG", "WORKSYNC_CONFIG"].map((k) => [k, spec.env[k] ?? ""])
  )
  return createHash("sha256").update(canonical({ plain, profile, secrets: spec.secrets })).digest("hex")
}

/**
 * The secrets a worker lacks for a job: each one the job names must be set in the
 * worker's environment with the same fingerprint. Returns the names that differ.
 */
export const missingSecrets = (spec: JobSpec, env: NodeJS.ProcessEnv): Array<string> =>
  Object.entries(spec.secrets)
    .filter(([name, print]) => {
      const mine = env[name]
      return mine === undefined || fingerprint(mine) !== print
    })
    .map(([name]) => name)
