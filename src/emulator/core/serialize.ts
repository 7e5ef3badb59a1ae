/**
 * JSON of records and activity as the REST interface answers them: untrimmed (every key
 * present, null where unset: R-REST-CALL-17). Related rows are loaded in batches (one
 * query per kind for a whole page), never per row.
 */
import type Database from "better-sqlite3"
import { ACTIVITY_TYPENAMES } from "../../schema/assumptions.ts"
import { all, get } from "./sql.ts"
import { writeCount } from "./until-write.ts"

/** The columns every record read selects (the list title comes from a cached map). */
export const RECORD_COLUMNS = `r.id, r.uid, r.workspace_id, r.list_id, r.title, r.done, r.archived, r.position,
  r.started_at, r.dued_at, r.color, r.created_at, r.updated_at, r.assignee_ids, r.tag_ids`

export interface RecordRow {
  readonly id: string
  readonly uid: string
  readonly workspace_id: string
  readonly list_id: string
  readonly title: string
  readonly done: number
  readonly archived: number
  readonly position: number
  readonly started_at: string | null
  readonly dued_at: string | null
  readonly color: string | null
  readonly created_at: string
  readonly updated_at: string
  readonly assignee_ids: string
  readonly tag_ids: string
}

export interface RecordUserJson {
  id: string
  firstName: string
  lastName: string
  email: string
}
export interface TagJson {
  id: string
  title: string
  color: string | null
}

export interface RecordSummaryJson {
  id: string
  uid: string
  title: string
  done: boolean
  archived: boolean
  position: number
  startedAt: string | null
  duedAt: string | null
  color: string | null
  createdAt: string
  updatedAt: string
  todoList: Readonly<{ id: string; title: string }>
  users: ReadonlyArray<RecordUserJson>
  tags: ReadonlyArray<TagJson>
}

/**
 * Lists, users and tags by id, rebuilt whenever the database changed (SQLite's
 * total_changes() counts every write of the connection, whichever area made it). Pages
 * then join them in memory instead of per row; a record's `todoList`, `users` and `tags`
 * values are made once per list and per distinct id list, and shared: answers are
 * serialized, never changed in place. (Not frozen: JSON.stringify of a frozen object or
 * array leaves V8's fast path and takes twice as long.)
 */
interface Lookups {
  readonly version: number
  readonly lists: Map<string, string>
  readonly users: Map<string, RecordUserJson>
  readonly tags: Map<string, TagJson>
  /** `todoList` values by list id. */
  readonly listRefs: Map<string, Readonly<{ id: string; title: string }>>
  /** Resolved `users` and `tags` arrays by the comma-separated ids they come from. */
  readonly userLists: Map<string, ReadonlyArray<RecordUserJson>>
  readonly tagLists: Map<string, ReadonlyArray<TagJson>>
}
const lookupCache = new WeakMap<Database.Database, Lookups>()

const lookups = (db: Database.Database): Lookups => {
  const version = writeCount(db)
  const cached = lookupCache.get(db)
  if (cached !== undefined && cached.version === version) return cached
  const lists = new Map<string, string>()
  for (const l of all<{ id: string; title: string }>(db, "SELECT id, title FROM lists")) lists.set(l.id, l.title)
  const users = new Map<string, RecordUserJson>()
  for (const u of all<{ id: string; first_name: string; last_name: string; email: string }>(
    db,
    "SELECT id, first_name, last_name, email FROM users"
  )) {
    users.set(u.id, { id: u.id, firstName: u.first_name, lastName: u.last_name, email: u.email })
  }
  const tags = new Map<string, TagJson>()
  for (const t of all<TagJson>(db, "SELECT id, title, color FROM tags WHERE deleted_at IS NULL")) tags.set(t.id, t)
  const fresh = { version, lists, users, tags, listRefs: new Map(), userLists: new Map(), tagLists: new Map() }
  lookupCache.set(db, fresh)
  return fresh
}

/** Ids from a denormalized comma-separated column, resolved through a map (unknown ids dropped). */
const resolveIds = <T>(ids: string, map: Map<string, T>): Array<T> => {
  if (ids === "") return []
  const out: Array<T> = []
  for (const id of ids.split(",")) {
    const value = map.get(id)
    if (value !== undefined) out.push(value)
  }
  return out
}

const NO_IDS: ReadonlyArray<never> = []

/** resolveIds, once per distinct `ids` for as long as the lookups hold. */
const resolvedIds = <T>(ids: string, map: Map<string, T>, memo: Map<string, ReadonlyArray<T>>): ReadonlyArray<T> => {
  if (ids === "") return NO_IDS
  let resolved = memo.get(ids)
  if (resolved === undefined) {
    resolved = resolveIds(ids, map)
    memo.set(ids, resolved)
  }
  return resolved
}

const listRef = (maps: Lookups, listId: string): Readonly<{ id: string; title: string }> => {
  let ref = maps.listRefs.get(listId)
  if (ref === undefined) {
    ref = { id: listId, title: maps.lists.get(listId) ?? "" }
    maps.listRefs.set(listId, ref)
  }
  return ref
}

/**
 * The columns of a record summary (list-records pages), in the order of its keys: a page
 * reads its rows in this form, as arrays (cheaper than one object per row).
 */
export const SUMMARY_COLUMNS = `r.id, r.uid, r.title, r.done, r.archived, r.position, r.started_at, r.dued_at, r.color,
  r.created_at, r.updated_at, r.list_id, r.assignee_ids, r.tag_ids`

/** A row of SUMMARY_COLUMNS. */
export type RecordTuple = readonly [
  id: string,
  uid: string,
  title: string,
  done: number,
  archived: number,
  position: number,
  startedAt: string | null,
  duedAt: string | null,
  color: string | null,
  createdAt: string,
  updatedAt: string,
  listId: string,
  assigneeIds: string,
  tagIds: string
]

const toTuple = (r: RecordRow): RecordTuple => [
  r.id,
  r.uid,
  r.title,
  r.done,
  r.archived,
  r.position,
  r.started_at,
  r.dued_at,
  r.color,
  r.created_at,
  r.updated_at,
  r.list_id,
  r.assignee_ids,
  r.tag_ids
]

/** Record summaries from tuples (list-records items: R-REST-RECORD-02..10). */
export const summariesOfTuples = (db: Database.Database, rows: ReadonlyArray<RecordTuple>): Array<RecordSummaryJson> => {
  if (rows.length === 0) return []
  const maps = lookups(db)
  return rows.map((row) => ({
    id: row[0],
    uid: row[1],
    title: row[2],
    done: row[3] === 1,
    archived: row[4] === 1,
    position: row[5],
    startedAt: row[6],
    duedAt: row[7],
    color: row[8],
    createdAt: row[9],
    updatedAt: row[10],
    todoList: listRef(maps, row[11]),
    users: resolvedIds(row[12], maps.users, maps.userLists),
    tags: resolvedIds(row[13], maps.tags, maps.tagLists)
  }))
}

/** Record summaries from row objects. */
export const summaries = (db: Database.Database, rows: ReadonlyArray<RecordRow>): Array<RecordSummaryJson> =>
  summariesOfTuples(db, rows.map(toTuple))

/** Search results: the summary without position and dates, users as `{id, fullName}` (R-REST-SEARCH-10/11). */
export const searchResults = (db: Database.Database, rows: ReadonlyArray<RecordRow>) =>
  summaries(db, rows).map((s) => ({
    id: s.id,
    uid: s.uid,
    title: s.title,
    done: s.done,
    archived: s.archived,
    createdAt: s.createdAt,
    updatedAt: s.updatedAt,
    todoList: s.todoList,
    users: s.users.map((u) => ({ id: u.id, fullName: fullName(u.firstName, u.lastName) })),
    tags: s.tags
  }))

export const fullName = (first: string, last: string): string => `${first} ${last}`.trim()

/** One record row (not deleted) with its list title, or undefined. */
export const recordRow = (db: Database.Database, recordId: string): (RecordRow & { text: string; html: string; timezone: string; cover: string; is_repeating: number }) | undefined =>
  get(
    db,
    `SELECT ${RECORD_COLUMNS}, r.text, r.html, r.timezone, r.cover, r.is_repeating
       FROM records r
      WHERE r.id = ? AND r.deleted_at IS NULL`,
    recordId
  )

interface ChecklistRow {
  id: string
  title: string
  position: number
}
interface ChecklistItemRow {
  id: string
  checklist_id: string
  title: string
  done: number
  position: number
  started_at: string | null
  dued_at: string | null
}
interface CustomFieldRow {
  id: string
  name: string
  type: string
  table_columns: string
}
interface CustomValueRow {
  custom_field_id: string
  text: string | null
  number: number | null
  checked: number | null
  option_ids: string | null
  table_rows: string | null
}
interface OptionRow {
  id: string
  custom_field_id: string
  title: string
  color: string | null
}

interface TableRowJson {
  position: number
  cells: Array<{ columnId: string; value: unknown }>
}

/** Sums of NUMBER columns (other columns total null). */
const tableTotals = (columns: ReadonlyArray<{ id: string; type: string }>, rows: ReadonlyArray<TableRowJson>) =>
  columns.map((column) => {
    if (column.type !== "NUMBER") return { columnId: column.id, value: null }
    let sum = 0
    for (const row of rows) {
      const cell = row.cells.find((c) => c.columnId === column.id)
      if (typeof cell?.value === "number") sum += cell.value
    }
    return { columnId: column.id, value: sum }
  })

/**
 * Record detail (get-record, update-record answers, event values: R-REST-RECORD-19..26).
 * Every write announces one, so its reads join nothing and write their ordered
 * parameters as `+?` (sql.ts: planned once, not on every call).
 */
export const recordDetail = (db: Database.Database, recordId: string) => {
  const row = recordRow(db, recordId)
  if (row === undefined) return undefined
  const summary = summaries(db, [row])[0]!
  const checklists = all<ChecklistRow>(
    db,
    "SELECT id, title, position FROM checklists WHERE record_id = +? AND deleted_at IS NULL ORDER BY position, id",
    recordId
  )
  const items = all<ChecklistItemRow>(
    db,
    `SELECT i.id, i.checklist_id, i.title, i.done, i.position, i.started_at, i.dued_at
       FROM checklist_items i
      WHERE i.checklist_id IN (SELECT c.id FROM checklists c WHERE c.record_id = +? AND c.deleted_at IS NULL)
        AND i.deleted_at IS NULL
      ORDER BY i.position, i.id`,
    recordId
  )
  const fields = all<CustomFieldRow>(
    db,
    "SELECT id, name, type, table_columns FROM custom_fields WHERE workspace_id = +? AND deleted_at IS NULL ORDER BY position, id",
    row.workspace_id
  )
  const values = new Map<string, CustomValueRow>()
  if (fields.length > 0) {
    for (const v of all<CustomValueRow>(
      db,
      "SELECT custom_field_id, text, number, checked, option_ids, table_rows FROM record_custom_values WHERE record_id = ?",
      recordId
    )) {
      values.set(v.custom_field_id, v)
    }
  }
  const options = fields.length === 0
    ? []
    : all<OptionRow>(
        db,
        `SELECT o.id, o.custom_field_id, o.title, o.color FROM custom_field_options o
          WHERE o.custom_field_id IN (SELECT f.id FROM custom_fields f WHERE f.workspace_id = +? AND f.deleted_at IS NULL)
          ORDER BY o.position, o.id`,
        row.workspace_id
      )
  const comments = get<{ n: number }>(
    db,
    "SELECT count(*) AS n FROM activity WHERE record_id = ? AND kind = 'COMMENT' AND deleted_at IS NULL",
    recordId
  )!.n
  let completed = 0
  for (const item of items) if (item.done === 1) completed++
  return {
    ...summary,
    text: row.text,
    html: row.html,
    timezone: row.timezone,
    cover: row.cover,
    commentCount: comments,
    checklistCount: items.length,
    checklistCompletedCount: completed,
    isRepeating: row.is_repeating === 1,
    checklists: checklists.map((c) => ({
      id: c.id,
      title: c.title,
      position: c.position,
      checklistItems: items
        .filter((i) => i.checklist_id === c.id)
        .map((i) => ({
          id: i.id,
          title: i.title,
          done: i.done === 1,
          position: i.position,
          startedAt: i.started_at,
          duedAt: i.dued_at
        }))
    })),
    customFields: fields.map((f) => {
      const v = values.get(f.id)
      const optionIds = v?.option_ids ?? null
      const tableRows = v?.table_rows ?? null
      const selected: ReadonlyArray<string> = optionIds === null ? [] : (JSON.parse(optionIds) as Array<string>)
      const isTable = f.type === "TABLE"
      const columns = isTable ? (JSON.parse(f.table_columns) as Array<{ id: string; name: string; type: string }>) : []
      const rows = isTable ? (tableRows === null ? [] : (JSON.parse(tableRows) as Array<TableRowJson>)) : null
      return {
        id: f.id,
        name: f.name,
        type: f.type,
        text: v?.text ?? null,
        number: v?.number ?? null,
        checked: v === undefined || v.checked === null ? null : v.checked === 1,
        customFieldOptions: options
          .filter((o) => o.custom_field_id === f.id && selected.includes(o.id))
          .map((o) => ({ id: o.id, title: o.title, color: o.color })),
        tableColumns: isTable ? columns : null,
        tableRows: rows,
        tableTotals: isTable ? tableTotals(columns, rows ?? []) : null
      }
    })
  }
}

export type RecordDetailJson = NonNullable<ReturnType<typeof recordDetail>>

/** The columns of an activity read, with user names joined. */
export const ACTIVITY_SELECT = `SELECT a.id, a.kind, a.html, a.type, a.old_value, a.new_value, a.automated, a.parent_id,
  a.created_at, a.deleted_at, a.record_id, a.workspace_id,
  u.id AS user_id, u.first_name AS user_first, u.last_name AS user_last,
  x.id AS affected_id, x.first_name AS affected_first, x.last_name AS affected_last,
  f.id AS field_id, f.name AS field_name
  FROM activity a
  LEFT JOIN users u ON u.id = a.user_id
  LEFT JOIN users x ON x.id = a.affected_user_id
  LEFT JOIN custom_fields f ON f.id = a.custom_field_id`

export interface ActivityRow {
  id: string
  kind: "COMMENT" | "ACTION"
  html: string | null
  type: string | null
  old_value: string | null
  new_value: string | null
  automated: number
  created_at: string
  deleted_at: string | null
  record_id: string | null
  workspace_id: string
  user_id: string | null
  user_first: string | null
  user_last: string | null
  affected_id: string | null
  affected_first: string | null
  affected_last: string | null
  field_id: string | null
  field_name: string | null
  parent_id: string | null
}

const parseValue = (value: string | null): unknown => {
  if (value === null) return null
  try {
    return JSON.parse(value)
  } catch {
    return value
  }
}

/** An activity item: every key on both kinds, null where it does not apply (R-REST-ACTIVITY-10..14). */
export const activityItem = (row: ActivityRow) => {
  const user = row.user_id === null ? null : { id: row.user_id, fullName: fullName(row.user_first ?? "", row.user_last ?? "") }
  const comment = row.kind === "COMMENT"
  return {
    __typename: comment ? ACTIVITY_TYPENAMES.comment : ACTIVITY_TYPENAMES.action,
    id: row.id,
    html: comment ? (row.deleted_at === null ? row.html : "") : null,
    createdAt: row.created_at,
    deletedAt: row.deleted_at,
    commentUser: comment ? user : null,
    type: comment ? null : row.type,
    oldValue: comment ? null : parseValue(row.old_value),
    newValue: comment ? null : parseValue(row.new_value),
    automated: row.automated === 1,
    actionUser: comment ? null : user,
    affectedBy:
      row.affected_id === null
        ? null
        : { id: row.affected_id, fullName: fullName(row.affected_first ?? "", row.affected_last ?? "") },
    customField: row.field_id === null ? null : { id: row.field_id, name: row.field_name ?? "" },
    // COMMENT_PARENT_SHOWN: a reply names its parent (the alt variant shows documented keys only).
    ...(comment && row.parent_id !== null ? { parentId: row.parent_id } : {})
  }
}
