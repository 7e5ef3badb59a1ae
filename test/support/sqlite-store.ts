/**
 * The SQLite connection behind a snapshot store, for tests that check SQLite's own
 * behaviour (query plans, raw rows of the file). Tests meant for every backend read
 * through `store.select` instead.
 */
import type { SnapshotStoreService } from "../../src/store/snapshot.ts"
import type { SqliteDatabase, SqliteSnapshotStore } from "../../src/store/snapshot-sqlite.ts"

export const sqliteOf = (store: SnapshotStoreService): SqliteDatabase => {
  if (!("db" in store)) throw new Error(`${store.file} is not a SQLite snapshot`)
  return (store as SqliteSnapshotStore).db
}
