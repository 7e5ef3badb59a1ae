/**
 * Documented paging defaults and maxima, and upload size limits.
 *
 * Units: the documents say "MB" and "GB" without a base; we take the smaller reading,
 * decimal units, MB = 1,000,000 bytes and GB = 1,000,000,000 bytes (256 MB is
 * 256,000,000 bytes, 4.8 GB is 4,800,000,000), in the client and the emulator alike: a
 * client that stays within them stays within a service that means binary units too
 * (recorded as `SIZE_UNITS` in assumptions.ts).
 */
import { SIZE_UNITS } from "./assumptions.ts"

/** Page size of paged operations with no other listed default (list-records, list-files, list-users). */
export const PAGE_DEFAULT_LIMIT = 50
/** Larger `limit` values are capped silently to this, never an error. */
export const PAGE_MAX_LIMIT = 100

/** list-record-activity. */
export const ACTIVITY_DEFAULT_LIMIT = 20
export const ACTIVITY_MAX_LIMIT = 24

/** search-records. */
export const SEARCH_DEFAULT_LIMIT = 20
export const SEARCH_MAX_LIMIT = 100

/** list-activity, list-documents, list-saved-views (their maximum is PAGE_MAX_LIMIT). */
export const LIST_ACTIVITY_DEFAULT_LIMIT = 20
export const LIST_DOCUMENTS_DEFAULT_LIMIT = 20
export const LIST_SAVED_VIEWS_DEFAULT_LIMIT = 100

/** `skip` default of every paged operation. */
export const PAGE_DEFAULT_SKIP = 0

export const MB = SIZE_UNITS.MB
export const GB = SIZE_UNITS.GB

/** One file of `uploadFile` / `uploadFiles` (multipart GraphQL). */
export const MULTIPART_MAX_FILE_BYTES = 256 * MB
/** Files per `uploadFiles` batch. */
export const BATCH_MAX_FILES = 10
/** Total bytes of one `uploadFiles` batch. */
export const BATCH_MAX_BYTES = 1 * GB
/** One file of the presigned flow (`GET /uploads`). */
export const PRESIGN_MAX_FILE_BYTES = Math.floor(4.8 * GB)
/** One file of an anonymous form upload (`GET /uploads?formId=`). */
export const FORM_MAX_FILE_BYTES = 500 * MB

/**
 * The page size the service uses for a requested `limit`: the default when omitted,
 * capped silently at the maximum.
 */
export const effectiveLimit = (
  limit: number | undefined,
  defaultLimit: number,
  maxLimit: number
): number => (limit === undefined ? defaultLimit : Math.min(limit, maxLimit))
