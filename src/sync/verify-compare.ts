/**
 * How a record read back from a service compares with the run's: restore's own
 * comparison (restore-target.ts) plus the description, which a listing does not show, in
 * words that name the first field that differs. Used by the rehearsal (a restored record)
 * and by the comparison with the live service (a record not changed since the run).
 */
import type { RecordDetail } from "../schema/records.ts"
import { sameDate, type SourceRecord } from "./restore-source.ts"
import { compareSummary } from "./restore-target.ts"

export const clip = (v: unknown): string => {
  const text = typeof v === "string" ? v : JSON.stringify(v) ?? String(v)
  return text.length > 60 ? `${JSON.stringify(text.slice(0, 57))}...` : JSON.stringify(text)
}

/** Whitespace-insensitive text, for descriptions another service may wrap differently. */
const squash = (s: string) => s.replace(/\s+/g, " ").trim()

/**
 * How `t` differs from the run's record `s`, in words; undefined when it holds restore's
 * fields as the run does. `emails`: the assignees expected (those a target can have);
 * `declared`: what the restore said it left out ("lists", "tags", "archived"), not compared.
 */
export const firstDifference = (
  s: SourceRecord,
  t: RecordDetail,
  emails: ReadonlyArray<string>,
  declared: ReadonlySet<string>
): string | undefined => {
  const archivedSettable = !declared.has("archived")
  const difference = compareSummary(s, t, emails, archivedSettable)
  const tagsDiffer = difference.tags && !declared.has("tags")
  const listDiffers = difference.list && !declared.has("lists")
  // Another service may wrap or sanitize HTML differently: the text carries the content too.
  const described = (s.html !== "" && t.html === s.html) || squash(t.text) === squash(s.text)
  if (!difference.fields && !listDiffers && !tagsDiffer && described) return undefined
  const targetEmails = t.users.map((u) => u.email.toLowerCase()).sort()
  const fields: ReadonlyArray<readonly [string, boolean, unknown, unknown]> = [
    ["title", s.title !== t.title, s.title, t.title],
    ["done", s.done !== t.done, s.done, t.done],
    ["archived", archivedSettable && s.archived !== t.archived, s.archived, t.archived],
    ["startedAt", !sameDate(s.startedAt, t.startedAt), s.startedAt, t.startedAt],
    ["duedAt", !sameDate(s.duedAt, t.duedAt), s.duedAt, t.duedAt],
    ["color", s.color !== null && s.color !== t.color, s.color, t.color],
    ["assignees", emails.join(",") !== targetEmails.join(","), emails.join(","), targetEmails.join(",")],
    ["list", listDiffers, s.listTitle, t.todoList.title],
    ["tags", tagsDiffer, s.tags.join(","), t.tags.map((x) => x.title).sort().join(",")],
    ["description", !described, s.html !== "" ? s.html : s.text, s.html !== "" ? t.html : t.text]
  ]
  const field = fields.find(([, differs]) => differs)
  return field === undefined ? "differs" : `${field[0]} ${clip(field[2])} came back as ${clip(field[3])}`
}
