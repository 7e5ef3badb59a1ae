/**
 * worksync: the public library API.
 *
 * Reading flow:  client -> streams -> store (snapshot) -> sync (backup, diff, changes) -> export
 * Writing flow:  connectors (CSV, files) -> plan -> store (journal) -> replay -> client
 *
 * Everything is an Effect or a Stream with its services provided by Layers:
 * `clientLayer(connection)` for the service, `SnapshotStore.layer(file)` for a snapshot,
 * `journalLayer(file)` for a journal. The emulator lives in `worksync/emulator`.
 */

// Shapes of the service (Schema first) and our documented choices where the service is silent.
export * from "./schema/index.ts"

// The client: connection, limiter, retry policy, REST, GraphQL, uploads, errors.
export * from "./client/index.ts"

// Paging streams.
export * from "./streams/index.ts"

// The snapshot and the journal.
export {
  openSnapshot,
  resolveRun,
  RunNotFound,
  scopeOf,
  SnapshotError,
  SnapshotStore,
  type SnapshotStoreService
} from "./store/snapshot.ts"
export { lockStore, StoreBusy, StoreLockError } from "./store/file-lock.ts"
export {
  describeJournalError,
  Journal,
  type JournalApi,
  type JournalCounts,
  JournalError,
  journalLayer,
  JournalStateError,
  type NewOp,
  type Op,
  type OpState,
  openJournal
} from "./store/journal.ts"

// Backup, diff, the change stream, replay and restore.
export {
  backup,
  type BackupError,
  type BackupOptions,
  type BackupProgress,
  type BackupResult,
  WorkspaceNotFound
} from "./sync/backup.ts"
export { diff, type DiffResult, diffRuns, type IdChanges, selectRuns } from "./sync/diff.ts"
export { type Change, type ChangeKind, changes, changesBetween, changeStream } from "./sync/changes.ts"
export { replay, ReplayAborted, type ReplayOptions, type ReplayReport } from "./sync/replay.ts"
export { restore, RestoreError, type RestoreOptions, type RestoreResult } from "./sync/restore.ts"

// Connectors: export, CSV import, file copy and uid re-linking.
export {
  ExportError,
  type ExportFormat,
  type ExportOptions,
  type ExportResult,
  exportRun,
  exportSnapshot,
  NothingToExport
} from "./connectors/export.ts"
export {
  ImportFailed,
  importCsv,
  type ImportOptions,
  type ImportResult,
  ImportUsageError,
  planCsvImport
} from "./connectors/csv/import.ts"
export {
  CopySetupError,
  copyFiles,
  type CopyFilesOptions,
  type CopySummary
} from "./connectors/files/copy.ts"
export {
  CopySpecInvalid,
  FileTooLarge,
  isFileCopyError,
  LocalIoError,
  NotConfirmed,
  SizeMismatch,
  UnsafeLocalPath,
  UploadNotLanded
} from "./connectors/files/errors.ts"
export { relinkCommentHtml, relinkCustomFields, relinkUid, type UidLookup } from "./connectors/files/relink.ts"

// Webhooks on the receiving side.
export * from "./webhooks/index.ts"
