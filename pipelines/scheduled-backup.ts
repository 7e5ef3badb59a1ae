/**
 * Scheduled backup, for cron or a systemd timer:
 *
 *   1. back up every workspace (or those named) into the snapshot;
 *   2. mirror each workspace's files into `<files>/<workspace id>/` (incremental: the
 *      journal `<files>/.journal.sqlite` remembers what was copied);
 *   3. keep the last N complete runs of each scope of the snapshot: `worksync prune
 *      --keep-last N` (src/sync/prune.ts), which also removes what only the others held.
 *
 * Exit 0 only when everything finished; otherwise 1 with one line naming what is
 * incomplete (the backup, or the first file that failed), and a rerun resumes.
 * Retention runs only after a complete backup, so a failing service never prunes state.
 *
 *   WORKSYNC_REST_URL=... WORKSYNC_TOKEN=... WORKSYNC_BASE_URL=... \
 *   npx tsx pipelines/scheduled-backup.ts --snapshot backup.sqlite --files files/ --keep 14 [--workspace ID]... [--json]
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as fs from "node:fs"
import * as path from "node:path"
import { clientLayer, type ClientServices } from "../src/client/layer.ts"
import { copyFiles, type CopySummary } from "../src/connectors/files/copy.ts"
import { workspaceFilesFromServices } from "../src/connectors/files/workspace-files.ts"
import { openJournal } from "../src/store/journal.ts"
import { SnapshotStore } from "../src/store/snapshot.ts"
import { backup, type BackupResult } from "../src/sync/backup.ts"
import { prune } from "../src/sync/prune.ts"
import { leftAloneReason } from "../src/sync/retention.ts"
import { connectionFromEnv } from "./lib/connection.ts"
import { messageOf, PipelineIncomplete, PipelineUsage } from "./lib/errors.ts"
import { isMain, required, runPipelineMain, strings } from "./lib/main.ts"

export interface ScheduledBackupOptions {
  readonly snapshot: string
  /** Directory of the file mirror; one sub-directory per workspace. */
  readonly filesDir: string
  /** Complete runs to keep (at least 1). */
  readonly keep: number
  /** Workspace ids or slugs; default every workspace. */
  readonly workspaces?: ReadonlyArray<string> | undefined
}

export interface ScheduledBackupResult {
  readonly backup: BackupResult
  readonly files: {
    readonly workspaces: number
    readonly files: number
    readonly copied: number
    readonly skipped: number
    readonly failed: number
    readonly bytes: number
    /** Server files still PENDING (not downloadable yet), by name. */
    readonly pending: ReadonlyArray<string>
  }
  readonly retention: RetentionResult
}

/** What retention did: runs forgotten, complete runs kept (ascending), stored versions removed. */
export interface RetentionResult {
  readonly removedRuns: ReadonlyArray<number>
  readonly keptComplete: ReadonlyArray<number>
  readonly removedVersions: number
}

/** The workspace ids of one run, from the snapshot. */
const workspacesOfRun = (runId: string) =>
  Effect.flatMap(SnapshotStore, (store) =>
    Effect.map(
      store.select<{ id: string }>("read run workspaces", {
        sql: "SELECT id FROM run_workspaces WHERE run_id = ? ORDER BY id",
        params: [Number(runId)]
      }),
      (rows) => rows.map((row) => row.id)
    ))

/** The pipeline as one Effect over the client services (tests give it an emulator's). */
export const scheduledBackup = (
  options: ScheduledBackupOptions
): Effect.Effect<ScheduledBackupResult, PipelineIncomplete | PipelineUsage, ClientServices> =>
  Effect.gen(function*() {
    if (!Number.isInteger(options.keep) || options.keep < 1) {
      return yield* new PipelineUsage({ message: `--keep ${options.keep}: must be a whole number of runs, at least 1` })
    }
    const snapshotLayer = SnapshotStore.layer(options.snapshot)

    const done = yield* backup({ workspaces: options.workspaces }).pipe(
      Effect.provide(snapshotLayer),
      Effect.mapError((e) =>
        e._tag === "WorkspaceNotFound"
          ? new PipelineUsage({ message: `--workspace ${e.workspace}: ${e.message}` })
          : new PipelineIncomplete({ message: `backup incomplete: ${messageOf(e)}; nothing was pruned, a rerun resumes` })
      )
    )
    const workspaceIds = yield* workspacesOfRun(done.runId).pipe(
      Effect.provide(snapshotLayer),
      Effect.mapError((e) => new PipelineIncomplete({ message: messageOf(e) }))
    )

    // One journal for every workspace's copy: each (source, target) pair is its own job in it.
    const summaries = yield* Effect.scoped(
      Effect.gen(function*() {
        const source = yield* workspaceFilesFromServices
        yield* Effect.try({
          try: () => fs.mkdirSync(options.filesDir, { recursive: true }),
          catch: (e) => new PipelineUsage({ message: `--files ${options.filesDir}: cannot create the directory: ${messageOf(e)}` })
        })
        const journal = yield* openJournal(path.join(options.filesDir, ".journal.sqlite"))
        const out: Array<CopySummary> = []
        for (const workspaceId of workspaceIds) {
          out.push(
            yield* copyFiles({
              from: { kind: "workspace", workspaceId },
              to: { kind: "dir", path: path.resolve(options.filesDir, workspaceId) },
              source,
              journal
            })
          )
        }
        return out
      })
    ).pipe(Effect.mapError((e) => new PipelineIncomplete({ message: `file copy incomplete: ${messageOf(e)}; a rerun resumes` })))

    const sum = (f: (s: CopySummary) => number) => summaries.reduce((n, s) => n + f(s), 0)
    const files = {
      workspaces: workspaceIds.length,
      files: sum((s) => s.files),
      copied: sum((s) => s.copied),
      skipped: sum((s) => s.skipped),
      failed: sum((s) => s.failed),
      bytes: sum((s) => s.bytes),
      pending: summaries.flatMap((s) => s.pendingSource)
    }
    if (files.failed > 0) {
      const first = summaries.flatMap((s) => s.failures)[0]
      return yield* new PipelineIncomplete({
        message: `${files.failed} of ${files.files} file(s) not copied (first: ${first?.name}: ${first?.reason}); ` +
          `backup run ${done.runId} is complete, nothing was pruned, a rerun copies the rest`
      })
    }

    const pruned = yield* prune({ policy: { keepLast: options.keep } }).pipe(
      Effect.provide(snapshotLayer),
      Effect.mapError((e) => new PipelineIncomplete({ message: `retention failed: ${messageOf(e)}` }))
    )
    const leftAlone = [leftAloneReason("running"), leftAloneReason("failed")]
    const retention: RetentionResult = {
      removedRuns: pruned.runs.filter((r) => !r.keep).map((r) => r.runId),
      keptComplete: pruned.runs.filter((r) => r.keep && !r.reasons.some((why) => leftAlone.includes(why))).map((r) => r.runId),
      removedVersions: pruned.removedVersions
    }
    return { backup: done, files, retention }
  })

export const summarize = (r: ScheduledBackupResult): string =>
  `run ${r.backup.runId} complete: ${r.backup.records} records (${r.backup.changes.created} created, ` +
  `${r.backup.changes.updated} updated, ${r.backup.changes.deleted} deleted), ${r.files.copied} new file(s) of ${r.files.files}` +
  `${r.files.pending.length > 0 ? ` (${r.files.pending.length} still PENDING on the server)` : ""}, ` +
  `kept runs ${r.retention.keptComplete.join(", ")}${r.retention.removedRuns.length > 0 ? `, pruned ${r.retention.removedRuns.length}` : ""}`

const USAGE = "scheduled-backup --snapshot FILE --files DIR [--keep N] [--workspace ID]... [--json]"

if (isMain(import.meta.url)) {
  await runPipelineMain(
    "scheduled-backup",
    USAGE,
    {
      snapshot: { type: "string" },
      files: { type: "string" },
      keep: { type: "string" },
      workspace: { type: "string", multiple: true }
    },
    (values) =>
      Effect.gen(function*() {
        const snapshot = yield* required(values, "snapshot")
        const filesDir = yield* required(values, "files")
        const keep = values.keep === undefined ? 7 : Number(values.keep)
        const connection = connectionFromEnv(process.env)
        if (connection instanceof PipelineUsage) return yield* connection
        const result = yield* scheduledBackup({ snapshot, filesDir, keep, workspaces: strings(values, "workspace") }).pipe(
          Effect.provide(Layer.orDie(clientLayer(connection)))
        )
        return { result, summary: summarize(result) }
      })
  )
}
