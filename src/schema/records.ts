/**
 * Record shapes of the REST interface: list-records summary, search result,
 * get-record detail, and the small responses of record writes.
 */
import { Option, Schema, SchemaTransformation } from "effect"
import { CUSTOM_FIELD_TYPES } from "./assumptions.ts"
import { IsoTimestamp } from "./dates.ts"
import { answerIfShaped, openStruct, refIdOf, tolerant, undocumented, UnknownValue } from "./open.ts"

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
/** The documented fields of a list-records item (a record detail holds them all). */
export const RECORD_SUMMARY_FIELDS = Object.keys(summaryFields) as ReadonlyArray<keyof typeof summaryFields>
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
export const CustomFieldType = Schema.Literals(CUSTOM_FIELD_TYPES)
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
export const TableCell = openStruct({ columnId: Schema.String, value: UnknownValue })
export type TableCell = typeof TableCell.Type

export const TableRow = openStruct({
  position: Schema.Number,
  cells: Schema.Array(Schema.Unknown)
})
export type TableRow = typeof TableRow.Type

/**
 * A record's custom field. Every key is named by the documents, but not the types of the
 * values (`text`, `number`, `checked`), nor what the table keys hold, nor every `type`
 * value: those are kept as sent, whatever their type (a missing one reads as undefined).
 */
export const CustomField = openStruct({
  id: Schema.String,
  name: Schema.String,
  type: Schema.String,
  text: tolerant(Schema.NullOr(Schema.String)),
  number: tolerant(Schema.NullOr(Schema.Number)),
  checked: tolerant(Schema.NullOr(Schema.Boolean)),
  customFieldOptions: Schema.Array(CustomFieldOption),
  tableColumns: tolerant(Schema.NullOr(Schema.Array(Schema.Unknown))),
  tableRows: tolerant(Schema.NullOr(Schema.Array(TableRow))),
  tableTotals: tolerant(Schema.NullOr(Schema.Array(Schema.Unknown)))
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

/**
 * create-record response. The documents show `{id, uid, title, rank, list: {id, title}}`
 * and, in another example, `position` and `todoList` instead: only what both readings
 * have is required; read the list with `createdListId`.
 */
export const CreateRecordResponse = openStruct({
  id: Schema.String,
  uid: Schema.String,
  title: Schema.String,
  rank: undocumented(Schema.Union([Schema.Number, Schema.String])),
  list: undocumented(ListRef),
  position: undocumented(Schema.Number),
  todoList: undocumented(ListRef)
})
export type CreateRecordResponse = typeof CreateRecordResponse.Type

/** The list a created record landed in (`list`, else `todoList`), when the answer says. */
export const createdListId = (r: CreateRecordResponse): string | undefined => refIdOf(r.list) ?? refIdOf(r.todoList)

/** move-record and delete-record response. */
export const SuccessResponse = openStruct({ success: Schema.Literal(true) })
export type SuccessResponse = typeof SuccessResponse.Type

/** The forms of a count answer read so far (assumptions.ts COUNT_RECORDS_RESPONSE and its alternatives). */
const CountForms = Schema.Union([
  Schema.Number,
  openStruct({ count: Schema.Number }),
  openStruct({ totalCount: Schema.Number })
])
const decodeCountForms = Schema.decodeUnknownOption(CountForms)

/**
 * count-records response (not shown by the documents): `{count}`, `{totalCount}` or a
 * bare number, decoded to the count; any other answer decodes to none (a caller then
 * works without a total) and never fails.
 */
export const CountRecordsAnswer = Schema.Unknown.pipe(
  Schema.decodeTo(
    Schema.Option(Schema.Number),
    SchemaTransformation.transform<Option.Option<number>, unknown>({
      decode: (u) =>
        Option.map(decodeCountForms(u), (c) => (typeof c === "number" ? c : "count" in c ? c.count : c.totalCount)),
      encode: (count) => Option.match(count, { onNone: () => ({}), onSome: (n) => ({ count: n }) })
    })
  )
)
export type CountRecordsAnswer = typeof CountRecordsAnswer.Type

/**
 * update-record (and `PATCH /v1/records/{id}`) response, not shown by the documents: the
 * record detail when the answer is one, else none (`{success: true}`, `{}`, anything).
 * A 2xx is the success; no caller depends on the body.
 */
export const UpdateRecordAnswer = answerIfShaped(RecordDetail)
export type UpdateRecordAnswer = typeof UpdateRecordAnswer.Type
