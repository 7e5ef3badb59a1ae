/**
 * worksync: the public library API.
 *
 * Reading flow:  client -> streams -> store (snapshot) -> sync (backup, diff, changes) -> export
 * Writing flow:  connectors (CSV, files) -> plan -> store (journal) -> replay -> client
 *
 * Everything is an Effect or a Stream with its services provided by Layers:
 * `clientLayer(connection)` for the service, `SnapshotStore.layer(location)` for a
 * snapshot, `Journal.layer(location)` for a journal (a location is a SQLite file or a
 * PostgreSQL URL). The emulator lives in `worksync/emulator`.
 */

// Shapes of the service, Schema first: what the streams and the client hand out, and the
// operations' inputs. The choices made where the documents are silent are documented in
// src/schema/assumptions.ts; no code of a user should depend on them.
export { ActivityItem, ActivityKind, ActivityPage } from "./schema/activity.ts"
export { Comment, type CommentCategory, commentVisibleText } from "./schema/comments.ts"
export { IsoTimestamp } from "./schema/dates.ts"
export { FileItem, FileStatus, FilesPage, GraphqlFile } from "./schema/files.ts"
export type {
  CountRecordsInput,
  CreateListInput,
  CreateRecordInput,
  CreateTagInput,
  DeleteRecordInput,
  GetRecordInput,
  ListFilesInput,
  ListRecordActivityInput,
  ListRecordsInput,
  ListUsersInput,
  MoveRecordInput,
  SearchRecordsInput,
  UpdateRecordInput
} from "./schema/inputs.ts"
export { ACTIVITY_MAX_LIMIT, PAGE_MAX_LIMIT, SEARCH_MAX_LIMIT } from "./schema/limits.ts"
export {
  Checklist,
  ChecklistItem,
  CustomField,
  ListRef,
  RecordDetail,
  RecordSummary,
  RecordTag,
  RecordUser,
  SearchResult,
  UserRef
} from "./schema/records.ts"
export { AccessLevel, GraphqlUser, Invitation, ProjectUserRole, RestUser } from "./schema/users.ts"
export { isWebhookEvent, Webhook, WEBHOOK_EVENTS, WEBHOOK_HEALTH_CHECK, WebhookDelivery, WebhookEvent } from "./schema/webhooks.ts"
export { List, Tag, Workspace } from "./schema/workspaces.ts"

// The client: the connection, the services, and the errors they fail with.
export {
  type ConnectionConfig,
  type ConnectionInput,
  connectionFromEnv,
  type LimiterSettings,
  type RetrySettings
} from "./client/config.ts"
export {
  type ClientError,
  ConflictingInput,
  DecodeError,
  describeError,
  Forbidden,
  GraphqlError,
  type GraphqlErrorCode,
  type HttpFailure,
  InputRejected,
  InvalidInput,
  isClientError,
  LimitExceeded,
  NotAvailable,
  NotFound,
  OutcomeUnknown,
  RateLimited,
  RetryWaitTooLong,
  ServerError,
  StoragePutFailed,
  Timeout,
  TransportError,
  Unauthorized,
  UnexpectedStatus,
  UploadRejected,
  UploadSizeMismatch,
  ValidationFailed
} from "./client/errors.ts"
export {
  type GraphqlCallError,
  GraphqlClient,
  type GraphqlClientApi,
  type NewComment,
  UploadedFile,
  type UploadFileInput,
  type UploadFilesInput
} from "./client/graphql-client.ts"
export { type ClientServices, clientLayer, clientLayerFromEnv } from "./client/layer.ts"
export { fromBytes, fromPath, fromStream, LocalFileError, type UploadSource } from "./client/multipart.ts"
export { isNotFound, isRetryable, isTransient } from "./client/predicates.ts"
export { type RecordRef, RestClient, type RestClientApi, type RestError, type WorkspaceScoped } from "./client/rest-client.ts"
export { type UploadError, type UploadResult, Uploads, type UploadsApi } from "./client/uploads.ts"

// Paging streams.
export { type ActivityTarget, recordActivityStream } from "./streams/activity.ts"
export { listsStream, usersStream, workspacesStream } from "./streams/directory.ts"
export { filesStream } from "./streams/files.ts"
export { PageError } from "./streams/paging.ts"
export { countRecords, listRecordsAcrossWorkspaces, listRecordsStream, searchRecordsStream, type StreamOptions } from "./streams/records.ts"
export {
  type ScanReport,
  ScanUnstable,
  type StableRecordScanOptions,
  type StableScan,
  type StableScanOptions,
  stableFileScan,
  stableRecordScan
} from "./streams/stable-scan.ts"

// The snapshot and the journal.
export {
  openSnapshot,
  resolveRun,
  RunNotFound,
  scopeOf,
  SnapshotError,
  type SnapshotQuery,
  SnapshotStore,
  type SnapshotStoreService
} from "./store/snapshot.ts"
export { lockStore, StoreBusy, StoreLockError } from "./store/file-lock.ts"
export {
  ObjectCorrupt,
  ObjectSizeMismatch,
  ObjectStore,
  type ObjectStoreApi,
  ObjectStoreError,
  openObjectStore
} from "./store/object-store.ts"
export {
  describeJournalError,
  Journal,
  type JournalApi,
  type JournalCounts,
  JournalError,
  JournalStateError,
  type NewOp,
  type Op,
  type OpState,
  openJournal
} from "./store/journal.ts"

// Backup (with file bytes), diff, the change stream, replay, restore, prune, verify, migrate and mirror.
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
export type { BackupFilesOptions, DownloadFile, FileBytes } from "./sync/backup-files.ts"
export { runSkips } from "./sync/run-skips.ts"
export {
  type FileNotRestored,
  type FilesRestored,
  type NotRestored,
  restore,
  RestoreError,
  type RestoreFilesOptions,
  type RestoreOptions,
  type RestoreResult
} from "./sync/restore.ts"
export { EmptyPolicy, prune, type PruneError, type PruneOptions, type PruneReport } from "./sync/prune.ts"
export type { RetentionDecision, RetentionPolicy } from "./sync/retention.ts"
export {
  type CheckResult,
  type NotCarried,
  verify,
  verifyAndRecord,
  type VerifyOptions,
  type VerifyResult
} from "./sync/verify.ts"
export { type MigrateEnd, MigrateError, type MigrateOptions, migrate } from "./sync/migrate/migrate.ts"
export type { MigrationReport } from "./sync/migrate/verify.ts"
export { mirror, MirrorError, type MirrorEvent, type MirrorOptions } from "./sync/mirror/mirror.ts"

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
export { ImportFailed, ImportUsageError } from "./connectors/csv/errors.ts"
export { importCsv } from "./connectors/csv/import.ts"
export type { ImportOptions } from "./connectors/csv/options.ts"
export { planCsvImport } from "./connectors/csv/plan.ts"
export type { ImportResult } from "./connectors/csv/result.ts"
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
export type { WorkspaceFiles } from "./connectors/files/ports.ts"
export { makeWorkspaceFiles, workspaceFilesFromServices } from "./connectors/files/workspace-files.ts"

// Webhooks on the receiving side.
export {
  type ReceivedDelivery,
  serveWebhooks,
  SIGNATURE_HEADER,
  signBody,
  verifySignature,
  WebhookDeliveries,
  WebhookDeliveriesLive,
  webhookQueue,
  type WebhookReceiver,
  WebhookReceiverError,
  type WebhookReceiverOptions,
  type WebhookSecrets
} from "./webhooks/index.ts"
