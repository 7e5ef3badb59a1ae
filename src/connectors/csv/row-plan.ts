import type { TitleMap } from "../../sync/mapping-files.ts"
import type { PlanOp } from "../../store/journal.ts"
import { listEnsureKey, OP_KINDS, PACKED_CREATE_INDEX as P, tagEnsureKey } from "../../sync/plan.ts"
import { type Directory, titleResolver } from "./directory.ts"
import type { CsvRow } from "./row.ts"
import type { ExtractedRow } from "./rows.ts"

export interface PlannedRow {
  readonly ensures: ReadonlyArray<PlanOp>
  readonly create: PlanOp
  readonly done: boolean
}

/** What a valid row becomes: its ops, or a rejection (the message). */
export const makeRowPlanner = (workspaceId: string, dir: Directory, titles: TitleMap | undefined) => {
  const list = titleResolver(dir.lists, (title) => ({
    key: listEnsureKey(workspaceId, title),
    kind: OP_KINDS.listEnsure,
    payload: { workspaceId, title }
  }))
  const tag = titleResolver(dir.tags ?? new Map(), (title) => ({
    key: tagEnsureKey(workspaceId, title),
    kind: OP_KINDS.tagEnsure,
    payload: { workspaceId, title }
  }))
  const none: ReadonlyArray<PlanOp> = []
  const noTags: ReadonlyArray<string> = []
  return (e: ExtractedRow, row: CsvRow): PlannedRow | string => {
    let ensures = none
    let assigneeIds: Array<string> | undefined
    for (const email of row.assignees) {
      const id = dir.users.get(email)
      if (id === undefined) return `assignees: ${email} is not a user of the workspace`
      ;(assigneeIds ??= []).push(id)
    }
    let listId: string | undefined
    let listTitle: string | undefined
    if (row.list !== undefined && row.list !== "") {
      const title = titles === undefined ? row.list : titles.list(row.list)
      const r = list(title)
      if (r.id !== undefined) listId = r.id
      else {
        listTitle = title
        ensures = [r.ensure]
      }
    }
    let tagIds: Array<string> | undefined
    let tagTitles: Array<string> | undefined
    // Without tags on the service (dir.tags null), rows are planned without them.
    const rowTags = dir.tags === null ? noTags : titles === undefined ? row.tags : [...new Set(row.tags.map(titles.tag))]
    for (const t of rowTags) {
      const r = tag(t)
      if (r.id !== undefined) (tagIds ??= []).push(r.id)
      else {
        ;(tagTitles ??= []).push(t)
        if (ensures === none) ensures = []
        ;(ensures as Array<PlanOp>).push(r.ensure)
      }
    }
    // Packed in place, as `packRecordCreate` would pack the object (a test holds them
    // equal): this runs once per row of files of millions, and the object in between cost
    // about 0.2 CPU s a million rows. No workspaceId: the journal holds it once.
    const packed: Array<unknown> = [row.title, `line ${e.line}`, null, null, null, null, null, null, null, null, null, null]
    if (listId !== undefined) packed[P.listId] = listId
    if (listTitle !== undefined) packed[P.listTitle] = listTitle
    if (row.description !== undefined) packed[P.description] = row.description
    if (row.descriptionHtml !== undefined) packed[P.descriptionHtml] = row.descriptionHtml
    if (row.startedAt !== undefined) packed[P.startedAt] = row.startedAt
    if (row.duedAt !== undefined) packed[P.duedAt] = row.duedAt
    if (assigneeIds !== undefined) packed[P.assigneeIds] = assigneeIds
    if (tagIds !== undefined) packed[P.tagIds] = tagIds
    if (tagTitles !== undefined) packed[P.tagTitles] = tagTitles
    if (row.done) packed[P.then] = true
    let n = packed.length
    while (n > 2 && packed[n - 1] === null) n--
    packed.length = n
    return { ensures, create: { key: e.key, kind: OP_KINDS.recordCreate, payload: packed, occurrence: e.occurrence }, done: row.done }
  }
}
