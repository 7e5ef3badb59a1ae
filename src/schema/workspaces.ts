/**
 * Workspaces, lists and tags (shapes chosen in assumptions.ts: WORKSPACE_SHAPE,
 * LIST_SHAPE, TAG_SHAPE).
 */
import { Schema } from "effect"
import { IsoTimestamp } from "./dates.ts"
import { openStruct } from "./open.ts"
import { ItemsWithTotal } from "./paging.ts"

export const Workspace = openStruct({
  id: Schema.String,
  slug: Schema.String,
  name: Schema.String,
  organizationId: Schema.String,
  createdAt: IsoTimestamp,
  updatedAt: IsoTimestamp
})
export type Workspace = typeof Workspace.Type

/** list-workspaces response (R-REST-PAGE-09). */
export const WorkspacesPage = ItemsWithTotal(Workspace)
export type WorkspacesPage = typeof WorkspacesPage.Type

export const List = openStruct({
  id: Schema.String,
  title: Schema.String,
  position: Schema.Number,
  workspaceId: Schema.String
})
export type List = typeof List.Type

export const Tag = openStruct({
  id: Schema.String,
  title: Schema.String,
  color: Schema.NullOr(Schema.String)
})
export type Tag = typeof Tag.Type

/**
 * `{items, totalCount}` or a bare array, decoded to the array. Encoding gives the
 * `{items, totalCount}` form the emulator sends.
 */
const itemsOrArray = <A, I>(item: Schema.Schema<A, I, never>) => {
  const envelope = Schema.transform(ItemsWithTotal(item), Schema.Array(Schema.typeSchema(item)), {
    strict: true,
    decode: (page) => page.items,
    encode: (items) => ({ items, totalCount: items.length })
  })
  return Schema.Union(envelope, Schema.Array(item))
}

/** list-lists response (unpaged, R-REST-PAGE-11), decoded to the lists. */
export const ListsResponse = itemsOrArray(List)
export type ListsResponse = typeof ListsResponse.Type

/** list-tags response, decoded to the tags. */
export const TagsResponse = itemsOrArray(Tag)
export type TagsResponse = typeof TagsResponse.Type
