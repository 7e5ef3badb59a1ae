/**
 * Workspaces, lists and tags. The documents name only a workspace's `id` and a list's
 * `{id, title}` (a record's `todoList`); everything else of these shapes is a choice of
 * assumptions.ts (WORKSPACE_SHAPE, LIST_SHAPE, TAG_SHAPE), so it is optional and kept
 * raw (docs/architecture.md, "Decoding policy").
 */
import { Schema, SchemaTransformation } from "effect"
import { IsoTimestamp } from "./dates.ts"
import { openStruct, stringOf, undocumented } from "./open.ts"
import { ItemsWithTotal } from "./paging.ts"

export const Workspace = openStruct({
  id: Schema.String,
  slug: undocumented(Schema.String),
  name: undocumented(Schema.String),
  organizationId: undocumented(Schema.String),
  createdAt: undocumented(IsoTimestamp),
  updatedAt: undocumented(IsoTimestamp)
})
export type Workspace = typeof Workspace.Type

/** list-workspaces response (R-REST-PAGE-09). */
export const WorkspacesPage = ItemsWithTotal(Workspace)
export type WorkspacesPage = typeof WorkspacesPage.Type

/** The slug of a workspace, when the service sends one. */
export const workspaceSlug = (w: Workspace): string | undefined => stringOf(w.slug)

/**
 * A list as list-lists gives it: `{id, title}` like a record's `todoList`. Its order is
 * the array's; its workspace is the one asked for.
 */
export const List = openStruct({
  id: Schema.String,
  title: Schema.String,
  position: undocumented(Schema.Number),
  workspaceId: undocumented(Schema.String)
})
export type List = typeof List.Type

/** A tag as list-tags gives it: `{id, title}` like a record's tags; `color` may be missing. */
export const Tag = openStruct({
  id: Schema.String,
  title: Schema.String,
  color: undocumented(Schema.NullOr(Schema.String))
})
export type Tag = typeof Tag.Type

/**
 * `{items, totalCount}` or a bare array, decoded to the array. Encoding gives the
 * `{items, totalCount}` form the emulator sends.
 */
const itemsOrArray = <S extends Schema.Codec<any, any, never, never>>(item: S) => {
  const envelope = ItemsWithTotal(item).pipe(
    Schema.decodeTo(
      Schema.Array(Schema.toType(item)),
      SchemaTransformation.transform({
        decode: (page: { readonly items: ReadonlyArray<S["Type"]> }) => page.items,
        encode: (items: ReadonlyArray<S["Type"]>) => ({ items, totalCount: items.length })
      })
    )
  )
  return Schema.Union([envelope, Schema.Array(item)])
}

/** list-lists response (unpaged, R-REST-PAGE-11), decoded to the lists. */
export const ListsResponse = itemsOrArray(List)
export type ListsResponse = typeof ListsResponse.Type

/** A custom field definition (list-custom-fields, beyond the documents). */
export const CustomFieldDefinition = openStruct({ id: Schema.String, name: Schema.String, type: Schema.String })
export type CustomFieldDefinition = typeof CustomFieldDefinition.Type

/** list-custom-fields response, decoded to the definitions. */
export const CustomFieldsResponse = itemsOrArray(CustomFieldDefinition)
export type CustomFieldsResponse = typeof CustomFieldsResponse.Type

/** list-tags response, decoded to the tags. */
export const TagsResponse = itemsOrArray(Tag)
export type TagsResponse = typeof TagsResponse.Type
