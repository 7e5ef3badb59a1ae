/**
 * What one webhook delivery means for the mirrored snapshot.
 *
 * The documents show the delivery's envelope but not the shapes of its values, so the
 * mirror trusts a value only as far as it can check it:
 * - a record event whose `currentValue` is a whole record detail (documented fields:
 *   `html`, `customFields`, `checklists`, `updatedAt`) is written at once, unless the
 *   snapshot already holds that record at the same or a later `updatedAt` (a duplicate or
 *   a delivery overtaken by a newer one); the record's activity is then read again;
 * - any other event naming a record (a summary, a checklist, a comment with its record
 *   id) has the record read again from the service, which is exact whatever the order;
 * - `TODO_DELETED` removes the record;
 * - list events change the run's lists; a rename, and changes to tags or custom field
 *   definitions, alter records without naming them: a gap, closed by reconciling;
 * - an event the mirror does not know (`WEBHOOK_HEALTH_CHECK`, a value added later) is
 *   acknowledged and left.
 */
import type { WebhookDelivery } from "../../schema/webhooks.ts"

export type MirrorAction =
  | { readonly _tag: "Write"; readonly recordId: string; readonly detail: Record<string, unknown> }
  | { readonly _tag: "Reread"; readonly recordId: string }
  | { readonly _tag: "Delete"; readonly recordId: string }
  | { readonly _tag: "List"; readonly list: { readonly id: string; readonly title?: unknown }; readonly deleted: boolean; readonly renamed: boolean }
  | { readonly _tag: "Gap"; readonly reason: string }
  | { readonly _tag: "Ignore" }

const obj = (v: unknown): Record<string, unknown> | undefined =>
  typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined
const str = (v: unknown): string | undefined => (typeof v === "string" && v !== "" ? v : undefined)

/** A value that holds every field of a record detail the snapshot stores. */
const isDetail = (v: Record<string, unknown>): boolean =>
  typeof v.id === "string" && typeof v.title === "string" && typeof v.updatedAt === "string" &&
  typeof v.html === "string" && Array.isArray(v.customFields) && Array.isArray(v.checklists) && Array.isArray(v.users)

/** The record a value belongs to: its own id for record events, `recordId` / `todoId` otherwise. */
const recordOf = (v: Record<string, unknown> | undefined, own: boolean): string | undefined =>
  v === undefined ? undefined : own ? str(v.id) : str(v.recordId) ?? str(v.todoId) ?? str(obj(v.todo)?.id)

export const actionOf = (d: WebhookDelivery): MirrorAction => {
  const current = obj(d.currentValue)
  const previous = obj(d.previousValue)
  const event = d.event
  if (event === "TODO_DELETED") {
    const id = recordOf(previous, true) ?? recordOf(current, true)
    return id === undefined ? { _tag: "Gap", reason: `${event} without a record id` } : { _tag: "Delete", recordId: id }
  }
  if (event.startsWith("TODO_CHECKLIST_") || event.startsWith("COMMENT_")) {
    const id = recordOf(current, false) ?? recordOf(previous, false)
    return id === undefined ? { _tag: "Gap", reason: `${event} without its record's id` } : { _tag: "Reread", recordId: id }
  }
  if (event.startsWith("TODO_LIST_")) {
    const list = current ?? previous
    const id = str(list?.id)
    if (id === undefined) return { _tag: "Gap", reason: `${event} without a list id` }
    return {
      _tag: "List",
      list: { id, title: list?.title },
      deleted: event === "TODO_LIST_DELETED",
      renamed: event === "TODO_LIST_NAME_CHANGED"
    }
  }
  if (event.startsWith("TODO_")) {
    const id = recordOf(current, true) ?? recordOf(previous, true)
    if (id === undefined) return { _tag: "Gap", reason: `${event} without a record id` }
    return current !== undefined && isDetail(current) ? { _tag: "Write", recordId: id, detail: current } : { _tag: "Reread", recordId: id }
  }
  if (event === "TAG_CREATED") return { _tag: "Ignore" }
  if (event.startsWith("TAG_") || event.startsWith("CUSTOM_FIELD_")) {
    return { _tag: "Gap", reason: `${event} changes records without naming them` }
  }
  return { _tag: "Ignore" }
}
