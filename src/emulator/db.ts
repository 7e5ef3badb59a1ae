/**
 * Opens the emulator's SQLite database (in memory by default, a file on request) and
 * creates the tables: each area's DDL, the core first.
 */
import Database from "better-sqlite3"
import type { EmulatorArea } from "./context.ts"

export const openDatabase = (file: string | undefined): Database.Database => {
  const db = new Database(file ?? ":memory:")
  if (file !== undefined && file !== ":memory:") db.pragma("journal_mode = WAL")
  // The emulator's state is disposable: favour speed over durability.
  db.pragma("synchronous = OFF")
  db.pragma("foreign_keys = OFF")
  db.pragma("cache_size = -65536")
  db.pragma("temp_store = MEMORY")
  return db
}

/** Runs each area's DDL in order (the core area comes first). */
export const createTables = (db: Database.Database, areas: ReadonlyArray<EmulatorArea>): void => {
  for (const area of areas) if (area.ddl !== undefined && area.ddl.trim() !== "") db.exec(area.ddl)
}

/** True when the database already holds an organization (a reopened file keeps its data). */
export const isSeeded = (db: Database.Database): boolean =>
  (db.prepare("SELECT count(*) AS n FROM organizations").get() as { n: number }).n > 0
