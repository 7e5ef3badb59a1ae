/**
 * A row of another tool's export (src/connectors/presets) on its way into the journal:
 * the record's cells (validated like any CSV row), the people resolved, and the
 * follow-up ops its create is followed by (plan-extras.ts). Sub-tasks are linked to their
 * parent at the end of the file, when every parent has been seen, and so are references
 * between rows (presets/references.ts): a description naming another row gets a references
 * op, and a row's comments, when one of them names another row, are planned then too.
 * What that needs of every row (its names, the sub-tasks, the rows whose texts name others)
 * is kept in a scratch file (store/scratch-row-names.ts), not in the heap, and the ops of
 * the end of the file come a page at a time: planning holds the same memory at any size.
 */
import { makeCensus } from "../presets/census.ts"
import type { PresetReader, PresetRow } from "../presets/model.ts"
import { SKIP } from "../../sync/mapping-files.ts"
import { type PeopleDirectory, personLabel, resolvePerson } from "../presets/people.ts"
import type { PlanOp } from "../../store/journal.ts"
import { NAME_OF, type ScratchRowNames } from "../../store/scratch-row-names.ts"
import { findReferences, type FoundReference, namesOf } from "../presets/references.ts"
import type { ToolPresetName } from "../presets/index.ts"
import { distinctReferences, type Reference, REFERENCES_KIND, referencesKey } from "../../sync/references.ts"
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

/** The waiting lists of the scratch file: what is planned once every row is read. */
const WAITING = { subtasks: "subtasks", references: "references" } as const

/** A sub-task's link, planned at the end of the file: its parent by id or (Asana) by title. */
interface Subtask {
  readonly parent: string
  readonly key: string
  readonly title: string
  readonly done: boolean
  readonly line: number
}

/** A row whose texts name other items, planned at the end of the file. */
interface WithReferences {
  readonly key: string
  readonly line: number
  readonly description: { readonly text: string; readonly found: ReadonlyArray<FoundReference> } | undefined
  /** The row's comments, when one of them names an item: planned at the end, in order. */
  readonly comments: ReadonlyArray<{ readonly text: string; readonly found: ReadonlyArray<FoundReference> }> | undefined
}

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
  /** Which tool's references its texts hold (presets/references.ts). */
  readonly tool: ToolPresetName
  readonly reader: PresetReader
  readonly people: PeopleDirectory
  /** Where every row's names and what waits for the end of the file are kept (removed by the caller). */
  readonly names: ScratchRowNames
}) => {
  const { label, names: kept, people, reader, workspaceId } = options
  const census = makeCensus(reader.columns)
  const unresolved = new Set<string>()
  const problems: Array<string> = []
  let problemCount = 0
  const cells: Cells = new Array<string | undefined>(CELL_FIELDS.length).fill(undefined)
  /**
   * Kept in the scratch file for every row: its key by id (the last row of an id), by
   * other name (`PresetRow.names`: Jira's issue key, a Trello short link; the first row of
   * a name) and by title (null when several rows have it). Parents are found by id and
   * (Asana) by title; references by other name, then by id.
   */
  const keyOf = (of: typeof NAME_OF.id | typeof NAME_OF.name | typeof NAME_OF.title, name: string) => kept.keyOf(of, name)

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
      if (email === SKIP) continue
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
    const names = namesOf(row)
    for (const n of row.names ?? []) kept.first(NAME_OF.name, n, key)
    // A row naming itself (Jira's attribution line holds its own key) is no reference.
    const found = (text: string | undefined) => findReferences(options.tool, text).filter((r) => !names.includes(r.name))
    const inDescription = found(row.description)
    const inComments = row.comments.map((c) => found(c.body))
    const commentsWait = inComments.some((f) => f.length > 0)
    if (inDescription.length > 0 || commentsWait) {
      kept.wait(WAITING.references, {
        key,
        line,
        description: inDescription.length > 0 ? { text: row.description!.replace(/\r\n?/g, "\n"), found: inDescription } : undefined,
        comments: commentsWait ? row.comments.map((c, i) => ({ text: commentText(label, c), found: inComments[i]! })) : undefined
      } satisfies WithReferences)
    }
    if (!commentsWait) {
      row.comments.forEach((c, i) =>
        ops.push({ key: extraKey.comment(key, i), kind: EXTRA_KINDS.commentCreate, payload: { ...base, text: commentText(label, c) }, dependsOn: key })
      )
    }
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
    if (row.id !== undefined) kept.last(NAME_OF.id, row.id, key)
    kept.only(NAME_OF.title, row.title, key)
    if (row.parentId !== undefined) kept.wait(WAITING.subtasks, { parent: row.parentId, key, title: row.title, done: row.done, line } satisfies Subtask)
    return ops
  }

  /**
   * At the end of the file: each parent gets a "Sub-tasks" checklist with one item per
   * sub-task (the sub-task is also a record of its own). A parent not in the file is a
   * problem of the sub-task's row. The ops come a page of sub-tasks at a time.
   */
  const subtaskOps = function*(): Generator<Array<PlanOp>> {
    for (const page of kept.waiting<Subtask>(WAITING.subtasks)) yield kept.batch(() => subtaskPage(page))
  }
  const subtaskPage = (subtasks: ReadonlyArray<Subtask>): Array<PlanOp> => {
    const ops: Array<PlanOp> = []
    for (const s of subtasks) {
      const parentKey = keyOf(NAME_OF.id, s.parent) ?? keyOf(NAME_OF.title, s.parent) ?? undefined
      if (parentKey === undefined) {
        problemCount++
        if (problems.length < KEEP) problems.push(`line ${s.line}: parent ${JSON.stringify(s.parent)} is not in the file; imported as a record of its own`)
        continue
      }
      const checklistKey = extraKey.subtasks(parentKey)
      const base = { workspaceId, recordRef: parentKey, origin: `line ${s.line}` }
      if (kept.first(NAME_OF.checklist, checklistKey, parentKey)) {
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

  /**
   * At the end of the file: the references of the rows whose texts name items, resolved
   * against every row's names. A description naming rows of the export gets a references
   * op (after `after(key)`, the row's last write of this pass), unless `skip(key)` (its
   * record was kept deleted, or its description kept); comments waiting get their ops,
   * with the rows they name. A name no row has is a reference outside the export: left as
   * written and counted in `outside()` (once every page is planned). The ops come a page
   * of rows at a time.
   */
  const referenceOps = (o: { readonly after: (key: string) => string; readonly skip: (key: string) => boolean }) => {
    let outside = 0
    const resolve = (found: ReadonlyArray<FoundReference>): Array<Reference> => {
      const refs: Array<Reference> = []
      for (const f of found) {
        const ref = keyOf(NAME_OF.name, f.name) ?? keyOf(NAME_OF.id, f.name) ?? undefined
        if (ref === undefined) outside++
        else refs.push({ token: f.token, ref })
      }
      return distinctReferences(refs)
    }
    const pages = function*(): Generator<Array<PlanOp>> {
      for (const page of kept.waiting<WithReferences>(WAITING.references)) yield referencePage(page)
    }
    const referencePage = (withReferences: ReadonlyArray<WithReferences>): Array<PlanOp> => {
      const ops: Array<PlanOp> = []
      for (const r of withReferences) {
        const base = { workspaceId, recordRef: r.key, origin: `line ${r.line}` }
        if (r.description !== undefined) {
          const refs = resolve(r.description.found)
          if (refs.length > 0 && !o.skip(r.key)) {
            ops.push({
              key: referencesKey(r.key, r.description.text, refs),
              kind: REFERENCES_KIND,
              payload: { ...base, text: r.description.text, refs },
              dependsOn: o.after(r.key)
            })
          }
        }
        r.comments?.forEach((c, i) => {
          const refs = resolve(c.found)
          ops.push({
            key: extraKey.comment(r.key, i),
            kind: EXTRA_KINDS.commentCreate,
            payload: { ...base, text: c.text, ...(refs.length > 0 ? { refs } : {}) },
            dependsOn: r.key
          })
        })
      }
      return ops
    }
    return { pages: pages(), outside: () => outside }
  }

  return {
    extract,
    followUps,
    /** Runs `f` (a batch's `followUps`) in one transaction of the scratch file. */
    inBatch: <A>(f: () => A): A => kept.batch(f),
    subtaskOps,
    referenceOps,
    census: census.result,
    report: (): PresetPlanReport => ({ unresolved: [...unresolved], problems, problemCount })
  }
}

/** What a tool preset adds to the result of planning (a dry run's figures are the planned ones). */
export const toolReport = (tool: ReturnType<typeof makePresetPlanner>, newOps: Readonly<Record<string, number>>) => {
  const report = tool.report()
  return {
    census: tool.census(),
    // Each attachment is carried by a comment of its own: those are not the export's comments.
    comments: (newOps[EXTRA_KINDS.commentCreate] ?? 0) - (newOps[EXTRA_KINDS.fileUpload] ?? 0),
    attachments: newOps[EXTRA_KINDS.fileUpload] ?? 0,
    people: { unresolved: report.unresolved },
    problems: report.problems
  }
}
