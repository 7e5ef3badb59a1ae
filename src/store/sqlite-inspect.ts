/**
 * A worksync SQLite store file read for inspection (`worksync doctor`): opened read-only,
 * never created, migrated or locked, so a file of any schema version (older ones too) can
 * be examined as it is. Each read is synchronous and throws what SQLite throws: a file
 * that is damaged or not SQLite fails on the read that meets the damage.
 */
import Database from "better-sqlite3"

export interface StoreFileView {
  /** The tables the file holds (a snapshot has `runs`, a journal `ops`). */
  readonly tables: () => ReadonlySet<string>
  /** The schema version the file's migrations reached (`PRAGMA user_version`). */
  readonly schemaVersion: () => number
  /** SQLite's quick check: one line, `ok`, when sound; else the problems it found. */
  readonly quickCheck: () => Array<string>
  /** A snapshot's complete runs: how many, and the latest one's id (null when none). */
  readonly completeRuns: () => { readonly count: number; readonly latest: number | null }
  /** A journal's ops: how many, and how many are not done. */
  readonly journalOps: () => { readonly count: number; readonly open: number }
  readonly close: () => void
}

/** Opens the existing file read-only; throws when it cannot be opened. */
export const openStoreFileView = (file: string): StoreFileView => {
  const db = new Database(file, { readonly: true, fileMustExist: true })
  return {
    tables: () => new Set(db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").pluck().all() as Array<string>),
    schemaVersion: () => db.pragma("user_version", { simple: true }) as number,
    quickCheck: () => (db.pragma("quick_check") as Array<Record<string, string>>).map((r) => Object.values(r)[0] ?? ""),
    completeRuns: () => {
      const row = db.prepare("SELECT count(*) AS n, max(id) AS latest FROM runs WHERE status = 'complete'").get() as {
        n: number
        latest: number | null
      }
      return { count: row.n, latest: row.latest }
    },
    journalOps: () => {
      const row = db.prepare("SELECT count(*) AS n, coalesce(sum(state <> 'done'), 0) AS open FROM ops").get() as { n: number; open: number }
      return { count: row.n, open: row.open }
    },
    close: () => db.close()
  }
}
