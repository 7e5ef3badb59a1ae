/**
 * The service side of `worksync doctor`, each check after the ones it needs:
 * - the REST and GraphQL endpoints answer (`GET {rest}/v1/openapi.json`, documented as
 *   published; `POST {base}/graphql` without credentials: any answer but a 404 is an
 *   interface that listens);
 * - the clock: the first answer's Date header against this machine's time;
 * - the REST token and the organization: `list-workspaces` with both. The documents do
 *   not say when a refusal is 401 rather than 403 (R-REST-ERR-03), so a 401 with an
 *   organization is asked again without one: refused again, the token is; accepted, the
 *   organization is what the token may not act in;
 * - the GraphQL token id and secret: `currentUser`;
 * - the caller's level in each workspace the token lists (levels.ts), read as migrate
 *   reads it: the workspace's members with their `projectLevel`, the caller among them.
 * Calls are retried little and wait 10 s at most: a doctor answers quickly. Nothing a
 * check prints holds a secret: URLs lose any user-info, messages pass through `redact`.
 */
import * as Effect from "effect/Effect"
import * as HttpClientRequest from "effect/http/HttpClientRequest"
import * as Option from "effect/Option"
import * as Predicate from "effect/Predicate"
import * as Redacted from "effect/Redacted"
import { Connection, redact, registerSecret } from "../../client/config.ts"
import { describeError } from "../../client/errors.ts"
import { GraphqlClient } from "../../client/graphql-client.ts"
import { clientLayer } from "../../client/layer.ts"
import { Pipeline } from "../../client/pipeline.ts"
import { RestClient } from "../../client/rest-client.ts"
import { type Answer, exchange } from "../../client/transport.ts"
import type { Workspace } from "../../schema/workspaces.ts"
import { stringOf } from "../../schema/open.ts"
import { membersOf } from "../../sync/migrate/people.ts"
import type { ConnectionFlags } from "../common-options.ts"
import { nextStepSuffix, shownUrl } from "../connection.ts"
import { type Check, fail, pass } from "./check.ts"
import { levelVerdict } from "./levels.ts"

/** How far this machine's clock may be from the service's before doctor says so. */
export const MAX_CLOCK_SKEW_S = 30

const TIMEOUT_MS = 10_000

const HOW_TO_CONNECT = "(a flag, a profile key of the config file, or WORKSYNC_*: worksync help connection)"

/** The URL as given when it is an http(s) one; else the check that says what is wrong. */
const urlOf = (name: string, flag: string, env: string, value: Option.Option<string>): { readonly url: string } | { readonly check: Check } => {
  if (Option.isNone(value)) return { check: fail(name, `no URL: pass --${flag} or set ${env} ${HOW_TO_CONNECT}`) }
  try {
    const url = new URL(value.value)
    if (url.protocol === "http:" || url.protocol === "https:") return { url: value.value }
  } catch {
    // reported below
  }
  return { check: fail(name, `--${flag} ${shownUrl(value.value)} is not an http(s) URL`) }
}

interface Timed {
  readonly answer: Answer
  /** This machine's time halfway through the exchange. */
  readonly localMs: number
}

/** One plain request: its answer with the local time it came at, or why none came. */
const probe = (request: HttpClientRequest.HttpClientRequest, operation: string) =>
  Effect.gen(function*() {
    const { bare } = yield* Pipeline
    const started = Date.now()
    const result = yield* Effect.result(exchange(bare, request, operation, TIMEOUT_MS))
    const localMs = (started + Date.now()) / 2
    return result._tag === "Success" ? { timed: { answer: result.success, localMs } satisfies Timed } : { error: result.failure }
  })

/** An endpoint check from its probe: any answer but a 404 means the interface is there. */
const endpointCheck = (
  name: string,
  url: string,
  flag: string,
  what: string,
  outcome: { readonly timed?: Timed; readonly error?: unknown }
): Check => {
  if (outcome.timed === undefined) {
    return fail(name, `${shownUrl(url)} cannot be reached (${describeError(outcome.error)}): check --${flag} and the network`)
  }
  const status = outcome.timed.answer.status
  return status === 404
    ? fail(name, `${shownUrl(url)} answers, but not as the service's ${what} (HTTP 404): check --${flag}`)
    : pass(name, `${shownUrl(url)} answers (HTTP ${status})`)
}

/** An endpoint's check, and the answer it got (for the clock), or its URL's problem. */
const endpoint = (
  target: { readonly url: string } | { readonly check: Check },
  name: string,
  url: string,
  flag: string,
  what: string,
  operation: string,
  request: () => HttpClientRequest.HttpClientRequest
) =>
  "check" in target
    ? Effect.succeed({ check: target.check, timed: undefined })
    : Effect.map(probe(request(), operation), (outcome) => ({
      check: endpointCheck(name, url, flag, what, outcome),
      timed: outcome.timed
    }))

const seconds = (ms: number) => `${Math.round(Math.abs(ms) / 1000)} s`

/** The clock check from an answer's Date header (which has whole seconds). */
export const clockCheck = (timed: Timed | undefined): Check => {
  const header = timed?.answer.headers["date"]
  const serviceMs = header === undefined ? Number.NaN : Date.parse(header)
  if (timed === undefined || Number.isNaN(serviceMs)) return pass("clock", "not checked: the service sent no Date header")
  // The header drops the fraction of its second: its middle is the best guess.
  const skew = timed.localMs - (serviceMs + 500)
  if (Math.abs(skew) <= MAX_CLOCK_SKEW_S * 1000) return pass("clock", `within ${seconds(skew)} of the service's (its Date header)`)
  return fail(
    "clock",
    `this machine's clock is ${seconds(skew)} ${skew > 0 ? "ahead of" : "behind"} the service's (its Date header; more than ${MAX_CLOCK_SKEW_S} s): a wait the service asks for as a date (Retry-After) and the times of runs would be off; set the clock (NTP)`
  )
}

const nameOf = (w: Workspace): string => {
  const name = stringOf(w.name) ?? stringOf(w.slug)
  return name === undefined ? w.id : `${name} (${w.id})`
}

const refused = (e: unknown): boolean =>
  Predicate.isTagged(e, "Unauthorized") || (Predicate.isTagged(e, "GraphqlError") && (e as { code?: unknown }).code === "UNAUTHENTICATED")

/** The REST token and the organization, from list-workspaces; the workspaces when both hold. */
const tokenAndOrg = (flags: ConnectionFlags, input: Parameters<typeof clientLayer>[0]) =>
  Effect.gen(function*() {
    const rest = yield* RestClient
    const first = yield* Effect.result(rest.listWorkspaces())
    if (first._tag === "Success") {
      const org = Option.match(flags.org, {
        onNone: () => fail("organization", `none given: pass --org or set WORKSYNC_ORG ${HOW_TO_CONNECT}; uploads, copy-files and migrate need it`),
        onSome: (org) => pass("organization", `${org}: ${first.success.items.length} workspace(s) for this token`)
      })
      return { checks: [pass("token", "the REST token is accepted"), org], workspaces: org.ok ? first.success.items : [] }
    }
    const e = first.failure
    const orgRef = Option.getOrElse(flags.org, () => "")
    if (refused(e) && Option.isSome(flags.org)) {
      // Without the organization: a refusal then is the token's.
      const again = yield* Effect.result(
        Effect.flatMap(RestClient, (r) => r.listWorkspaces()).pipe(Effect.provide(clientLayer({ ...input, org: Option.none() })))
      )
      if (again._tag === "Success" || !refused(again.failure)) {
        return {
          checks: [
            pass("token", "the REST token is accepted"),
            fail("organization", `${orgRef}: this token may not act in it (${describeError(e)}): check --org (an id or slug of an organization the token's user belongs to)`)
          ],
          workspaces: []
        }
      }
    }
    if (refused(e)) {
      return { checks: [fail("token", `the REST token is refused (${describeError(e)}): check --token ${HOW_TO_CONNECT}`)], workspaces: [] }
    }
    if (Predicate.isTagged(e, "Forbidden") || Predicate.isTagged(e, "NotFound")) {
      const banned = Predicate.isTagged(e, "Forbidden") && e.code === "COMPANY_BANNED"
      return {
        checks: [
          pass("token", "the REST token is accepted"),
          fail(
            "organization",
            banned
              ? `${orgRef}: the organization account is suspended (${describeError(e)}); its owner must settle it with the service`
              : `${orgRef}: not found or not open to this token (${describeError(e)}): check --org`
          )
        ],
        workspaces: []
      }
    }
    return { checks: [fail("token", `not checked: list-workspaces failed (${describeError(e)}${nextStepSuffix(e)})`)], workspaces: [] }
  })

/** The GraphQL token and the caller's level in each workspace. */
const appChecks = (workspaces: ReadonlyArray<Workspace>) =>
  Effect.gen(function*() {
    const graphql = yield* GraphqlClient
    const me = yield* Effect.result(graphql.currentUser())
    if (me._tag === "Failure") {
      const e = me.failure
      return [
        refused(e)
          ? fail("graphql token", `the token id and secret are refused (${describeError(e)}): check --token-id and --token-secret ${HOW_TO_CONNECT}`)
          : fail("graphql token", `not checked: currentUser failed (${describeError(e)}${nextStepSuffix(e)})`)
      ]
    }
    const user = me.success
    const checks: Array<Check> = [pass("graphql token", `the token id and secret are accepted (user ${user.email})`)]
    for (const w of workspaces) {
      const members = yield* Effect.result(membersOf(graphql, w.id))
      if (members._tag === "Failure") {
        checks.push(fail(`workspace ${nameOf(w)}`, `the caller's level could not be read (${describeError(members.failure)})`))
        continue
      }
      const mine = members.success.find((m) => m.id === user.id || m.email.toLowerCase() === user.email.toLowerCase())
      const level = mine?.projectLevel
      if (level === undefined || level === null) {
        checks.push(pass(`workspace ${nameOf(w)}`, "listed, so backups read it; the service does not show the caller's level there"))
        continue
      }
      const verdict = levelVerdict(level)
      checks.push({ name: `workspace ${nameOf(w)}`, ...verdict })
    }
    return checks
  })

/** Every service check the connection flags allow, in the order above. */
export const serviceChecks = (flags: ConnectionFlags): Effect.Effect<ReadonlyArray<Check>> =>
  Effect.gen(function*() {
    for (const secret of [flags.token, flags.tokenSecret]) Option.map(secret, (s) => registerSecret(Redacted.value(s)))
    Option.map(flags.tokenId, registerSecret)
    const checks: Array<Check> = []
    const rest = urlOf("rest", "rest-url", "WORKSYNC_REST_URL", flags.restUrl)
    const appGiven = Option.isSome(flags.baseUrl) || Option.isSome(flags.tokenId) || Option.isSome(flags.tokenSecret)
    const app = appGiven
      ? urlOf("graphql", "base-url", "WORKSYNC_BASE_URL", flags.baseUrl)
      : { check: pass("graphql", "not configured: copy-files, migrate, mirror and webhooks need --base-url, --token-id and --token-secret") }
    const input = {
      restUrl: "url" in rest ? rest.url : "",
      baseUrl: "url" in app ? app.url : "",
      token: flags.token,
      tokenId: flags.tokenId,
      tokenSecret: flags.tokenSecret,
      org: flags.org,
      ...Option.match(flags.headerPrefix, { onNone: () => ({}), onSome: (headerPrefix) => ({ headerPrefix }) }),
      requestTimeoutMs: TIMEOUT_MS,
      retry: { maxRetries: 1, baseDelayMs: 200, capDelayMs: 1_000 }
    }
    yield* Effect.gen(function*() {
      // The URLs as the client uses them (without a trailing slash).
      const { restUrl: restBase, baseUrl: appBase } = yield* Connection
      const restProbe = yield* endpoint(rest, "rest", restBase, "rest-url", "REST interface (no /v1/openapi.json)", "GET /v1/openapi.json", () =>
        HttpClientRequest.get(`${restBase}/v1/openapi.json`))
      const appProbe = yield* endpoint(app, "graphql", appBase, "base-url", "GraphQL interface", "POST /graphql", () =>
        HttpClientRequest.post(`${appBase}/graphql`).pipe(
          HttpClientRequest.bodyText(JSON.stringify({ query: "{ __typename }" }), "application/json")
        ))
      checks.push(restProbe.check, appProbe.check)
      const timed = restProbe.timed ?? appProbe.timed
      if (timed !== undefined) checks.push(clockCheck(timed))
      let workspaces: ReadonlyArray<Workspace> = []
      if (restProbe.timed !== undefined) {
        if (Option.isNone(flags.token)) {
          checks.push(fail("token", `no REST token: pass --token or set WORKSYNC_TOKEN ${HOW_TO_CONNECT}`))
        } else {
          const found = yield* tokenAndOrg(flags, input)
          checks.push(...found.checks)
          workspaces = found.workspaces
        }
      }
      if (appProbe.timed !== undefined) {
        if (Option.isNone(flags.tokenId) || Option.isNone(flags.tokenSecret)) {
          checks.push(fail("graphql token", `missing: pass --token-id and --token-secret ${HOW_TO_CONNECT}`))
        } else {
          checks.push(...(yield* appChecks(workspaces)))
        }
      } else {
        for (const w of workspaces) {
          checks.push(pass(`workspace ${nameOf(w)}`, "listed, so backups read it; the caller's level there needs the GraphQL connection"))
        }
      }
    }).pipe(Effect.provide(clientLayer(input)))
    return checks.map((c) => ({ ...c, detail: redact(c.detail) }))
  })
