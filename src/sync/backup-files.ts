/**
 * `backup --files DIR`: the bytes of every CONFIRMED file of a run, as objects of the
 * object store (store/object-store.ts), and which object holds each file in the run
 * (`run_file_objects`).
 *
 * Incremental without downloading: a file whose stored version (its metadata, hashed as
 * every file version is) is the one an earlier run held, and whose object that run
 * recorded is still in DIR with its size, takes that object again. Only new or changed
 * files, or files whose object went missing, are downloaded. An earlier run counts
 * whether it completed or not, so a backup killed midway is resumed by the next: what
 * it recorded is not downloaded again.
 *
 * Each file is recorded in the run as soon as its object is stored. A file that cannot
 * be downloaded (after retries of a transient failure or a short body) is reported, with
 * the reason, and the run goes on; a failure no other download would escape (the token
 * refused, a wait longer than allowed) stops new downloads and reports the rest.
 */
import * as Effect from "effect/Effect"
import type * as Stream from "effect/Stream"
import { isAbort, isTransient } from "../client/predicates.ts"
import { ObjectSizeMismatch, type ObjectStoreApi, ObjectStoreError } from "../store/object-store.ts"
import type { RunFileKnownObject, SnapshotError, SnapshotStoreService } from "../store/snapshot.ts"

/** The bytes of a CONFIRMED file (the service's download flow, with no credential sent to storage). */
export type DownloadFile = (file: { readonly uid: string; readonly name: string }) => Stream.Stream<Uint8Array, unknown>

export interface BackupFilesOptions {
  readonly objects: ObjectStoreApi
  readonly download: DownloadFile
  /** Downloads at once. Default 4. */
  readonly concurrency?: number | undefined
  /** Bytes received (may be taken back, negative, when an attempt is retried). */
  readonly onBytes?: ((n: number) => void) | undefined
}

/** The contract's `fileBytes`: objects written by this run, files whose bytes were there already, bytes written. */
export interface FileBytes {
  readonly stored: number
  readonly reused: number
  readonly bytes: number
}

export interface FileSkipped {
  readonly workspaceId: string
  readonly fileId: string
  readonly name: string
  readonly reason: string
}

export interface FileBytesResult extends FileBytes {
  /** CONFIRMED files of the run whose bytes it does not hold, with why. */
  readonly skipped: ReadonlyArray<FileSkipped>
}

export const DEFAULT_FILE_CONCURRENCY = 4
/** Download attempts per file for a failure worth trying again. */
const MAX_ATTEMPTS = 3

const messageOf = (e: unknown): string =>
  typeof e === "object" && e !== null && "message" in e ? String((e as { message: unknown }).message) : String(e)

/** Stores the bytes of the run's CONFIRMED files; the caller holds the snapshot's and DIR's locks. */
export const backupFileBytes = (
  store: SnapshotStoreService,
  runId: number,
  options: BackupFilesOptions
): Effect.Effect<FileBytesResult, SnapshotError | ObjectStoreError> =>
  Effect.gen(function*() {
    const { objects } = options
    // Writes a killed process left behind; no one else writes here while we hold the locks.
    yield* objects.clearTemp
    // Each file with the object an earlier run recorded for its very version, if any.
    const rows = yield* store.runFilesKnownObjects(runId)
    let stored = 0
    let reused = 0
    let bytes = 0
    const skipped: Array<FileSkipped> = []
    let stop: string | undefined

    const one = (row: RunFileKnownObject) =>
      Effect.gen(function*() {
        const item = JSON.parse(row.item) as { uid?: unknown; name?: unknown; size?: unknown; status?: unknown }
        // Only CONFIRMED files are served (R-FILE-STATUS-07).
        if (item.status !== "CONFIRMED") return
        const name = typeof item.name === "string" ? item.name : row.id
        const size = typeof item.size === "number" ? item.size : undefined
        const skip = (reason: string) => void skipped.push({ workspaceId: row.workspaceId, fileId: row.id, name, reason })
        if (row.known !== null && row.knownSize !== null && (size === undefined || size === row.knownSize) &&
          (yield* objects.has(row.known, row.knownSize))) {
          reused++
          yield* store.putFileObjects(runId, [{ fileId: row.id, sha256: row.known, size: row.knownSize }])
          return
        }
        if (stop !== undefined) return skip(`not started: ${stop}`)
        if (typeof item.uid !== "string") return skip("the listing gave no uid to download it by")
        const uid = item.uid
        const attempt = (n: number): Effect.Effect<{ sha256: string; size: number; stored: boolean }, unknown> => {
          let moved = 0
          return objects.put(options.download({ uid, name }), {
            expectedSize: size,
            onBytes: (b) => {
              moved += b
              options.onBytes?.(b)
            }
          }).pipe(
            Effect.catch((error) => {
              options.onBytes?.(-moved)
              const again = n < MAX_ATTEMPTS && (isTransient(error) || error instanceof ObjectSizeMismatch)
              return again ? attempt(n + 1) : Effect.fail(error)
            })
          )
        }
        const result = yield* Effect.result(attempt(1))
        if (result._tag === "Failure") {
          const error = result.failure
          // A local failure (disk full, permissions) is not this file's: it ends the run.
          if (error instanceof ObjectStoreError) return yield* Effect.fail(error)
          if (isAbort(error)) stop ??= messageOf(error)
          return skip(messageOf(error))
        }
        const put = result.success
        if (put.stored) {
          stored++
          bytes += put.size
        } else {
          reused++
        }
        yield* store.putFileObjects(runId, [{ fileId: row.id, sha256: put.sha256, size: put.size }])
      })

    yield* Effect.forEach(rows, one, { concurrency: Math.max(1, options.concurrency ?? DEFAULT_FILE_CONCURRENCY), discard: true })
    return { stored, reused, bytes, skipped }
  })
