/** `worksync migrate`: the work behind the definition in ../commands/migrate.ts. */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { GraphqlClient } from "../../client/graphql-client.ts"
import type { ClientServices } from "../../client/layer.ts"
import { RestClient } from "../../client/rest-client.ts"
import { workspaceFilesFromServices } from "../../connectors/files/workspace-files.ts"
import { announcePlanned } from "../../engine/job.ts"
import { StoreBusy } from "../../store/file-lock.ts"
import { describeJournalError, openJournal } from "../../store/journal.ts"
import { isPostgresUrl } from "../../store/postgres.ts"
import { SnapshotStore } from "../../store/snapshot.ts"
import { findWorkspace } from "../../sync/backup.ts"
import { DEFAULT_MIGRATE_CONCURRENCY, fileCopyOf, MigrateError, migrate, type MigrateEnd } from "../../sync/migrate/migrate.ts"
import type { MigrationReport } from "../../sync/migrate/verify.ts"
import type { MigrateFlags } from "../commands/migrate.ts"
import { type ConnectionFlags, verbosityOf } from "../common-options.ts"
import { checkConfigFile, clientLayerFromFlags, nextStepSuffix, targetFlags } from "../connection.ts"
import { CliExit, ExitCode, registerDescriber, usageError } from "../exit.ts"
import { logLine, printJson } from "../output.ts"
import { isHelper, runCopyHelper } from "./copy-helper.ts"
import { hasOwnTarget, parseWorkspaceEnd, targetPrefix } from "./target.ts"

registerDescriber(describeJournalError)

/** Where the source is read to: beside the journal, so a rerun reads incrementally. */
/**
 * Where migrate reads the source into: beside the journal, `FILE-source.sqlite` for a
 * file, schema `NAME_source` in the same database for a PostgreSQL journal.
 */
export const sourceSnapshotFile = (journal: string): string => {
  if (!isPostgresUrl(journal)) return `${journal.replace(/\.sqlite$/, "")}-source.sqlite`
  const u = new URL(journal)
  u.searchParams.set("schema", `${u.searchParams.get("schema") ?? "public"}_source`)
  return u.toString()
}

const messageOf = (e: unknown): string =>
  typeof e === "object" && e !== null && "message" in e ? String((e as { message: unknown }).message) : String(e)

/** One end's clients and file port, with its workspace resolved (id or slug). */
const endOf = (layer: Layer.Layer<ClientServices>, flag: string, name: string) =>
  Effect.gen(function*() {
    const ctx: Context.Context<ClientServices> = yield* Layer.build(layer)
    const ws = yield* findWorkspace(name).pipe(
      Effect.provide(ctx),
      Effect.catchTag("WorkspaceNotFound", (e) => Effect.fail(usageError(`${flag} workspace:${name}: ${e.message}`)))
    )
    return {
      rest: yield* Effect.provide(RestClient, ctx),
      graphql: yield* Effect.provide(GraphqlClient, ctx),
      files: yield* Effect.provide(workspaceFilesFromServices, ctx),
      workspaceId: ws.id
    } satisfies MigrateEnd
  })

const line = (what: string, t: { source: number; created?: number; copied?: number; skipped: number; failed: number }) =>
  `${what} ${t.source} (${t.created ?? t.copied ?? 0} new, ${t.skipped} already there, ${t.failed} failed)`

const summary = (r: MigrationReport): string =>
  [
    line("lists", r.lists),
    line("records", r.records),
    line("files", r.files),
    line("comments", r.comments),
    line("file values", r.customFieldFiles),
    line("roles", r.roles),
    `people ${r.people.source} (${r.people.invited} invited, ${r.people.alreadyMember} already members, ${r.people.refused.length} refused)`
  ].join("; ")

const titles = (ts: ReadonlyArray<string>) => ts.map((t) => JSON.stringify(t)).join(", ")

/** Per list, whether its records are in the source's order on the target. */
const orderLine = (r: MigrationReport): string =>
  [
    ...(r.lists.orderKept.length > 0 ? [`kept in ${titles(r.lists.orderKept)}`] : []),
    ...(r.lists.orderNotKept.length > 0 ? [`not kept in ${titles(r.lists.orderNotKept)}`] : []),
    ...(r.lists.notMade.length > 0 ? [`lists not made: ${titles(r.lists.notMade)}`] : [])
  ].join("; ") || "no lists"

export const migrateRun = (flags: MigrateFlags) =>
  Effect.scoped(
    Effect.gen(function*() {
      const verbosity = verbosityOf(flags)
      yield* checkConfigFile
      const from = yield* parseWorkspaceEnd("--from", flags.from)
      const to = yield* parseWorkspaceEnd("--to", flags.to)
      const sourceFlags: ConnectionFlags = flags
      const source = yield* endOf(yield* clientLayerFromFlags(sourceFlags, { rest: true, app: true }), "--from", from)
      const target = hasOwnTarget(flags.to_)
        ? yield* endOf(yield* clientLayerFromFlags(targetFlags(sourceFlags, flags.to_), { rest: true, app: true }, targetPrefix(flags.to_)), "--to", to)
        : { ...source, workspaceId: (yield* endOf(yield* clientLayerFromFlags(sourceFlags, { rest: true, app: true }), "--to", to)).workspaceId }
      if (source.workspaceId === target.workspaceId && !hasOwnTarget(flags.to_)) {
        return yield* Effect.fail(usageError(`--from and --to name the same workspace (${source.workspaceId}): migrate into another one`))
      }
      const helper = isHelper()
      const journal = yield* openJournal(flags.journal, { helper }).pipe(
        Effect.catch((e) => Effect.fail(e instanceof StoreBusy ? new CliExit({ code: ExitCode.failed, message: e.message }) : e))
      )
      // A helper of a spread migrate takes files of its file step, nothing else.
      if (helper) return yield* runCopyHelper("migrate", fileCopyOf(source, target, journal, DEFAULT_MIGRATE_CONCURRENCY), verbosity)
      // Open for the whole command (the layer's scope is the command's).
      const store = Context.get(yield* Layer.build(SnapshotStore.layer(sourceSnapshotFile(flags.journal))), SnapshotStore)
      const report = yield* migrate({
        source,
        target,
        journal,
        store,
        people: flags.people,
        attribution: !flags.noAttribution,
        dryRun: flags.dryRun,
        onStep: (step) => Effect.runSync(logLine(verbosity, `migrate: ${step}`, "detail")),
        // The file step's plan is stored: a worker may start helpers now.
        onFilesPlanned: announcePlanned
      }).pipe(
        Effect.catch((e): Effect.Effect<never, unknown> => {
          if (e instanceof CliExit) return Effect.fail(e)
          if (e instanceof MigrateError) return Effect.fail(usageError(`migrate: ${e.message}`))
          if (e instanceof StoreBusy) return Effect.fail(new CliExit({ code: ExitCode.failed, message: e.message }))
          return Effect.fail(
            new CliExit({
              code: ExitCode.failed,
              message: `migrate failed: ${messageOf(e)}${nextStepSuffix(e)}; rerun with the same --journal to resume`
            })
          )
        })
      )
      if (flags.json) {
        const { dryRun: _, mismatches, ...rest } = report
        yield* printJson({ ...rest, ...(mismatches.length > 0 ? { mismatches } : {}) })
      }
      for (const n of report.notCarried) yield* logLine(verbosity, `migrate: not carried: ${n.what}${n.count > 0 ? ` (${n.count})` : ""}: ${n.why}`)
      if (!flags.dryRun) yield* logLine(verbosity, `migrate: record order: ${orderLine(report)}`)
      for (const r of report.roles.refused) yield* logLine(verbosity, `migrate: refused: role "${r.name}": ${r.code}`)
      for (const r of report.people.refused) yield* logLine(verbosity, `migrate: refused: ${r.email}: ${r.code}${r.limit !== undefined ? ` (${r.current} of ${r.limit} seats)` : ""}`)
      for (const m of report.mismatches) yield* logLine(verbosity, `migrate: verification: ${m}`)
      if (flags.dryRun) {
        yield* logLine(verbosity, `migrate (dry run): ${summary(report)}; nothing was sent`)
        return
      }
      yield* logLine(verbosity, `migrate: ${summary(report)}; ${report.verified ? "verified" : "NOT verified"}`)
      const failed = report.lists.failed + report.records.failed + report.files.failed + report.comments.failed +
        report.customFieldFiles.failed + report.roles.failed
      if (failed > 0 || !report.verified) {
        return yield* Effect.fail(
          new CliExit({
            code: ExitCode.failed,
            message: failed > 0
              ? `migrate: ${failed} item(s) failed; rerun with the same --journal to retry them`
              : `migrate: verification found ${report.mismatches.length} difference(s) (first: ${report.mismatches[0]}); rerun with the same --journal`
          })
        )
      }
      const refusals = [
        ...report.people.refused.map((r) => `invitation of ${r.email}: ${r.code}`),
        ...report.roles.refused.map((r) => `role "${r.name}": ${r.code}`)
      ]
      if (refusals.length > 0) {
        return yield* Effect.fail(
          new CliExit({
            code: ExitCode.rejected,
            message: `migrate: finished; the service refused ${refusals.length} item(s) (first: ${refusals[0]}); the report lists them`
          })
        )
      }
    })
  )
