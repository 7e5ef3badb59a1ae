/**
 * A scratch file of items by id (scratch.ts): a restore's copy of the target's records
 * (sync/restore-target.ts), a file copy's plan (connectors/files/copy.ts, ids in listing
 * order, the files done already marked), kept on disk, not in the heap, at a million
 * records. Each item
 * is kept as its JSON text with a mark (`match`) beside it, so the marks cost no heap either.
 */
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import { scratchDatabase } from "./scratch.ts"
import type { StoreOpenError } from "./sqlite.ts"

export interface ScratchRecords {
  /** Keeps the items, in one transaction; an id kept already keeps its last item. */
  readonly putAll: (items: ReadonlyArray<{ readonly id: string }>) => void
  readonly count: () => number
  /** Whether an id is kept (its text is not read). */
  readonly has: (id: string) => boolean
  /** The JSON text kept of an id, if any. */
  readonly get: (id: string) => string | undefined
  /** Every id, by id, read a page at a time (nothing held open between pages). */
  readonly ids: () => Iterable<string>
  /** Marks an id. */
  readonly match: (id: string) => void
  /** The ids not marked, a page at a time like `ids`. */
  readonly unmatchedIds: () => Iterable<string>
}

/** Ids read a page at a time by `ids()` and `unmatchedIds()`. */
const IDS_PAGE = 1000

/** A new, empty scratch file of items by id for the scope; `name` names its directory (scratch.ts). */
export const scratchRecords = (name: string): Effect.Effect<ScratchRecords, StoreOpenError, Scope.Scope> =>
  Effect.map(scratchDatabase(name), (db) => {
    db.exec("CREATE TABLE record (id TEXT PRIMARY KEY, summary TEXT NOT NULL, matched INTEGER NOT NULL DEFAULT 0) WITHOUT ROWID")
    const put = db.prepare<[string, string]>("INSERT OR REPLACE INTO record (id, summary) VALUES (?, ?)")
    const putAll = db.transaction((items: ReadonlyArray<{ readonly id: string }>) => {
      for (const item of items) put.run(item.id, JSON.stringify(item))
    })
    const one = db.prepare<[string], string>("SELECT summary FROM record WHERE id = ?").pluck()
    const kept = db.prepare<[string], number>("SELECT 1 FROM record WHERE id = ?").pluck()
    const count = db.prepare<[], number>("SELECT count(*) FROM record").pluck()
    const mark = db.prepare<[string]>("UPDATE record SET matched = 1 WHERE id = ?")
    // A page at a time, no statement left open between pages: a caller's loop yields to
    // other effects (a statement iterated meanwhile would refuse a second walk, and the
    // scope's close of the file would throw while one is open, leaving the file behind).
    const paged = (where: string) => {
      const first = db.prepare<[], string>(`SELECT id FROM record WHERE ${where} ORDER BY id LIMIT ${IDS_PAGE}`).pluck()
      const after = db.prepare<[string], string>(`SELECT id FROM record WHERE ${where} AND id > ? ORDER BY id LIMIT ${IDS_PAGE}`).pluck()
      return function*(): Generator<string> {
        let page = first.all()
        for (;;) {
          yield* page
          if (page.length < IDS_PAGE) return
          page = after.all(page[page.length - 1]!)
        }
      }
    }
    return {
      putAll: (items) => putAll(items),
      count: () => count.get()!,
      has: (id) => kept.get(id) !== undefined,
      get: (id) => one.get(id),
      ids: paged("1 = 1"),
      match: (id) => void mark.run(id),
      unmatchedIds: paged("matched = 0")
    }
  })
