/**
 * Prepared statements cached per database and SQL text (preparing is the slow part).
 *
 * A cached statement is still planned again on every run when SQLite's planner reads one
 * of its parameters' values: the right side of `column = ?` when the order or the index
 * choice depends on it (an ORDER BY, a min() or a max() over an index that starts with the
 * column), a LIMIT or OFFSET, a LIKE pattern, and the parameters of a join. The statement
 * then depends on those values and expires at each new binding; a list-records page paid
 * its planning (more than its reading, for small pages) on every call. Written `+?`, a
 * parameter is an expression the planner does not look into: the same value, the same
 * index use, one plan. Statements on hot paths write those parameters so, and look up
 * related rows with scalar subqueries rather than joins.
 */
import type Database from "better-sqlite3"

const caches = new WeakMap<Database.Database, Map<string, Database.Statement>>()

export const sql = (db: Database.Database, text: string): Database.Statement => {
  let cache = caches.get(db)
  if (cache === undefined) {
    cache = new Map()
    caches.set(db, cache)
  }
  let statement = cache.get(text)
  if (statement === undefined) {
    statement = db.prepare(text)
    cache.set(text, statement)
  }
  return statement
}

export const get = <T>(db: Database.Database, text: string, ...params: Array<unknown>): T | undefined =>
  sql(db, text).get(...params) as T | undefined

export const all = <T>(db: Database.Database, text: string, ...params: Array<unknown>): Array<T> =>
  sql(db, text).all(...params) as Array<T>

export const run = (db: Database.Database, text: string, ...params: Array<unknown>): Database.RunResult =>
  sql(db, text).run(...params)

/** Rows as arrays (no per-row object with named keys: cheaper for hot pages). */
const rawCaches = new WeakMap<Database.Database, Map<string, Database.Statement>>()

export const allRaw = <T extends ReadonlyArray<unknown>>(db: Database.Database, text: string, ...params: Array<unknown>): Array<T> => {
  let cache = rawCaches.get(db)
  if (cache === undefined) {
    cache = new Map()
    rawCaches.set(db, cache)
  }
  let statement = cache.get(text)
  if (statement === undefined) {
    statement = db.prepare(text).raw(true)
    cache.set(text, statement)
  }
  return statement.all(...params) as Array<T>
}
