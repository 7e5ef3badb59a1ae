/**
 * A scratch file of keys seen (scratch.ts): the journal keys a dry run has planned so far
 * (connectors/csv/dry-run.ts), kept on disk, so a dry run of any file runs in constant
 * memory like the plan itself.
 */
import { openScratch } from "./scratch.ts"

export interface ScratchKeys {
  /** Notes the key; true when it is new (not seen before). */
  readonly see: (key: string) => boolean
  /** Runs `f` in one transaction of the file: one per batch of keys, not per key. */
  readonly batch: <A>(f: () => A) => A
  /** Closes the file and removes it; safe to call twice. */
  readonly remove: () => void
}

/** A new, empty scratch file of keys; `name` names its directory (scratch.ts). */
export const openScratchKeys = (name: string): ScratchKeys => {
  const { db, remove } = openScratch(name)
  try {
    db.exec("CREATE TABLE seen (key TEXT PRIMARY KEY) WITHOUT ROWID")
    const see = db.prepare<[string]>("INSERT OR IGNORE INTO seen (key) VALUES (?)")
    const inTransaction = db.transaction((f: () => unknown) => f())
    return {
      see: (key) => see.run(key).changes > 0,
      batch: <A>(f: () => A) => inTransaction(f) as A,
      remove
    }
  } catch (e) {
    remove()
    throw e
  }
}
