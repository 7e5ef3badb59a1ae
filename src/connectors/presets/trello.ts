/**
 * Trello: the board CSV export, and the board JSON export read through `readTrelloBoard`
 * (trello-board.ts) into the same columns plus three JSON cells (`Comments`,
 * `Checklists`, `Attachments`): only the JSON export holds comments and checklists.
 *
 * CSV columns: `Card ID, Card Name, Card URL, Card Description, Labels, Members,
 * Member Initials, Member Usernames, Due Date, Start Date, Due Complete, Attachment Count,
 * Attachment Links, Checklist Item Total Count, Checklist Item Completed Count,
 * Vote Count, Comment Count, Last Activity Date, List ID, List Name, Board ID,
 * Board Name, Archived`.
 *
 * Choices: the `Card URL`'s short link names the card in other cards' texts (references.ts);
 * list = `List Name`; done = `Due Complete`; archived = `Archived`; labels
 * `Name (color)` become tags by name (a label without a name by its colour); members are
 * display names, resolved through `--people`; attachment links are attachments named by
 * the URL's last segment.
 */
import { distinct, isHttpUrl, jsonCell, multiline, splitList, stringField, urlFileName } from "./cells.ts"
import { classifyColumns, type ColumnRule, rowCells } from "./columns.ts"
import { toolDate } from "./dates.ts"
import { trelloShortLink } from "./references.ts"
import { EMPTY_ROW, type Preset, type PresetRow, type SourceAttachment, type SourceChecklist, type SourceComment } from "./model.ts"

type Role =
  | "id"
  | "url"
  | "title"
  | "description"
  | "labels"
  | "members"
  | "due"
  | "start"
  | "dueComplete"
  | "links"
  | "list"
  | "archived"
  | "comments"
  | "checklists"
  | "attachments"

const RULES: ReadonlyArray<ColumnRule<Role>> = [
  { role: "id", names: ["Card ID"], field: "key" },
  // The card's short link: what another card's text names it by (references.ts).
  { role: "url", names: ["Card URL"], field: "key" },
  { role: "title", names: ["Card Name"], field: "title" },
  { role: "description", names: ["Card Description"], field: "description" },
  { role: "labels", names: ["Labels"], field: "tags" },
  { role: "members", names: ["Members"], field: "assignees" },
  { role: "due", names: ["Due Date"], field: "duedAt" },
  { role: "start", names: ["Start Date"], field: "startedAt" },
  { role: "dueComplete", names: ["Due Complete"], field: "done" },
  { role: "links", names: ["Attachment Links"], field: "attachments" },
  { role: "list", names: ["List Name"], field: "list" },
  { role: "archived", names: ["Archived"], field: "archived" },
  { role: "comments", names: ["Comments"], field: "comments" },
  { role: "checklists", names: ["Checklists"], field: "checklists" },
  { role: "attachments", names: ["Attachments"], field: "attachments" },
  { names: ["Member Initials", "Member Usernames"], reason: "the members are carried by name (Members)" },
  {
    names: ["Attachment Count", "Checklist Item Total Count", "Checklist Item Completed Count", "Vote Count"],
    reason: "a count the service keeps itself"
  },
  {
    names: ["Comment Count"],
    reason: "the CSV export holds only the count: import the board JSON export to carry the comments"
  },
  { names: ["List ID", "Board ID"], reason: "Trello's own address or id" },
  { names: ["Board Name"], reason: "the target is the workspace given by --workspace" },
  { names: ["Last Activity Date"], reason: "set by the service itself" }
]

/** "Bug (red), Urgent (orange), (green)" -> ["Bug", "Urgent", "green"]. */
export const trelloLabels = (cell: string): Array<string> =>
  distinct(
    splitList(cell, /,/).map((l) => {
      const named = /^(.*\S)\s+\(([a-z_]+)\)$/i.exec(l)
      if (named !== null) return named[1]!
      const bare = /^\(([a-z_]+)\)$/i.exec(l)
      return bare !== null ? bare[1]! : l
    })
  )

const asArray = (v: unknown): ReadonlyArray<unknown> => (Array.isArray(v) ? v : [])

const jsonComments = (cell: string): Array<SourceComment> =>
  asArray(jsonCell(cell)).flatMap((c) => {
    const body = stringField(c, "body", "text")
    if (body === undefined) return []
    const date = stringField(c, "date")
    return [{ author: stringField(c, "author") ?? "unknown", date: date && toolDate(date), body: multiline(body) }]
  })

const jsonChecklists = (cell: string): Array<SourceChecklist> =>
  asArray(jsonCell(cell)).flatMap((c) => {
    const title = stringField(c, "title", "name")
    if (title === undefined) return []
    const items = asArray((c as { items?: unknown }).items).flatMap((i) => {
      const t = stringField(i, "title", "name")
      return t === undefined ? [] : [{ title: t, done: (i as { done?: unknown }).done === true }]
    })
    return [{ title, items }]
  })

const jsonAttachments = (cell: string): Array<SourceAttachment> =>
  asArray(jsonCell(cell)).flatMap((a) => {
    const url = stringField(a, "url")
    const name = stringField(a, "name") ?? (url !== undefined ? urlFileName(url) : undefined)
    return name === undefined ? [] : [{ name, url: url !== undefined && isHttpUrl(url) ? url : undefined }]
  })

export const trello: Preset = {
  name: "trello",
  description: "Trello board CSV export, or the board JSON export",
  open: (header) => {
    const cols = classifyColumns(header, RULES)
    if (cols.of("title").length === 0) return { error: "no \"Card Name\" column: is this a Trello board export?" }
    return {
      columns: cols.uses,
      read: (values): PresetRow => {
        const { cell, date, flag, problems } = rowCells(cols, values)
        const labels = cell("labels")
        const members = cell("members")
        const links = cell("links")
        const description = cell("description")
        const comments = cell("comments")
        const checklists = cell("checklists")
        const attachments = cell("attachments")
        const shortLink = trelloShortLink(cell("url"))
        return {
          ...EMPTY_ROW,
          id: cell("id"),
          ...(shortLink !== undefined ? { names: [shortLink] } : {}),
          title: cell("title") ?? "",
          description: description === undefined ? undefined : multiline(description),
          list: cell("list"),
          startedAt: date("start", "Start Date"),
          duedAt: date("due", "Due Date"),
          done: flag("dueComplete", "Due Complete"),
          archived: flag("archived", "Archived"),
          tags: labels === undefined ? [] : trelloLabels(labels),
          assignees: members === undefined ? [] : distinct(splitList(members, /,/)).map((name) => ({ name })),
          comments: comments === undefined ? [] : jsonComments(comments),
          checklists: checklists === undefined ? [] : jsonChecklists(checklists),
          attachments: [
            ...(links === undefined
              ? []
              : splitList(links, /[,\s]+/).filter(isHttpUrl).map((url) => ({ name: urlFileName(url) ?? "attachment", url }))),
            ...(attachments === undefined ? [] : jsonAttachments(attachments))
          ],
          problems
        }
      }
    }
  }
}
