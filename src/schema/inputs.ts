/**
 * Inputs of the REST operations (RPC bodies). The client encodes them; the emulator
 * decodes request bodies with them and answers 400 with the issues on failure.
 * Defaults and caps are applied by the handler (see limits.ts), not here, so an
 * encoded input carries exactly what the caller set.
 */
import { Schema } from "effect"
import { ActivityKind } from "./activity.ts"
import { DateInput } from "./dates.ts"
import { openStruct } from "./open.ts"

/** Offset: integer >= 0. */
export const Skip = Schema.Number.check(
  Schema.isInt({ title: "int" }),
  Schema.isGreaterThanOrEqualTo(0, { expected: "a non-negative number", title: "nonNegative" })
)
/** Page size: integer >= 1 (values above the maximum are capped by the service, not rejected). */
export const Limit = Schema.Number.check(
  Schema.isInt({ title: "int" }),
  Schema.isGreaterThanOrEqualTo(1, { expected: "a number greater than or equal to 1", title: "greaterThanOrEqualTo(1)" })
)

const Id = Schema.String
const Ids = Schema.Array(Schema.String)

export const DESCRIPTION_CONFLICT_MESSAGE =
  "send either description (plain text) or descriptionHtml (HTML), not both"

/** R-REST-RECORD-33: `description` and `descriptionHtml` are not sent together. */
const oneDescription = (input: {
  readonly description?: string | undefined
  readonly descriptionHtml?: string | undefined
}): Schema.FilterIssue | undefined =>
  input.description !== undefined && input.descriptionHtml !== undefined
    ? { path: ["descriptionHtml"], issue: DESCRIPTION_CONFLICT_MESSAGE }
    : undefined

/** list-records body; every field optional. */
export const ListRecordsInput = openStruct({
  workspaceId: Schema.optional(Id),
  listId: Schema.optional(Id),
  done: Schema.optional(Schema.Boolean),
  archived: Schema.optional(Schema.Boolean),
  assigneeIds: Schema.optional(Ids),
  tagIds: Schema.optional(Ids),
  search: Schema.optional(Schema.String),
  skip: Schema.optional(Skip),
  limit: Schema.optional(Limit)
})
export type ListRecordsInput = typeof ListRecordsInput.Type

export const GetRecordInput = openStruct({ workspaceId: Id, recordId: Id })
export type GetRecordInput = typeof GetRecordInput.Type

export const CreateRecordInput = openStruct({
  workspaceId: Id,
  title: Schema.String,
  listId: Schema.optional(Id),
  description: Schema.optional(Schema.String),
  descriptionHtml: Schema.optional(Schema.String),
  startedAt: Schema.optional(DateInput),
  duedAt: Schema.optional(DateInput),
  allDay: Schema.optional(Schema.Boolean),
  assigneeIds: Schema.optional(Ids),
  tagIds: Schema.optional(Ids)
}).check(Schema.makeFilter((input) => oneDescription(input), { identifier: "CreateRecordInput" }))
export type CreateRecordInput = typeof CreateRecordInput.Type

/** update-record body; omitted fields are unchanged, `null` dates clear them. */
export const UpdateRecordInput = openStruct({
  workspaceId: Id,
  recordId: Id,
  title: Schema.optional(Schema.String),
  description: Schema.optional(Schema.String),
  descriptionHtml: Schema.optional(Schema.String),
  done: Schema.optional(Schema.Boolean),
  // Archiving goes through update-record (assumptions.ts ARCHIVE_VIA_UPDATE_RECORD).
  archived: Schema.optional(Schema.Boolean),
  startedAt: Schema.optional(Schema.NullOr(DateInput)),
  duedAt: Schema.optional(Schema.NullOr(DateInput)),
  allDay: Schema.optional(Schema.Boolean),
  color: Schema.optional(Schema.String),
  assigneeIds: Schema.optional(Ids)
}).check(Schema.makeFilter((input) => oneDescription(input), { identifier: "UpdateRecordInput" }))
export type UpdateRecordInput = typeof UpdateRecordInput.Type

export const MoveRecordInput = openStruct({ workspaceId: Id, recordId: Id, listId: Id })
export type MoveRecordInput = typeof MoveRecordInput.Type

export const DeleteRecordInput = openStruct({ workspaceId: Id, recordId: Id })
export type DeleteRecordInput = typeof DeleteRecordInput.Type

/** count-records body; `{}` is valid (R-REST-RECORD-55). */
export const CountRecordsInput = openStruct({
  workspaceId: Schema.optional(Id),
  done: Schema.optional(Schema.Boolean),
  archived: Schema.optional(Schema.Boolean)
})
export type CountRecordsInput = typeof CountRecordsInput.Type

export const SearchRecordsInput = openStruct({
  /** Workspace id or slug. */
  workspaceId: Id,
  query: Schema.String,
  done: Schema.optional(Schema.Boolean),
  archived: Schema.optional(Schema.Boolean),
  limit: Schema.optional(Limit)
})
export type SearchRecordsInput = typeof SearchRecordsInput.Type

export const ListRecordActivityInput = openStruct({
  workspaceId: Id,
  recordId: Id,
  type: Schema.optional(ActivityKind),
  limit: Schema.optional(Limit),
  skip: Schema.optional(Skip)
})
export type ListRecordActivityInput = typeof ListRecordActivityInput.Type

/** list-files body; without `workspaceId` see assumptions.ts LIST_FILES_WITHOUT_WORKSPACE. */
export const ListFilesInput = openStruct({
  workspaceId: Schema.optional(Id),
  skip: Schema.optional(Skip),
  limit: Schema.optional(Limit)
})
export type ListFilesInput = typeof ListFilesInput.Type

/** list-users body (assumptions.ts USER_SHAPE). */
export const ListUsersInput = openStruct({
  workspaceId: Schema.optional(Id),
  skip: Schema.optional(Skip),
  limit: Schema.optional(Limit)
})
export type ListUsersInput = typeof ListUsersInput.Type

export const ListListsInput = openStruct({ workspaceId: Id })
export type ListListsInput = typeof ListListsInput.Type

export const CreateListInput = openStruct({ workspaceId: Id, title: Schema.String })
export type CreateListInput = typeof CreateListInput.Type

export const ListTagsInput = openStruct({ workspaceId: Id })
export type ListTagsInput = typeof ListTagsInput.Type

export const CreateTagInput = openStruct({
  workspaceId: Id,
  title: Schema.String,
  color: Schema.optional(Schema.String)
})
export type CreateTagInput = typeof CreateTagInput.Type

/** list-workspaces takes `{}` (R-REST-CALL-06). */
export const ListWorkspacesInput = openStruct({})
export type ListWorkspacesInput = typeof ListWorkspacesInput.Type

export const CreateWorkspaceInput = openStruct({
  name: Schema.String,
  slug: Schema.optional(Schema.String)
})
export type CreateWorkspaceInput = typeof CreateWorkspaceInput.Type
