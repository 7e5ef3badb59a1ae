/** `worksync migrate`: the work behind the definition in ../commands/migrate.ts. */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { GraphqlClient } from "../../client/graphql-client.ts"
import type { ClientServices } from "../../client/layer.ts"
import { RestClient } from "../../client/rest-client.ts"
import { workspaceFilesFromServices } from "../../connectors/files/workspace-files.ts"
import { announcePlanned } from "../../engine/job.ts"
import { StoreBusy } from "../../store/file-lock.ts"
import { describeJournalError, openJournal } from "../../store/journal.ts"
import { planCopiesOnPostgres } from "../../store/postgres-backends.ts"
import { isPostgresUrl } from "../../store/postgres-url.ts"
import { SnapshotStore } from "../../store/snapshot.ts"
import { copySqliteFile } from "../../store/sqlite-copy.ts"
import { findWorkspace } from "../../sync/backup.ts"
import { DEFAULT_MIGRATE_CONCURRENCY, fileCopyOf, MigrateError, migrate, type MigrateEnd, type MigrateResult } from "../../sync/migrate/migrate.ts"
import type { MigrationReport } from "../../sync/migrate/verify.ts"
import type { MigrateFlags } from "../commands/migrate.ts"
import { type ConnectionFlags, verbosityOf } from "../common-options.ts"
import { checkConfigFile, clientLayerFromFlags, nextStepSuffix, targetFlags } from "../connection.ts"
import { CliExit, ExitCode, registerDescriber, usageError } from "../exit.ts"
import { logLine, printJson } from "../output.ts"
import { mappingLines, planLines } from "../plan-lines.ts"
import { isHelper, runCopyHelper } from "./copy-helper.ts"
import { peopleFile, titleMapFile } from "./mapping-flags.ts"
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

/**
 * `--plan`: the journal and the source snapshot copied for the command's scope (files to
 * a directory of their own, PostgreSQL schemas to schemas of their own in the same
 * database), so the plan is the run's own planning (a killed run's ops settled, the source
 * read incrementally) and neither store is written. The copies go with the scope, on
 * failure and interruption too.
 */
const planCopies = (journal: string) =>
  Effect.gen(function*() {
    if (isPostgresUrl(journal)) {
      return yield* (yield* planCopiesOnPostgres).copyPostgresPlanStores(journal, sourceSnapshotFile(journal)).pipe(
        Effect.mapError((e) => new CliExit({ code: ExitCode.failed, message: `--plan: copying ${e.file}: ${e.detail}` }))
      )
    }
    const dir = yield* Effect.acquireRelease(
      Effect.sync(() => fs.mkdtempSync(path.join(os.tmpdir(), "worksync-plan-"))),
      (d) => Effect.sync(() => fs.rmSync(d, { recursive: true, force: true }))
    )
    const copy = path.join(dir, "journal.sqlite")
    yield* Effect.try({
      try: () => {
        copySqliteFile(journal, copy)
        copySqliteFile(sourceSnapshotFile(journal), sourceSnapshotFile(copy))
      },
      catch: (e) => new CliExit({ code: ExitCode.failed, message: `--plan: reading ${journal}: ${messageOf(e)}` })
    })
    return copy
  })

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

const summary = (r: MigrateResult): string =>
  [
    line("lists", r.lists),
    line("records", r.records),
    line("files", r.files),
    line("comments", r.comments),
    line("file values", r.customFieldFiles),
    line("roles", r.roles),
    `people ${r.people.source} (${r.people.invited} invited, ${r.people.alreadyMember} already members, ${r.people.refused.length} refused)`,
    ...(r.pass > 1 ? [`pass ${r.pass}: ${r.updated} records updated, ${r.deleted} deleted`] : [])
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
      // `--people invite|skip`, or a file of people (which invites).
      const peopleMap = flags.people === "invite" || flags.people === "skip" ? undefined : yield* peopleFile(flags.people)
      const titles = yield* titleMapFile(Option.getOrUndefined(flags.titleMap))
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
      // `--plan` works on copies: the journal and the source snapshot are only read.
      const journalFile = flags.plan ? yield* planCopies(flags.journal) : flags.journal
      const journal = yield* openJournal(journalFile, { helper }).pipe(
        Effect.catch((e) => Effect.fail(e instanceof StoreBusy ? new CliExit({ code: ExitCode.failed, message: e.message }) : e))
      )
      // A helper of a spread migrate takes files of its file step, nothing else.
      if (helper) return yield* runCopyHelper("migrate", fileCopyOf(source, target, journal, DEFAULT_MIGRATE_CONCURRENCY), verbosity)
      // Open for the whole command (the layer's scope is the command's).
      const store = Context.get(yield* Layer.build(SnapshotStore.layer(sourceSnapshotFile(journalFile))), SnapshotStore)
      const report = yield* migrate({
        source,
        target,
        journal,
        store,
        people: flags.people === "skip" ? "skip" : "invite",
        peopleMap,
        titles,
        attribution: !flags.noAttribution,
        dryRun: flags.dryRun,
        plan: flags.plan,
        deleteMissing: flags.deleteMissing,
        overwriteTargetEdits: flags.overwriteTargetEdits,
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
      if (flags.plan) {
        // The contract's shape, exactly: what the run would do.
        if (flags.json) yield* printJson({ plan: report.plan })
        else if (report.plan !== undefined) for (const l of planLines(report.plan)) yield* logLine(verbosity, `migrate: ${l}`)
        return
      }
      if (flags.json) {
        const { deleted, dryRun: _, kept, mismatches, missing, plan: _plan, ...rest } = report
        yield* printJson({
          ...rest,
          // Delta passes: present only when there is one (like import-csv's).
          ...(missing > 0 ? { missing } : {}),
          ...(deleted > 0 ? { deleted } : {}),
          ...(kept.length > 0 ? { kept } : {}),
          ...(mismatches.length > 0 ? { mismatches } : {})
        })
      }
      for (const n of report.notCarried) yield* logLine(verbosity, `migrate: not carried: ${n.what}${n.count > 0 ? ` (${n.count})` : ""}: ${n.why}`)
      if (!flags.dryRun) yield* logLine(verbosity, `migrate: record order: ${orderLine(report)}`)
      for (const r of report.roles.refused) yield* logLine(verbosity, `migrate: refused: role "${r.name}": ${r.code}`)
      for (const r of report.people.refused) yield* logLine(verbosity, `migrate: refused: ${r.email}: ${r.code}${r.limit !== undefined ? ` (${r.current} of ${r.limit} seats)` : ""}`)
      for (const m of report.mismatches) yield* logLine(verbosity, `migrate: verification: ${m}`)
      if (report.missing > 0) {
        yield* logLine(verbosity, `migrate: ${report.missing} record${report.missing === 1 ? "" : "s"} gone from the source; their records stay on the target (--delete-missing deletes them)`)
      }
      for (const k of report.kept) yield* logLine(verbosity, `migrate: kept ${k.what} of source record ${k.item}: ${k.why}`)
      if (report.mappings !== undefined) for (const l of mappingLines(report.mappings)) yield* logLine(verbosity, `migrate: ${l}`)
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
