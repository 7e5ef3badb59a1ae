/**
 * What a migration's pass last wrote to a target record, field by field, so the next pass
 * tells a field the source changed from one edited on the target since (contract: "Delta
 * passes and plans"). Kept in the marker op of each version a migration plans
 * (restore-plan.ts, payload `written`): the record's fields as the target held them once
 * that version was done. The description is kept as a hash (it can be long); the rest as
 * read from the source, assignees as the e-mails the target knew.
 */
import { createHash } from "node:crypto"
import type { RecordSummary } from "../schema/records.ts"
import { sameDate, type SourceRecord } from "./restore-source.ts"

/** A field a restore writes (update-record, or move-record for the list). */
export type RecordField = "title" | "description" | "list" | "startedAt" | "duedAt" | "done" | "archived" | "color" | "assignees"

/** The source's fields as written; `emails`: only the assignees the target knew. */
export interface Written
  extends Pick<SourceRecord, "title" | "listTitle" | "startedAt" | "duedAt" | "done" | "archived" | "color" | "emails">
{
  /** `descriptionHash` of what was written. */
  readonly description: string
}

/** A description as written: HTML when there is some, else the text. */
export const descriptionHash = (html: string, text: string): string =>
  createHash("sha1").update(html !== "" ? `html:${html}` : `text:${text}`).digest("hex").slice(0, 16)

/** The fields of a source record as a restore writes them (assignees: those the target knows). */
export const writtenOf = (r: SourceRecord, emails: ReadonlyArray<string>): Written => ({
  title: r.title,
  description: descriptionHash(r.html, r.text),
  listTitle: r.listTitle,
  startedAt: r.startedAt,
  duedAt: r.duedAt,
  done: r.done,
  archived: r.archived,
  color: r.color,
  emails: [...emails].sort()
})

/** `was` with `fields` now as the source has them. */
export const writtenAfter = (was: Written, now: Written, fields: ReadonlyArray<RecordField>): Written => {
  const out: { -readonly [K in keyof Written]: Written[K] } = { ...was }
  for (const f of fields) {
    if (f === "list") out.listTitle = now.listTitle
    else if (f === "assignees") out.emails = now.emails
    else out[f] = now[f] as never
  }
  return out
}

/** A marker's `written`, read tolerantly (journals of earlier versions have none). */
export const writtenOfMarker = (payload: unknown): Written | undefined => {
  const w = (payload as { written?: unknown } | null)?.written as Partial<Written> | undefined
  if (typeof w !== "object" || w === null || typeof w.title !== "string" || typeof w.description !== "string" || !Array.isArray(w.emails)) return undefined
  return w as Written
}

/** The fields of a record summary compared (not the description, which summaries lack). */
type Compared = Pick<Written, "title" | "listTitle" | "startedAt" | "duedAt" | "done" | "archived" | "color">

/**
 * The fields where the target record differs from `fields` (a source record, or what was
 * written), as update-record and move-record could set them: `archived` only where the
 * service sets it; a colour only when there is one (update-record cannot clear one); the
 * list unless it is one the service could not make (its records are in the first list).
 * `emails`: the assignees to compare with, those the target knows.
 */
export const summaryDifferences = (
  fields: Compared,
  emails: ReadonlyArray<string>,
  target: RecordSummary,
  archivedSettable: boolean,
  listsNotMade: ReadonlySet<string>
): Array<RecordField> => {
  const out: Array<RecordField> = []
  if (fields.title !== target.title) out.push("title")
  if (fields.done !== target.done) out.push("done")
  if (archivedSettable && fields.archived !== target.archived) out.push("archived")
  if (!sameDate(fields.startedAt, target.startedAt)) out.push("startedAt")
  if (!sameDate(fields.duedAt, target.duedAt)) out.push("duedAt")
  if (fields.color !== null && fields.color !== target.color) out.push("color")
  const targetEmails = target.users.map((u) => u.email.toLowerCase()).sort()
  if ([...emails].sort().join("\n") !== targetEmails.join("\n")) out.push("assignees")
  if (fields.listTitle !== null && fields.listTitle !== target.todoList.title && !listsNotMade.has(fields.listTitle)) out.push("list")
  return out
}
