/**
 * A consistent copy of a SQLite file, read without writing it (`VACUUM INTO` from a
 * read-only connection: what the write-ahead log holds is in the copy, and the file, its
 * log and its locks are left as they are). `migrate --plan` plans against copies of its
 * journal and source snapshot, so it runs the very planning of a run and writes neither.
 */
import Database from "better-sqlite3"
import * as fs from "node:fs"

/** Copies `from` to `to` (which must not exist); false when `from` does not exist. */
export const copySqliteFile = (from: string, to: string): boolean => {
  if (!fs.existsSync(from)) return false
  const db = new Database(from, { readonly: true, fileMustExist: true })
  try {
    db.prepare("VACUUM INTO ?").run(to)
  } finally {
    db.close()
  }
  return true
}
