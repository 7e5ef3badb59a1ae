/**
 * Answers of read queries kept until the next write. SQLite's total_changes() counts every
 * row the connection inserted, updated or deleted (rolled back or not, whichever area or
 * trigger did it), so while it stands still every read answers as it did: a kept answer is
 * exactly the one a new query would give. Every request authenticates and resolves its
 * organization and workspace; reading those rows again costs more than the check.
 */
import type Database from "better-sqlite3"

const counters = new WeakMap<Database.Database, Database.Statement>()

/** SQLite's total_changes() of the connection: it moves on every write. */
export const writeCount = (db: Database.Database): number => {
  let statement = counters.get(db)
  if (statement === undefined) {
    statement = db.prepare("SELECT total_changes()").pluck(true)
    counters.set(db, statement)
  }
  return statement.get() as number
}

/** Most answers kept per memo: enough for every token, organization and workspace of a test. */
const MAX_ENTRIES = 1_000

interface Kept {
  version: number
  readonly values: Map<string, unknown>
}

/**
 * A memo of one kind of answer by key, forgotten at the next write. `compute` only reads;
 * what it returns is shared by later calls and must not be changed by callers.
 */
export const untilWrite = <V>() => {
  const kept = new WeakMap<Database.Database, Kept>()
  return (db: Database.Database, key: string, compute: () => V): V => {
    const version = writeCount(db)
    let memo = kept.get(db)
    if (memo === undefined) {
      memo = { version, values: new Map() }
      kept.set(db, memo)
    } else if (memo.version !== version) {
      memo.version = version
      memo.values.clear()
    }
    if (memo.values.has(key)) return memo.values.get(key) as V
    const value = compute()
    if (memo.values.size >= MAX_ENTRIES) memo.values.clear()
    memo.values.set(key, value)
    return value
  }
}
