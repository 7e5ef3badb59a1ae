/**
 * The one place where worksync records what the service's documents leave unsaid
 * ("not shown"). The client and the emulator both follow these choices; each entry
 * says what we chose and why. Change a choice here and in nothing else.
 *
 * Where the client reads something the documents leave open, it is tolerant
 * (accepts the plausible alternatives); the emulator emits exactly one form.
 */

/** Default header prefix: gives `svc-org-id`, `x-svc-company-id`, `svc-token-id`, ... */
export const DEFAULT_HEADER_PREFIX = "svc"

/**
 * Organization header on REST: both `<p>-org-id` and `x-<p>-company-id` are accepted
 * by the emulator; the client sends `<p>-org-id` on `/v1` calls and
 * `x-<p>-company-id` (with `x-<p>-project-id`) on REST `/uploads`, as documented.
 */
export const CANONICAL_ORG_HEADER = "org-id"

/** count-records answers `{ count: number }`. */
export const COUNT_RECORDS_RESPONSE = "{ count }" as const

/** update-record answers the updated record detail (the get-record shape). */
export const UPDATE_RECORD_RESPONSE = "record detail" as const

/**
 * Archiving: `update-record` also accepts `archived: boolean` (the documents name no
 * operation that sets it).
 */
export const ARCHIVE_VIA_UPDATE_RECORD = true

/**
 * REST error body: `{"error": {"code": string, "message": string, "issues"?: Issue[]}}`
 * with `Issue = {path: (string|number)[], message: string}` on 400. The client also
 * accepts `error` as a bare string and `issues` beside `error`.
 */
export const REST_ERROR_SHAPE = "{ error: { code, message, issues? } }" as const

/**
 * 401: no token, or a token the service does not know.
 * 403: a known token whose user has no access to the organization or workspace named,
 * or whose level does not allow the write (VIEW_ONLY and COMMENT_ONLY cannot write records).
 */
export const AUTH_401_VS_403 = "401 unknown/missing token; 403 known token without access" as const

/**
 * A record, list or workspace id that does not resolve is a 422 with code `NOT_FOUND`
 * (the REST status table has no 404; 422 is "ran but failed its own validation").
 */
export const NOT_FOUND_STATUS = 422

/**
 * Rate limit: a token bucket per token, refilled at the configured requests per second
 * with a burst of the same size; a limited request gets 429 with `Retry-After` in whole
 * seconds (rounded up, at least 1) and the same error body. Off unless configured.
 */
export const RATE_LIMIT_MODEL = "token bucket per token, Retry-After in seconds" as const

/** GraphQL error code location: `errors[i].extensions.code` (the client also reads `errors[i].code`). */
export const GRAPHQL_ERROR_CODE_PATH = ["extensions", "code"] as const

/**
 * list-lists answers `{ items: List[], totalCount }`, unpaged (the client also accepts a
 * bare array). A list is `{ id, title, position, workspaceId }`.
 * `POST /v1/lists` and RPC `create-list` take `{ workspaceId, title }` and answer the list.
 */
export const LIST_SHAPE = "{ id, title, position, workspaceId }" as const

/**
 * A workspace (list-workspaces item, `GET /v1/workspaces`) is
 * `{ id, slug, name, organizationId, createdAt, updatedAt }`.
 * `POST /v1/workspaces` and RPC `create-workspace` take `{ name, slug? }`.
 */
export const WORKSPACE_SHAPE = "{ id, slug, name, organizationId, createdAt, updatedAt }" as const

/**
 * list-users takes `{ workspaceId?, skip?, limit? }` (default 50, max 100, silently
 * capped) and answers `{ users, totalCount }` with users as
 * `{ id, firstName, lastName, fullName, email, accessLevel }`.
 */
export const USER_SHAPE = "{ id, firstName, lastName, fullName, email, accessLevel }" as const

/**
 * Tags: RPC `list-tags` `{ workspaceId }` answers `{ items, totalCount }` (unpaged);
 * `create-tag` `{ workspaceId, title, color? }` answers the tag `{ id, title, color }`.
 */
export const TAG_SHAPE = "{ id, title, color }" as const

/**
 * All-day dates: the service keeps an all-day flag; reads return the date as midnight
 * UTC (`YYYY-MM-DDT00:00:00.000Z`). A restore sends such a value back as a bare date.
 */
export const ALL_DAY_READ_FORM = "YYYY-MM-DDT00:00:00.000Z" as const

/**
 * Record detail `timezone` and `cover` are always strings (empty when unset); the
 * client also accepts null.
 */
export const DETAIL_EMPTY_STRING = ""

/**
 * Custom field `type` values: TEXT, NUMBER, CHECKBOX, DATE, SELECT_SINGLE, SELECT_MULTI,
 * FILE, TABLE. Table contents: `tableColumns: [{id, name, type}]`, a row's
 * `cells: [{columnId, value}]`, `tableTotals: [{columnId, value}]`. A FILE field's value
 * is in `text` as a JSON array of file uids.
 */
export const CUSTOM_FIELD_TYPES = [
  "TEXT",
  "NUMBER",
  "CHECKBOX",
  "DATE",
  "SELECT_SINGLE",
  "SELECT_MULTI",
  "FILE",
  "TABLE"
] as const

/**
 * Activity action `type` values the emulator writes (receivers must accept others).
 */
export const ACTIVITY_ACTION_TYPES = [
  "CREATE",
  "UPDATE_TITLE",
  "UPDATE_DESCRIPTION",
  "UPDATE_DONE",
  "UPDATE_ARCHIVED",
  "UPDATE_STARTED_AT",
  "UPDATE_DUE_DATE",
  "UPDATE_COLOR",
  "ADD_ASSIGNEE",
  "REMOVE_ASSIGNEE",
  "ADD_TAG",
  "REMOVE_TAG",
  "MOVE",
  "UPDATE_CUSTOM_FIELD"
] as const

/** Background reconciliation that finds no stored object deletes the PENDING file row. */
export const RECONCILE_MISSING_OBJECT = "row deleted" as const

/** After `updateWebhook` re-enables an UNHEALTHY webhook its status is HEALTHY. */
export const WEBHOOK_STATUS_AFTER_REENABLE = "HEALTHY" as const

/** Signing window of presigned storage URLs and of download redirects, in seconds. */
export const PRESIGN_TTL_SECONDS = 15 * 60
export const DOWNLOAD_URL_TTL_SECONDS = 5 * 60

/**
 * Storage allowance and per-file tier cap: unlimited unless an emulator option sets
 * them; seat limit likewise.
 */
export const PLAN_LIMITS_DEFAULT = "unlimited unless configured" as const

/** list-record-activity order: newest first (createdAt desc, then id desc). */
export const ACTIVITY_ORDER = "createdAt desc, id desc" as const

/** list-records order: position ascending, then id (stable across pages). */
export const RECORD_ORDER = "position asc, id asc" as const

/** list-files order: createdAt ascending, then id. */
export const FILE_ORDER = "createdAt asc, id asc" as const
