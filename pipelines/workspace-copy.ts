/**
 * Workspace to workspace copy, records and files, for moving between accounts:
 *
 *   1. back up the source workspace into `<state>/source.sqlite` (source account);
 *   2. restore that run into the target workspace through `<state>/records.journal.sqlite`
 *      (target account): lists and tags by title, assignees by e-mail, done / archived /
 *      colour; see src/sync/restore.ts for the limits;
 *   3. copy every CONFIRMED file of the source workspace into the target workspace
 *      through `<state>/files.journal.sqlite` (download streamed into presigned uploads).
 *
 * Reruns are incremental: the journals keep what was created, so a second run sends only
 * what changed at the source since (records) or is new (files). `--dry-run` backs up the
 * source and plans the restore without writing to the target. `--delete-missing` also
 * deletes on the target the records copied earlier whose source record is gone (off by
 * default: a deleted record cannot be brought back through the interface).
 *
 * The source account comes from `WORKSYNC_*`, the target from `WORKSYNC_TARGET_*` (each
 * unset variable falls back to the source's: the same account by default).
 *
 *   npx tsx pipelines/workspace-copy.ts --from SOURCE_WS --to TARGET_WS --state DIR [--delete-missing] [--dry-run] [--json]
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as fs from "node:fs"
import * as path from "node:path"
import { clientLayer, type ClientServices } from "../src/client/layer.ts"
import { RestClient } from "../src/client/rest-client.ts"
import { copyFiles } from "../src/connectors/files/copy.ts"
import { workspaceFilesFromServices } from "../src/connectors/files/workspace-files.ts"
import { openJournal } from "../src/store/journal.ts"
import { openSnapshot, resolveRun, SnapshotStore } from "../src/store/snapshot.ts"
import { backup } from "../src/sync/backup.ts"
import { restore, type RestoreResult } from "../src/sync/restore.ts"
import { connectionFromEnv } from "./lib/connection.ts"
import { messageOf, PipelineIncomplete, PipelineUsage } from "./lib/errors.ts"
import { isMain, required, runPipelineMain } from "./lib/main.ts"

export interface WorkspaceCopyOptions {
  readonly sourceWorkspaceId: string
  readonly targetWorkspaceId: string
  readonly stateDir: string
  readonly dryRun?: boolean | undefined
  /** Delete on the target the records copied earlier whose source record is gone. */
  readonly deleteMissing?: boolean | undefined
}

export interface WorkspaceCopyResult {
  readonly dryRun: boolean
  readonly runId: string
  readonly records: RestoreResult
  readonly files?: { readonly files: number; readonly copied: number; readonly skipped: number; readonly failed: number; readonly bytes: number }
}

const incomplete = (what: string) => (e: unknown) =>
  e instanceof PipelineUsage || e instanceof PipelineIncomplete
    ? e
    : new PipelineIncomplete({ message: `${what} incomplete: ${messageOf(e)}; rerun to resume` })

/**
 * The pipeline over two client layers (the same layer twice for one account). Each is
 * built once, so every step on one side shares its connection pool and rate limiter.
 */
export const workspaceCopy = (
  options: WorkspaceCopyOptions,
  sourceLayer: Layer.Layer<ClientServices>,
  targetLayer: Layer.Layer<ClientServices>
): Effect.Effect<WorkspaceCopyResult, PipelineUsage | PipelineIncomplete> =>
  Effect.scoped(
    Effect.gen(function*() {
      const source: Context.Context<ClientServices> = yield* Layer.build(sourceLayer)
      const target: Context.Context<ClientServices> = sourceLayer === targetLayer ? source : yield* Layer.build(targetLayer)
      yield* Effect.try({
        try: () => fs.mkdirSync(options.stateDir, { recursive: true }),
        catch: (e) => new PipelineUsage({ message: `--state ${options.stateDir}: ${messageOf(e)}` })
      })
      const store = yield* openSnapshot(path.join(options.stateDir, "source.sqlite")).pipe(Effect.mapError(incomplete("snapshot")))

      const done = yield* backup({ workspaces: [options.sourceWorkspaceId] }).pipe(
        Effect.provide(Context.add(source, SnapshotStore, store)),
        Effect.mapError((e) =>
          e._tag === "WorkspaceNotFound"
            ? new PipelineUsage({ message: `--from ${e.workspace}: ${e.message}` })
            : incomplete("source backup")(e)
        )
      )
      const run = yield* resolveRun(store, done.runId).pipe(Effect.mapError(incomplete("source backup")))
      if (run === undefined) return yield* new PipelineIncomplete({ message: "source backup left no complete run" })

      const records = yield* Effect.gen(function*() {
        const journal = yield* openJournal(path.join(options.stateDir, "records.journal.sqlite"))
        return yield* restore(store, Context.get(target, RestClient), journal, {
          run,
          sourceWorkspaceId: options.sourceWorkspaceId,
          targetWorkspaceId: options.targetWorkspaceId,
          ...(options.dryRun === true ? { dryRun: true } : {}),
          ...(options.deleteMissing === true ? { deleteMissing: true } : {})
        })
      }).pipe(Effect.mapError(incomplete("record copy")))
      if (options.dryRun === true) return { dryRun: true, runId: done.runId, records }
      if (records.failed + records.unknown > 0) {
        return yield* new PipelineIncomplete({
          message: `record copy incomplete: ${records.failed + records.unknown} record operation(s) not finished; rerun to resume`
        })
      }

      const summary = yield* Effect.gen(function*() {
        const from = yield* Effect.provide(workspaceFilesFromServices, source)
        const to = yield* Effect.provide(workspaceFilesFromServices, target)
        const journal = yield* openJournal(path.join(options.stateDir, "files.journal.sqlite"))
        return yield* copyFiles({
          from: { kind: "workspace", workspaceId: options.sourceWorkspaceId },
          to: { kind: "workspace", workspaceId: options.targetWorkspaceId },
          source: from,
          target: to,
          journal
        })
      }).pipe(Effect.mapError(incomplete("file copy")))
      if (summary.failed > 0) {
        const first = summary.failures[0]
        return yield* new PipelineIncomplete({
          message: `${summary.failed} of ${summary.files} file(s) not copied (first: ${first?.name}: ${first?.reason}); rerun to resume`
        })
      }
      return {
        dryRun: false,
        runId: done.runId,
        records,
        files: { files: summary.files, copied: summary.copied, skipped: summary.skipped, failed: summary.failed, bytes: summary.bytes }
      }
    })
  )

export const summarize = (r: WorkspaceCopyResult): string =>
  r.dryRun
    ? `dry run: ${r.records.records} source records: ${r.records.planned.creates} to create, ${r.records.planned.updates} to update, ` +
      `${r.records.planned.moves} to move, ${r.records.planned.deletes} to delete, ${r.records.unchanged} unchanged; nothing was sent to the target`
    : `records: ${r.records.created} created, ${r.records.updated} updated, ${r.records.deleted} deleted, ${r.records.unchanged} unchanged; ` +
      `files: ${r.files?.copied ?? 0} copied, ${r.files?.skipped ?? 0} already copied` +
      (r.records.unknownAssignees.length > 0 ? `; assignees without a target user: ${r.records.unknownAssignees.join(", ")}` : "") +
      // What the target service could not take (operations beyond the documents).
      (r.records.notices.length > 0 ? `; ${r.records.notices.join("; ")}` : "")

const USAGE = "workspace-copy --from SOURCE_WORKSPACE --to TARGET_WORKSPACE --state DIR [--delete-missing] [--dry-run] [--json]"

if (isMain(import.meta.url)) {
  await runPipelineMain(
    "workspace-copy",
    USAGE,
    { from: { type: "string" }, to: { type: "string" }, state: { type: "string" }, "dry-run": { type: "boolean" }, "delete-missing": { type: "boolean" } },
    (values) =>
      Effect.gen(function*() {
        const sourceWorkspaceId = yield* required(values, "from")
        const targetWorkspaceId = yield* required(values, "to")
        const stateDir = yield* required(values, "state")
        const sourceConnection = connectionFromEnv(process.env)
        if (sourceConnection instanceof PipelineUsage) return yield* sourceConnection
        const targetConnection = connectionFromEnv(process.env, "WORKSYNC_TARGET_", "WORKSYNC_")
        if (targetConnection instanceof PipelineUsage) return yield* targetConnection
        const sourceLayer = clientLayer(sourceConnection)
        const sameAccount = Object.keys(process.env).every((k) => !k.startsWith("WORKSYNC_TARGET_"))
        const result = yield* workspaceCopy(
          { sourceWorkspaceId, targetWorkspaceId, stateDir, dryRun: values["dry-run"] === true, deleteMissing: values["delete-missing"] === true },
          sourceLayer,
          sameAccount ? sourceLayer : clientLayer(targetConnection)
        )
        return { result, summary: summarize(result) }
      })
  )
}
