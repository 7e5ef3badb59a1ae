/**
 * Record shapes of the REST interface: list-records summary, search result,
 * get-record detail, and the small responses of record writes.
 */
import { Schema } from "effect"
import { CUSTOM_FIELD_TYPES } from "./assumptions.ts"
import { IsoTimestamp } from "./dates.ts"
import { openStruct } from "./open.ts"

export const ListRef = openStruct({ id: Schema.String, title: Schema.String })
export type ListRef = typeof ListRef.Type

export const RecordUser = openStruct({
  id: Schema.String,
  firstName: Schema.String,
  lastName: Schema.String,
  email: Schema.String
})
export type RecordUser = typeof RecordUser.Type

export const RecordTag = openStruct({ id: Schema.String, title: Schema.String, color: Schema.NullOr(Schema.String) })
export type RecordTag = typeof RecordTag.Type

/** `{id, fullName}`: how search results, activity and files name a user. */
export const UserRef = openStruct({ id: Schema.String, fullName: Schema.String })
export type UserRef = typeof UserRef.Type

const summaryFields = {
  id: Schema.String,
  uid: Schema.String,
  title: Schema.String,
  done: Schema.Boolean,
  archived: Schema.Boolean,
  position: Schema.Number,
  startedAt: Schema.NullOr(IsoTimestamp),
  duedAt: Schema.NullOr(IsoTimestamp),
  color: Schema.NullOr(Schema.String),
  createdAt: IsoTimestamp,
  updatedAt: IsoTimestamp,
  todoList: ListRef,
  users: Schema.Array(RecordUser),
  tags: Schema.Array(RecordTag)
}

/** A list-records item. */
export const RecordSummary = openStruct(summaryFields)
export type RecordSummary = typeof RecordSummary.Type

/** A search-records item: the summary without position and dates, users as `{id, fullName}`. */
export const SearchResult = openStruct({
  id: Schema.String,
  uid: Schema.String,
  title: Schema.String,
  done: Schema.Boolean,
  archived: Schema.Boolean,
  createdAt: IsoTimestamp,
  updatedAt: IsoTimestamp,
  todoList: ListRef,
  users: Schema.Array(UserRef),
  tags: Schema.Array(RecordTag)
})
export type SearchResult = typeof SearchResult.Type

/** search-records answers a bare array. */
export const SearchResults = Schema.Array(SearchResult)
export type SearchResults = typeof SearchResults.Type

export const ChecklistItem = openStruct({
  id: Schema.String,
  title: Schema.String,
  done: Schema.Boolean,
  position: Schema.Number,
  startedAt: Schema.NullOr(IsoTimestamp),
  duedAt: Schema.NullOr(IsoTimestamp)
})
export type ChecklistItem = typeof ChecklistItem.Type

export const Checklist = openStruct({
  id: Schema.String,
  title: Schema.String,
  position: Schema.Number,
  checklistItems: Schema.Array(ChecklistItem)
})
export type Checklist = typeof Checklist.Type

/** The custom field types the emulator knows (see assumptions.ts); reads accept any string. */
export const CustomFieldType = Schema.Literal(...CUSTOM_FIELD_TYPES)
export type CustomFieldType = typeof CustomFieldType.Type

export const CustomFieldOption = openStruct({
  id: Schema.String,
  title: Schema.String,
  color: Schema.NullOr(Schema.String)
})
export type CustomFieldOption = typeof CustomFieldOption.Type

/** Table contents as the emulator writes them (assumptions.ts); reads keep whatever arrives. */
export const TableColumn = openStruct({ id: Schema.String, name: Schema.String, type: Schema.String })
export type TableColumn = typeof TableColumn.Type
export const TableCell = openStruct({ columnId: Schema.String, value: Schema.Unknown })
export type TableCell = typeof TableCell.Type

export const TableRow = openStruct({
  position: Schema.Number,
  cells: Schema.Array(Schema.Unknown)
})
export type TableRow = typeof TableRow.Type

export const CustomField = openStruct({
  id: Schema.String,
  name: Schema.String,
  type: Schema.String,
  text: Schema.NullOr(Schema.String),
  number: Schema.NullOr(Schema.Number),
  checked: Schema.NullOr(Schema.Boolean),
  customFieldOptions: Schema.Array(CustomFieldOption),
  tableColumns: Schema.NullOr(Schema.Array(Schema.Unknown)),
  tableRows: Schema.NullOr(Schema.Array(TableRow)),
  tableTotals: Schema.NullOr(Schema.Array(Schema.Unknown))
})
export type CustomField = typeof CustomField.Type

/** get-record (and update-record) response. */
export const RecordDetail = openStruct({
  ...summaryFields,
  text: Schema.String,
  html: Schema.String,
  // Always strings from the emulator; null accepted (assumptions.ts DETAIL_EMPTY_STRING).
  timezone: Schema.NullOr(Schema.String),
  cover: Schema.NullOr(Schema.String),
  commentCount: Schema.Number,
  checklistCount: Schema.Number,
  checklistCompletedCount: Schema.Number,
  isRepeating: Schema.Boolean,
  checklists: Schema.Array(Checklist),
  customFields: Schema.Array(CustomField)
})
export type RecordDetail = typeof RecordDetail.Type

/** create-record response; extra keys such as `position` or `todoList` are kept. */
export const CreateRecordResponse = openStruct({
  id: Schema.String,
  uid: Schema.String,
  title: Schema.String,
  rank: Schema.Union(Schema.Number, Schema.String),
  list: ListRef
})
export type CreateRecordResponse = typeof CreateRecordResponse.Type

/** move-record and delete-record response. */
export const SuccessResponse = openStruct({ success: Schema.Literal(true) })
export type SuccessResponse = typeof SuccessResponse.Type

/** count-records response (assumptions.ts COUNT_RECORDS_RESPONSE). */
export const CountRecordsResponse = openStruct({ count: Schema.Number })
export type CountRecordsResponse = typeof CountRecordsResponse.Type
