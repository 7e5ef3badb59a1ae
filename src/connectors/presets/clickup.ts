/**
 * ClickUp's task CSV export: `Task ID, Task Name, Task Content, Status, Date Created,
 * Date Created Text, Due Date, Due Date Text, Start Date, Start Date Text, Parent ID,
 * Attachments, Assignees, Tags, Priority, Time Estimated, Time Estimated Text, Checklists,
 * Comments, Assigned Comments, Time Spent, Time Spent Text, Rolled Up Time,
 * Rolled Up Time Text, List Name, Folder Name, Space Name`, then custom fields.
 *
 * Dates are epoch milliseconds (the `... Text` columns repeat them for people, in the
 * exporter's locale and zone, so they are not read); lists are `[a, b]` or JSON arrays;
 * `Checklists` and `Comments` hold JSON; `null` stands for no value; text may hold the two
 * characters `\n` for a line break.
 *
 * The JSON shapes inside cells vary between exports, so every plausible one is read:
 * comments as strings or objects (`text`/`comment_text`/`body`, `by`/`user`/`author`/
 * `email`, `date` in epoch ms or ISO); checklists as an object keyed by checklist name or
 * an array of `{name, items}`, items as strings or `{name, resolved|done|checked}`;
 * attachments as URLs or `{title|name, url}`.
 *
 * Choices: list = `Status` (the contract), so `List Name` is left behind with its reason;
 * done = a status among complete/completed/closed/done; `Priority` as the tag
 * `Priority: <p>`.
 */
import { distinct, isEmail, isHttpUrl, jsonCell, listCell, multiline, stringField, urlFileName } from "./cells.ts"
import { classifyColumns, type ColumnRule, rowCells } from "./columns.ts"
import { toolDate } from "./dates.ts"
import { EMPTY_ROW, type PersonRef, type Preset, type PresetRow, type SourceAttachment, type SourceChecklist, type SourceComment } from "./model.ts"

type Role =
  | "id"
  | "title"
  | "content"
  | "status"
  | "due"
  | "start"
  | "parent"
  | "attachments"
  | "assignees"
  | "tags"
  | "priority"
  | "checklists"
  | "comments"

const RULES: ReadonlyArray<ColumnRule<Role>> = [
  { role: "id", names: ["Task ID"], field: "key" },
  { role: "title", names: ["Task Name"], field: "title" },
  { role: "content", names: ["Task Content"], field: "description" },
  { role: "status", names: ["Status"], field: "list" },
  { role: "due", names: ["Due Date"], field: "duedAt" },
  { role: "start", names: ["Start Date"], field: "startedAt" },
  { role: "parent", names: ["Parent ID"], field: "parent" },
  { role: "attachments", names: ["Attachments"], field: "attachments" },
  { role: "assignees", names: ["Assignees"], field: "assignees" },
  { role: "tags", names: ["Tags"], field: "tags" },
  { role: "priority", names: ["Priority"], field: "tags" },
  { role: "checklists", names: ["Checklists"], field: "checklists" },
  { role: "comments", names: ["Comments"], field: "comments" },
  { names: ["Date Created", "Date Created Text"], reason: "set by the service itself" },
  { names: /^(Due Date|Start Date) Text$/i, reason: "the same date as the epoch column, in the exporter's locale" },
  { names: /^(Time Estimated|Time Spent|Rolled Up Time)( Text)?$/i, reason: "the service has no time tracking" },
  { names: ["Assigned Comments"], reason: "the comments are carried from Comments; the service cannot assign a comment" },
  { names: ["List Name"], reason: "the list is taken from Status" },
  { names: ["Folder Name", "Space Name"], reason: "the target is the workspace given by --workspace" }
]

const CUSTOM_FIELD = "custom field values: no documented operation sets them"

const DONE_STATUSES: ReadonlySet<string> = new Set(["complete", "completed", "closed", "done"])

const asArray = (v: unknown): ReadonlyArray<unknown> => (Array.isArray(v) ? v : [])

const dateOf = (v: unknown): string | undefined =>
  typeof v === "number" ? toolDate(String(v)) : typeof v === "string" ? toolDate(v) : undefined

/** The `Comments` cell: a JSON array of strings or objects. */
export const clickupComments = (cell: string): Array<SourceComment> => {
  const parsed = jsonCell(cell)
  if (parsed === undefined) {
    const body = multiline(cell).trim()
    return body === "" ? [] : [{ author: "unknown", date: undefined, body }]
  }
  return asArray(Array.isArray(parsed) ? parsed : [parsed]).flatMap((c): Array<SourceComment> => {
    if (typeof c === "string") return c.trim() === "" ? [] : [{ author: "unknown", date: undefined, body: multiline(c).trim() }]
    const body = stringField(c, "text", "comment_text", "body", "comment")
    if (body === undefined) return []
    const user = (c as { user?: unknown }).user
    const author = stringField(c, "by", "author", "email") ?? stringField(user, "username", "email") ??
      (typeof user === "string" ? user : undefined) ?? "unknown"
    return [{ author, date: dateOf((c as { date?: unknown }).date), body: multiline(body).trim() }]
  })
}

const checklistItems = (v: unknown): Array<{ title: string; done: boolean }> =>
  asArray(v).flatMap((i) => {
    if (typeof i === "string") return i.trim() === "" ? [] : [{ title: i.trim(), done: false }]
    const title = stringField(i, "name", "title")
    if (title === undefined) return []
    const o = i as { resolved?: unknown; done?: unknown; checked?: unknown }
    return [{ title, done: o.resolved === true || o.done === true || o.checked === true }]
  })

/** The `Checklists` cell: `{"name": [items]}` or `[{name, items}]`. */
export const clickupChecklists = (cell: string): Array<SourceChecklist> => {
  const parsed = jsonCell(cell)
  if (Array.isArray(parsed)) {
    return parsed.flatMap((c) => {
      const title = stringField(c, "name", "title")
      return title === undefined ? [] : [{ title, items: checklistItems((c as { items?: unknown }).items) }]
    })
  }
  if (typeof parsed === "object" && parsed !== null) {
    return Object.entries(parsed).map(([title, items]) => ({ title, items: checklistItems(items) }))
  }
  return []
}

/** The `Attachments` cell: URLs, or objects with a title and a url. */
export const clickupAttachments = (cell: string): Array<SourceAttachment> =>
  listCell(cell).flatMap((a) => {
    if (typeof a === "string") return isHttpUrl(a) ? [{ name: urlFileName(a) ?? "attachment", url: a }] : []
    const url = stringField(a, "url")
    const name = stringField(a, "title", "name") ?? (url !== undefined ? urlFileName(url) : undefined)
    return name === undefined ? [] : [{ name, url: url !== undefined && isHttpUrl(url) ? url : undefined }]
  })

const person = (v: unknown): PersonRef | undefined => {
  const s = typeof v === "string" ? v.trim() : stringField(v, "email", "username", "name")
  if (s === undefined || s === "") return undefined
  return isEmail(s) ? { email: s } : { name: s }
}

export const clickup: Preset = {
  name: "clickup",
  description: "ClickUp task CSV export",
  open: (header) => {
    const cols = classifyColumns(header, RULES, CUSTOM_FIELD)
    if (cols.of("title").length === 0) return { error: "no \"Task Name\" column: is this a ClickUp CSV export?" }
    return {
      columns: cols.uses,
      read: (values): PresetRow => {
        const { cell, date, problems } = rowCells(cols, values)
        const status = cell("status")
        const priority = cell("priority")
        const tags = cell("tags")
        const assignees = cell("assignees")
        const content = cell("content")
        const checklists = cell("checklists")
        const comments = cell("comments")
        const attachments = cell("attachments")
        return {
          ...EMPTY_ROW,
          id: cell("id"),
          title: multiline(cell("title") ?? "").trim(),
          description: content === undefined ? undefined : multiline(content),
          list: status,
          startedAt: date("start", "Start Date"),
          duedAt: date("due", "Due Date"),
          done: status !== undefined && DONE_STATUSES.has(status.toLowerCase()),
          tags: distinct([
            ...(tags === undefined ? [] : listCell(tags).flatMap((t) => {
              const name = typeof t === "string" ? t : stringField(t, "name")
              return name === undefined || name.trim() === "" ? [] : [name.trim()]
            })),
            ...(priority !== undefined ? [`Priority: ${priority}`] : [])
          ]),
          assignees: assignees === undefined ? [] : listCell(assignees).flatMap((a) => person(a) ?? []),
          comments: comments === undefined ? [] : clickupComments(comments),
          checklists: checklists === undefined ? [] : clickupChecklists(checklists),
          attachments: attachments === undefined ? [] : clickupAttachments(attachments),
          parentId: cell("parent"),
          problems
        }
      }
    }
  }
}
