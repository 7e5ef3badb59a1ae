/**
 * The census of an import from another tool: every column of the file, carried (to
 * which field, how many cells with a value) or left behind (how many, and why). Counted
 * while the rows stream through, in memory of one number per column.
 */
import { cellValue } from "./cells.ts"
import type { Census, ColumnUse } from "./model.ts"

export const makeCensus = (uses: ReadonlyArray<ColumnUse>) => {
  const counts = new Array<number>(uses.length).fill(0)
  return {
    /** Counts the cells of one row that hold a value. */
    count: (values: ReadonlyArray<string>) => {
      for (let i = 0; i < uses.length; i++) if (cellValue(values[i]) !== undefined) counts[i]!++
    },
    /** Repeated columns (Jira's `Comment`, ...) are one entry, their counts summed. */
    result: (): Census => {
      const carried = new Map<string, { column: string; field: Extract<ColumnUse, { carried: true }>["field"]; count: number }>()
      const notCarried = new Map<string, { column: string; count: number; reason: string }>()
      uses.forEach((u, i) => {
        if (u.carried) {
          const e = carried.get(u.column) ?? { column: u.column, field: u.field, count: 0 }
          e.count += counts[i]!
          carried.set(u.column, e)
        } else {
          const e = notCarried.get(u.column) ?? { column: u.column, count: 0, reason: u.reason }
          e.count += counts[i]!
          notCarried.set(u.column, e)
        }
      })
      return { carried: [...carried.values()], notCarried: [...notCarried.values()] }
    }
  }
}

/** The census as lines for a person (a dry run prints them before anything is sent). */
export const censusLines = (census: Census): Array<string> => [
  "carried:",
  ...census.carried.map((c) => `  ${JSON.stringify(c.column)} -> ${c.field} (${values(c.count)})`),
  ...(census.notCarried.length === 0 ? [] : [
    "not carried:",
    ...census.notCarried.map((c) => `  ${JSON.stringify(c.column)}: ${values(c.count)} left behind; ${c.reason}`)
  ])
]

/** Cells with a value: a repeated column (Jira's `Comment`) counts each of its cells. */
const values = (n: number) => `${n} value${n === 1 ? "" : "s"}`
