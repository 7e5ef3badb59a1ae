/**
 * A row of another tool's export (src/connectors/presets) on its way into the journal:
 * the record's cells (validated like any CSV row), the people resolved, and the
 * follow-up ops its create is followed by (plan-extras.ts). Sub-tasks are linked to their
 * parent at the end of the file, when every parent has been seen.
 */
import { makeCensus } from "../presets/census.ts"
import type { PresetReader, PresetRow } from "../presets/model.ts"
import { type PeopleDirectory, personLabel, resolvePerson } from "../presets/people.ts"
import type { PlanOp } from "../../store/journal.ts"
import {
  attachmentText,
  commentText,
  EXTRA_KINDS,
  extraKey,
  SUBTASKS_CHECKLIST
} from "../../sync/plan-extras.ts"
import type { CsvRecord } from "./read.ts"
import { CELL, CELL_FIELDS, type Cells, validateCells } from "./row.ts"
import { contentKey, type ExtractedRow } from "./rows.ts"

/** At most this many distinct unresolved people and cell problems are kept for the report. */
const KEEP = 1000

export interface PresetPlanReport {
  /** People the workspace does not know: their records were created without them. */
  readonly unresolved: ReadonlyArray<string>
  /** Cells that could not be read (the row was imported without them), the first ones. */
  readonly problems: ReadonlyArray<string>
  readonly problemCount: number
}

export const makePresetPlanner = (options: {
  readonly workspaceId: string
  /** The tool's name for attribution lines ("Jira"). */
  readonly label: string
  readonly reader: PresetReader
  readonly people: PeopleDirectory
}) => {
  const { label, people, reader, workspaceId } = options
  const census = makeCensus(reader.columns)
  const unresolved = new Set<string>()
  const problems: Array<string> = []
  let problemCount = 0
  /** Sub-task links, kept until the end (they are few); parents by id and (Asana) by title. */
  const subtasks: Array<{ readonly parent: string; readonly key: string; readonly title: string; readonly done: boolean; readonly line: number }> = []
  const keyById = new Map<string, string>()
  const keyByTitle = new Map<string, string | null>()
  const cells: Cells = new Array<string | undefined>(CELL_FIELDS.length).fill(undefined)

  /** Reads a record: the extracted row (as the plain CSV path makes it) and the tool's row. */
  const extract = (record: CsvRecord): { readonly e: ExtractedRow; readonly row: PresetRow } => {
    census.count(record.values)
    const row = reader.read(record.values)
    for (const p of row.problems) {
      problemCount++
      if (problems.length < KEEP) problems.push(`line ${record.line}: ${p}`)
    }
    const emails: Array<string> = []
    for (const person of row.assignees) {
      const email = resolvePerson(people, person)
      if (email !== undefined) emails.push(email)
      else if (unresolved.size < KEEP) unresolved.add(personLabel(person))
    }
    cells.fill(undefined)
    cells[CELL.title] = row.title
    cells[CELL.description] = row.description
    cells[CELL.list] = row.list
    cells[CELL.startedAt] = row.startedAt
    cells[CELL.duedAt] = row.duedAt
    if (emails.length > 0) cells[CELL.assignees] = emails.join(", ")
    if (row.tags.length > 0) cells[CELL.tags] = row.tags.join(", ")
    cells[CELL.done] = row.done ? "true" : "false"
    const explicit = row.id !== undefined
    const e: ExtractedRow = {
      line: record.line,
      values: record.values,
      key: explicit ? `k:${row.id}` : contentKey(record.values),
      occurrence: !explicit,
      row: validateCells(cells)
    }
    return { e, row }
  }

  /** The ops that follow a record's create, once its journal key is known. */
  const followUps = (key: string, row: PresetRow, line: number): Array<PlanOp> => {
    const origin = `line ${line}`
    const base = { workspaceId, recordRef: key, origin }
    const ops: Array<PlanOp> = []
    row.comments.forEach((c, i) =>
      ops.push({ key: extraKey.comment(key, i), kind: EXTRA_KINDS.commentCreate, payload: { ...base, text: commentText(label, c) }, dependsOn: key })
    )
    row.attachments.forEach((a, i) => {
      const fileKey = extraKey.file(key, i)
      const sources = [...(a.url !== undefined ? [{ url: a.url }] : []), { dirName: a.name }]
      ops.push({ key: fileKey, kind: EXTRA_KINDS.fileUpload, payload: { ...base, name: a.name, sources }, dependsOn: key })
      ops.push({
        key: extraKey.fileComment(key, i),
        kind: EXTRA_KINDS.commentCreate,
        payload: { ...base, text: attachmentText(label, a), fileRef: fileKey },
        dependsOn: fileKey
      })
    })
    row.checklists.forEach((cl, n) => {
      const checklistKey = extraKey.checklist(key, n)
      ops.push({ key: checklistKey, kind: EXTRA_KINDS.checklistCreate, payload: { ...base, title: cl.title }, dependsOn: key })
      cl.items.forEach((item, m) =>
        ops.push({
          key: extraKey.checklistItem(key, n, m),
          kind: EXTRA_KINDS.checklistItemCreate,
          payload: { ...base, checklistRef: checklistKey, title: item.title, done: item.done },
          dependsOn: checklistKey
        })
      )
    })
    if (row.archived) ops.push({ key: extraKey.archive(key), kind: EXTRA_KINDS.recordArchive, payload: base, dependsOn: key })
    if (row.id !== undefined) keyById.set(row.id, key)
    keyByTitle.set(row.title, keyByTitle.has(row.title) ? null : key)
    if (row.parentId !== undefined) subtasks.push({ parent: row.parentId, key, title: row.title, done: row.done, line })
    return ops
  }

  /**
   * At the end of the file: each parent gets a "Sub-tasks" checklist with one item per
   * sub-task (the sub-task is also a record of its own). A parent not in the file is a
   * problem of the sub-task's row.
   */
  const subtaskOps = (): Array<PlanOp> => {
    const ops: Array<PlanOp> = []
    const made = new Set<string>()
    for (const s of subtasks) {
      const parentKey = keyById.get(s.parent) ?? keyByTitle.get(s.parent) ?? undefined
      if (parentKey === undefined) {
        problemCount++
        if (problems.length < KEEP) problems.push(`line ${s.line}: parent ${JSON.stringify(s.parent)} is not in the file; imported as a record of its own`)
        continue
      }
      const checklistKey = extraKey.subtasks(parentKey)
      const base = { workspaceId, recordRef: parentKey, origin: `line ${s.line}` }
      if (!made.has(checklistKey)) {
        made.add(checklistKey)
        ops.push({ key: checklistKey, kind: EXTRA_KINDS.checklistCreate, payload: { ...base, title: SUBTASKS_CHECKLIST }, dependsOn: parentKey })
      }
      ops.push({
        key: extraKey.subtaskItem(parentKey, s.key),
        kind: EXTRA_KINDS.checklistItemCreate,
        payload: { ...base, checklistRef: checklistKey, title: s.title, done: s.done },
        dependsOn: checklistKey
      })
    }
    return ops
  }

  return {
    extract,
    followUps,
    subtaskOps,
    census: census.result,
    report: (): PresetPlanReport => ({ unresolved: [...unresolved], problems, problemCount })
  }
}
