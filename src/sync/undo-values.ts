/**
 * Field values as undo needs them: what an update or move found on the target before it
 * was sent (`Op.before`, recorded by the executors of replay-records.ts), and whether a
 * value the target shows now is the one a write set.
 *
 * A value read from the service is compared with one written to it by what the
 * documents say the service does with it: dates name the same instant (a bare date is
 * all-day), a plain-text description becomes HTML (R-REST-RECORD-30/31) and HTML is
 * sanitized (R-REST-RECORD-32), so descriptions compare by their visible text, and
 * `assigneeIds` replaces the assignees (R-REST-RECORD-45), so they compare as sets.
 */
import { Schema } from "effect"
import type { RecordDetail } from "../schema/records.ts"
import { commentVisibleText, textToHtml } from "../schema/comments.ts"
import { sameDate } from "./restore-source.ts"
import { withoutReferenceMarks } from "./references.ts"

const opt = <S extends Schema.Constraint>(s: S) => Schema.optional(s)

/** The fields update-record sets, as read from a record detail (the description as its HTML). */
export const BeforeFields = Schema.Struct({
  title: opt(Schema.String),
  descriptionHtml: opt(Schema.String),
  done: opt(Schema.Boolean),
  archived: opt(Schema.Boolean),
  startedAt: opt(Schema.NullOr(Schema.String)),
  duedAt: opt(Schema.NullOr(Schema.String)),
  color: opt(Schema.NullOr(Schema.String)),
  assigneeIds: opt(Schema.Array(Schema.String))
})
export type BeforeFields = typeof BeforeFields.Type

/**
 * `Op.before` of a `record.update` (the fields it was about to set, as the target held
 * them) or of a `record.move` (the list the record was in).
 */
export const BeforeValues = Schema.Struct({
  fields: opt(BeforeFields),
  listId: opt(Schema.String),
  /** The record's `updatedAt` when it was read. */
  updatedAt: opt(Schema.String)
})
export type BeforeValues = typeof BeforeValues.Type

/** A field of update-record as undo names it: both description forms are one field. */
export type FieldName = keyof BeforeFields

/** The field an update payload's key stands for (`description` and `descriptionHtml` are one). */
export const fieldOf = (key: string): FieldName | undefined =>
  key === "description" || key === "descriptionHtml"
    ? "descriptionHtml"
    : key === "allDay"
    ? undefined
    : (["title", "done", "archived", "startedAt", "duedAt", "color", "assigneeIds"] as const).find((f) => f === key)

/** What `detail` holds for each field an update with these payload keys sets. */
export const beforeOfUpdate = (detail: RecordDetail, keys: Iterable<string>): BeforeValues => {
  const fields: Record<string, unknown> = {}
  for (const key of keys) {
    const f = fieldOf(key)
    if (f !== undefined) fields[f] = currentValue(detail, f)
  }
  return { fields: fields as BeforeFields, updatedAt: detail.updatedAt }
}

/** What `detail` holds before a move: its list. */
export const beforeOfMove = (detail: RecordDetail): BeforeValues => ({ listId: detail.todoList.id, updatedAt: detail.updatedAt })

/** A field's value as the target shows it, in the form `BeforeFields` keeps. */
export const currentValue = (detail: RecordDetail, field: FieldName): unknown => {
  switch (field) {
    case "title":
      return detail.title
    case "descriptionHtml":
      return detail.html
    case "done":
      return detail.done
    case "archived":
      return detail.archived
    case "startedAt":
      return detail.startedAt
    case "duedAt":
      return detail.duedAt
    case "color":
      return detail.color
    case "assigneeIds":
      return detail.users.map((u) => u.id)
  }
}

const visible = (html: string): string => commentVisibleText(html)

/**
 * The value a write sent for `field`, in the form `BeforeFields` keeps (a plain-text
 * description as the HTML the service makes of it).
 */
export const writtenValue = (fields: Readonly<Record<string, unknown>>, field: FieldName): unknown =>
  field === "descriptionHtml"
    ? typeof fields["descriptionHtml"] === "string"
      ? fields["descriptionHtml"]
      : typeof fields["description"] === "string"
      ? textToHtml(fields["description"])
      : undefined
    : fields[field]

/** Whether the target's value `current` of `field` is `value` (written, or read before). */
export const sameValue = (field: FieldName, current: unknown, value: unknown): boolean => {
  switch (field) {
    case "descriptionHtml":
      // A reference rewritten to name its target record (references.ts) is no change of the text.
      return typeof current === "string" && typeof value === "string" && withoutReferenceMarks(visible(current)) === withoutReferenceMarks(visible(value))
    case "startedAt":
    case "duedAt":
      return (current === null || typeof current === "string") && (value === null || value === undefined || typeof value === "string") &&
        sameDate(current, value ?? null)
    case "assigneeIds": {
      const a = Array.isArray(current) ? [...(current as Array<string>)].sort() : []
      const b = Array.isArray(value) ? [...(value as Array<string>)].sort() : []
      return a.join("\n") === b.join("\n")
    }
    case "color":
      return (current ?? null) === (value ?? null)
    default:
      return current === value
  }
}
