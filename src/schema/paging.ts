/**
 * Page envelopes. Operations name their arrays differently and carry either
 * `pageInfo` or `totalCount`; each envelope here is one documented form.
 */
import { Schema } from "effect"
import { openStruct } from "./open.ts"
import { RecordSummary } from "./records.ts"
import { RestUser } from "./users.ts"

/** list-records `pageInfo` (R-REST-PAGE-07). */
export const RecordsPageInfo = openStruct({
  hasNextPage: Schema.Boolean,
  hasPreviousPage: Schema.Boolean,
  startCursor: Schema.NullOr(Schema.String),
  endCursor: Schema.NullOr(Schema.String)
})
export type RecordsPageInfo = typeof RecordsPageInfo.Type

/** list-files `pageInfo` (R-REST-PAGE-08), also ProjectUserList's. */
export const FilesPageInfo = openStruct({
  totalItems: Schema.Number,
  hasNextPage: Schema.Boolean
})
export type FilesPageInfo = typeof FilesPageInfo.Type

/** list-records response. */
export const RecordsPage = openStruct({
  items: Schema.Array(RecordSummary),
  pageInfo: RecordsPageInfo
})
export type RecordsPage = typeof RecordsPage.Type

/** `{items, totalCount}`: list-workspaces, list-record-activity, list-tags, list-lists. */
export const ItemsWithTotal = <S extends Schema.Top>(item: S) =>
  openStruct({ items: Schema.Array(item), totalCount: Schema.Number })

/** list-users response (R-REST-PAGE-10). */
export const UsersPage = openStruct({
  users: Schema.Array(RestUser),
  totalCount: Schema.Number
})
export type UsersPage = typeof UsersPage.Type
