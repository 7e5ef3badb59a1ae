/**
 * Column presets for the CSV exports of commonly used tools. Each field lists the header
 * names the tool uses (first found wins, matched case-insensitively), so exports of
 * slightly different versions work. A preset maps only what can be resolved: Trello and
 * Jira exports name members by display name, not e-mail, so their assignees stay
 * unmapped (add `--map assignees=COLUMN` when the file has e-mails).
 *
 * - trello: the board CSV export ("Card ID", "Card Name", "Card Description", "Labels",
 *   "Due Date", "Start Date", "List Name", "Due Complete", ...). Labels read
 *   "Bug (red), Urgent (orange)": the colour suffix is dropped.
 * - asana: the project CSV export ("Task ID", "Name", "Notes", "Section/Column",
 *   "Assignee Email", "Start Date", "Due Date", "Tags", "Completed At", ...). A
 *   "Completed At" date means done.
 * - jira: the issue navigator CSV export ("Issue key", "Summary", "Description", "Status",
 *   "Labels" repeated once per label, "Due date", "Resolved", ...). Dates such as
 *   "24/Jan/24 10:15 AM" are read by the row parser; a "Resolved" date means done.
 * - generic: our own field names as headers (`title`, `description`, `list`, ...) and
 *   the plainest synonyms.
 */
import type { Field } from "./mapping.ts"

export interface Preset {
  readonly description: string
  readonly columns: Partial<Record<Field, ReadonlyArray<string>>>
  /** Per-field rewrite of the raw cell before validation. */
  readonly transforms: Partial<Record<Field, (value: string) => string>>
}

/** "Bug (red), Urgent (orange)" -> "Bug, Urgent"; a label without a name keeps its colour. */
export const stripTrelloLabelColours = (value: string): string =>
  value
    .split(",")
    .map((l) => l.trim())
    .filter((l) => l !== "")
    .map((l) => {
      const m = /^(.*\S)\s+\(([a-z_]+)\)$/i.exec(l)
      return m ? m[1]! : l.replace(/^\(([a-z_]+)\)$/i, "$1")
    })
    .join(", ")

export const PRESET_NAMES = ["generic", "trello", "asana", "jira"] as const
export type PresetName = (typeof PRESET_NAMES)[number]

export const PRESETS: Readonly<Record<PresetName, Preset>> = {
  generic: {
    description: "columns named after the fields (title, description, list, startedAt, duedAt, assignees, tags, done, key)",
    columns: {
      title: ["title", "name", "summary", "task"],
      description: ["description", "notes", "details"],
      descriptionHtml: ["descriptionHtml", "description_html"],
      list: ["list", "list name", "section"],
      startedAt: ["startedAt", "started_at", "start date", "start"],
      duedAt: ["duedAt", "due_at", "due date", "due"],
      assignees: ["assignees", "assignee emails", "assignee email", "assignee"],
      tags: ["tags", "labels"],
      done: ["done", "completed", "complete"],
      key: ["key", "id"]
    },
    transforms: {}
  },
  trello: {
    description: "Trello board CSV export",
    columns: {
      title: ["Card Name"],
      description: ["Card Description"],
      list: ["List Name"],
      startedAt: ["Start Date"],
      duedAt: ["Due Date"],
      tags: ["Labels"],
      done: ["Due Complete"],
      key: ["Card ID"]
    },
    transforms: { tags: stripTrelloLabelColours }
  },
  asana: {
    description: "Asana project CSV export",
    columns: {
      title: ["Name"],
      description: ["Notes"],
      list: ["Section/Column"],
      startedAt: ["Start Date"],
      duedAt: ["Due Date"],
      assignees: ["Assignee Email"],
      tags: ["Tags"],
      done: ["Completed At"],
      key: ["Task ID"]
    },
    transforms: {}
  },
  jira: {
    description: "Jira issue CSV export",
    columns: {
      title: ["Summary"],
      description: ["Description"],
      list: ["Status"],
      duedAt: ["Due date", "Due Date"],
      tags: ["Labels"],
      done: ["Resolved"],
      key: ["Issue key"]
    },
    transforms: {}
  }
}
