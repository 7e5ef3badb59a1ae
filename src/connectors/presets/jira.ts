/**
 * Jira's issue CSV export ("Export > CSV (all fields)"), as Jira writes it.
 *
 * - Repeated columns (`Labels`, `Comment`, `Attachment`, `Sprint`, `Watchers`): every
 *   one is read.
 * - `Comment` cells are `date;author;body`: only the first two `;` are structure (the body
 *   may hold `;` and newlines). `Attachment` cells are `date;author;name;url`: the URL is
 *   the last part, the name whatever lies between (it may hold `;`). The author is a
 *   display name in older exports, an account id in newer ones: kept as written.
 * - Dates: `05/Nov/25 5:16 PM`, `3/Nov/20 12:17`, a due date without a time `24/Jan/24`.
 *
 * Choices (the service has fewer fields than Jira):
 * - key `Issue id` (what `Parent id` refers to), else `Issue key`;
 * - list = `Status`; done = a `Resolution` other than "Unresolved", a `Resolved` date, or a
 *   done status (Done, Closed, Resolved);
 * - tags = every label, plus `Priority: <p>` and `Type: <issue type>` (prefixed, so a
 *   priority named like a label stays distinct);
 * - `Issue key`, `Reporter` and `Created` open the description as one attribution line
 *   ("Jira PROJ-12, reported by Alice on 2025-11-05T17:16:00Z"): the interface cannot set
 *   a record's author or creation time, and a migrated issue should still say where it
 *   came from;
 * - the rest (sprints, estimates, custom fields, watchers, versions, ...) is left behind,
 *   each column with its reason in the census.
 */
import { distinct, isEmail, isHttpUrl, multiline } from "./cells.ts"
import { allCells, classifyColumns, type ColumnRule, rowCells } from "./columns.ts"
import { toolDate } from "./dates.ts"
import { EMPTY_ROW, type Preset, type PresetRow, type SourceAttachment, type SourceComment } from "./model.ts"

type Role =
  | "id"
  | "key"
  | "title"
  | "description"
  | "status"
  | "resolution"
  | "resolved"
  | "due"
  | "start"
  | "labels"
  | "priority"
  | "type"
  | "assignee"
  | "reporter"
  | "created"
  | "comment"
  | "attachment"
  | "parent"

const RULES: ReadonlyArray<ColumnRule<Role>> = [
  { role: "id", names: ["Issue id"], field: "key" },
  { role: "key", names: ["Issue key"], field: "description" },
  { role: "title", names: ["Summary"], field: "title" },
  { role: "description", names: ["Description"], field: "description" },
  { role: "status", names: ["Status"], field: "list" },
  { role: "resolution", names: ["Resolution"], field: "done" },
  { role: "resolved", names: ["Resolved"], field: "done" },
  { role: "due", names: ["Due date", "Due Date"], field: "duedAt" },
  { role: "start", names: ["Start date", "Start Date", "Custom field (Start date)"], field: "startedAt" },
  { role: "labels", names: ["Labels"], field: "tags" },
  { role: "priority", names: ["Priority"], field: "tags" },
  { role: "type", names: ["Issue Type"], field: "tags" },
  { role: "assignee", names: ["Assignee"], field: "assignees" },
  { role: "reporter", names: ["Reporter"], field: "description" },
  { role: "created", names: ["Created"], field: "description" },
  { role: "comment", names: ["Comment"], field: "comments" },
  { role: "attachment", names: ["Attachment"], field: "attachments" },
  { role: "parent", names: ["Parent id", "Parent ID", "Parent"], field: "parent" },
  { names: ["Sprint"], reason: "the service has no sprints" },
  {
    names: /^(\u03a3 )?(Original Estimate|Remaining Estimate|Time Spent)$|^(Log Work|Work Ratio)$/i,
    reason: "the service has no time tracking"
  },
  { names: /^Custom field \(.*\)$/i, reason: "custom field values: no documented operation sets them" },
  { names: ["Watchers", "Votes"], reason: "the service has no watchers or votes" },
  { names: ["Creator"], reason: "the reporter is named instead (the interface cannot set a record's author)" },
  { names: ["Updated", "Last Viewed"], reason: "set by the service itself" },
  { names: /^Project /i, reason: "the target is the workspace given by --workspace" },
  {
    names: /^(Affects Version\/s|Fix Version\/s|Component\/s|Environment|Security Level|Status Category( Changed)?|Parent summary|Outward issue link.*|Inward issue link.*)$/i,
    reason: "no field on the service for it"
  }
]

/** Statuses that mean the work is finished, whatever the resolution says. */
const DONE_STATUSES: ReadonlySet<string> = new Set(["done", "closed", "resolved"])

/** Splits `a;b;rest` at its first `count` semicolons. */
const splitHead = (cell: string, count: number): Array<string> => {
  const parts: Array<string> = []
  let rest = cell
  for (let i = 0; i < count; i++) {
    const at = rest.indexOf(";")
    if (at < 0) break
    parts.push(rest.slice(0, at))
    rest = rest.slice(at + 1)
  }
  parts.push(rest)
  return parts
}

/**
 * A `Comment` cell: `date;author;body`. A cell without the two `;` (an export edited by
 * hand) is a body with no date and author "unknown"; undefined when it is empty.
 */
export const parseJiraComment = (cell: string): SourceComment | undefined => {
  const [first, second, ...rest] = splitHead(cell, 2)
  if (rest.length === 0 || toolDate(first!) === undefined) {
    const body = multiline(cell).trim()
    return body === "" ? undefined : { author: "unknown", date: undefined, body }
  }
  return { date: toolDate(first!), author: second!.trim() || "unknown", body: multiline(rest[0]!).trim() }
}

/** An `Attachment` cell: `date;author;name;url` (the name may hold `;`, the url is last). */
export const parseJiraAttachment = (cell: string): SourceAttachment | undefined => {
  const s = cell.trim()
  if (s === "") return undefined
  const cut = s.lastIndexOf(";")
  const url = cut >= 0 && isHttpUrl(s.slice(cut + 1)) ? s.slice(cut + 1).trim() : undefined
  const head = url === undefined ? s : s.slice(0, cut)
  const [first, second, ...rest] = splitHead(head, 2)
  if (rest.length > 0 && toolDate(first!) !== undefined) {
    return { date: toolDate(first!), author: second!.trim() || undefined, name: rest[0]!.trim(), url }
  }
  const name = url !== undefined ? decodeURIComponent(url.split("/").pop() ?? "") : head.trim()
  return { name: name || "attachment", url, date: undefined, author: undefined }
}

const attribution = (key: string | undefined, reporter: string | undefined, created: string | undefined): string | undefined => {
  if (key === undefined && reporter === undefined && created === undefined) return undefined
  let line = `Jira${key !== undefined ? ` ${key}` : ""}`
  if (reporter !== undefined) line += `, reported by ${reporter}`
  if (created !== undefined) line += ` on ${created}`
  return line
}

export const jira: Preset = {
  name: "jira",
  description: "Jira issue CSV export (all fields)",
  open: (header) => {
    const cols = classifyColumns(header, RULES)
    if (cols.of("title").length === 0) return { error: "no \"Summary\" column: is this a Jira CSV export?" }
    return {
      columns: cols.uses,
      read: (values): PresetRow => {
        const { cell, date, problems } = rowCells(cols, values)
        const status = cell("status")
        const resolution = cell("resolution")
        const resolved = cell("resolved")
        const done = (resolution !== undefined && resolution.toLowerCase() !== "unresolved") ||
          (resolved !== undefined && toolDate(resolved) !== undefined) ||
          (status !== undefined && DONE_STATUSES.has(status.toLowerCase()))
        const priority = cell("priority")
        const type = cell("type")
        const tags = distinct([
          ...allCells(values, cols.of("labels")).flatMap((l) => l.split(/\s+/)).map((l) => l.trim()).filter((l) => l !== ""),
          ...(priority !== undefined ? [`Priority: ${priority}`] : []),
          ...(type !== undefined ? [`Type: ${type}`] : [])
        ])
        const assignee = cell("assignee")
        const created = date("created", "Created")
        const head = attribution(cell("key"), cell("reporter"), created)
        const body = cell("description")
        const description = head === undefined ? body && multiline(body) : body === undefined ? head : `${head}\n\n${multiline(body)}`
        const comments = allCells(values, cols.of("comment")).flatMap((c) => parseJiraComment(c) ?? [])
        const attachments = allCells(values, cols.of("attachment")).flatMap((c) => parseJiraAttachment(c) ?? [])
        const key = cell("key")
        return {
          ...EMPTY_ROW,
          id: cell("id") ?? key,
          ...(key !== undefined ? { names: [key] } : {}),
          title: (cell("title") ?? "").trim(),
          description,
          list: status,
          startedAt: date("start", "Start date"),
          duedAt: date("due", "Due date"),
          done,
          tags,
          assignees: assignee === undefined ? [] : [isEmail(assignee) ? { email: assignee } : { name: assignee }],
          comments,
          attachments,
          parentId: cell("parent"),
          problems
        }
      }
    }
  }
}
