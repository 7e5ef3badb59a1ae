/** `worksync backup`: the work behind the definition in ../commands/backup.ts. */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Layer from "effect/Layer"
import { workspaceFilesFromServices } from "../../connectors/files/workspace-files.ts"
import { StoreBusy } from "../../store/file-lock.ts"
import { ObjectStoreError, openObjectStore } from "../../store/object-store.ts"
import { SnapshotStore } from "../../store/snapshot.ts"
import { backup, type BackupResult, WorkspaceNotFound } from "../../sync/backup.ts"
import { runSkips } from "../../sync/run-skips.ts"
import type { BackupFlags } from "../commands/backup.ts"
import { verbosityOf } from "../common-options.ts"
import { clientLayerFromFlags, nextStepSuffix, requireBaseUrl } from "../connection.ts"
import { CliExit, ExitCode, usageError } from "../exit.ts"
import { withNotify } from "../notify.ts"
import { logLine, printJson } from "../output.ts"
import { formatBytes, makeProgress, type Progress } from "../progress.ts"
import { snapshotFailure } from "./snapshot-failure.ts"

const summary = (r: BackupResult): string =>
  `backup: run ${r.runId} complete: ${r.workspaces} workspace${r.workspaces === 1 ? "" : "s"}, ${r.records} records ` +
  `(${r.changes.created} created, ${r.changes.updated} updated, ${r.changes.deleted} deleted), ` +
  `${r.activities} activity items, ${r.files} files` +
  (r.fileBytes === undefined
    ? ""
    : `; file bytes: ${r.fileBytes.stored} new object${r.fileBytes.stored === 1 ? "" : "s"} (${formatBytes(r.fileBytes.bytes)}), ${r.fileBytes.reused} already stored`)

/**
 * The line naming what a complete run skipped, if anything: the run is kept (what it
 * holds is consistent), but the exit status must not say everything was done.
 */
const skippedLine = (runId: string) =>
  Effect.gen(function*() {
    const skips = yield* runSkips(runId)
    if (skips.length === 0) return undefined
    const first = skips[0]!
    const what = first.kind === "vanished" ? `record ${first.subject}` : first.subject ?? first.kind
    const why = typeof first.detail === "string" ? ` (${first.detail})` : ""
    const more = skips.length > 1 ? ` and ${skips.length - 1} more` : ""
    return `backup: run ${runId} is complete but skipped ${what}${why}${more}; run_notes of run ${runId} lists them, a rerun takes what still exists`
  })

const messageOf = (e: unknown): string =>
  typeof e === "object" && e !== null && "message" in e ? String((e as { message: unknown }).message) : String(e)

export const backupRun = (flags: BackupFlags) =>
  Effect.gen(function*() {
    const verbosity = verbosityOf(flags)
    const refreshEvery = Option.getOrUndefined(flags.refreshEvery)
    if (refreshEvery !== undefined && refreshEvery < 0) {
      return yield* Effect.fail(usageError(`--refresh-every ${refreshEvery}: must be 0 (never) or more`))
    }
    const filesDir = Option.getOrUndefined(flags.files)
    // File bytes are downloaded through the app base URL (`/uploads/{uid}/{name}`).
    if (filesDir !== undefined) yield* requireBaseUrl(flags, "base-url", "WORKSYNC_BASE_URL")
    const client = yield* clientLayerFromFlags(flags, { rest: true })
    const progress = yield* makeProgress({ label: "records", unit: "items", verbosity })
    // File bytes come after every record: their own line, started by the first byte.
    let bytesProgress: Progress | undefined
    const onBytes = (n: number) => {
      if (bytesProgress === undefined) {
        Effect.runSync(progress.done())
        bytesProgress = Effect.runSync(makeProgress({ label: "file bytes", unit: "bytes", verbosity }))
      }
      Effect.runSync(bytesProgress.advance(n))
    }
    const { result, skipped } = yield* Effect.gen(function*() {
      const files = filesDir === undefined ? undefined : {
        objects: yield* openObjectStore(filesDir),
        download: (yield* workspaceFilesFromServices).download,
        onBytes
      }
      const result = yield* backup({
        workspaces: flags.workspace,
        full: flags.full,
        refreshEvery,
        progress: { advance: (n) => progress.advance(n), setTotal: (n) => progress.setTotal(n) },
        files
      })
      return { result, skipped: yield* skippedLine(result.runId) }
    }).pipe(
      Effect.provide(Layer.merge(client, SnapshotStore.layer(flags.snapshot))),
      Effect.ensuring(Effect.suspend(() => Effect.andThen(progress.done(), bytesProgress?.done() ?? Effect.void))),
      Effect.catch((e): Effect.Effect<never, unknown> => {
        if (e instanceof WorkspaceNotFound) return Effect.fail(usageError(`--workspace ${e.workspace}: ${e.message}`))
        if (e instanceof StoreBusy) return Effect.fail(new CliExit({ code: ExitCode.failed, message: e.message }))
        if (e instanceof ObjectStoreError && e.operation === "open") {
          return Effect.fail(usageError(`--files ${filesDir}: cannot use it as the files directory: ${e.detail}`))
        }
        const mapped = snapshotFailure(e, flags.snapshot)
        if (mapped !== undefined) return Effect.fail(mapped)
        return Effect.fail(
          new CliExit({
            code: ExitCode.failed,
            message: `backup failed: ${messageOf(e)}${nextStepSuffix(e)}; nothing was marked deleted, a rerun resumes`
          })
        )
      })
    )
    if (flags.json) yield* printJson(result)
    yield* logLine(verbosity, summary(result))
    if (skipped !== undefined) return yield* Effect.fail(new CliExit({ code: ExitCode.failed, message: skipped }))
    return summary(result)
  }).pipe(withNotify("backup", flags, (line) => line))
