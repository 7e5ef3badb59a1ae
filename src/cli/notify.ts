/**
 * Notifications of a scheduled run (the contract's "Notifications"), in healthchecks.io's
 * convention: a request to `URL/start` when the command starts, to `URL` when it
 * succeeds, and to `URL/fail` when it fails, each a POST whose body is one line (the
 * failure's is the summary printed on stderr). A monitor then knows a job started, ended,
 * failed, or never ran.
 *
 * - Nothing secret goes out: the body is scrubbed of every credential the command was given
 *   (tokens, token ids and secrets, passwords in URLs) and of anything that looks like a
 *   bearer credential, whatever the text quoted; no header carries one.
 * - A ping never changes the run's outcome: one that fails (refused, an HTTP error, no
 *   answer within the timeout) is a warning on stderr naming only the ping's host.
 * - The timeout is short (10 s, `WORKSYNC_NOTIFY_TIMEOUT` seconds), so a monitor that does
 *   not answer never holds a backup up for long.
 *
 * Wrap a command's whole work with `withNotify` (backup, prune, verify).
 */
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { redact, registerSecret } from "../client/config.ts"
import { CliExit, usageError } from "./exit.ts"
import { printable } from "./output.ts"
import { VERSION } from "./version.ts"

const DEFAULT_TIMEOUT_MS = 10_000

/** The flags `withNotify` reads: `--notify` (its fallbacks applied) and whatever the command was given. */
export interface NotifyFlags {
  readonly notify: Option.Option<string>
}

type Outcome = "start" | "success" | "fail"

const timeoutMs = (): number => {
  const text = process.env.WORKSYNC_NOTIFY_TIMEOUT
  const seconds = text === undefined ? NaN : Number(text)
  return Number.isFinite(seconds) && seconds > 0 ? seconds * 1000 : DEFAULT_TIMEOUT_MS
}

/** A URL's credentials, shown as `***`: `postgres://u:pw@h` -> `postgres://u:***@h`. */
const scrubUrls = (text: string): string => text.replace(/([a-z][a-z0-9+.-]*:\/\/[^\s/@:]+):[^\s/@]+@/gi, "$1:***@")

/**
 * Every secret among a command's flags: redacted values (tokens, secrets), token ids, and
 * the passwords of URLs (a PostgreSQL snapshot or journal, a REST URL with user-info).
 */
const secretsOf = (value: unknown, key = "", depth = 0): Array<string> => {
  if (depth > 4 || value === null || value === undefined) return []
  if (Redacted.isRedacted(value)) return [String(Redacted.value(value))]
  if (Option.isOption(value)) return Option.isSome(value) ? secretsOf(value.value, key, depth + 1) : []
  if (typeof value === "string") {
    if (key === "tokenId") return [value]
    try {
      const password = decodeURIComponent(new URL(value).password)
      return password === "" ? [] : [password]
    } catch {
      return []
    }
  }
  if (Array.isArray(value)) return value.flatMap((v) => secretsOf(v, key, depth + 1))
  if (typeof value === "object") return Object.entries(value).flatMap(([k, v]) => secretsOf(v, k, depth + 1))
  return []
}

/** A line as it may leave the machine: no credential of `flags`, none that looks like one, one line. */
export const scrubbed = (line: string, flags: unknown): string => {
  for (const secret of secretsOf(flags)) registerSecret(secret)
  return printable(redact(scrubUrls(line)).replace(/\s*\n\s*/g, " "))
}

/** The URL of one outcome: `URL/start`, `URL`, `URL/fail` (before any query string). */
const urlOf = (base: URL, outcome: Outcome): URL => {
  const url = new URL(base.href)
  url.username = ""
  url.password = ""
  if (outcome !== "success") url.pathname = `${url.pathname.replace(/\/+$/, "")}/${outcome}`
  return url
}

/** Sends one ping; a failure is a warning, never an error. */
const ping = (base: URL, outcome: Outcome, body: string): Effect.Effect<void> =>
  Effect.promise(async () => {
    const headers: Record<string, string> = {
      "content-type": "text/plain; charset=utf-8",
      "user-agent": `worksync/${VERSION}`
    }
    // A monitor of one's own behind basic auth: its credentials, given in its URL.
    if (base.username !== "" || base.password !== "") {
      const user = decodeURIComponent(base.username)
      const password = decodeURIComponent(base.password)
      headers.authorization = `Basic ${Buffer.from(`${user}:${password}`).toString("base64")}`
    }
    let problem: string | undefined
    try {
      const res = await fetch(urlOf(base, outcome), { method: "POST", headers, body, signal: AbortSignal.timeout(timeoutMs()) })
      await res.body?.cancel()
      if (!res.ok) problem = `HTTP ${res.status}`
    } catch (e) {
      const error = e as { name?: string; cause?: { code?: string }; message?: string }
      problem = error.name === "TimeoutError"
        ? `no answer within ${timeoutMs() / 1000} s`
        : error.cause?.code ?? error.message ?? String(e)
    }
    if (problem !== undefined) {
      process.stderr.write(
        `worksync: warning: the ${outcome} notification to ${base.host} was not delivered (${printable(problem)}); the run goes on as if it had been\n`
      )
    }
  })

/** The one line a failed command ends with (what exit.ts prints), for the `fail` ping. */
const failureLine = (cause: Cause.Cause<unknown>): string => {
  if (Cause.hasInterruptsOnly(cause)) return "interrupted"
  const failure = Cause.findErrorOption(cause)
  if (Option.isNone(failure)) {
    const defect = Cause.squash(cause)
    return `internal error: ${defect instanceof Error ? defect.message : String(defect)}`
  }
  const e = failure.value
  if (e instanceof CliExit) return e.message
  if (typeof e === "object" && e !== null && "message" in e) return String((e as { message: unknown }).message)
  return String(e)
}

/** `--notify URL` checked: an http(s) URL, or a usage error (exit 64) before anything is done. */
export const notifyUrl = (value: string): Effect.Effect<URL, CliExit> =>
  Effect.suspend(() => {
    let url: URL | undefined
    try {
      url = new URL(value.trim())
    } catch {
      url = undefined
    }
    if (url === undefined || (url.protocol !== "http:" && url.protocol !== "https:")) {
      return Effect.fail(usageError(`--notify ${scrubUrls(value)}: not an http(s) URL (e.g. https://hc-ping.com/<uuid>)`))
    }
    return Effect.succeed(url)
  })

/**
 * Runs `work` between notifications: start before it, success (with `successLine`'s
 * summary) or fail (with the failure's one line) after it. Without `--notify` (flag,
 * profile key `notifyUrl`, env `WORKSYNC_NOTIFY_URL`), `work` runs alone.
 */
export const withNotify = <A>(command: string, flags: NotifyFlags, successLine?: (a: A) => string) =>
<E, R>(work: Effect.Effect<A, E, R>): Effect.Effect<A, E | CliExit, R> => {
  const given = Option.filter(flags.notify, (u) => u.trim() !== "")
  if (Option.isNone(given)) return work
  return Effect.flatMap(notifyUrl(given.value), (url) =>
    Effect.andThen(
      ping(url, "start", `worksync ${command} started`),
      work.pipe(
        Effect.onExit((exit) =>
          Exit.isSuccess(exit)
            ? ping(url, "success", scrubbed(successLine?.(exit.value) ?? `worksync ${command}: done`, flags))
            : ping(url, "fail", scrubbed(failureLine(exit.cause), flags))
        )
      )
    ))
}
