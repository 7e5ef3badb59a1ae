/** Paging streams of the service's list operations (see paging.ts for the rules they keep). */
export { type ActivityTarget, recordActivityStream } from "./activity.ts"
export { listsStream, usersStream, workspacesStream } from "./directory.ts"
export { filesStream } from "./files.ts"
export {
  allPages,
  clampLimit,
  dedupeById,
  fanOutPages,
  fanOutWithTotal,
  type FetchPage,
  type Page,
  PageError,
  Paging,
  readWindow,
  sequentialPages,
  targeted
} from "./paging.ts"
export {
  countRecords,
  DEFAULT_PAGE_CONCURRENCY,
  listRecordsAcrossWorkspaces,
  listRecordsStream,
  searchRecordsStream,
  type StreamOptions
} from "./records.ts"
export {
  type ScanReport,
  ScanUnstable,
  type StableRecordScanOptions,
  type StableScan,
  type StableScanOptions,
  stableFileScan,
  stableRecordScan,
  stableScan
} from "./stable-scan.ts"
