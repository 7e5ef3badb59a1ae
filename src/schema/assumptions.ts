/**
 * The one place where worksync records what the service's documents leave unsaid
 * ("not shown"). The client and the emulator both follow these choices; each entry
 * says what we chose and why. Change a choice here and in nothing else.
 *
 * Where the client reads something the documents leave open, it is tolerant
 * (accepts the plausible alternatives). The emulator's reference variant emits exactly
 * the form chosen here; its alt variant the "Alternative:" of each entry (CHOICES at the
 * end lists every entry with its kind and alternative).
 */

/**
 * Default header prefix: gives `svc-org-id`, `x-svc-company-id`, `svc-token-id`, ...
 * Alternative: none to serve: the client takes the prefix as a setting
 * (`--header-prefix`, `headerPrefix`), and the emulator has the same option.
 */
export const DEFAULT_HEADER_PREFIX = "svc"

/**
 * Organization header on REST: both `<p>-org-id` and `x-<p>-company-id` are accepted
 * by the emulator; the client sends `<p>-org-id` on `/v1` calls and
 * `x-<p>-company-id` (with `x-<p>-project-id`) on REST `/uploads`, as documented.
 * Alternative: each surface takes only the names its document shows: `<p>-org-id` on
 * `/v1` calls, GraphQL and the app's `/uploads` (with `<p>-workspace-id`),
 * `x-<p>-company-id` with `x-<p>-project-id` on REST `/uploads`; a name a surface does
 * not show is ignored (a `/v1` call without `<p>-org-id` acts as if none was sent).
 */
export const CANONICAL_ORG_HEADER = "org-id"

/**
 * count-records answers `{ count: number }`.
 * Alternative: `{ totalCount }` (or a bare number).
 */
export const COUNT_RECORDS_RESPONSE = "{ count }" as const

/**
 * update-record answers the updated record detail (the get-record shape).
 * Alternative: `{ success: true }`, as move-record and delete-record answer.
 */
export const UPDATE_RECORD_RESPONSE = "record detail" as const

/**
 * Archiving: `update-record` also accepts `archived: boolean` (the documents name no
 * operation that sets it).
 * Alternative: update-record takes only its documented fields: `archived` is accepted
 * with success and ignored (UNDOCUMENTED_INPUT_FIELDS), or a 400 naming the field; no
 * operation archives (archived records are only read).
 */
export const ARCHIVE_VIA_UPDATE_RECORD = true

/**
 * A field a write's documented input does not name (update-record's `archived`) is read
 * when it is one of ours (ARCHIVE_VIA_UPDATE_RECORD) and otherwise ignored.
 * Alternative: every field the documents do not name is accepted and ignored: the write
 * answers success and has none of that field's effect.
 */
export const UNDOCUMENTED_INPUT_FIELDS = "ours read, others ignored" as const

/**
 * REST error body: `{"error": {"code": string, "message": string, "issues"?: Issue[]}}`
 * with `Issue = {path: (string|number)[], message: string}` on 400. The client also
 * accepts `error` as a bare string and `issues` beside `error`.
 * Alternative: `issues` beside `error` (`{error: {code, message}, issues}`), each
 * issue's `path` a JSON Pointer string (`/assigneeIds/0`); `error` as a bare string is
 * another reading.
 */
export const REST_ERROR_SHAPE = "{ error: { code, message, issues? } }" as const

/**
 * 401: no token, or a token the service does not know.
 * 403: a known token whose user has no access to the organization or workspace named,
 * or whose level does not allow the write (VIEW_ONLY and COMMENT_ONLY cannot write records).
 * Alternative: 401 whenever the caller is not authenticated for what it names (no token,
 * an unknown token, or a token without access to the organization or workspace named);
 * 403 only for a level that does not allow the action.
 */
export const AUTH_401_VS_403 = "401 unknown/missing token; 403 known token without access" as const

/**
 * A record, list or workspace id that does not resolve is a 422 with code `NOT_FOUND`
 * (the REST status table has no 404; 422 is "ran but failed its own validation").
 * Alternative: 404 with code `NOT_FOUND`.
 */
export const NOT_FOUND_STATUS = 422

/**
 * Rate limit: a token bucket per token, refilled at the configured requests per second
 * with a burst of the same size; a limited request gets 429 with `Retry-After` in whole
 * seconds (rounded up, at least 1) and the same error body. Off unless configured.
 * Alternative: `Retry-After` as an HTTP date (RFC 9110 allows both forms).
 */
export const RATE_LIMIT_MODEL = "token bucket per token, Retry-After in seconds" as const

/**
 * GraphQL error code location: `errors[i].extensions.code` (the client also reads `errors[i].code`).
 * Alternative: `errors[i].code`, with no `extensions`.
 */
export const GRAPHQL_ERROR_CODE_PATH = ["extensions", "code"] as const

/**
 * list-lists answers `{ items: List[], totalCount }`, unpaged (the client also accepts a
 * bare array). A list is `{ id, title, position, workspaceId }`.
 * `POST /v1/lists` and RPC `create-list` take `{ workspaceId, title }` and answer the list.
 * Alternative: list-lists answers a bare array; a list is `{ id, title }` (the keys of
 * `todoList`).
 */
export const LIST_SHAPE = "{ id, title, position, workspaceId }" as const

/**
 * `POST /v1/lists` (the documents: "GET or POST /v1/lists | lists", shapes not shown)
 * creates a list, as RPC `create-list` does.
 * Alternative: `POST /v1/lists` is the POST form of list-lists: it answers the
 * workspace's lists (as list-lists does) and creates nothing; `create-list` is the same
 * handler (R-REST-CALL-07), so no operation creates a list.
 */
export const CREATE_LIST_READING = "POST /v1/lists creates" as const

/**
 * A workspace (list-workspaces item, `GET /v1/workspaces`) is
 * `{ id, slug, name, organizationId, createdAt, updatedAt }`.
 * `POST /v1/workspaces` and RPC `create-workspace` take `{ name, slug? }`.
 * Alternative: `{ id, name }`.
 */
export const WORKSPACE_SHAPE = "{ id, slug, name, organizationId, createdAt, updatedAt }" as const

/**
 * list-users takes `{ workspaceId?, skip?, limit? }` (default 50, max 100, silently
 * capped) and answers `{ users, totalCount }` with users as
 * `{ id, firstName, lastName, fullName, email, accessLevel }`.
 * Alternative: `{ id, email, fullName }`.
 */
export const USER_SHAPE = "{ id, firstName, lastName, fullName, email, accessLevel }" as const

/**
 * Tags: RPC `list-tags` `{ workspaceId }` answers `{ items, totalCount }` (unpaged);
 * `create-tag` `{ workspaceId, title, color? }` answers the tag `{ id, title, color }`.
 * Alternative: list-tags answers a bare array of tags.
 */
export const TAG_SHAPE = "{ id, title, color }" as const

/**
 * All-day dates: the service keeps an all-day flag; reads return the date as midnight
 * UTC (`YYYY-MM-DDT00:00:00.000Z`). A restore sends such a value back as a bare date.
 * Alternative: a floating date-time without zone, `YYYY-MM-DDT00:00:00`.
 */
export const ALL_DAY_READ_FORM = "YYYY-MM-DDT00:00:00.000Z" as const

/**
 * Record detail `timezone` and `cover` are always strings (empty when unset); the
 * client also accepts null.
 * Alternative: `timezone` names a zone even when none was set (`UTC`); `cover` stays ""
 * (null would break R-REST-RECORD-22).
 */
export const DETAIL_EMPTY_STRING = ""

/**
 * Custom field `type` values: TEXT, NUMBER, CHECKBOX, DATE, SELECT_SINGLE, SELECT_MULTI,
 * FILE, TABLE. Table contents: `tableColumns: [{id, name, type}]`, a row's
 * `cells: [{columnId, value}]`, `tableTotals: [{columnId, value}]`. A FILE field's value
 * is in `text` as a JSON array of file uids.
 * Alternative: other names for the types the documents do not name (`TEXT_SINGLE`,
 * `DROPDOWN`, `MULTI_SELECT`; CHECKBOX as documented); a table row's `cells` and the
 * `tableTotals` as objects keyed by column id.
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
 * Alternative: other names for every undocumented action (`CREATE_TODO`,
 * `UPDATE_DONE_STATUS`, `ASSIGN_USER`, ...; UPDATE_TITLE as documented).
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

/**
 * Background reconciliation that finds no stored object deletes the PENDING file row; an
 * object whose size is not the declared one counts as none (row and object removed).
 * Alternative: a stored object whose size is not the declared one confirms the row with
 * its real size. With no object at all the row goes under either reading: a third status
 * breaks R-FILE-STATUS-01, staying PENDING R-FILE-STATUS-06.
 */
export const RECONCILE_MISSING_OBJECT = "row deleted" as const

/**
 * After `updateWebhook` re-enables an UNHEALTHY webhook its status is HEALTHY.
 * Alternative: the status stays UNHEALTHY (enabled true) until a delivery to the webhook
 * succeeds, the health check first.
 */
export const WEBHOOK_STATUS_AFTER_REENABLE = "HEALTHY" as const

/**
 * Signing window of presigned storage (upload) URLs, in seconds.
 * Alternative: 5 minutes.
 */
export const PRESIGN_TTL_SECONDS = 15 * 60
/**
 * Lifetime of the signed URL a download redirect points at, in seconds.
 * Alternative: 60 seconds.
 */
export const DOWNLOAD_URL_TTL_SECONDS = 5 * 60

/**
 * Storage allowance and per-file tier cap: unlimited unless an emulator option sets
 * them; seat limit likewise.
 * Alternative: a finite plan: 100 GB of storage, 4 GB a file, 50 seats.
 */
export const PLAN_LIMITS_DEFAULT = "unlimited unless configured" as const

/**
 * list-record-activity order: newest first (createdAt desc, then id desc).
 * Alternative: oldest first (createdAt asc, id asc).
 */
export const ACTIVITY_ORDER = "createdAt desc, id desc" as const

/**
 * list-records order: position ascending, then id (stable across pages).
 * Alternative: newest first (createdAt desc, id desc), as stable.
 */
export const RECORD_ORDER = "position asc, id asc" as const

/**
 * A record's `updatedAt` moves on every change to it, comments, checklists and custom
 * field values included (the documents name the field, not what moves it). The client
 * does not rely on it: an incremental backup re-reads each record's detail and activity
 * at least every `--refresh-every` runs (default 7) whatever `updatedAt` says.
 * Alternative: comments (and checklist and custom field changes) leave `updatedAt` alone;
 * only the record's own fields move it.
 */
export const UPDATED_AT_ON_EVERY_CHANGE = true as const

/**
 * list-files order: createdAt ascending, then id.
 * Alternative: newest first (createdAt desc, id desc).
 */
export const FILE_ORDER = "createdAt asc, id asc" as const

/**
 * Webhook retries: after a failed attempt the next one waits 5 s, 10 s, 20 s, 40 s
 * (doubling from 5 s; the document says only "backoff"), so 5 attempts span the
 * 5 s first delay plus 75 s. The emulator scales these by its time scale.
 * Alternative: a linear backoff, 5 s, 10 s, 15 s, 20 s.
 */
export const WEBHOOK_RETRY_BACKOFF_MS = [5_000, 10_000, 20_000, 40_000] as const

/**
 * `WEBHOOK_HEALTH_CHECK` delivery body: the usual envelope with `previousValue` null and
 * `currentValue` the webhook's configuration `{id, uid, url, status, enabled, metadata}`
 * (no secret). It goes to the re-enabled webhook only, whatever its `events` filter.
 * Alternative: `currentValue` null (the webhook only in `webhook`).
 */
export const WEBHOOK_HEALTH_CHECK_BODY = "{ event, webhook, previousValue: null, currentValue: webhook }" as const

/**
 * Emails (webhook disabled after failures, invitation sent or re-sent) are not sent: the
 * emulator records each in its `email_outbox` table
 * `(id, kind, to_email, to_user_id, subject, body, ref_id, created_at)`; kinds
 * `WEBHOOK_DISABLED`, `INVITATION`, `INVITATION_RESENT`.
 * Alternative: none to serve: the table is how the emulator shows the emails a service
 * sends; no interface reads it.
 */
export const EMAIL_OUTBOX = "email_outbox table" as const

/**
 * Resource-style query parameters (`GET /v1/records`, `GET /v1/records/{id}`,
 * `DELETE /v1/records/{id}`): each argument is one parameter; arrays repeat the
 * parameter (`assigneeIds=a&assigneeIds=b`); booleans are `true`/`false`; numbers are
 * decimal. Readers also accept one comma-separated value for an array.
 * Alternative: an array is one comma-separated parameter (`assigneeIds=a,b`); a repeated
 * parameter keeps its last value.
 */
export const RESOURCE_QUERY_ENCODING = "repeated keys for arrays, true/false, decimal numbers" as const

/**
 * `PATCH /v1/records/{id}` takes the update-record body without `recordId` (it is in the
 * path) and answers like update-record. `GET /v1/lists?workspaceId=` answers like
 * list-lists; `POST /v1/lists` and `POST /v1/workspaces` like create-list and
 * create-workspace; `GET /v1/workspaces` like list-workspaces.
 * Alternative: `PATCH /v1/records/{id}` takes `workspaceId` in the query string, as GET
 * and DELETE do; the body holds only the changes.
 */
export const RESOURCE_STYLE_SHAPES = "same bodies and answers as the RPC operations" as const

/**
 * Size units: the documents write "MB" and "GB" without saying which. We take the
 * smaller reading, decimal: MB = 1,000,000 bytes and GB = 1,000,000,000 bytes (256 MB is
 * 256,000,000 bytes, 1 GB is 1,000,000,000, 4.8 GB is 4,800,000,000), in the client and
 * the emulator alike. The smaller reading is the safe one for a client: what it sends
 * fits a service that means either reading, and a client tuned to the emulator never
 * sends what a stricter service refuses. The alternative is binary units (MB = 1024^2
 * and GB = 1024^3 bytes, so 256 MB = 268,435,456 and 4.8 GB = 5,153,960,755 bytes); a
 * service that means them accepts everything we send. The limits live in limits.ts.
 */
export const SIZE_UNITS = { MB: 1_000_000, GB: 1_000_000_000 } as const

/**
 * `startedAt` / `duedAt` inputs: a bare `YYYY-MM-DD` (a real calendar day) is all-day;
 * a timed value must be an ISO 8601 date-time with `Z` or an offset
 * (`2024-05-01T09:30:00Z`, `...+02:00`), because a zoneless time has no single
 * instant. Reads accept any ISO 8601 date-time, with or without a zone.
 * Alternative: a date-time without zone is accepted and read as UTC.
 */
export const DATE_INPUT_FORMS = ["YYYY-MM-DD", "YYYY-MM-DDTHH:mm[:ss[.sss]](Z|±HH:mm)"] as const

/**
 * `inviteUser` input: `email` and `accessLevel` are required strings (accessLevel one
 * of the six levels); `projectId`, `companyId`, `roleId` optional strings and
 * `projectIds` an optional string list.
 * Alternative: `accessLevel` is optional, MEMBER when omitted.
 */
export const INVITE_USER_INPUT = "{ email, accessLevel, projectId?, companyId?, projectIds?, roleId? }" as const

/**
 * Webhook operations: `createWebhook(input: {url, name?, events?, projectIds?})`
 * and `updateWebhook(input: {id, url?, name?, events?, projectIds?, enabled?})`
 * return a Webhook; `disableWebhook(id)` returns the Webhook; `deleteWebhook(id)`
 * returns Boolean. `webhooks` returns `{ items: Webhook[] }`.
 * Alternative: `disableWebhook(id)` returns Boolean, like deleteWebhook.
 */
export const WEBHOOK_INPUTS = "create { url, name?, events?, projectIds? }; update { id, ...same?, enabled? }" as const

/**
 * `__typename` of list-record-activity items: comments and actions (reads accept any string).
 * Alternative: `RecordComment` and `RecordAction`.
 */
export const ACTIVITY_TYPENAMES = { comment: "Comment", action: "Action" } as const

/**
 * File item `folder` and `todo` are null or an object with at least `id` (the emulator
 * sends `{id, title}` for `todo` and `{id, name}` for `folder`); `user` is
 * `{id, fullName, email}` (the client also accepts null, e.g. for anonymous form uploads).
 * Alternative: `folder` and `todo` as `{ id }`.
 */
export const FILE_ITEM_REFS = "folder { id, name } | null; todo { id, title } | null" as const

/**
 * Tag `color` is a string, or null when the tag was created without one.
 * Alternative: `color` is always a string, "" when the tag has none.
 */
export const TAG_COLOR_NULLABLE = true

/**
 * Presigned flow details (`GET /uploads`, `PUT /uploads/{uid}/confirm`):
 * - a filename whose extension is unknown uploads as `application/octet-stream`; the
 *   extension is the lowercase letters/digits after the last dot, and a name without one
 *   (`README`, `.env`, `a.`) is the documented 400;
 * - `key` is limited to `[A-Za-z0-9._-]{1,128}`; re-presigning one's own PENDING key
 *   issues a fresh URL for the same row, any other reuse is 400 `KEY_IN_USE`;
 * - a size over the plan's per-file cap or storage allowance is 400 `PLAN_LIMIT_REACHED`;
 * - `formId` naming no form is 404 `FORM_NOT_FOUND`; an inactive form is 403 `FORM_INACTIVE`;
 * - without `size`, confirm (and reconciliation) accept the stored object whatever its
 *   size, up to the flow's maximum (4.8 GB, 500 MB for forms);
 * - errors use the REST error body (REST_ERROR_SHAPE) on both mounts.
 * Alternative: an extension the service does not know is the documented 400 ("extension
 * undeterminable"); a key is never presigned twice (KEY_IN_USE, also for one's own
 * PENDING row).
 */
export const PRESIGN_DETAILS = "octet-stream fallback; key reuse; plan limit 400; form 404/403" as const

/**
 * Confirming an already CONFIRMED file answers 200 `{message, status: "CONFIRMED"}` again.
 * Alternative: confirming a CONFIRMED file is a 400 (`ALREADY_CONFIRMED`): confirm is
 * the PENDING to CONFIRMED transition only.
 */
export const CONFIRM_IDEMPOTENT = true

/**
 * A presigned storage URL is claimed when its PUT starts; a PUT that fails midway
 * releases the claim, so only a URL whose bytes landed is spent.
 * Alternative: the URL is spent when its PUT starts, even when the upload fails midway
 * (a retry presigns again).
 */
export const PRESIGN_SINGLE_USE = "claimed at start, released on a failed upload" as const

/**
 * Serving: the filename segment must decode to the file's exact name, else 404.
 * Thumbnails (`50x50`, `500x500`) answer 200 `image/png` placeholders of that size
 * directly (no redirect); non-images and PENDING files are 404.
 * Alternative: any filename segment serves the file, downloads and thumbnails alike (the
 * uid names it).
 */
export const SERVE_NAME_MUST_MATCH = true

/**
 * list-files: `workspaceId` is optional; without it the list holds every file of the
 * workspaces the caller can see in the organization header's organization (all their
 * organizations without one) plus organization-level files. `folder` is `{id, name}`,
 * `todo` `{id, title}`; `user` is null only for an anonymous form upload of a form with
 * no creator.
 * Alternative: `workspaceId` is required (400 without it).
 */
export const LIST_FILES_WITHOUT_WORKSPACE = "caller's visible workspaces + org-level files" as const

/**
 * CSV import: a date cell with a time but no zone (`2024-05-01 09:30`, Jira's
 * `24/Jan/24 10:15 AM`) is read as UTC and sent as a timed ISO timestamp; a bare
 * `YYYY-MM-DD` stays an all-day date. The documents define no zone-less form.
 * Alternative: none to serve: how the client reads other tools' CSV files (another
 * choice would be the machine's zone).
 */
export const CSV_TIMESTAMP_WITHOUT_ZONE = "UTC" as const

/**
 * CSV import row numbers (the `row` column of the rejects file) are the physical line
 * on which the record starts, the header being line 1, so they match a text editor and,
 * without quoted line breaks, a spreadsheet.
 * Alternative: none to serve: how the client numbers CSV rows (another choice would be
 * data rows from 1).
 */
export const CSV_ROW_NUMBERING = "line where the record starts; header is line 1" as const

/**
 * How a migration from another tool (import-csv --preset jira|asana|trello|clickup)
 * carries what the service has no field for, where the exports and the documents leave
 * it open:
 * - a comment opens with one attribution line, "NAME wrote on DATE (Tool):", since the
 *   interface cannot set a comment's author or date; an attachment travels in a comment of
 *   its own ("NAME attached FILE on DATE (Tool):" and its URL);
 * - a sub-task is a record of its own and an item of its parent's "Sub-tasks" checklist;
 * - Jira's issue key, reporter and creation date open the description as one line;
 *   priority and issue type become the tags "Priority: P" and "Type: T";
 * - a Trello card of an archived list is archived; Asana's "Parent task" names the parent
 *   by title (the export has no parent id); ClickUp's Checklists and Comments cells are
 *   read in every JSON shape seen (arrays or objects keyed by checklist name).
 * Alternative: none to serve: how the client carries another tool's data (other choices
 * would be comments posted bare, sub-tasks as records only, or Jira's fields left out).
 */
export const MIGRATION_READINGS = "attribution lines; sub-tasks as records and checklist items" as const

/**
 * A reply's activity item (list-record-activity) names the comment it answers as
 * `parentId` (not documented; the GraphQL Comment has `parentId`, and createComment takes
 * one). Only on replies.
 * Alternative: the documented keys only; a reply cannot be told from a comment.
 */
export const COMMENT_PARENT_SHOWN = "replies carry parentId in activity items" as const

/**
 * How `migrate` and `restore` carry a workspace where the documents leave it open:
 * - a comment opens with "Originally by NAME on YYYY-MM-DD HH:MM UTC" (its author and
 *   date cannot be set), unless --no-attribution; a reply keeps its parent only where the
 *   service shows one on the activity item (`parentId` or `parent.id`, not documented),
 *   else it is a comment of its own;
 * - a source OWNER is invited as ADMIN (ownership is one slot, and an organization owner
 *   added to a workspace is ADMIN anyway); members are invited at their level, since the
 *   documents show no read of which custom role a member holds;
 * - a FILE custom field value goes into the target's FILE field of the same name, found by
 *   list-custom-fields (beyond the documents) or in its records' details; none is created;
 * - restore compares with the target as it is now: the description (not in the listing)
 *   counts as the same when `updatedAt` is the run's, the journal restored this content, or
 *   get-record shows it.
 * Alternative: none to serve: how the client carries a workspace (other choices would be
 * comments posted bare, owners invited as OWNER and refused, or fields created by name).
 */
export const WORKSPACE_MIGRATION_READINGS = "attribution line; parent where shown; OWNER as ADMIN; file fields by name" as const

/**
 * How a reference between records is carried (import-csv presets and migrate; src/sync/
 * references.ts). The documents show no form for one record to name another (no record
 * URL, no mention element in a description or comment), so the reference stays text: its
 * token as the source wrote it, then the target record's id, `ABC-12 (record ID)`. What
 * counts as a reference: a Jira issue key, a Trello card URL (with or without the card's
 * name), an Asana task URL, a ClickUp task URL, of an item of the same export; in
 * `migrate`, a source record's id (as the record detail's `id` gives it; neither its
 * `uid` nor any URL, which the documents do not show for a record), of a record of the
 * same source workspace. A token of the same kind that names no item of the migration
 * (for migrate: of the shape of the source's record ids) is left as written and counted.
 * A description is rewritten by a second update once every record it names exists; a
 * comment is written with its references resolved; the marks are read as the text
 * written when a later pass tells a target edit from it.
 * Alternative: none to serve: how the client writes a reference (other choices would be to
 * replace the token by "record ID", to write an HTML link once the documents show a
 * record URL, or to leave references as the source wrote them).
 */
export const RECORD_REFERENCE_FORM = "token kept, then (record TARGET_ID)" as const

/**
 * How `mirror` reads webhook deliveries, whose value shapes are not shown: a record
 * event's `currentValue` is written as it is only when it holds every field of a record
 * detail (documented names), and only when newer (`updatedAt`) than the stored state; any
 * other record-naming event has the record read again; a change that alters records
 * without naming them (a list renamed, a tag or custom field definition changed) is
 * closed by an incremental backup. A duplicate is recognised by the SHA-256 of the raw
 * body within 10 minutes (deliveries carry no id).
 * Alternative: none to serve: how the client applies deliveries (another choice would be
 * to read every record again on every event, exact but a request per event).
 */
export const MIRROR_READINGS = "full details written if newer; others read again; gaps reconciled; duplicates by body hash" as const

/**
 * Exactly-once creates: an op whose create may have been applied is reconciled by
 * search-records on its exact title (then list-records with `search` when the search
 * page is full), keeping records in the expected list, created no earlier than the
 * attempt minus this clock-skew margin, and not already mapped by the journal.
 * Alternative: none to serve: the client's own margin (another value works the same
 * against any service).
 */
export const RECONCILE_CLOCK_SKEW_MS = 5 * 60_000

/**
 * An invitation expires this many days after it is sent or re-sent.
 * Alternative: 14 days.
 */
export const INVITATION_TTL_DAYS = 7

/**
 * Webhooks per organization (the document says counts are enforced per organization, not the number); beyond it createWebhook is PLAN_LIMIT_REACHED.
 * Alternative: 10.
 */
export const WEBHOOKS_PER_ORGANIZATION = 100

/**
 * REST operations beyond the documented ones (R-REST-CALL-02 names the families, not
 * their shapes). All are RPC `POST /v1/<name>`; ids are strings; `workspaceId` accepts an
 * id or a slug; writes answer the written object (or `{success: true}` for deletes);
 * listings answer `{items, totalCount}`:
 * - workspaces: `get-workspace {workspaceId}`, `update-workspace {workspaceId, name?}`;
 *   `create-workspace` also creates a first list "To do" and makes the creator ADMIN;
 * - lists: `update-list {workspaceId, listId, title?, position?}`, `delete-list {workspaceId, listId}`
 *   (its records go to the trash);
 * - tags: `update-tag {workspaceId, tagId, title?, color?}`, `delete-tag {workspaceId, tagId}`,
 *   `add-record-tag` / `remove-record-tag {workspaceId, recordId, tagId}` (answer the record detail);
 * - checklists: `create-checklist {workspaceId, recordId, title}`, `update-checklist
 *   {workspaceId, checklistId, title?, position?}`, `delete-checklist {workspaceId, checklistId}`,
 *   `create-checklist-item {workspaceId, checklistId, title, done?, startedAt?, duedAt?}`,
 *   `update-checklist-item {workspaceId, checklistItemId, title?, done?, position?, startedAt?, duedAt?}`,
 *   `delete-checklist-item {workspaceId, checklistItemId}`;
 * - comments: `list-comments {workspaceId, recordId, skip?, limit?}` (default 20),
 *   `create-comment {workspaceId, recordId, html? | text?, parentId?}` (answers the activity
 *   item plus `recordId`), `update-comment {workspaceId, commentId, html? | text?}` (author only),
 *   `delete-comment {workspaceId, commentId}`;
 * - custom fields: `list-custom-fields {workspaceId}` (items `{id, name, type, position,
 *   customFieldOptions, tableColumns}`), `create-custom-field {workspaceId, name, type,
 *   options?: [{title, color?}], tableColumns?: [{name, type?}]}`, `update-custom-field
 *   {workspaceId, customFieldId, name?}`, `delete-custom-field`, `set-record-custom-field
 *   {workspaceId, recordId, customFieldId, text? | number? | checked? | optionIds? | tableRows?}`
 *   (the key matching the type; null clears; answers the record detail);
 * - users: `get-current-user {}`;
 * - activity: `list-activity {workspaceId?, skip?, limit?}` (items are activity items plus
 *   `recordId` and `workspaceId`);
 * - documents: `list-documents {workspaceId?, skip?, limit?}` (default 20), `create-document
 *   {workspaceId, title, html?}`, `get-document {workspaceId, documentId}`; a document is
 *   `{id, title, html, workspaceId, createdAt, updatedAt}`;
 * - saved views: `list-saved-views {workspaceId?, skip?, limit?}` (default 100),
 *   `create-saved-view {workspaceId, name, config?}`;
 * - dependencies: `list-record-dependencies {workspaceId, recordId}`, `create-record-dependency
 *   {workspaceId, recordId, dependsOnId, type?: BLOCKED_BY | RELATES_TO}`,
 *   `delete-record-dependency {workspaceId, dependencyId}`;
 * - `list-forms`, `list-form-fields`, `list-reports`, `list-charts`, `list-dashboards`,
 *   `list-automations` `{workspaceId?}`: listings (only forms hold data in the emulator);
 * - `list-webhooks {}`: the caller's webhooks as the GraphQL Webhook shape with `secret`
 *   null (read-only; webhooks are managed through GraphQL).
 * Alternative: the same operations and inputs, with answers in the other reading:
 * listings bare arrays (the paged ones `{items, pageInfo: {totalItems, hasNextPage}}`),
 * creates the created object with documented keys only, updates and other writes `{
 * success: true }`, reads documented keys only.
 */
export const EXTRA_OPERATIONS = "see the comment above" as const

/**
 * list-records details the documents leave open: without `archived` both archived and
 * live records are listed; `assigneeIds` and `tagIds` match records having any of the
 * ids; `search` is a case-insensitive substring of the title; `startCursor`/`endCursor`
 * are the ids of the first and last item (null on an empty page). A `listId` or
 * `workspaceId` that does not resolve is a 422 NOT_FOUND, not an empty page.
 * Alternative: without `archived` only live records (as search-records); `assigneeIds`
 * and `tagIds` match records having all the ids; cursors are opaque strings.
 */
export const LIST_RECORDS_DETAILS = "archived both by default; any-of id filters; cursors are item ids" as const

/**
 * Record detail details: `checklistCount` and `checklistCompletedCount` count checklist
 * items (all, and done); `customFields` lists every custom field of the record's
 * workspace with this record's value (null/empty when unset); `customFieldOptions` are
 * the selected options; `tableColumns`, `tableRows`, `tableTotals` are null except on
 * TABLE fields (totals sum NUMBER columns, other columns total null).
 * Alternative: checklist counts count checklists (completed: every item done);
 * `customFields` only the fields set on the record; `tableColumns`, `tableRows` and
 * `tableTotals` empty outside TABLE fields.
 */
export const RECORD_DETAIL_DETAILS = "checklist counts are items; customFields are all of the workspace" as const

/**
 * Webhook event values (`previousValue` / `currentValue`): record events (`TODO_*` except
 * the checklist ones) carry the record detail; `TODO_CHECKLIST_*` the checklist
 * `{id, title, position, checklistItems, recordId}`; `TODO_CHECKLIST_ITEM_*` the item plus
 * `checklistId` and `recordId`; `TODO_LIST_*` the list; `TAG_*` the tag; `CUSTOM_FIELD_*` the
 * definition; `COMMENT_*` the activity item plus `recordId`. A write that changes several
 * things emits one event per change, each with the same before and after values.
 * Alternative: record events carry the record summary (a list-records item); lists are
 * `{ id, title }`, tags have a string color, activity items the documented keys.
 */
export const EVENT_VALUE_SHAPES = "record detail for record events; the entity itself otherwise" as const

/**
 * REST transport details: an RPC call without a body, or with a body not sent as
 * `application/json`, is a 400; an unknown path or operation is a 404 and a known path with
 * the wrong method a 405 (both with the usual error body). Without an organization header
 * a call acts in every organization of the token's user. Deleted comments stay in
 * list-record-activity with `deletedAt` set and `html` "".
 * Alternative: an RPC call without a body reads as `{}` and any Content-Type is read as
 * JSON; an unknown operation is a 400 `UNKNOWN_OPERATION`; a known path with another
 * method a 404; without an organization header a call acts in the user's first
 * organization; deleted comments leave list-record-activity.
 */
export const REST_TRANSPORT_DETAILS = "400 without a JSON body; 404 unknown path; 405 wrong method" as const

/**
 * GraphQL transport: an executed request answers HTTP 200 (failures in `errors`); a
 * missing or unknown token answers 401 with code `UNAUTHENTICATED`; a method other than
 * POST 405. Codes beside the documented ones: `GRAPHQL_PARSE_FAILED`,
 * `GRAPHQL_VALIDATION_FAILED`, `BAD_USER_INPUT` for variables that do not fit the schema
 * (a required input field missing), `NOT_FOUND` for a record, comment, custom field or
 * checklist item that does not exist, `WEBHOOK_NOT_FOUND` (also another user's webhook),
 * `INVITATION_NOT_FOUND`, `INTERNAL_SERVER_ERROR`. Every operation sent with an
 * organization header naming a suspended organization is `COMPANY_BANNED`.
 * Alternative: every answer is HTTP 200: a missing or unknown token is `UNAUTHENTICATED`
 * in `errors`.
 */
export const GRAPHQL_TRANSPORT = "200 with errors; 401 UNAUTHENTICATED; 405 non-POST" as const

/**
 * GraphQL `File.project` is null for an organization-level file (uploadFile without
 * projectId); the document types it `Workspace!`, which such a file cannot satisfy.
 * A multipart file's `type` is its part's Content-Type unless that is missing or
 * `application/octet-stream`, then the type of its extension; `extension` is "" when the
 * name has none.
 * Alternative: `project: Workspace!` as documented, so selecting `project` of an
 * organization-level file is a GraphQL error; only the documented File fields exist.
 */
export const FILE_PROJECT_NULLABLE = true

/**
 * Workspace arguments of `workspaceUserList`, `assignees`, `invitations` and
 * `workspaceUserRoles` are optional and default to the `<p>-workspace-id` header; with
 * neither the answer is PROJECT_NOT_FOUND (the header is what workspace-scoped operations
 * need). `workspaceUserList(projectId, first = 50 (max 100), skip = 0, search)` lists the
 * workspace's members and the organization's OWNER and ADMINs (who see every workspace),
 * in membership order; `search` matches name or email. `assignees(projectId)` are its
 * users at OWNER, ADMIN, MEMBER or CLIENT. `currentUser` is a User
 * `{id, firstName, lastName, fullName, email, image {thumbnail, small, medium, large}}`.
 * Alternative: `projectId` is a required argument (no default from the header); User has
 * only its documented fields `{id, fullName, email, image {medium}, projectLevel}`.
 */
export const USER_QUERIES = "projectId defaults to the header; first 50/100; assignees OWNER..CLIENT" as const

/**
 * Invitations. Existing users are added at once (organization and workspace
 * memberships) and get an invitation row already accepted; a new address gets a pending
 * invitation and an INVITATION email in the outbox. Inviting a pending address again
 * refreshes that invitation. Seats in use are organization members plus distinct
 * addresses with a pending invitation; a new member or address needing a seat beyond the
 * limit (organization `seat_limit`, else the emulator's) is PLAN_LIMIT_REACHED
 * "Seat limit reached: N of M seats are in use". A new member's organization level is
 * the invited level, except OWNER, which becomes ADMIN (ownership is single-slot).
 * Check order: scope (PROJECT_NOT_FOUND / COMPANY_NOT_FOUND / COMPANY_BANNED / FORBIDDEN
 * for an organization-level invite by a non-OWNER), ADD_SELF, the level matrix
 * (FORBIDDEN), roleId (PROJECT_USER_ROLE_NOT_FOUND; organization-level invites need it in
 * one of `projectIds`), USER_ALREADY_IN_THE_PROJECT, seats. `invitations(projectId,
 * pending)` lists invitations to that workspace (also organization-level ones naming it):
 * `pending: true` only pending, otherwise pending and accepted; `myInvitations` the
 * caller's pending ones. `resendInvitation` and `cancelInvitation` need the inviter or an
 * ADMIN/OWNER of the scope; a revoked or unknown one is INVITATION_NOT_FOUND, an accepted
 * one BAD_USER_INPUT. Invitation has also `createdAt`, `accepted`, `project`,
 * `organization`, `role`.
 * Alternative: an existing user gets a pending invitation like a new address (nothing is
 * added until it is accepted), except the organization OWNER, whom R-INVITE-10 adds at
 * once, as ADMIN.
 */
export const INVITE_EXISTING_USERS = "added directly, invitation row accepted" as const

/**
 * Removal: `removeProjectUser` and `removeOrganizationUser` need an ADMIN or OWNER of the
 * scope (else FORBIDDEN); a target outside it is USER_NOT_FOUND; removing an OWNER (the
 * workspace level or the organization owner) is FORBIDDEN. `operationId` is a fresh id.
 * Removing an organization user also removes their memberships of its workspaces.
 * Alternative: `operationId` is null (a removal is not an asynchronous operation).
 */
export const USER_REMOVAL = "ADMIN+ may remove; OWNER never; operationId fresh" as const

/**
 * Roles: ProjectUserRole `{id, name, projectId, isRecordsEnabled, canCreateRecords,
 * canEditRecords, canDeleteRecords, isFilesEnabled, canUploadFiles, isCommentsEnabled,
 * canInviteUsers, createdAt, updatedAt}`, every toggle defaulting to true.
 * `createWorkspaceUserRole(input: {projectId, name, ...toggles})`,
 * `updateWorkspaceUserRole(input: {id, name?, ...toggles?})` and `workspaceUserRole(id)`
 * return the role, `deleteWorkspaceUserRole(id)` true, `workspaceUserRoles(projectId)`
 * the list. Creating, changing and deleting need a workspace ADMIN or OWNER (FORBIDDEN);
 * an unknown role is PROJECT_USER_ROLE_NOT_FOUND. Members holding a role with
 * `isFilesEnabled` or `canUploadFiles` false have uploads disabled
 * (FILES_DISABLED_FOR_ROLE); deleting a role clears it from its members.
 * Alternative: omitted toggles default to false; a role has only its documented fields
 * `{id, name, canCreateRecords, canDeleteRecords}`.
 */
export const ROLE_OPERATIONS = "flat toggles default true; file toggles drive FILES_DISABLED_FOR_ROLE" as const

/**
 * Comments over GraphQL: `createComment` on DISCUSSION or STATUS_UPDATE takes its
 * workspace from the workspace header (those entities are not emulated; `categoryId` is
 * kept as given). An attachment element naming an unknown file, a file of another
 * organization or a PENDING file is BAD_USER_INPUT (nothing is created). The Comment type
 * also has `category`, `categoryId`, `parentId`, `updatedAt`, `user` and `files`;
 * `updateComment(input: {id, html, text, tiptap?})` (author only) and `deleteComment(id)`
 * (author or ADMIN) fire COMMENT_UPDATED and COMMENT_DELETED. `createRecordCustomFieldFile`
 * adds the file's uid to the FILE field's list (CUSTOM_FIELD_TYPES) and fires
 * TODO_CUSTOM_FIELD_UPDATED; only CONFIRMED files of the organization (else BAD_USER_INPUT).
 * Alternative: an attachment element naming an unusable file is ignored (the comment is
 * created without it); Comment has only `{id, html, text, createdAt}`; no updateComment
 * or deleteComment.
 */
export const GRAPHQL_COMMENTS = "other categories use the workspace header; bad attachments refuse" as const

/**
 * Checklist item assignees (behind TODO_CHECKLIST_ITEM_ASSIGNEE_ADDED / _REMOVED, which no
 * REST operation changes): GraphQL `addChecklistItemAssignee` and
 * `removeChecklistItemAssignee(input: {checklistItemId, userId})` return the ChecklistItem
 * `{id, title, done, position, startedAt, duedAt, checklistId, todoId, assignees}`; the
 * event values are the item plus `checklistId`, `recordId` and `assignees`.
 * Alternative: no such GraphQL mutations; REST `update-checklist-item` takes
 * `assigneeIds` (replacing the item's assignees, like update-record's) and fires the events.
 */
export const CHECKLIST_ITEM_ASSIGNEES = "GraphQL add/removeChecklistItemAssignee" as const

/**
 * Webhook management details: `webhooks` is `{items, totalCount}` of the caller's own
 * webhooks; `createWebhook` without the organization header (or naming one the caller is
 * not in) is COMPANY_NOT_FOUND, a url that is not http(s) BAD_USER_INPUT, `projectIds`
 * outside the organization PROJECT_NOT_FOUND. `updateWebhook` with `enabled: false`
 * stops delivery and keeps the status; `enabled: true` on a disabled or UNHEALTHY
 * webhook sets it HEALTHY and sends WEBHOOK_HEALTH_CHECK. Deliveries are logged in
 * `webhook_deliveries` (one row per event and webhook: status QUEUED, DELIVERED, FAILED
 * or DROPPED when the webhook was disabled or deleted meanwhile) and
 * `webhook_delivery_attempts` (delay and timeout used, status code or error). Each
 * delivery runs on its own schedule, so a receiver may see events out of order.
 * Alternative: `webhooks` is `{ items }` only.
 */
export const WEBHOOK_MANAGEMENT = "own webhooks only; delivery log tables" as const

/**
 * The emulator scales webhook delays by its time scale, but an attempt's timeout never
 * drops below 1 s (or 7 s when unscaled): a shorter one would turn a slow but healthy
 * receiver on a busy machine into a failure.
 * Alternative: none to serve: a floor of the emulator's own time scale; unscaled, the
 * documented 7 s holds.
 */
export const WEBHOOK_MIN_TIMEOUT_MS = 1_000

/**
 * `uploadFiles` returns its File list in the order of the uploaded parts (the document
 * says only "list of File"). The emulator answers in that order; the file copy also
 * matches each result by name and size, so another order would still be read correctly.
 * Alternative: another order (the alt variant answers in reverse, as if the last part
 * finished first).
 */
export const UPLOAD_FILES_RESULT_ORDER = "input order" as const

/**
 * Every choice above, in one machine-readable place: what kind of choice it is and its
 * other plausible reading (the "Alternative:" of its comment).
 * - "service": a reading of the service's documents where they are silent; the emulator's
 *   alt variant (`startEmulator({ variant: "alt" })`) serves the alternative, and
 *   test/emulator/variant-alt.test.ts probes each one against both variants;
 * - "client": the client's own behaviour, no reading of the service;
 * - "configuration": a setting the client takes, the same for any service;
 * - "emulator": how the emulator shows what a service does out of sight.
 * The last three have nothing for the emulator to serve.
 */
export type ChoiceKind = "service" | "client" | "configuration" | "emulator"

export interface Choice {
  readonly kind: ChoiceKind
  readonly alternative: string
}

export const CHOICES = {
  DEFAULT_HEADER_PREFIX: {
    kind: "configuration",
    alternative:
      "none to serve: the client takes the prefix as a setting (`--header-prefix`, `headerPrefix`), and the emulator has the same option."
  },
  CANONICAL_ORG_HEADER: {
    kind: "service",
    alternative:
      "each surface takes only the names its document shows: `<p>-org-id` on `/v1` calls, GraphQL and the app's `/uploads` (with `<p>-workspace-id`), `x-<p>-company-id` with `x-<p>-project-id` on REST `/uploads`; a name a surface does not show is ignored (a `/v1` call without `<p>-org-id` acts as if none was sent)."
  },
  COUNT_RECORDS_RESPONSE: {
    kind: "service",
    alternative:
      "`{ totalCount }` (or a bare number)."
  },
  UPDATE_RECORD_RESPONSE: {
    kind: "service",
    alternative:
      "`{ success: true }`, as move-record and delete-record answer."
  },
  ARCHIVE_VIA_UPDATE_RECORD: {
    kind: "service",
    alternative:
      "update-record takes only its documented fields: `archived` is accepted with success and ignored (UNDOCUMENTED_INPUT_FIELDS), or a 400 naming the field; no operation archives (archived records are only read)."
  },
  UNDOCUMENTED_INPUT_FIELDS: {
    kind: "service",
    alternative:
      "every field the documents do not name is accepted and ignored: the write answers success and has none of that field's effect."
  },
  REST_ERROR_SHAPE: {
    kind: "service",
    alternative:
      "`issues` beside `error` (`{error: {code, message}, issues}`), each issue's `path` a JSON Pointer string (`/assigneeIds/0`); `error` as a bare string is another reading."
  },
  AUTH_401_VS_403: {
    kind: "service",
    alternative:
      "401 whenever the caller is not authenticated for what it names (no token, an unknown token, or a token without access to the organization or workspace named); 403 only for a level that does not allow the action."
  },
  NOT_FOUND_STATUS: {
    kind: "service",
    alternative:
      "404 with code `NOT_FOUND`."
  },
  RATE_LIMIT_MODEL: {
    kind: "service",
    alternative:
      "`Retry-After` as an HTTP date (RFC 9110 allows both forms)."
  },
  GRAPHQL_ERROR_CODE_PATH: {
    kind: "service",
    alternative:
      "`errors[i].code`, with no `extensions`."
  },
  LIST_SHAPE: {
    kind: "service",
    alternative:
      "list-lists answers a bare array; a list is `{ id, title }` (the keys of `todoList`)."
  },
  CREATE_LIST_READING: {
    kind: "service",
    alternative:
      "`POST /v1/lists` is the POST form of list-lists: it answers the workspace's lists (as list-lists does) and creates nothing; `create-list` is the same handler (R-REST-CALL-07), so no operation creates a list."
  },
  WORKSPACE_SHAPE: {
    kind: "service",
    alternative:
      "`{ id, name }`."
  },
  USER_SHAPE: {
    kind: "service",
    alternative:
      "`{ id, email, fullName }`."
  },
  TAG_SHAPE: {
    kind: "service",
    alternative:
      "list-tags answers a bare array of tags."
  },
  ALL_DAY_READ_FORM: {
    kind: "service",
    alternative:
      "a floating date-time without zone, `YYYY-MM-DDT00:00:00`."
  },
  DETAIL_EMPTY_STRING: {
    kind: "service",
    alternative:
      "`timezone` names a zone even when none was set (`UTC`); `cover` stays \"\" (null would break R-REST-RECORD-22)."
  },
  CUSTOM_FIELD_TYPES: {
    kind: "service",
    alternative:
      "other names for the types the documents do not name (`TEXT_SINGLE`, `DROPDOWN`, `MULTI_SELECT`; CHECKBOX as documented); a table row's `cells` and the `tableTotals` as objects keyed by column id."
  },
  ACTIVITY_ACTION_TYPES: {
    kind: "service",
    alternative:
      "other names for every undocumented action (`CREATE_TODO`, `UPDATE_DONE_STATUS`, `ASSIGN_USER`, ...; UPDATE_TITLE as documented)."
  },
  RECONCILE_MISSING_OBJECT: {
    kind: "service",
    alternative:
      "a stored object whose size is not the declared one confirms the row with its real size. With no object at all the row goes under either reading: a third status breaks R-FILE-STATUS-01, staying PENDING R-FILE-STATUS-06."
  },
  WEBHOOK_STATUS_AFTER_REENABLE: {
    kind: "service",
    alternative:
      "the status stays UNHEALTHY (enabled true) until a delivery to the webhook succeeds, the health check first."
  },
  PRESIGN_TTL_SECONDS: {
    kind: "service",
    alternative:
      "5 minutes."
  },
  DOWNLOAD_URL_TTL_SECONDS: {
    kind: "service",
    alternative:
      "60 seconds."
  },
  PLAN_LIMITS_DEFAULT: {
    kind: "service",
    alternative:
      "a finite plan: 100 GB of storage, 4 GB a file, 50 seats."
  },
  ACTIVITY_ORDER: {
    kind: "service",
    alternative:
      "oldest first (createdAt asc, id asc)."
  },
  RECORD_ORDER: {
    kind: "service",
    alternative:
      "newest first (createdAt desc, id desc), as stable."
  },
  FILE_ORDER: {
    kind: "service",
    alternative:
      "newest first (createdAt desc, id desc)."
  },
  UPDATED_AT_ON_EVERY_CHANGE: {
    kind: "service",
    alternative:
      "comments (and checklist and custom field changes) leave `updatedAt` alone; only the record's own fields move it (the alt variant does so for comments)."
  },
  WEBHOOK_RETRY_BACKOFF_MS: {
    kind: "service",
    alternative:
      "a linear backoff, 5 s, 10 s, 15 s, 20 s."
  },
  WEBHOOK_HEALTH_CHECK_BODY: {
    kind: "service",
    alternative:
      "`currentValue` null (the webhook only in `webhook`)."
  },
  EMAIL_OUTBOX: {
    kind: "emulator",
    alternative:
      "none to serve: the table is how the emulator shows the emails a service sends; no interface reads it."
  },
  RESOURCE_QUERY_ENCODING: {
    kind: "service",
    alternative:
      "an array is one comma-separated parameter (`assigneeIds=a,b`); a repeated parameter keeps its last value."
  },
  RESOURCE_STYLE_SHAPES: {
    kind: "service",
    alternative:
      "`PATCH /v1/records/{id}` takes `workspaceId` in the query string, as GET and DELETE do; the body holds only the changes."
  },
  SIZE_UNITS: {
    kind: "service",
    alternative:
      "binary units (MB = 1024^2, GB = 1024^3 bytes)."
  },
  DATE_INPUT_FORMS: {
    kind: "service",
    alternative:
      "a date-time without zone is accepted and read as UTC."
  },
  INVITE_USER_INPUT: {
    kind: "service",
    alternative:
      "`accessLevel` is optional, MEMBER when omitted."
  },
  WEBHOOK_INPUTS: {
    kind: "service",
    alternative:
      "`disableWebhook(id)` returns Boolean, like deleteWebhook."
  },
  ACTIVITY_TYPENAMES: {
    kind: "service",
    alternative:
      "`RecordComment` and `RecordAction`."
  },
  FILE_ITEM_REFS: {
    kind: "service",
    alternative:
      "`folder` and `todo` as `{ id }`."
  },
  TAG_COLOR_NULLABLE: {
    kind: "service",
    alternative:
      "`color` is always a string, \"\" when the tag has none."
  },
  PRESIGN_DETAILS: {
    kind: "service",
    alternative:
      "an extension the service does not know is the documented 400 (\"extension undeterminable\"); a key is never presigned twice (KEY_IN_USE, also for one's own PENDING row)."
  },
  CONFIRM_IDEMPOTENT: {
    kind: "service",
    alternative:
      "confirming a CONFIRMED file is a 400 (`ALREADY_CONFIRMED`): confirm is the PENDING to CONFIRMED transition only."
  },
  PRESIGN_SINGLE_USE: {
    kind: "service",
    alternative:
      "the URL is spent when its PUT starts, even when the upload fails midway (a retry presigns again)."
  },
  SERVE_NAME_MUST_MATCH: {
    kind: "service",
    alternative:
      "any filename segment serves the file, downloads and thumbnails alike (the uid names it)."
  },
  LIST_FILES_WITHOUT_WORKSPACE: {
    kind: "service",
    alternative:
      "`workspaceId` is required (400 without it)."
  },
  CSV_TIMESTAMP_WITHOUT_ZONE: {
    kind: "client",
    alternative:
      "none to serve: how the client reads other tools' CSV files (another choice would be the machine's zone)."
  },
  CSV_ROW_NUMBERING: {
    kind: "client",
    alternative:
      "none to serve: how the client numbers CSV rows (another choice would be data rows from 1)."
  },
  MIGRATION_READINGS: {
    kind: "client",
    alternative:
      "none to serve: how the client carries another tool's data (other choices would be comments posted bare, sub-tasks as records only, or Jira's fields left out)."
  },
  COMMENT_PARENT_SHOWN: {
    kind: "service",
    alternative: "activity items carry the documented keys only: a reply cannot be told from a comment."
  },
  WORKSPACE_MIGRATION_READINGS: {
    kind: "client",
    alternative:
      "none to serve: how the client carries a workspace (other choices would be comments posted bare, owners invited as OWNER and refused, or fields created by name)."
  },
  RECORD_REFERENCE_FORM: {
    kind: "client",
    alternative:
      "none to serve: how the client writes a reference (other choices would be to replace the token by \"record ID\", to write an HTML link once the documents show a record URL, or to leave references as the source wrote them)."
  },
  MIRROR_READINGS: {
    kind: "client",
    alternative:
      "none to serve: how the client applies deliveries (another choice would be to read every record again on every event, exact but a request per event)."
  },
  RECONCILE_CLOCK_SKEW_MS: {
    kind: "client",
    alternative:
      "none to serve: the client's own margin (another value works the same against any service)."
  },
  INVITATION_TTL_DAYS: {
    kind: "service",
    alternative:
      "14 days."
  },
  WEBHOOKS_PER_ORGANIZATION: {
    kind: "service",
    alternative:
      "10."
  },
  EXTRA_OPERATIONS: {
    kind: "service",
    alternative:
      "the same operations and inputs, with answers in the other reading: listings bare arrays (the paged ones `{items, pageInfo: {totalItems, hasNextPage}}`), creates the created object with documented keys only, updates and other writes `{ success: true }`, reads documented keys only."
  },
  LIST_RECORDS_DETAILS: {
    kind: "service",
    alternative:
      "without `archived` only live records (as search-records); `assigneeIds` and `tagIds` match records having all the ids; cursors are opaque strings."
  },
  RECORD_DETAIL_DETAILS: {
    kind: "service",
    alternative:
      "checklist counts count checklists (completed: every item done); `customFields` only the fields set on the record; `tableColumns`, `tableRows` and `tableTotals` empty outside TABLE fields."
  },
  EVENT_VALUE_SHAPES: {
    kind: "service",
    alternative:
      "record events carry the record summary (a list-records item); lists are `{ id, title }`, tags have a string color, activity items the documented keys."
  },
  REST_TRANSPORT_DETAILS: {
    kind: "service",
    alternative:
      "an RPC call without a body reads as `{}` and any Content-Type is read as JSON; an unknown operation is a 400 `UNKNOWN_OPERATION`; a known path with another method a 404; without an organization header a call acts in the user's first organization; deleted comments leave list-record-activity."
  },
  GRAPHQL_TRANSPORT: {
    kind: "service",
    alternative:
      "every answer is HTTP 200: a missing or unknown token is `UNAUTHENTICATED` in `errors`."
  },
  FILE_PROJECT_NULLABLE: {
    kind: "service",
    alternative:
      "`project: Workspace!` as documented, so selecting `project` of an organization-level file is a GraphQL error; only the documented File fields exist."
  },
  USER_QUERIES: {
    kind: "service",
    alternative:
      "`projectId` is a required argument (no default from the header); User has only its documented fields `{id, fullName, email, image {medium}, projectLevel}`."
  },
  INVITE_EXISTING_USERS: {
    kind: "service",
    alternative:
      "an existing user gets a pending invitation like a new address (nothing is added until it is accepted), except the organization OWNER, whom R-INVITE-10 adds at once, as ADMIN."
  },
  USER_REMOVAL: {
    kind: "service",
    alternative:
      "`operationId` is null (a removal is not an asynchronous operation)."
  },
  ROLE_OPERATIONS: {
    kind: "service",
    alternative:
      "omitted toggles default to false; a role has only its documented fields `{id, name, canCreateRecords, canDeleteRecords}`."
  },
  GRAPHQL_COMMENTS: {
    kind: "service",
    alternative:
      "an attachment element naming an unusable file is ignored (the comment is created without it); Comment has only `{id, html, text, createdAt}`; no updateComment or deleteComment."
  },
  CHECKLIST_ITEM_ASSIGNEES: {
    kind: "service",
    alternative:
      "no such GraphQL mutations; REST `update-checklist-item` takes `assigneeIds` (replacing the item's assignees, like update-record's) and fires the events."
  },
  WEBHOOK_MANAGEMENT: {
    kind: "service",
    alternative:
      "`webhooks` is `{ items }` only."
  },
  WEBHOOK_MIN_TIMEOUT_MS: {
    kind: "emulator",
    alternative:
      "none to serve: a floor of the emulator's own time scale; unscaled, the documented 7 s holds."
  },
  UPLOAD_FILES_RESULT_ORDER: {
    kind: "service",
    alternative:
      "another order (the alt variant answers in reverse, as if the last part finished first)."
  }
} as const satisfies Record<string, Choice>
