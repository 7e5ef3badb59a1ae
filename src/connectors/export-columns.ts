/**
 * CSV columns of the export: one row per stored object, nested values flattened
 * (list id and title, assignee emails and tag titles joined), the rest as JSON text.
 * Cells are plain strings: booleans `true`/`false`, null and missing values empty.
 */

type Obj = Record<string, unknown>

export interface Column {
  readonly name: string
  readonly get: (row: Obj) => unknown
}

/** Separator for joined lists (emails, tag titles, ids). */
export const JOIN_SEPARATOR = "; "

const field = (name: string): Column => ({ name, get: (r) => r[name] })
const nested = (name: string, key: string, inner: string): Column => ({
  name,
  get: (r) => {
    const v = r[key]
    return v !== null && typeof v === "object" ? (v as Obj)[inner] : null
  }
})
const joined = (name: string, key: string, inner: string): Column => ({
  name,
  get: (r) => {
    const v = r[key]
    if (!Array.isArray(v)) return null
    return v.map((x) => (x !== null && typeof x === "object" ? String((x as Obj)[inner] ?? "") : String(x))).join(JOIN_SEPARATOR)
  }
})
const json = (name: string): Column => ({
  name,
  get: (r) => (r[name] === undefined || r[name] === null ? null : JSON.stringify(r[name]))
})

export const RECORD_COLUMNS: ReadonlyArray<Column> = [
  field("id"),
  field("uid"),
  field("workspaceId"),
  field("title"),
  field("done"),
  field("archived"),
  field("position"),
  field("startedAt"),
  field("duedAt"),
  field("color"),
  field("createdAt"),
  field("updatedAt"),
  nested("listId", "todoList", "id"),
  nested("listTitle", "todoList", "title"),
  joined("assignees", "users", "email"),
  joined("assigneeIds", "users", "id"),
  joined("tags", "tags", "title"),
  joined("tagIds", "tags", "id"),
  field("text"),
  field("html"),
  field("timezone"),
  field("cover"),
  field("commentCount"),
  field("checklistCount"),
  field("checklistCompletedCount"),
  field("isRepeating"),
  json("checklists"),
  json("customFields")
]

const scalarOrJson = (name: string): Column => ({
  name,
  get: (r) => {
    const v = r[name]
    return v !== null && typeof v === "object" ? JSON.stringify(v) : v
  }
})

export const ACTIVITY_COLUMNS: ReadonlyArray<Column> = [
  field("recordId"),
  field("id"),
  field("__typename"),
  field("type"),
  field("createdAt"),
  field("deletedAt"),
  field("automated"),
  field("html"),
  scalarOrJson("oldValue"),
  scalarOrJson("newValue"),
  nested("commentUserId", "commentUser", "id"),
  nested("commentUser", "commentUser", "fullName"),
  nested("actionUserId", "actionUser", "id"),
  nested("actionUser", "actionUser", "fullName"),
  nested("affectedById", "affectedBy", "id"),
  nested("affectedBy", "affectedBy", "fullName"),
  nested("customFieldId", "customField", "id"),
  nested("customFieldName", "customField", "name")
]

export const FILE_COLUMNS: ReadonlyArray<Column> = [
  field("workspaceId"),
  field("id"),
  field("uid"),
  field("name"),
  field("size"),
  field("type"),
  field("extension"),
  field("status"),
  field("shared"),
  field("createdAt"),
  field("updatedAt"),
  nested("folderId", "folder", "id"),
  nested("recordId", "todo", "id"),
  nested("userId", "user", "id"),
  nested("userFullName", "user", "fullName"),
  nested("userEmail", "user", "email")
]

export const WORKSPACE_COLUMNS: ReadonlyArray<Column> = [
  field("id"),
  field("slug"),
  field("name"),
  field("organizationId"),
  field("createdAt"),
  field("updatedAt")
]

/** The columns of each file of a CSV export. */
export const COLUMNS_OF = {
  records: RECORD_COLUMNS,
  activity: ACTIVITY_COLUMNS,
  files: FILE_COLUMNS,
  workspaces: WORKSPACE_COLUMNS
} as const satisfies Record<string, ReadonlyArray<Column>>

/** Prefixes a spreadsheet would read as a formula (OWASP CSV injection list). */
const FORMULA_START = /^[=+\-@\t\r]/

/** A cell as text; with `guard`, formula-like text gets a leading apostrophe. */
export const cellText = (value: unknown, guard: boolean): string => {
  if (value === null || value === undefined) return ""
  if (typeof value === "boolean") return value ? "true" : "false"
  if (typeof value === "number") return String(value)
  const text = typeof value === "string" ? value : JSON.stringify(value)
  return guard && FORMULA_START.test(text) ? `'${text}` : text
}

export const toCells = (columns: ReadonlyArray<Column>, row: Obj, guard: boolean): Array<string> =>
  columns.map((c) => cellText(c.get(row), guard))

/** A cell that must be quoted: it holds a quote, the delimiter or a line break (RFC 4180). */
const NEEDS_QUOTES = /[",\r\n]/

/** One CSV field: quoted, its quotes doubled, when it must be (RFC 4180); as it is otherwise. */
export const csvField = (text: string): string =>
  NEEDS_QUOTES.test(text) ? `"${text.replaceAll("\"", "\"\"")}"` : text

/**
 * One CSV line of `row`, ended by `\n`: the cells of `toCells`, comma-separated, each
 * quoted when it must be. Joined from an array, the line is one flat string: built with
 * `+=`, it would be a tree of some 60 strings per row that the export's write flattens
 * later, at twice the cost and with more garbage to collect (a million rows).
 */
export const csvLine = (columns: ReadonlyArray<Column>, row: Obj, guard: boolean): string => {
  const cells = new Array<string>(columns.length)
  for (let i = 0; i < columns.length; i++) cells[i] = csvCell(columns[i]!.get(row), guard)
  return `${cells.join(",")}\n`
}

/**
 * `csvField(cellText(value, guard))`, without testing the text of an empty cell, a number
 * or a boolean for what needs quoting: it never holds a quote, a comma or a line break
 * (about a third of a record's cells, a million times over).
 */
const csvCell = (value: unknown, guard: boolean): string => {
  if (typeof value === "string") return csvField(guard && FORMULA_START.test(value) ? `'${value}` : value)
  if (value === null || value === undefined) return ""
  if (typeof value === "number" || typeof value === "boolean") return cellText(value, guard)
  return csvField(cellText(value, guard))
}

/** The formats of an export. */
export type ExportFormat = "ndjson" | "csv"

/**
 * The lines of a batch of stored objects (JSON text) in `format`, as one string: ndjson
 * the stored text as it is, csv a `csvLine` per object. An export thread
 * (export.worker.ts) writes the same lines, one by one, straight into bytes.
 */
export const linesOf = (
  format: ExportFormat,
  columns: ReadonlyArray<Column>,
  rows: ReadonlyArray<string>,
  guard: boolean
): string =>
  rows.length === 0
    ? ""
    : format === "ndjson"
    ? `${rows.join("\n")}\n`
    : rows.map((json) => csvLine(columns, JSON.parse(json) as Obj, guard)).join("")
