/**
 * list-record-activity items. Comments and actions share one shape: every key is
 * present on both kinds, null where it does not apply (a comment has no action
 * `type`, an action no `commentUser`).
 */
import { Schema } from "effect"
import { IsoTimestamp } from "./dates.ts"
import { openStruct, UnknownValue } from "./open.ts"
import { ItemsWithTotal } from "./paging.ts"
import { UserRef } from "./records.ts"

export const ActivityCustomFieldRef = openStruct({ id: Schema.String, name: Schema.String })
export type ActivityCustomFieldRef = typeof ActivityCustomFieldRef.Type

export const ActivityItem = openStruct({
  __typename: Schema.String,
  id: Schema.String,
  html: Schema.NullOr(Schema.String),
  createdAt: IsoTimestamp,
  deletedAt: Schema.NullOr(IsoTimestamp),
  commentUser: Schema.NullOr(UserRef),
  /** Action kind (e.g. `UPDATE_TITLE`); any string is accepted. */
  type: Schema.NullOr(Schema.String),
  // Old and new values differ per action kind (text, dates, ids, field values).
  oldValue: UnknownValue,
  newValue: UnknownValue,
  automated: Schema.Boolean,
  actionUser: Schema.NullOr(UserRef),
  affectedBy: Schema.NullOr(UserRef),
  customField: Schema.NullOr(ActivityCustomFieldRef)
})
export type ActivityItem = typeof ActivityItem.Type

/** list-record-activity response. */
export const ActivityPage = ItemsWithTotal(ActivityItem)
export type ActivityPage = typeof ActivityPage.Type

/** `type` filter of list-record-activity. */
export const ActivityKind = Schema.Literals(["all", "comments", "actions"])
export type ActivityKind = typeof ActivityKind.Type
