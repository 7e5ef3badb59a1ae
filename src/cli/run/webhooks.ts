/**
 * `worksync webhooks ...`: the work behind the definitions in ../commands/webhooks.ts.
 *
 * The signing secret is read from the `createWebhook` answer only and written to stdout
 * only, by `create`; every other output is built from `publicView`, which has no secret
 * field, so a secret a service sent on another read could not leak through it either.
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Predicate from "effect/Predicate"
import { describeError } from "../../client/errors.ts"
import { GraphqlClient, type GraphqlClientApi } from "../../client/graphql-client.ts"
import { WEBHOOK_EVENTS, WEBHOOK_HEALTH_CHECK, type Webhook, type WebhookEvent } from "../../schema/webhooks.ts"
import type { CreateFlags, IdFlags, ListFlags, UpdateFlags } from "../commands/webhooks.ts"
import { type ConnectionFlags, verbosityOf } from "../common-options.ts"
import { checkConfigFile, clientLayerFromFlags, nextStepSuffix, shownUrl } from "../connection.ts"
import { CliExit, ExitCode, usageError } from "../exit.ts"
import { logLine, printable, printJson } from "../output.ts"

/** A webhook as the CLI shows it: never with its secret. */
export interface PublicWebhook {
  readonly id: string
  readonly url: string
  readonly events: ReadonlyArray<string>
  readonly workspaces: ReadonlyArray<string>
  readonly enabled: boolean
  readonly status: string | null
}

export const publicView = (w: Webhook): PublicWebhook => ({
  id: w.id,
  url: w.url,
  // The top-level fields and `metadata` carry the same scope; either may be null.
  events: [...(w.events ?? w.metadata?.events ?? [])],
  workspaces: [...(w.projectIds ?? w.metadata?.projectIds ?? [])],
  // `enabled` is nullable in the schema; a webhook the service reports HEALTHY delivers.
  enabled: w.enabled ?? w.status === "HEALTHY",
  status: w.status ?? null
})


const checkUrl = (url: string): Effect.Effect<string, CliExit> => {
  const trimmed = url.trim()
  try {
    const parsed = new URL(trimmed)
    if (parsed.protocol === "http:" || parsed.protocol === "https:") return Effect.succeed(trimmed)
  } catch {
    // reported below
  }
  return Effect.fail(usageError(`--url ${printable(shownUrl(trimmed))}: not an http(s) URL`))
}

const KNOWN_EVENTS: ReadonlySet<string> = new Set(WEBHOOK_EVENTS)

/** The `--event` values as WebhookEvents (case does not matter), or a usage error naming the first unknown one. */
const checkEvents = (given: ReadonlyArray<string>): Effect.Effect<Array<WebhookEvent>, CliExit> => {
  const events: Array<WebhookEvent> = []
  for (const raw of given) {
    const name = raw.trim().toUpperCase()
    if (name === WEBHOOK_HEALTH_CHECK) {
      return Effect.fail(usageError(`--event ${name}: it is delivered when a webhook is re-enabled and cannot be subscribed to`))
    }
    if (!KNOWN_EVENTS.has(name)) {
      return Effect.fail(usageError(`--event ${printable(raw)}: not a webhook event; the events are ${WEBHOOK_EVENTS.join(", ")}`))
    }
    if (!events.includes(name as WebhookEvent)) events.push(name as WebhookEvent)
  }
  return Effect.succeed(events)
}

const checkId = (id: string): Effect.Effect<string, CliExit> =>
  id.trim() === "" ? Effect.fail(usageError("the webhook ID is empty: see worksync webhooks list")) : Effect.succeed(id.trim())

const codeOf = (e: unknown): string | undefined =>
  Predicate.isTagged(e, "GraphqlError") ? String((e as unknown as { code: unknown }).code) : undefined

/** The service's answer naming a webhook that does not exist (or is not the caller's). */
const isUnknownWebhook = (e: unknown): boolean => {
  const code = codeOf(e)
  return code === "WEBHOOK_NOT_FOUND" || code === "NOT_FOUND"
}

const notFound = (id: string) =>
  new CliExit({ code: ExitCode.failed, message: `webhook ${printable(id)}: not found among your webhooks (see worksync webhooks list)` })

const failed = (sub: string, e: unknown) =>
  new CliExit({ code: ExitCode.failed, message: `webhooks ${sub} failed: ${describeError(e)}${nextStepSuffix(e)}` })

/** Runs `use` with the GraphQL client of the connection flags; failures become one line. */
const withGraphql = <A>(
  sub: string,
  flags: ConnectionFlags,
  use: (gql: GraphqlClientApi) => Effect.Effect<A, unknown>
): Effect.Effect<A, unknown> =>
  Effect.gen(function*() {
    const layer = yield* clientLayerFromFlags(flags, { app: true })
    return yield* Effect.flatMap(GraphqlClient, use).pipe(
      Effect.provide(layer),
      Effect.catch((e) => Effect.fail(e instanceof CliExit ? e : failed(sub, e)))
    )
  })

/**
 * Maps a failure of an operation on webhook `id`: the documents do not show the error
 * codes of the webhook operations, so when the code is not a known "not found" one, a
 * service error is checked against the caller's list before it is reported as is.
 */
const onWebhook = <A>(gql: GraphqlClientApi, id: string, effect: Effect.Effect<A, unknown>): Effect.Effect<A, unknown> =>
  Effect.catch(effect, (e) => {
    if (isUnknownWebhook(e)) return Effect.fail(notFound(id))
    if (codeOf(e) === undefined) return Effect.fail(e)
    return gql.webhooks().pipe(
      Effect.matchEffect({
        onFailure: () => Effect.fail(e),
        onSuccess: (page) => Effect.fail(page.items.some((w) => w.id === id) ? e : notFound(id))
      })
    )
  })

/** The webhook after a change whose answer was not shown as one (the alt reading's Boolean). */
const readBack = (gql: GraphqlClientApi, sub: string, id: string, answer: Option.Option<Webhook>) =>
  Option.match(answer, {
    onSome: (w) => Effect.succeed(w),
    onNone: () =>
      gql.webhook(id).pipe(
        Effect.flatMap(
          Option.match({
            onSome: (w) => Effect.succeed(w),
            onNone: () =>
              Effect.flatMap(gql.webhooks(), (page) => {
                const found = page.items.find((w) => w.id === id)
                return found !== undefined
                  ? Effect.succeed(found)
                  : Effect.fail(new CliExit({ code: ExitCode.failed, message: `webhooks ${sub}: done, but webhook ${printable(id)} could not be read back` }))
              })
          })
        )
      )
  })

/** A service error about the given workspaces (unknown, or in another organization) is a bad invocation. */
const workspaceRefused = (workspaces: ReadonlyArray<string>) => (e: unknown): Effect.Effect<never, unknown> => {
  const code = codeOf(e)
  if (workspaces.length > 0 && (code === "PROJECT_NOT_FOUND" || code === "FORBIDDEN")) {
    const message = (e as { serverMessage?: unknown }).serverMessage
    return Effect.fail(usageError(`--workspace ${workspaces.map(printable).join(", ")}: ${printable(describeError(message))}`))
  }
  if (code === "BAD_USER_INPUT") {
    return Effect.fail(usageError(`the service refused the input: ${printable(describeError((e as { serverMessage?: unknown }).serverMessage))}`))
  }
  return Effect.fail(e)
}

const describeScope = (items: ReadonlyArray<string>, all: string): string => (items.length === 0 ? all : items.join(","))

const table = (rows: ReadonlyArray<PublicWebhook>): string => {
  const header = ["ID", "ENABLED", "STATUS", "URL", "EVENTS", "WORKSPACES"]
  const cells = rows.map((w) =>
    [w.id, w.enabled ? "yes" : "no", w.status ?? "-", w.url, describeScope(w.events, "all"), describeScope(w.workspaces, "all")].map(
      printable
    )
  )
  const widths = header.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i]!.length)))
  return [header, ...cells].map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]!))).join("  ")).join("\n") + "\n"
}

const summaryOf = (w: PublicWebhook): string =>
  `${printable(w.id)} ${w.enabled ? "enabled" : "disabled"}${w.status === null ? "" : `, ${w.status}`}, ${printable(w.url)}`

export const listRun = (flags: ListFlags) =>
  Effect.gen(function*() {
    const verbosity = verbosityOf(flags)
    yield* checkConfigFile
    const page = yield* withGraphql("list", flags, (gql) => gql.webhooks())
    const rows = page.items.map(publicView)
    if (flags.json) return yield* printJson(rows)
    if (rows.length === 0) return yield* logLine(verbosity, "webhooks: you have no webhook")
    yield* Effect.sync(() => process.stdout.write(table(rows)))
  })

export const createRun = (flags: CreateFlags) =>
  Effect.gen(function*() {
    const verbosity = verbosityOf(flags)
    yield* checkConfigFile
    const given = yield* Option.match(flags.url, {
      onNone: () => Effect.fail(usageError("webhooks create: missing --url: the http(s) URL the deliveries are POSTed to")),
      onSome: Effect.succeed
    })
    const url = yield* checkUrl(given)
    const events = yield* checkEvents(flags.event)
    // The service counts webhooks per organization, so creating one needs it named.
    if (Option.isNone(flags.org)) {
      return yield* Effect.fail(usageError("webhooks create: missing the organization: pass --org, set WORKSYNC_ORG, or add org to a profile"))
    }
    const workspaces = flags.workspace.map((w) => w.trim()).filter((w) => w !== "")
    const answer = yield* withGraphql("create", flags, (gql) =>
      gql.createWebhook({
        url,
        ...(events.length > 0 ? { events } : {}),
        ...(workspaces.length > 0 ? { projectIds: workspaces } : {})
      }).pipe(Effect.catch(workspaceRefused(workspaces))))
    if (Option.isNone(answer)) {
      return yield* Effect.fail(
        new CliExit({
          code: ExitCode.failed,
          message: "webhooks create: the service's answer is not a webhook, so no secret can be shown; " +
            "a webhook may have been created: check worksync webhooks list and delete it"
        })
      )
    }
    const created = answer.value
    const view = publicView(created)
    if (created.secret === null || created.secret === "") {
      return yield* Effect.fail(
        new CliExit({
          code: ExitCode.failed,
          message: `webhooks create: webhook ${printable(view.id)} was created but the service returned no secret; delete it with worksync webhooks delete ${printable(view.id)}`
        })
      )
    }
    const secret = created.secret
    if (flags.json) {
      yield* printJson({ id: view.id, url: view.url, events: view.events, workspaces: view.workspaces, enabled: view.enabled, secret })
    } else {
      yield* Effect.sync(() => process.stdout.write(`id: ${printable(view.id)}\nsecret: ${printable(secret)}\n`))
    }
    yield* logLine(verbosity, `webhooks: created ${summaryOf(view)}; store the secret now: it is not shown again`)
  })

export const updateRun = (flags: UpdateFlags) =>
  Effect.gen(function*() {
    const verbosity = verbosityOf(flags)
    yield* checkConfigFile
    const id = yield* checkId(flags.id)
    if (flags.enable && flags.disable) return yield* Effect.fail(usageError("webhooks update: --enable and --disable exclude each other"))
    const url = Option.isSome(flags.url) ? yield* checkUrl(flags.url.value) : undefined
    const events = yield* checkEvents(flags.event)
    const workspaces = flags.workspace.map((w) => w.trim()).filter((w) => w !== "")
    const enabled = flags.enable ? true : flags.disable ? false : undefined
    if (url === undefined && events.length === 0 && workspaces.length === 0 && enabled === undefined) {
      return yield* Effect.fail(usageError("webhooks update: nothing to change: pass --url, --event, --workspace, --enable or --disable"))
    }
    const updated = yield* withGraphql("update", flags, (gql) =>
      onWebhook(
        gql,
        id,
        gql.updateWebhook({
          id,
          ...(url !== undefined ? { url } : {}),
          ...(events.length > 0 ? { events } : {}),
          ...(workspaces.length > 0 ? { projectIds: workspaces } : {}),
          ...(enabled !== undefined ? { enabled } : {})
        }).pipe(Effect.catch(workspaceRefused(workspaces)))
      ).pipe(Effect.flatMap((answer) => readBack(gql, "update", id, answer))))
    const view = publicView(updated)
    if (flags.json) yield* printJson(view)
    yield* logLine(verbosity, `webhooks: updated ${summaryOf(view)}`)
  })

export const disableRun = (flags: IdFlags) =>
  Effect.gen(function*() {
    const verbosity = verbosityOf(flags)
    yield* checkConfigFile
    const id = yield* checkId(flags.id)
    const disabled = yield* withGraphql("disable", flags, (gql) =>
      onWebhook(gql, id, gql.disableWebhook(id)).pipe(Effect.flatMap((answer) => readBack(gql, "disable", id, answer))))
    const view = publicView(disabled)
    if (flags.json) yield* printJson(view)
    yield* logLine(verbosity, `webhooks: disabled ${summaryOf(view)}`)
  })

export const deleteRun = (flags: IdFlags) =>
  Effect.gen(function*() {
    const verbosity = verbosityOf(flags)
    yield* checkConfigFile
    const id = yield* checkId(flags.id)
    const deleted = yield* withGraphql("delete", flags, (gql) => onWebhook(gql, id, gql.deleteWebhook(id)))
    if (!deleted) {
      return yield* Effect.fail(new CliExit({ code: ExitCode.failed, message: `webhooks delete: the service answered false: webhook ${printable(id)} was not deleted` }))
    }
    if (flags.json) yield* printJson({ id, deleted: true })
    yield* logLine(verbosity, `webhooks: deleted ${printable(id)}`)
  })
