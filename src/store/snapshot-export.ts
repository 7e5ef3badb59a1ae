/**
 * The reads of an export on threads (connectors/export-threads.ts), on a SQLite snapshot
 * file: what a run holds of an entity cut into ranges of ids, and the stored content of
 * one range. Each thread opens the file read-only on a connection of its own; a run being
 * exported is complete and never changes, so ranges read by different connections make up
 * what one read of the whole would (the caller checks each range's count, so a run forgotten
 * meanwhile fails the export instead of cutting it short).
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
  // One read transaction for the connection's life: the ranges, cut as the export goes,
  // are those of one state of the file.
  db.exec("BEGIN")
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
  return { ranges, content, close: () => db.close() }
}
