/**
 * REST answers (and inputs) of the alt variant, by operation: the handlers compute the
 * reference answer, then this rewrites it into the other plausible reading of every
 * choice the documents leave open (assumptions.ts), with documented keys only. Both call
 * styles go through here, so RPC and resource-style answers stay equal (R-REST-CALL-07).
 */
import type { EmulatorContext } from "../context.ts"
import {
  allDayFlags,
  allDayOfRecord,
  altActivityItem,
  altCustomFieldDefinition,
  altFileItem,
  altList,
  altRecordDetail,
  altRecordSummary,
  altSearchResult,
  altTag,
  altUser,
  altWorkspace,
  keptAllDayFlags,
  opaqueCursor,
  referenceCustomFieldType
} from "./shapes.ts"

type Json = Record<string, unknown>

const SUCCESS = { success: true } as const

/** Listings of EXTRA_OPERATIONS that take skip/limit: `{items, pageInfo}` in the alt reading. */
const PAGED_EXTRA_LISTINGS = new Set(["list-activity", "list-comments", "list-documents", "list-saved-views"])

const itemsOf = (result: unknown): Array<Json> => ((result as Json)["items"] as Array<Json> | undefined) ?? []

/** `{items, totalCount}` of a paged listing as `{items, pageInfo: {totalItems, hasNextPage}}` (like list-files). */
const pagedListing = (input: Json, result: Json, item: (j: Json) => Json) => {
  const items = itemsOf(result)
  const total = result["totalCount"] as number
  const skip = typeof input["skip"] === "number" ? input["skip"] : 0
  return { items: items.map(item), pageInfo: { totalItems: total, hasNextPage: skip + items.length < total } }
}

const same = (j: Json) => j

/** The item shape of an extra operation's answers, where the documents show one. */
const EXTRA_ITEM: Readonly<Record<string, (j: Json) => Json>> = {
  "list-activity": altActivityItem,
  "list-comments": altActivityItem,
  "create-comment": altActivityItem,
  "list-tags": altTag,
  "create-tag": altTag,
  "list-custom-fields": altCustomFieldDefinition,
  "create-custom-field": altCustomFieldDefinition,
  "create-list": altList,
  "create-workspace": altWorkspace,
  "get-workspace": altWorkspace,
  "get-current-user": altUser
}

/** The alt answer of operation `op` for `input`, given the reference answer. */
export const altAnswer = (ctx: EmulatorContext, op: string, input: Json, result: unknown): unknown => {
  const r = result as Json
  switch (op) {
    case "list-records": {
      const items = itemsOf(r)
      const kept = keptAllDayFlags(r)
      const flags = kept === undefined ? allDayFlags(ctx.db, items.map((i) => i["id"] as string)) : undefined
      const pageInfo = r["pageInfo"] as Json
      return {
        items: items.map((i, n) => altRecordSummary(i, kept?.[n] ?? flags?.get(i["id"] as string))),
        pageInfo: { ...pageInfo, startCursor: opaqueCursor(pageInfo["startCursor"]), endCursor: opaqueCursor(pageInfo["endCursor"]) }
      }
    }
    case "get-record":
      return altRecordDetail(r, allDayOfRecord(ctx.db, r["id"] as string))
    case "create-record":
      // The document's other example of the answer (R-REST-RECORD-41).
      return { id: r["id"], uid: r["uid"], title: r["title"], position: r["position"], todoList: r["todoList"] }
    case "update-record":
      return SUCCESS
    case "count-records":
      return { totalCount: r["count"] }
    case "search-records":
      return (result as Array<Json>).map(altSearchResult)
    case "list-record-activity":
      return { items: itemsOf(r).map(altActivityItem), totalCount: r["totalCount"] }
    case "list-files":
      return { items: itemsOf(r).map(altFileItem), pageInfo: r["pageInfo"] }
    case "list-workspaces":
      return { items: itemsOf(r).map(altWorkspace), totalCount: r["totalCount"] }
    case "list-users":
      return { users: (r["users"] as Array<Json>).map(altUser), totalCount: r["totalCount"] }
    case "list-lists":
    case "create-list":
      // CREATE_LIST_READING: create-list answers the workspace's lists (core/lists.ts).
      return itemsOf(r).map(altList)
    case "move-record":
    case "delete-record":
      return result
  }
  // EXTRA_OPERATIONS: listings bare (paged ones with pageInfo), creates the created object,
  // reads the object, every other write `{success: true}`.
  const item = EXTRA_ITEM[op] ?? same
  if (op.startsWith("list-")) return PAGED_EXTRA_LISTINGS.has(op) ? pagedListing(input, r, item) : itemsOf(r).map(item)
  if (op.startsWith("create-") || op.startsWith("get-")) return item(r)
  return SUCCESS
}

/** A date-time without zone (`2024-05-01T09:30` or with seconds and fraction). */
const ZONELESS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?$/

/** DATE_INPUT_FORMS, alt: a zoneless date-time is accepted and read as UTC. */
const zonelessAsUtc = (input: Json): Json => {
  let out = input
  for (const key of ["startedAt", "duedAt"]) {
    const value = input[key]
    if (typeof value === "string" && ZONELESS.test(value)) out = { ...out, [key]: `${value}Z` }
  }
  return out
}

/** update-record's documented body (rest-interface.md), with the record id of `PATCH /v1/records/{id}`'s path. */
const UPDATE_RECORD_FIELDS = new Set([
  "workspaceId",
  "recordId",
  "title",
  "description",
  "descriptionHtml",
  "done",
  "startedAt",
  "duedAt",
  "allDay",
  "color",
  "assigneeIds"
])

/** Inputs of the alt reading the handlers would not take as they are. */
export const altInput = (op: string, given: Json): Json => {
  const input = zonelessAsUtc(given)
  if (op === "update-record") {
    // UNDOCUMENTED_INPUT_FIELDS (and ARCHIVE_VIA_UPDATE_RECORD), alt: update-record takes
    // its documented fields; any other (`archived`) is accepted with success and ignored.
    return Object.fromEntries(Object.entries(input).filter(([key]) => UPDATE_RECORD_FIELDS.has(key)))
  }
  if (op === "create-custom-field" && "type" in input) return { ...input, type: referenceCustomFieldType(input["type"]) }
  if (op === "set-record-custom-field" && Array.isArray(input["tableRows"])) {
    // Cells keyed by column id, as the alt variant reads them out.
    const rows = (input["tableRows"] as Array<Json>).map((row) => {
      const cells = row["cells"]
      return cells !== null && typeof cells === "object" && !Array.isArray(cells)
        ? { ...row, cells: Object.entries(cells as Json).map(([columnId, value]) => ({ columnId, value })) }
        : row
    })
    return { ...input, tableRows: rows }
  }
  return input
}
