/** Prepared statements cached per database and SQL text (preparing is the slow part). */
import type Database from "better-sqlite3"

const caches = new WeakMap<Database.Database, Map<string, Database.Statement>>()

const statement = (db: Database.Database, text: string): Database.Statement => {
  let cache = caches.get(db)
  if (cache === undefined) {
    cache = new Map()
    caches.set(db, cache)
  }
  let s = cache.get(text)
  if (s === undefined) {
    s = db.prepare(text)
    cache.set(text, s)
  }
  return s
}

export const one = <T>(db: Database.Database, text: string, ...params: Array<unknown>): T | undefined =>
  statement(db, text).get(...params) as T | undefined

export const many = <T>(db: Database.Database, text: string, ...params: Array<unknown>): Array<T> =>
  statement(db, text).all(...params) as Array<T>

export const exec = (db: Database.Database, text: string, ...params: Array<unknown>): Database.RunResult =>
  statement(db, text).run(...params)
