/** `worksync mirror`: the work behind the definition in ../commands/mirror.ts. */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { GraphqlClient } from "../../client/graphql-client.ts"
import { RestClient } from "../../client/rest-client.ts"
import { StoreBusy } from "../../store/file-lock.ts"
import { SnapshotStore } from "../../store/snapshot.ts"
import { findWorkspace } from "../../sync/backup.ts"
import { mirror } from "../../sync/mirror/mirror.ts"
import { mirrorSecretFile } from "../../sync/mirror/webhook.ts"
import { DEFAULT_RECONCILE_EVERY, type MirrorFlags } from "../commands/mirror.ts"
import { verbosityOf } from "../common-options.ts"
import { checkConfigFile, clientLayerFromFlags, nextStepSuffix } from "../connection.ts"
import { CliExit, ExitCode, treatInterruptAsSuccess, usageError } from "../exit.ts"
import { logLine, printJson } from "../output.ts"
import { shownLocation, snapshotFailure } from "./snapshot-failure.ts"

const messageOf = (e: unknown): string =>
  typeof e === "object" && e !== null && "message" in e ? String((e as { message: unknown }).message) : String(e)

/** `HOST:PORT` (an IPv6 host in brackets). */
const parseListen = (value: string): Effect.Effect<{ host: string; port: number }, CliExit> => {
  const m = /^(?:\[([^\]]+)\]|([^:]+)):(\d{1,5})$/.exec(value.trim())
  const port = m === null ? NaN : Number(m[3])
  return m === null || !(port >= 0 && port <= 65535)
    ? Effect.fail(usageError(`--listen ${value}: expected HOST:PORT (for example 127.0.0.1:8080)`))
    : Effect.succeed({ host: m[1] ?? m[2]!, port })
}

const checkPublicUrl = (value: string): Effect.Effect<string, CliExit> => {
  try {
    const u = new URL(value)
    if (u.protocol === "http:" || u.protocol === "https:") return Effect.succeed(value)
  } catch {
    // reported below
  }
  return Effect.fail(usageError(`--public-url ${value}: not an http(s) URL`))
}

export const mirrorRun = (flags: MirrorFlags) =>
  Effect.scoped(
    Effect.gen(function*() {
      const verbosity = verbosityOf(flags)
      yield* checkConfigFile
      const listen = yield* parseListen(flags.listen)
      const publicUrl = yield* checkPublicUrl(flags.publicUrl)
      // The webhook's secret lives in an owner-only file beside the snapshot, never in a
      // store that other machines read; a database has no "beside".
      if (mirrorSecretFile(flags.snapshot) === undefined) {
        return yield* Effect.fail(usageError(
          `--snapshot ${shownLocation(flags.snapshot)}: mirror keeps its webhook secret in a file beside the snapshot; give it a snapshot file`
        ))
      }
      const reconcileEvery = Option.getOrElse(flags.reconcileEvery, () => DEFAULT_RECONCILE_EVERY)
      if (reconcileEvery < 1) return yield* Effect.fail(usageError(`--reconcile-every ${reconcileEvery}: must be 1 second or more`))
      const layer = yield* clientLayerFromFlags(flags, { rest: true, app: true })
      const ctx = yield* Layer.build(Layer.merge(layer, SnapshotStore.layer(flags.snapshot)))
      const rest = Context.get(ctx, RestClient)
      const workspaces = yield* Effect.forEach(flags.workspace, (name) =>
        findWorkspace(name).pipe(
          Effect.provideService(RestClient, rest),
          Effect.map((w) => w.id),
          Effect.catchTag("WorkspaceNotFound", (e) => Effect.fail(usageError(`--workspace ${name}: ${e.message}`)))
        ))
      const line = (text: string) => Effect.runSync(logLine(verbosity, `mirror: ${text}`))
      yield* mirror({
        store: Context.get(ctx, SnapshotStore),
        rest,
        graphql: Context.get(ctx, GraphqlClient),
        workspaces,
        host: listen.host,
        port: listen.port,
        publicUrl,
        reconcileEveryMs: reconcileEvery * 1000,
        log: line,
        onReady: ({ runId, url }) => {
          line(`listening on ${url}; the snapshot is current as run ${runId}`)
          // From here an interruption is how the mirror is meant to stop.
          treatInterruptAsSuccess()
        },
        onEvent: (e) => {
          if (flags.json) Effect.runSync(printJson(e))
          else {
            const state = e.applied ? "" : e.queued === true ? " (queued: the record is read again)" : " (left)"
            Effect.runSync(logLine(verbosity, `mirror: ${e.event}${e.recordId !== null ? ` ${e.recordId}` : ""}${state}`, "detail"))
          }
        }
      }).pipe(
        Effect.catch((e): Effect.Effect<never, unknown> => {
          if (e instanceof CliExit) return Effect.fail(e)
          if (e instanceof StoreBusy) return Effect.fail(new CliExit({ code: ExitCode.failed, message: e.message }))
          const mapped = snapshotFailure(e, flags.snapshot)
          if (mapped !== undefined) return Effect.fail(mapped)
          return Effect.fail(new CliExit({ code: ExitCode.failed, message: `mirror failed: ${messageOf(e)}${nextStepSuffix(e)}` }))
        })
      )
    })
  )
