/**
 * Every SQL statement of worksync is in src/store (docs/architecture.md): code elsewhere
 * calls a named function of a store module instead of writing SQL or driving SQLite or
 * PostgreSQL itself, so both backends' statements are found, and written once, in one
 * place. The emulator keeps its own state and is left out.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "vitest"

const SRC = path.join(import.meta.dirname, "..", "..", "src")
const EXEMPT = ["store", "emulator"].map((dir) => path.join(SRC, dir) + path.sep)

/** SQL text, or a call that runs it on better-sqlite3 or pg. */
const SQL = [
  /\bSELECT\b[^\n]*\bFROM\b/,
  // A string that opens with a statement (its FROM on a later line).
  /[`"']\s*(SELECT|WITH|INSERT|DROP|BEGIN|COMMIT|ROLLBACK)\b/,
  /\bINSERT INTO\b/,
  /\bUPDATE \S+ SET\b/,
  /\bDELETE FROM\b/,
  /\bCREATE (TABLE|INDEX|SCHEMA)\b/,
  /\bsql`/,
  /\.prepare[<(]/,
  /\.query[<(]/,
  /from "better-sqlite3"/
]

const sources = (dir: string): Array<string> =>
  fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const file = path.join(dir, e.name)
    if (e.isDirectory()) return EXEMPT.includes(file + path.sep) ? [] : sources(file)
    return e.name.endsWith(".ts") ? [file] : []
  })

describe("where SQL lives", () => {
  it("no file outside src/store (and the emulator) holds SQL or runs it", () => {
    const found: Array<string> = []
    for (const file of sources(SRC)) {
      fs.readFileSync(file, "utf8").split("\n").forEach((line, i) => {
        if (SQL.some((re) => re.test(line))) found.push(`${path.relative(SRC, file)}:${i + 1}: ${line.trim()}`)
      })
    }
    expect(found).toEqual([])
  })
})
