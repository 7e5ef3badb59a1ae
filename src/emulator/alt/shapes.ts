/**
 * The alt variant's shapes: every object with the keys the documents name and no other,
 * and the other plausible reading of each value the documents leave open
 * (src/schema/assumptions.ts, each entry's "Alternative:"). The reference serializers
 * build the full objects; these functions rewrite them.
 */
import type Database from "better-sqlite3"
import { all } from "../core/sql.ts"
import { RECORD_SUMMARY_FIELDS } from "../../schema/records.ts"

type Json = Record<string, unknown>

/** WORKSPACE_SHAPE: `{id, name}`. */
export const altWorkspace = (w: Json) => ({ id: w["id"], name: w["name"] })

/** LIST_SHAPE: `{id, title}`, the keys of `todoList` and create-record's `list`. */
export const altList = (l: Json) => ({ id: l["id"], title: l["title"] })

/** USER_SHAPE: `{id, email, fullName}`. */
export const altUser = (u: Json) => ({ id: u["id"], email: u["email"], fullName: u["fullName"] })

/** TAG_COLOR_NULLABLE: the color is always a string, "" when the tag has none. */
export const altTag = (t: Json) => ({ id: t["id"], title: t["title"], color: typeof t["color"] === "string" ? t["color"] : "" })

/** CUSTOM_FIELD_TYPES: other names for the types the documents do not name (CHECKBOX is named). */
export const ALT_CUSTOM_FIELD_TYPE_NAMES: Readonly<Record<string, string>> = {
  TEXT: "TEXT_SINGLE",
  SELECT_SINGLE: "DROPDOWN",
  SELECT_MULTI: "MULTI_SELECT"
}

export const altCustomFieldType = (type: unknown): unknown =>
  typeof type === "string" ? (ALT_CUSTOM_FIELD_TYPE_NAMES[type] ?? type) : type

/** The reference name of a type sent in either reading (inputs accept both). */
export const referenceCustomFieldType = (type: unknown): unknown => {
  if (typeof type !== "string") return type
  const entry = Object.entries(ALT_CUSTOM_FIELD_TYPE_NAMES).find(([, alt]) => alt === type)
  return entry === undefined ? type : entry[0]
}

/** ACTIVITY_ACTION_TYPES: other names for every action the documents do not name (UPDATE_TITLE is named). */
export const ALT_ACTION_TYPE_NAMES: Readonly<Record<string, string>> = {
  CREATE: "CREATE_TODO",
  UPDATE_DESCRIPTION: "UPDATE_TEXT",
  UPDATE_DONE: "UPDATE_DONE_STATUS",
  UPDATE_ARCHIVED: "UPDATE_ARCHIVE_STATUS",
  UPDATE_STARTED_AT: "UPDATE_START_DATE",
  UPDATE_DUE_DATE: "UPDATE_DUED_DATE",
  UPDATE_COLOR: "CHANGE_COLOR",
  ADD_ASSIGNEE: "ASSIGN_USER",
  REMOVE_ASSIGNEE: "UNASSIGN_USER",
  ADD_TAG: "TAG_ADDED",
  REMOVE_TAG: "TAG_REMOVED",
  MOVE: "MOVE_TODO",
  UPDATE_CUSTOM_FIELD: "UPDATE_CUSTOM_FIELD_VALUE"
}

/** ACTIVITY_TYPENAMES: names the reference never sends. */
export const ALT_ACTIVITY_TYPENAMES = { comment: "RecordComment", action: "RecordAction" } as const

const ACTIVITY_KEYS = [
  "__typename",
  "id",
  "html",
  "createdAt",
  "deletedAt",
  "commentUser",
  "type",
  "oldValue",
  "newValue",
  "automated",
  "actionUser",
  "affectedBy",
  "customField"
] as const

/** An activity item with the documented keys only, alt typenames and action types. */
export const altActivityItem = (item: Json): Json => {
  const out: Json = {}
  for (const key of ACTIVITY_KEYS) out[key] = item[key]
  const comment = item["type"] === null || item["type"] === undefined
  out["__typename"] = comment ? ALT_ACTIVITY_TYPENAMES.comment : ALT_ACTIVITY_TYPENAMES.action
  if (typeof item["type"] === "string") out["type"] = ALT_ACTION_TYPE_NAMES[item["type"]] ?? item["type"]
  return out
}

/** FILE_ITEM_REFS: `folder` and `todo` as `{id}`. */
export const altFileItem = (f: Json): Json => {
  const folder = f["folder"] as Json | null
  const todo = f["todo"] as Json | null
  return { ...f, folder: folder === null ? null : { id: folder["id"] }, todo: todo === null ? null : { id: todo["id"] } }
}

/** A record's all-day flags (the summaries do not carry them). */
export interface AllDay {
  readonly started: boolean
  readonly dued: boolean
}

const ALL_DAY: ReadonlyArray<AllDay> = [
  { started: false, dued: false },
  { started: false, dued: true },
  { started: true, dued: false },
  { started: true, dued: true }
]

/** The flags of a record (one shared object per combination). */
export const allDayOf = (started: boolean, dued: boolean): AllDay => ALL_DAY[(started ? 2 : 0) + (dued ? 1 : 0)]!

/** All-day flags of records, by id. */
export type AllDayFlags = ReadonlyMap<string, AllDay>

/** Flags a list-records page read with its rows, by the page's answer (see keepAllDayFlags). */
const pageFlags = new WeakMap<object, ReadonlyArray<AllDay>>()

/**
 * The all-day flags of a page's records, in the order of its items, read by the page's own
 * query: reading them again by id, one index lookup and one table row per record, cost as
 * much as the page.
 */
export const keepAllDayFlags = (answer: object, flags: ReadonlyArray<AllDay>): void => {
  pageFlags.set(answer, flags)
}

/** The flags kept for this answer's items, if its page read them. */
export const keptAllDayFlags = (answer: object): ReadonlyArray<AllDay> | undefined => pageFlags.get(answer)

export const allDayFlags = (db: Database.Database, ids: ReadonlyArray<string>): AllDayFlags => {
  const flags = new Map<string, AllDay>()
  if (ids.length === 0) return flags
  for (const row of all<{ id: string; s: number; d: number }>(
    db,
    "SELECT id, started_all_day AS s, dued_all_day AS d FROM records WHERE id IN (SELECT value FROM json_each(?))",
    JSON.stringify(ids)
  )) {
    flags.set(row.id, allDayOf(row.s === 1, row.d === 1))
  }
  return flags
}

/** The flags of one record, read by id. */
export const allDayOfRecord = (db: Database.Database, id: string): AllDay | undefined => allDayFlags(db, [id]).get(id)

/** ALL_DAY_READ_FORM: an all-day date as a floating date-time, `YYYY-MM-DDT00:00:00` (no zone). */
const floating = (iso: unknown, allDay: boolean | undefined): unknown =>
  allDay === true && typeof iso === "string" ? `${iso.slice(0, 10)}T00:00:00` : iso

const SUMMARY_KEYS = RECORD_SUMMARY_FIELDS

/**
 * Alt tags of a summary's `tags`, by that array: the summaries share one array per
 * distinct tag list (serialize.ts), and answers are serialized, never changed in place.
 */
const altTagLists = new WeakMap<ReadonlyArray<Json>, ReadonlyArray<Json>>()

const altTags = (tags: ReadonlyArray<Json>): ReadonlyArray<Json> => {
  let alt = altTagLists.get(tags)
  if (alt === undefined) {
    alt = tags.map(altTag)
    altTagLists.set(tags, alt)
  }
  return alt
}

/** A record summary (list-records item) with the alt readings of its values. */
export const altRecordSummary = (s: Json, allDay: AllDay | undefined): Json => {
  const out: Json = {}
  for (const key of SUMMARY_KEYS) out[key] = s[key]
  out["startedAt"] = floating(s["startedAt"], allDay?.started)
  out["duedAt"] = floating(s["duedAt"], allDay?.dued)
  out["tags"] = altTags(s["tags"] as ReadonlyArray<Json>)
  return out
}

/** A search result: tags with a string color (no dates to rewrite). */
export const altSearchResult = (s: Json): Json => ({ ...s, tags: (s["tags"] as Array<Json>).map(altTag) })

interface TableRowJson {
  readonly position: number
  readonly cells: ReadonlyArray<{ readonly columnId: string; readonly value: unknown }>
}

const cellsByColumn = (cells: ReadonlyArray<{ columnId: string; value: unknown }>) =>
  Object.fromEntries(cells.map((c) => [c.columnId, c.value]))

/** RECORD_DETAIL_DETAILS and CUSTOM_FIELD_TYPES for one custom field of a record detail. */
const altCustomField = (f: Json): Json => {
  const rows = f["tableRows"] as ReadonlyArray<TableRowJson> | null
  const totals = f["tableTotals"] as ReadonlyArray<{ columnId: string; value: unknown }> | null
  return {
    id: f["id"],
    name: f["name"],
    type: altCustomFieldType(f["type"]),
    text: f["text"],
    number: f["number"],
    checked: f["checked"],
    customFieldOptions: f["customFieldOptions"],
    tableColumns: f["tableColumns"] ?? [],
    tableRows: rows === null ? [] : rows.map((r) => ({ position: r.position, cells: cellsByColumn(r.cells) })),
    tableTotals: totals === null ? [] : cellsByColumn(totals)
  }
}

const isSet = (f: Json): boolean =>
  f["text"] !== null ||
  f["number"] !== null ||
  f["checked"] !== null ||
  (f["customFieldOptions"] as ReadonlyArray<unknown>).length > 0 ||
  ((f["tableRows"] as ReadonlyArray<unknown> | null)?.length ?? 0) > 0

interface ChecklistJson {
  readonly checklistItems: ReadonlyArray<{ readonly done: boolean }>
}

/**
 * A record detail (get-record) with the alt readings: `timezone` named even when unset,
 * checklist counts of checklists (completed: every item done), only the custom fields
 * set on the record, table contents keyed by column.
 */
export const altRecordDetail = (d: Json, allDay: AllDay | undefined): Json => {
  const checklists = d["checklists"] as ReadonlyArray<ChecklistJson>
  return {
    ...altRecordSummary(d, allDay),
    text: d["text"],
    html: d["html"],
    timezone: d["timezone"] === "" ? "UTC" : d["timezone"],
    cover: d["cover"],
    commentCount: d["commentCount"],
    checklistCount: checklists.length,
    checklistCompletedCount: checklists.filter((c) => c.checklistItems.length > 0 && c.checklistItems.every((i) => i.done)).length,
    isRepeating: d["isRepeating"],
    checklists: d["checklists"],
    customFields: (d["customFields"] as ReadonlyArray<Json>).filter(isSet).map(altCustomField)
  }
}

/** A custom field definition (extras listing and create answer). */
export const altCustomFieldDefinition = (f: Json): Json => ({ ...f, type: altCustomFieldType(f["type"]) })

/** LIST_RECORDS_DETAILS: cursors are opaque strings, not item ids. */
export const opaqueCursor = (id: unknown): unknown =>
  typeof id === "string" ? Buffer.from(`record:${id}`, "utf8").toString("base64url") : id
