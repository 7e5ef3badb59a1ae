/**
 * Trello's board JSON export (Menu > Print, export and share > Export as JSON), the only
 * Trello export with comments and checklists, presented as the columns of the CSV
 * export plus three JSON cells, so the `trello` preset reads both the same way.
 *
 * - cards: id, url (or shortUrl), name, desc, idList (a list's name), idLabels, idMembers (full names), due,
 *   start, dueComplete, closed, attachments [{name, url}], idChecklists;
 * - a card of a closed (archived) list is archived too: Trello hides it with its list;
 * - comments: the `commentCard` actions (data.card.id, data.text, memberCreator.fullName,
 *   date), oldest first (the export lists actions newest first). The export holds at most
 *   the last 1,000 actions: older comments are not in the file.
 */
import type { TabularExport } from "./model.ts"

export const TRELLO_BOARD_COLUMNS = [
  "Card ID",
  "Card URL",
  "Card Name",
  "Card Description",
  "Labels",
  "Members",
  "Due Date",
  "Start Date",
  "Due Complete",
  "List Name",
  "Archived",
  "Comments",
  "Checklists",
  "Attachments"
] as const

type Json = Record<string, unknown>
const obj = (v: unknown): Json => (typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Json) : {})
const arr = (v: unknown): ReadonlyArray<unknown> => (Array.isArray(v) ? v : [])
const str = (v: unknown): string => (typeof v === "string" ? v : "")

/** The board as header + rows, or one line saying why the text is not a Trello board. */
export const readTrelloBoard = (text: string): TabularExport | { readonly error: string } => {
  let board: Json
  try {
    board = obj(JSON.parse(text.replace(/^\uFEFF/, "")))
  } catch (e) {
    return { error: `not valid JSON (${(e as Error).message})` }
  }
  if (!Array.isArray(board.cards)) return { error: "no \"cards\" array: is this a Trello board JSON export?" }
  const byId = (items: unknown) => new Map(arr(items).map((i) => [str(obj(i).id), obj(i)]))
  const lists = byId(board.lists)
  const labels = byId(board.labels)
  const members = byId(board.members)
  const checklists = byId(board.checklists)
  const comments = new Map<string, Array<Json>>()
  for (const a of [...arr(board.actions)].reverse()) {
    const action = obj(a)
    if (action.type !== "commentCard") continue
    const data = obj(action.data)
    const card = str(obj(data.card).id)
    const creator = obj(action.memberCreator)
    const list = comments.get(card) ?? []
    list.push({ author: str(creator.fullName) || str(creator.username) || "unknown", date: str(action.date), body: str(data.text) })
    comments.set(card, list)
  }
  const rows = arr(board.cards).map((c, i) => {
    const card = obj(c)
    const id = str(card.id)
    const list = lists.get(str(card.idList))
    const labelNames = arr(card.idLabels).map((l) => {
      const label = labels.get(str(l))
      return label === undefined ? "" : str(label.name) || str(label.color)
    })
    const memberNames = arr(card.idMembers).map((m) => {
      const member = members.get(str(m))
      return member === undefined ? "" : str(member.fullName) || str(member.username)
    })
    const cardChecklists = arr(card.idChecklists).flatMap((cl) => {
      const checklist = checklists.get(str(cl))
      if (checklist === undefined) return []
      const items = [...arr(checklist.checkItems)]
        .map(obj)
        .sort((a, b) => Number(a.pos ?? 0) - Number(b.pos ?? 0))
        .map((item) => ({ title: str(item.name), done: item.state === "complete" }))
      return [{ title: str(checklist.name), items }]
    })
    const attachments = arr(card.attachments).map((a) => ({ name: str(obj(a).name), url: str(obj(a).url) }))
    const values = [
      id,
      str(card.url) || str(card.shortUrl),
      str(card.name),
      str(card.desc),
      labelNames.filter((l) => l !== "").join(", "),
      memberNames.filter((m) => m !== "").join(", "),
      str(card.due),
      str(card.start),
      card.dueComplete === true ? "true" : "false",
      list === undefined ? "" : str(list.name),
      card.closed === true || list?.closed === true ? "true" : "false",
      JSON.stringify(comments.get(id) ?? []),
      JSON.stringify(cardChecklists),
      JSON.stringify(attachments)
    ]
    return { line: i + 1, values }
  })
  return { header: TRELLO_BOARD_COLUMNS, rows }
}
