/**
 * From a CSV record to a validated row with a stable identity.
 *
 * Identity: the `key` column when mapped (`k:<value>`), else a hash of the whole record's
 * content (`h:<sha1>`, every column, so a mapping change does not change it). Identical
 * records stay distinct through the journal's occurrence numbering (`h:<sha1>#1`, ...):
 * a rerun of the same file, or of the file with rows appended, gives every earlier row
 * the key it had before, and only appended rows are new.
 */
import * as Result from "effect/Result"
import { createHash } from "node:crypto"
import * as crypto from "node:crypto"
import type { Field, ResolvedMapping } from "./mapping.ts"
import type { Preset } from "./presets.ts"
import type { CsvRecord } from "./read.ts"
import { CELL, CELL_FIELDS, type Cells, type CsvRow, validateCells } from "./row.ts"

/** Fields whose repeated columns (Jira's `Labels`) are joined rather than first-taken. */
const LIST_FIELDS: ReadonlySet<Field> = new Set(["assignees", "tags"])

const sha1 = (text: string): string =>
  typeof (crypto as { hash?: unknown }).hash === "function"
    ? (crypto as unknown as { hash: (alg: string, data: string) => string }).hash("sha1", text)
    : createHash("sha1").update(text).digest("hex")

/** The content hash of a record: every value, unit-separated. */
export const contentKey = (values: ReadonlyArray<string>): string => `h:${sha1(values.join("\u001f"))}`

export interface ExtractedRow {
  readonly line: number
  readonly values: ReadonlyArray<string>
  /** Journal key base; `occurrence` says whether identical rows get `#n` suffixes. */
  readonly key: string
  readonly occurrence: boolean
  readonly row: Result.Result<CsvRow, string>
}

/** Builds the extractor for one file's header and mapping. */
export const makeExtractor = (
  header: ReadonlyArray<string>,
  mapping: ResolvedMapping,
  transforms: Preset["transforms"]
) => {
  // Settled once per file: which cell slot each mapped column feeds, and how.
  const plan = (Object.entries(mapping) as Array<[Field, { readonly name: string; readonly indexes: ReadonlyArray<number> }]>).map(
    ([field, column]) => ({
      slot: CELL[field],
      single: column.indexes.length === 1 ? column.indexes[0]! : -1,
      indexes: column.indexes,
      list: LIST_FIELDS.has(field),
      transform: transforms[field]
    })
  )
  const width = header.length
  const explicitKey = mapping.key !== undefined
  // One array reused for every row: validation reads it and keeps none of it.
  const cells: Cells = new Array<string | undefined>(CELL_FIELDS.length).fill(undefined)
  return (record: CsvRecord): ExtractedRow => {
    const values = record.values
    cells.fill(undefined)
    cells[CELL.title] = ""
    for (let p = 0; p < plan.length; p++) {
      const column = plan[p]!
      let cell: string | undefined
      if (column.single !== -1) {
        cell = values[column.single]
      } else if (column.list) {
        const parts: Array<string> = []
        for (const i of column.indexes) {
          const v = values[i]
          if (v !== undefined && v.trim() !== "") parts.push(v)
        }
        cell = parts.join(", ")
      } else {
        for (const i of column.indexes) {
          const v = values[i]
          if (v !== undefined && v.trim() !== "") {
            cell = v
            break
          }
        }
      }
      if (cell !== undefined && column.transform !== undefined) cell = column.transform(cell)
      if (cell !== undefined && cell.trim() !== "") cells[column.slot] = cell
    }
    const keyCell = cells[CELL.key]?.trim()
    const key = explicitKey && keyCell !== undefined && keyCell !== "" ? `k:${keyCell}` : contentKey(values)
    let row: Result.Result<CsvRow, string>
    if (values.length > width && hasExtraContent(values, width)) {
      row = Result.fail(`the row has ${values.length} fields but the header has ${width} (an unquoted delimiter?)`)
    } else if (explicitKey && (keyCell === undefined || keyCell === "")) {
      row = Result.fail(`key is empty (column ${JSON.stringify(mapping.key!.name)})`)
    } else {
      row = validateCells(cells)
    }
    return { line: record.line, values, key, occurrence: !explicitKey, row }
  }
}

const hasExtraContent = (values: ReadonlyArray<string>, from: number): boolean => {
  for (let i = from; i < values.length; i++) if (values[i]!.trim() !== "") return true
  return false
}
