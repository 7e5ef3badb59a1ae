/**
 * Scheduled backup through the library, one call per step, as `worksync backup --files`,
 * `worksync prune` and `worksync verify` run them (docs/scheduled-backups.md shows the
 * commands themselves under cron and systemd, the simpler choice for most):
 *
 *   1. `backup` of every workspace (or those named) into the snapshot, with the bytes of
 *      every CONFIRMED file stored under DIR by sha256;
 *   2. `prune`: the last N complete runs kept (`--keep-last N`), with what only the others
 *      held, objects under DIR included;
 *   3. `verifyAndRecord`: the new run checked (integrity, hashes, its objects; with
 *      `--rehearse`, restored into a fresh emulator), the outcome recorded in the snapshot.
 *
 * Exit 0 only when all three did everything: a backup that failed, or skipped a record or
 * a file (`runSkips`), ends with exit 1 and one line naming it, and nothing is pruned; a
 * check that fails names itself. A rerun resumes.
 *
 *   WORKSYNC_REST_URL=... WORKSYNC_TOKEN=... WORKSYNC_BASE_URL=... \
 *   npx tsx pipelines/scheduled-backup.ts --snapshot backup.sqlite --files files/ --keep 14 [--workspace ID]... [--rehearse] [--json]
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import {
  backup,
  type BackupResult,
  type ClientServices,
  clientLayer,
  openObjectStore,
  prune,
  type PruneReport,
  runSkips,
  SnapshotStore,
  verifyAndRecord,
  type VerifyResult,
  workspaceFilesFromServices
} from "../src/index.ts"
import { connectionFromEnv } from "./lib/connection.ts"
import { messageOf, PipelineIncomplete, PipelineUsage } from "./lib/errors.ts"
import { isMain, required, runPipelineMain, strings } from "./lib/main.ts"

export interface ScheduledBackupOptions {
  readonly snapshot: string
  /** The files directory of `backup --files`: one object per distinct content. */
  readonly filesDir: string
  /** Complete runs to keep (`prune --keep-last`, at least 1). */
  readonly keep: number
  /** Workspace ids or slugs; default every workspace. */
  readonly workspaces?: ReadonlyArray<string> | undefined
  /** `verify --rehearse`: restore the run into a fresh emulator and compare. */
  readonly rehearse?: boolean | undefined
}

export interface ScheduledBackupResult {
  readonly backup: BackupResult
  readonly prune: PruneReport
  readonly verify: VerifyResult
}

const incomplete = (message: string) => (e: unknown) => new PipelineIncomplete({ message: `${message}: ${messageOf(e)}` })

/** The pipeline as one Effect over the client services (tests give it an emulator's). */
export const scheduledBackup = (
  options: ScheduledBackupOptions
): Effect.Effect<ScheduledBackupResult, PipelineIncomplete | PipelineUsage, ClientServices> =>
  Effect.gen(function*() {
    const objects = yield* openObjectStore(options.filesDir).pipe(
      Effect.mapError((e) => new PipelineUsage({ message: `--files ${options.filesDir}: ${e.message}` }))
    )
    const download = (yield* workspaceFilesFromServices).download

    const done = yield* backup({ workspaces: options.workspaces, files: { objects, download } }).pipe(
      Effect.mapError((e) =>
        e._tag === "WorkspaceNotFound"
          ? new PipelineUsage({ message: `--workspace ${e.workspace}: ${e.message}` })
          : new PipelineIncomplete({ message: `backup incomplete: ${messageOf(e)}; nothing was pruned, a rerun resumes` })
      )
    )
    const skipped = yield* runSkips(done.runId).pipe(Effect.mapError(incomplete("backup")))
    if (skipped.length > 0) {
      const first = skipped[0]!
      return yield* new PipelineIncomplete({
        message: `backup run ${done.runId} skipped ${skipped.length} item(s) (first: ${first.subject ?? first.kind}); ` +
          `nothing was pruned, a rerun takes what still exists`
      })
    }

    const pruned = yield* prune({ policy: { keepLast: options.keep }, files: objects }).pipe(
      Effect.mapError((e) =>
        e._tag === "EmptyPolicy"
          ? new PipelineUsage({ message: `--keep ${options.keep}: must be a whole number of runs, at least 1` })
          : new PipelineIncomplete({ message: `prune failed: ${messageOf(e)}` })
      )
    )

    const verified = yield* verifyAndRecord(yield* SnapshotStore, { run: done.runId, filesDir: options.filesDir, rehearse: options.rehearse })
      .pipe(Effect.mapError(incomplete("verify failed")))
    const failed = verified?.checks.find((c) => !c.ok)
    if (verified === undefined || failed !== undefined) {
      return yield* new PipelineIncomplete({ message: `verify: run ${done.runId}: ${failed?.name ?? "not found"} failed: ${failed?.first ?? ""}` })
    }
    return { backup: done, prune: pruned, verify: verified }
  }).pipe(Effect.scoped, Effect.provide(SnapshotStore.layer(options.snapshot), { local: true }), Effect.mapError((e) =>
    e instanceof PipelineIncomplete || e instanceof PipelineUsage ? e : new PipelineIncomplete({ message: messageOf(e) })))

export const summarize = (r: ScheduledBackupResult): string =>
  `run ${r.backup.runId} complete: ${r.backup.records} records (${r.backup.changes.created} created, ` +
  `${r.backup.changes.updated} updated, ${r.backup.changes.deleted} deleted), ` +
  `${r.backup.fileBytes?.stored ?? 0} new file object(s); pruned ${r.prune.forgotten} run(s), kept ${r.prune.kept}; ` +
  `verified: ${r.verify.checks.map((c) => c.name).join(", ")}`

const USAGE = "scheduled-backup --snapshot FILE --files DIR [--keep N] [--workspace ID]... [--rehearse] [--json]"

if (isMain(import.meta.url)) {
  await runPipelineMain(
    "scheduled-backup",
    USAGE,
    {
      snapshot: { type: "string" },
      files: { type: "string" },
      keep: { type: "string" },
      workspace: { type: "string", multiple: true },
      rehearse: { type: "boolean" }
    },
    (values) =>
      Effect.gen(function*() {
        const snapshot = yield* required(values, "snapshot")
        const filesDir = yield* required(values, "files")
        const keep = values.keep === undefined ? 7 : Number(values.keep)
        const connection = connectionFromEnv(process.env)
        if (connection instanceof PipelineUsage) return yield* connection
        const result = yield* scheduledBackup({
          snapshot,
          filesDir,
          keep,
          workspaces: strings(values, "workspace"),
          rehearse: values.rehearse === true
        }).pipe(Effect.provide(Layer.orDie(clientLayer(connection))))
        return { result, summary: summarize(result) }
      })
  )
}
