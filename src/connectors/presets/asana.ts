/**
 * Asana's project CSV export, as Asana writes it: `Task ID, Created At, Completed At,
 * Last Modified, Name, Section/Column, Assignee, Assignee Email, Start Date, Due Date,
 * Tags, Notes, Projects, Parent task` (older exports write `Parent Task`), then one column
 * per custom field, named verbatim (trailing spaces included).
 *
 * Choices:
 * - key `Task ID`; list = `Section/Column`; done = a `Completed At` date;
 * - the assignee is a person with both the e-mail and the display name the export gives:
 *   matched by e-mail first, so a person the workspace does not know never rejects the
 *   task (the import leaves them out and reports them);
 * - `Parent task` holds the parent's NAME (Asana writes no parent id): `parentId` carries
 *   that name and the import matches it against the titles of the file's tasks;
 * - creation and modification times are the service's own; `Projects` is the workspace
 *   chosen by --workspace; custom fields and dependencies have no documented operation.
 */
import { distinct, multiline, splitList } from "./cells.ts"
import { classifyColumns, type ColumnRule, rowCells } from "./columns.ts"
import { EMPTY_ROW, type PersonRef, type Preset, type PresetRow } from "./model.ts"

type Role = "id" | "title" | "notes" | "section" | "assignee" | "email" | "start" | "due" | "completed" | "tags" | "parent"

/** The columns every Asana export has; anything else after `Parent task` is a custom field. */
const RULES: ReadonlyArray<ColumnRule<Role>> = [
  { role: "id", names: ["Task ID"], field: "key" },
  { role: "title", names: ["Name"], field: "title" },
  { role: "notes", names: ["Notes"], field: "description" },
  { role: "section", names: ["Section/Column"], field: "list" },
  { role: "assignee", names: ["Assignee"], field: "assignees" },
  { role: "email", names: ["Assignee Email"], field: "assignees" },
  { role: "start", names: ["Start Date"], field: "startedAt" },
  { role: "due", names: ["Due Date"], field: "duedAt" },
  { role: "completed", names: ["Completed At"], field: "done" },
  { role: "tags", names: ["Tags"], field: "tags" },
  { role: "parent", names: ["Parent task", "Parent Task"], field: "parent" },
  { names: ["Created At", "Last Modified"], reason: "set by the service itself" },
  { names: ["Projects"], reason: "the target is the workspace given by --workspace" },
  { names: ["Blocked By (Dependencies)", "Blocking (Dependencies)"], reason: "no documented operation links records" }
]

const CUSTOM_FIELD = "custom field values: no documented operation sets them"

export const asana: Preset = {
  name: "asana",
  description: "Asana project CSV export",
  open: (header) => {
    const cols = classifyColumns(header, RULES, CUSTOM_FIELD)
    if (cols.of("title").length === 0) return { error: "no \"Name\" column: is this an Asana CSV export?" }
    return {
      columns: cols.uses,
      read: (values): PresetRow => {
        const { cell, date, problems } = rowCells(cols, values)
        const email = cell("email")
        const name = cell("assignee")
        const assignee: PersonRef | undefined = email !== undefined || name !== undefined
          ? { ...(email !== undefined ? { email } : {}), ...(name !== undefined ? { name } : {}) }
          : undefined
        const notes = cell("notes")
        const tags = cell("tags")
        return {
          ...EMPTY_ROW,
          id: cell("id"),
          title: cell("title") ?? "",
          description: notes === undefined ? undefined : multiline(notes),
          list: cell("section"),
          startedAt: date("start", "Start Date"),
          duedAt: date("due", "Due Date"),
          done: date("completed", "Completed At") !== undefined,
          tags: tags === undefined ? [] : distinct(splitList(tags, /,/)),
          assignees: assignee === undefined ? [] : [assignee],
          parentId: cell("parent"),
          problems
        }
      }
    }
  }
}
