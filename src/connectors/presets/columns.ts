/**
 * What each column of an export is for, settled once per header: a reader lists its rules
 * (header names, or a pattern, and the field they carry or the reason they are left
 * behind), and gets back the census entry of every column plus the column indexes of
 * each role it reads. Names match exactly first, then trimmed and case-insensitively, so
 * a custom field called `Effort ` keeps its trailing space in the census.
 */
import { parseDone } from "../csv/row.ts"
import { cellValue } from "./cells.ts"
import { toolDate } from "./dates.ts"
import type { CarriedField, ColumnUse } from "./model.ts"

export type ColumnRule<Role extends string> =
  | { readonly role: Role; readonly names: ReadonlyArray<string> | RegExp; readonly field: CarriedField }
  | { readonly role?: undefined; readonly names: ReadonlyArray<string> | RegExp; readonly reason: string }

export interface Columns<Role extends string> {
  readonly uses: ReadonlyArray<ColumnUse>
  /** Header indexes per role, in header order (repeated columns give several). */
  readonly of: (role: Role) => ReadonlyArray<number>
}

const fold = (s: string) => s.trim().toLowerCase()

const matches = (names: ReadonlyArray<string> | RegExp, column: string): boolean =>
  names instanceof RegExp ? names.test(column.trim()) : names.some((n) => fold(n) === fold(column))

/** Classifies every column; one matching no rule is left behind with `unknownReason`. */
export const classifyColumns = <Role extends string>(
  header: ReadonlyArray<string>,
  rules: ReadonlyArray<ColumnRule<Role>>,
  unknownReason = "no field on the service for it"
): Columns<Role> => {
  const byRole = new Map<Role, Array<number>>()
  const uses = header.map((column, index): ColumnUse => {
    const rule = rules.find((r) => matches(r.names, column))
    if (rule === undefined) return { column, carried: false, reason: unknownReason }
    if ("reason" in rule) return { column, carried: false, reason: rule.reason }
    const list = byRole.get(rule.role) ?? []
    list.push(index)
    byRole.set(rule.role, list)
    return { column, carried: true, field: rule.field }
  })
  return { uses, of: (role) => byRole.get(role) ?? [] }
}

/** The first non-empty cell among `indexes`. */
export const firstCell = (values: ReadonlyArray<string>, indexes: ReadonlyArray<number>): string | undefined => {
  for (const i of indexes) {
    const v = values[i]
    if (v !== undefined && v.trim() !== "") return v
  }
  return undefined
}

/** Every non-empty cell among `indexes`, in header order. */
export const allCells = (values: ReadonlyArray<string>, indexes: ReadonlyArray<number>): Array<string> => {
  const out: Array<string> = []
  for (const i of indexes) {
    const v = values[i]
    if (v !== undefined && v.trim() !== "") out.push(v)
  }
  return out
}

/**
 * One row's cells by role, read the way every reader reads them: the first non-empty
 * cell (a tool's word for "no value" is none), dates and flags checked, and each cell
 * that cannot be read reported in `problems` naming its column (the row goes on).
 */
export const rowCells = <Role extends string>(cols: Columns<Role>, values: ReadonlyArray<string>) => {
  const problems: Array<string> = []
  const cell = (role: Role): string | undefined => cellValue(firstCell(values, cols.of(role)))
  const date = (role: Role, column: string): string | undefined => {
    const raw = cell(role)
    if (raw === undefined) return undefined
    const d = toolDate(raw)
    if (d === undefined) problems.push(`${column}: ${JSON.stringify(raw)} is not a date`)
    return d
  }
  const flag = (role: Role, column: string): boolean => {
    const raw = cell(role)
    if (raw === undefined) return false
    const b = parseDone(raw)
    if (b === undefined) problems.push(`${column}: ${JSON.stringify(raw)} is not true or false`)
    return b === true
  }
  return { cell, date, flag, problems }
}
