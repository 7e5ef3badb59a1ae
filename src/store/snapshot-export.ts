/**
 * The reads of an export on threads (connectors/export-threads.ts), on a SQLite snapshot
 * file: what a run holds of an entity cut into ranges of ids, and the stored content of
 * one range. Each thread reads on a read-only connection of its own, in one read
 * transaction for the export; the transactions all begin while `holdWrites` keeps every
 * writer out (a mirror changes the run it shows as complete), so they all read one state of
 * the file, as one read of the whole would. The caller still checks each range's count.
 *
 * The content and its order are runItems' (snapshot-reads.ts): the same join, by member id.
 */
import Database from "better-sqlite3"
import { contentColumn, membersOf } from "./snapshot-reads.ts"

/** The entities exported on threads: one row per member of the run. */
export type RangeEntity = "records" | "files" | "workspaces"

/** The members with ids in (after, upTo]; null is open-ended. `rows` is how many there are. */
export interface IdRange {
  readonly after: string | null
  readonly upTo: string | null
  readonly rows: number
}

export interface ExportReader {
  /** Begins the read transaction every later read is made in: they all read the state of the file now. */
  readonly begin: () => void
  /** Whether the run holds at least `n` of the entity (reads at most `n` keys). */
  readonly holds: (entity: RangeEntity, runId: number, n: number) => boolean
  /**
   * What the run holds of the entity, by id, cut into ranges of `size` members (the last
   * one fewer), each cut when it is asked for.
   */
  readonly ranges: (entity: RangeEntity, runId: number, size: number) => Iterator<IdRange, void>
  /** The stored content (JSON text) of the members in `range`, by id. */
  readonly content: (entity: RangeEntity, runId: number, range: IdRange) => Array<string>
  readonly close: () => void
}

/** Opens `file` read-only (it must exist); throws what better-sqlite3 throws. */
export const openExportReader = (file: string): ExportReader => {
  const db = new Database(file, { readonly: true, fileMustExist: true })
  const statements = new Map<string, Database.Statement>()
  const prepared = (sql: string) => {
    let s = statements.get(sql)
    if (s === undefined) statements.set(sql, s = db.prepare(sql).pluck())
    return s
  }
  const begin = () => {
    db.exec("BEGIN")
    // A read transaction takes its state of the file at its first read.
    db.prepare("SELECT count(*) FROM runs").get()
  }
  function* ranges(entity: RangeEntity, runId: number, size: number): Generator<IdRange, void> {
    // The id `size` members on (from the start, or after `after`): an index range of the
    // membership table's key, run_id then id.
    const members = `FROM run_${entity} WHERE run_id = ?`
    const endOf = (after: string | null) =>
      (after === null
        ? prepared(`SELECT id ${members} ORDER BY id LIMIT 1 OFFSET ${size - 1}`).get(runId)
        : prepared(`SELECT id ${members} AND id > ? ORDER BY id LIMIT 1 OFFSET ${size - 1}`).get(runId, after)) as
        | string
        | undefined
    let after: string | null = null
    for (;;) {
      const upTo = endOf(after)
      if (upTo === undefined) break
      yield { after, upTo, rows: size }
      after = upTo
    }
    const rest = (after === null
      ? prepared(`SELECT count(*) ${members}`).get(runId)
      : prepared(`SELECT count(*) ${members} AND id > ?`).get(runId, after)) as number
    if (rest > 0) yield { after, upTo: null, rows: rest }
  }
  const content = (entity: RangeEntity, runId: number, range: IdRange): Array<string> => {
    const sql = `SELECT v.${contentColumn(entity)} ${membersOf(entity)}${range.after === null ? "" : " AND m.id > ?"}${
      range.upTo === null ? "" : " AND m.id <= ?"
    } ORDER BY m.id`
    const params: Array<string | number> = [runId]
    if (range.after !== null) params.push(range.after)
    if (range.upTo !== null) params.push(range.upTo)
    return prepared(sql).all(...params) as Array<string>
  }
  const holds = (entity: RangeEntity, runId: number, n: number): boolean =>
    (prepared(`SELECT count(*) FROM (SELECT 1 FROM run_${entity} WHERE run_id = ? LIMIT ?)`).get(runId, n) as number) >= n
  return { begin, holds, ranges, content, close: () => db.close() }
}

/**
 * Keeps every writer of the SQLite file out (SQLite's write lock, nothing written) until
 * the returned function is called; waits for a writer at work for up to `timeoutMs`. Throws
 * when the lock cannot be had (a file that cannot be opened for writing, a writer that
 * holds it longer).
 */
export const holdWrites = (file: string, timeoutMs: number): (() => void) => {
  const db = new Database(file, { fileMustExist: true, timeout: timeoutMs })
  try {
    db.exec("BEGIN IMMEDIATE")
  } catch (e) {
    db.close()
    throw e
  }
  return () => {
    db.exec("ROLLBACK")
    db.close()
  }
}
