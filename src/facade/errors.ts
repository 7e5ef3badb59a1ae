/**
 * Errors of the Promise facade: a rejected promise (or a throwing iterator) carries the
 * library's own tagged error, unchanged, so `error._tag` says what happened and
 * `instanceof` works against these classes.
 */
export {
  ConflictingInput,
  DecodeError,
  Forbidden,
  GraphqlError,
  InputRejected,
  InvalidInput,
  LimitExceeded,
  NotAvailable,
  NotFound,
  OutcomeUnknown,
  RateLimited,
  RetryWaitTooLong,
  ServerError,
  Timeout,
  TransportError,
  Unauthorized,
  UnexpectedStatus,
  UploadRejected,
  UploadSizeMismatch,
  ValidationFailed
} from "../client/errors.ts"
export { ImportFailed, ImportUsageError } from "../connectors/csv/errors.ts"
export { MappingError } from "../connectors/csv/mapping.ts"
export { ExportError, NothingToExport } from "../connectors/export.ts"
export { CopySpecInvalid, LocalIoError, NotConfirmed, SizeMismatch, UnsafeLocalPath } from "../connectors/files/errors.ts"
export { StoreBusy, StoreLockError } from "../store/file-lock.ts"
export { JournalError, JournalStateError } from "../store/journal.ts"
export { RunNotFound, SnapshotError, StoreOpenError } from "../store/snapshot.ts"
export { PageError } from "../streams/paging.ts"
export { ScanUnstable } from "../streams/stable-scan.ts"
export { WorkspaceNotFound } from "../sync/backup.ts"

/** Any failure the facade reports: an Error with a `_tag` naming its cause. */
export interface WorksyncError extends Error {
  readonly _tag: string
}

/** True for the library's tagged errors; with `tag`, only that one. */
export const isWorksyncError = (error: unknown, tag?: string): error is WorksyncError =>
  error instanceof Error && "_tag" in error && typeof (error as { _tag: unknown })._tag === "string" &&
  (tag === undefined || (error as { _tag: string })._tag === tag)

/** The cause under a paging error (the HTTP failure of one page), or the error itself. */
export const rootCause = (error: unknown): unknown => {
  let current = error
  for (let i = 0; i < 5; i++) {
    if (isWorksyncError(current) && "cause" in current && isWorksyncError((current as { cause: unknown }).cause)) {
      current = (current as { cause: unknown }).cause
    } else break
  }
  return current
}
