/**
 * A scratch file of keys seen (scratch.ts), kept on disk, so a command holds none of them
 * in its heap at a million items: the journal keys a dry run has planned so far
 * (connectors/csv/dry-run.ts), the ids a stable scan of the target has emitted
 * (streams/stable-scan.ts `seenIds`, sync/restore-target.ts), a backup's records seen
 * (sync/backup.ts), the update ops a restore planned (sync/restore-plan.ts).
 */
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import { openScratch, scopedScratch } from "./scratch.ts"
import type { StoreOpenError } from "./sqlite.ts"

export interface ScratchKeys {
  /** Notes the key; true when it is new (not seen before). */
  readonly see: (key: string) => boolean
  /** Whether the key was noted. */
  readonly has: (key: string) => boolean
  /** How many keys are noted. */
  readonly count: () => number
  /** Every key noted, by key, read a page at a time (nothing held open between pages). */
  readonly keys: () => Iterable<string>
  /** Forgets every key. */
  readonly clear: () => void
  /** Runs `f` in one transaction of the file: one per batch of keys, not per key. */
  readonly batch: <A>(f: () => A) => A
  /** Closes the file and removes it; safe to call twice. */
  readonly remove: () => void
}

/** Keys read a page at a time by `keys()`. */
const KEYS_PAGE = 1000

/** A new, empty scratch file of keys; `name` names its directory (scratch.ts). */
export const openScratchKeys = (name: string): ScratchKeys => {
  const { db, remove } = openScratch(name)
  try {
    db.exec("CREATE TABLE seen (key TEXT PRIMARY KEY) WITHOUT ROWID")
    const see = db.prepare<[string]>("INSERT OR IGNORE INTO seen (key) VALUES (?)")
    const has = db.prepare<[string], number>("SELECT 1 FROM seen WHERE key = ?").pluck()
    const first = db.prepare<[], string>(`SELECT key FROM seen ORDER BY key LIMIT ${KEYS_PAGE}`).pluck()
    const after = db.prepare<[string], string>(`SELECT key FROM seen WHERE key > ? ORDER BY key LIMIT ${KEYS_PAGE}`).pluck()
    const clear = db.prepare("DELETE FROM seen")
    const inTransaction = db.transaction((f: () => unknown) => f())
    // Counted as they are noted: a count of the table would read all of it.
    let count = 0
    return {
      see: (key) => {
        if (see.run(key).changes === 0) return false
        count++
        return true
      },
      has: (key) => has.get(key) !== undefined,
      count: () => count,
      // A page at a time, no statement left open between pages: the caller's loop may
      // yield to other effects, and a close of the file with a statement open throws.
      keys: function*(): Generator<string> {
        let page = first.all()
        for (;;) {
          yield* page
          if (page.length < KEYS_PAGE) return
          page = after.all(page[page.length - 1]!)
        }
      },
      clear: () => {
        clear.run()
        count = 0
      },
      batch: <A>(f: () => A) => (db.inTransaction ? f() : inTransaction(f) as A),
      remove
    }
  } catch (e) {
    remove()
    throw e
  }
}

/** A new, empty scratch file of keys for the scope, removed when the scope closes (on failure and interruption too). */
export const scratchKeys = (name: string): Effect.Effect<ScratchKeys, StoreOpenError, Scope.Scope> => scopedScratch(() => openScratchKeys(name))
