/**
 * Scratch SQLite files: data a command needs only while it runs, too large to hold in the
 * heap at a million items (the keys a dry run has seen, the target's records a restore
 * compares with). Each lives in a directory of its own under the system's temporary
 * directory and is removed when its user is done; nothing in it is ever read again, so it
 * keeps no rollback journal and never waits for the disk. Each use has its tables and
 * statements in a module of its own (scratch-keys.ts, scratch-records.ts, scratch-row-names.ts).
 */
import Database from "better-sqlite3"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { StoreOpenError } from "./sqlite.ts"

export interface Scratch {
  readonly db: Database.Database
  /** Closes the database and removes its directory; safe to call twice. */
  readonly remove: () => void
}

/** A new scratch database; `name` names its directory (`worksync-NAME-...`). */
export const openScratch = (name: string): Scratch => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `worksync-${name}-`))
  try {
    const db = new Database(path.join(dir, "scratch.sqlite"))
    db.pragma("journal_mode = OFF")
    db.pragma("synchronous = OFF")
    // Only this connection opens the file: its lock is taken once and kept. In SQLite's
    // normal mode every statement outside a transaction takes and drops a file lock and
    // reads the file's header again (a lookup cost 16 us, 0.9 us with the lock kept).
    db.pragma("locking_mode = EXCLUSIVE")
    // SQLite's own default page cache (2 MB), not better-sqlite3's 16 MB: a command holds
    // several scratch files at once (a delta pass: the rows of earlier passes and the keys
    // seen), and each cache fills to its limit at a million items. A lookup's interior
    // pages stay cached at that size; its leaf comes from the operating system's cache.
    db.pragma("cache_size = -2048")
    return {
      db,
      remove: () => {
        // The directory goes even when the close throws (a statement still iterating).
        try {
          if (db.open) db.close()
        } finally {
          fs.rmSync(dir, { recursive: true, force: true })
        }
      }
    }
  } catch (e) {
    fs.rmSync(dir, { recursive: true, force: true })
    throw e
  }
}

/** A scratch resource for the scope (`open` makes it), removed when the scope closes (on failure and interruption too). */
export const scopedScratch = <S extends { readonly remove: () => void }>(open: () => S): Effect.Effect<S, StoreOpenError, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.try({
      try: open,
      catch: (e) => new StoreOpenError({ file: `a scratch file in ${os.tmpdir()}`, reason: "io", detail: e instanceof Error ? e.message : String(e) })
    }),
    (s) => Effect.sync(s.remove)
  )

/** A scratch database for the scope, removed when the scope closes (on failure and interruption too). */
export const scratchDatabase = (name: string): Effect.Effect<Database.Database, StoreOpenError, Scope.Scope> =>
  Effect.map(scopedScratch(() => openScratch(name)), (s) => s.db)
