/**
 * `restore --files DIR`: uploads each CONFIRMED file of the run that the target lacks,
 * from the bytes `backup --files DIR` stored (store/object-store.ts; the run's
 * `run_file_objects` say which object holds each file), through copy-files' presigned
 * flow (presign, PUT, confirm: connectors/files/workspace-upload.ts), exactly once
 * through the restore's journal.
 *
 * - The target has the file: the same uid (restoring into the workspace the run was taken
 *   from, the file never deleted), or the copy an earlier restore of this journal made is
 *   still listed. Nothing is sent.
 * - Else one `file.copy` op per file (`restore.file:<target>:<file id>`, `...#n` when the
 *   copy that key made is gone): claimed before any byte moves, done with the source uid
 *   mapped to the new one (`file` namespace), so a rerun sends nothing twice and an upload
 *   a killed run left in flight is settled before it is sent again.
 * - The object is read by its sha256 under DIR's lock (a prune cannot remove it meanwhile)
 *   and verified while it streams; a file whose object is missing or damaged, or that the
 *   run holds no bytes of, is reported by name and not uploaded.
 *
 * A file uploaded so is a file of the workspace: the documents attach files to records
 * only through comments, which a restore does not write (`notRestored` says so).
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import { type CopyPayload, FILE_COPY_KIND, uploadNameOf } from "../connectors/files/plan.ts"
import type { WorkspaceFiles } from "../connectors/files/ports.ts"
import { recordOutcome } from "../connectors/files/copy.ts"
import { makeAdopter, type UploadContext, type UploadReporter, uploadOne } from "../connectors/files/workspace-upload.ts"
import type { JournalApi, PlanOp } from "../store/journal.ts"
import type { ObjectStoreApi } from "../store/object-store.ts"
import type { SnapshotStoreService } from "../store/snapshot.ts"
import type { NotRestored } from "./restore-source.ts"

export interface RestoreFilesOptions {
  /** DIR of `backup --files`, opened. */
  readonly objects: ObjectStoreApi
  /** The target workspace's file operations. */
  readonly target: WorkspaceFiles
  /** Uploads at once. Default 4. */
  readonly concurrency?: number | undefined
  readonly reporter?: UploadReporter | undefined
}

/** A file of the run a restore could not put back, by name. */
export interface FileNotRestored {
  readonly fileId: string
  readonly name: string
  readonly reason: string
}

/** What `restore --files` did with the run's CONFIRMED files. */
export interface FilesRestored {
  /** CONFIRMED files of the run in the source workspace. */
  readonly files: number
  /** Files the target holds already. */
  readonly present: number
  /** Uploaded now (planned, in a dry run). */
  readonly uploaded: number
  readonly bytes: number
  readonly failed: ReadonlyArray<FileNotRestored>
}

/** Uploads at once unless told. */
const DEFAULT_CONCURRENCY = 4

export interface RunFile {
  readonly id: string
  readonly uid: string
  readonly name: string
  readonly size: number
  readonly record: string | null
  readonly sha256: string | null
  readonly objectSize: number | null
}

/** The run's CONFIRMED files of the workspace (only those are served, R-FILE-STATUS-07). */
export const runFiles = (store: SnapshotStoreService, runId: number, workspaceId: string) =>
  Effect.map(
    store.workspaceFileObjects(runId, workspaceId),
    (rows) =>
      rows.flatMap((row): Array<RunFile> => {
        const item = JSON.parse(row.item) as { uid?: unknown; name?: unknown; size?: unknown; status?: unknown; todo?: { id?: unknown } | null }
        if (item.status !== "CONFIRMED") return []
        return [{
          id: row.id,
          uid: typeof item.uid === "string" ? item.uid : row.id,
          name: typeof item.name === "string" ? item.name : row.id,
          size: typeof item.size === "number" ? item.size : row.size ?? 0,
          record: typeof item.todo?.id === "string" ? item.todo.id : null,
          sha256: row.sha256,
          objectSize: row.size === null ? null : Number(row.size)
        }]
      })
  )

/** The `notRestored` entry of files uploaded without the record they were attached to. */
export const FILE_RECORDS_NOT_KEPT = "files' records"

/** What the contract's `notRestored` says of the run's files. */
export const filesNotRestored = (files: ReadonlyArray<{ readonly record: string | null }>, withBytes: boolean): Array<NotRestored> => {
  if (files.length === 0) return []
  if (!withBytes) {
    return [{ what: "files", count: files.length, why: "a restore uploads files only from their bytes: back up and restore with --files DIR" }]
  }
  const attached = files.filter((f) => f.record !== null).length
  return attached === 0 ? [] : [{
    what: FILE_RECORDS_NOT_KEPT,
    count: attached,
    why: "a file is uploaded to the workspace; the documents attach files to records only through comments, which a restore does not write"
  }]
}

/**
 * Uploads the files of the run the target lacks (see the file's comment). The caller
 * holds the journal; DIR's lock is taken here for the uploads.
 */
export const restoreFiles = (
  store: SnapshotStoreService,
  journal: JournalApi,
  request: { readonly runId: number; readonly sourceWorkspaceId: string; readonly targetWorkspaceId: string; readonly dryRun: boolean },
  options: RestoreFilesOptions
) =>
  Effect.scoped(Effect.gen(function*() {
    const { objects, target } = options
    const ws = request.targetWorkspaceId
    const files = yield* runFiles(store, request.runId, request.sourceWorkspaceId)
    // Held while the objects are read: a prune (or a backup) of DIR waits, or is refused.
    if (!request.dryRun) yield* objects.lock
    const listed = new Set<string>()
    yield* Stream.runForEach(target.listFiles(ws), (f) => Effect.sync(() => void (f.status === "CONFIRMED" && listed.add(f.uid))))

    const failed: Array<FileNotRestored> = []
    const jobs: Array<{
      readonly key: string
      readonly payload: CopyPayload
      readonly fresh: boolean
      readonly previousAttemptAt: string | null
      readonly file: RunFile
    }> = []
    let present = 0
    for (const file of files) {
      if (listed.has(file.uid)) {
        present++
        continue
      }
      // The copy an earlier restore made, while it is listed; a key whose copy is gone is followed by the next.
      let key = `restore.file:${ws}:${file.id}`
      let resume: CopyPayload | undefined
      let previousAttemptAt: string | null = null
      let there = false
      for (let n = 2;; n++) {
        const op = Option.getOrUndefined(yield* journal.get(key))
        if (op === undefined) break
        if (op.state !== "done") {
          resume = op.payload as CopyPayload
          previousAttemptAt = op.attemptedAt
          break
        }
        const uid = (op.result as { uid?: unknown } | null)?.uid
        if (typeof uid === "string" && listed.has(uid)) {
          there = true
          break
        }
        key = `restore.file:${ws}:${file.id}#${n}`
      }
      if (there) {
        present++
        continue
      }
      if (file.sha256 === null) {
        failed.push({ fileId: file.id, name: file.name, reason: `run ${request.runId} holds no bytes of it (back up with --files DIR)` })
        continue
      }
      if (!(yield* objects.has(file.sha256, file.objectSize ?? undefined))) {
        failed.push({ fileId: file.id, name: file.name, reason: `its bytes are not in ${objects.dir}: object ${file.sha256} is missing` })
        continue
      }
      const payload: CopyPayload = resume ?? {
        v: 1,
        source: { kind: "object", sha256: file.sha256, uid: file.uid, name: file.name, size: file.objectSize ?? file.size },
        localName: null,
        uploadName: null
      }
      jobs.push({
        key,
        payload: { ...payload, uploadName: payload.uploadName ?? uploadNameOf(payload.source) },
        fresh: resume === undefined,
        previousAttemptAt,
        file
      })
    }
    const bytesOf = (js: typeof jobs) => js.reduce((n, j) => n + j.payload.source.size, 0)
    const restored = (uploaded: typeof jobs): FilesRestored & { readonly all: ReadonlyArray<RunFile> } => ({
      files: files.length,
      present,
      uploaded: uploaded.length,
      bytes: bytesOf(uploaded),
      failed,
      all: files
    })
    if (request.dryRun) return restored(jobs)

    const ops: Array<PlanOp> = jobs.filter((j) => j.fresh).map((j) => ({ key: j.key, kind: FILE_COPY_KIND, payload: j.payload }))
    if (ops.length > 0) yield* journal.addPlan({ ops, supersede: [], mappings: [] })
    // Uploads a killed run left in flight: pending again, settled before anything is resent.
    yield* journal.resetInFlight()
    const ctx: UploadContext = {
      journal,
      source: undefined,
      target,
      workspaceId: ws,
      reporter: options.reporter ?? {},
      adopter: makeAdopter(journal, target, ws),
      objects
    }
    const done: Array<typeof jobs[number]> = []
    yield* Effect.forEach(jobs, (job) =>
      Effect.gen(function*() {
        const op = yield* journal.claim(job.key)
        const outcome = yield* recordOutcome(journal, job, uploadOne(ctx, job, op), "hold")
        if (outcome._tag === "Copied") return void done.push(job)
        // A missing or damaged object: no later attempt can do better until DIR is mended.
        if (outcome._tag === "Missing") yield* journal.fail(job.key, outcome.reason)
        failed.push({ fileId: job.file.id, name: job.file.name, reason: outcome.reason })
      }), { concurrency: Math.max(1, options.concurrency ?? DEFAULT_CONCURRENCY), discard: true })
    return restored(done)
  }))
