/** The journal file's tables, its format, and how rows are read and payloads written. */
import type Database from "better-sqlite3"
import * as fs from "node:fs"
import { type Migration, openDatabaseSync, StoreOpenError } from "../sqlite.ts"
import type { Mapping, MappingsPage, Op, OpState } from "./types.ts"

export const DDL = `
CREATE TABLE IF NOT EXISTS ops (
  seq          INTEGER PRIMARY KEY AUTOINCREMENT,
  key          TEXT NOT NULL UNIQUE,
  kind         TEXT NOT NULL,
  payload      TEXT NOT NULL,
  depends_on   TEXT,
  state        TEXT NOT NULL DEFAULT 'pending' CHECK (state IN ('pending','in_flight','done','failed')),
  attempts     INTEGER NOT NULL DEFAULT 0,
  attempted_at TEXT,
  result       TEXT,
  error        TEXT,
  uncertain    INTEGER NOT NULL DEFAULT 0,
  plan_run     INTEGER,
  updated_at   TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS ops_state_seq ON ops(state, seq);
CREATE TABLE IF NOT EXISTS id_map (
  namespace  TEXT NOT NULL,
  source_key TEXT NOT NULL,
  target_id  TEXT NOT NULL,
  op_key     TEXT,
  created_at TEXT NOT NULL,
  UNIQUE (namespace, source_key)
);
CREATE INDEX IF NOT EXISTS id_map_target ON id_map(namespace, target_id);
CREATE TABLE IF NOT EXISTS meta (
  key   TEXT PRIMARY KEY,
  value TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS adoptions (
  id         INTEGER PRIMARY KEY AUTOINCREMENT,
  op_key     TEXT NOT NULL,
  namespace  TEXT NOT NULL,
  source_key TEXT NOT NULL,
  target_id  TEXT NOT NULL,
  detail     TEXT NOT NULL,
  adopted_at TEXT NOT NULL
);
`

export interface OpRow {
  seq: number
  key: string
  kind: string
  payload: string
  depends_on: string | null
  state: OpState
  attempts: number
  attempted_at: string | null
  result: string | null
  error: string | null
  uncertain: number
  sent_at: string | null
  /** Format 4; absent from rows of a file not yet migrated (read as null). */
  before?: string | null
}

/**
 * The key a pending op `o` still waits for: its dependency while that op is not done,
 * else NULL (it may run). The same SQL on both backends.
 */
export const WAITS_FOR = `CASE WHEN o.depends_on IS NULL
    OR EXISTS (SELECT 1 FROM ops d WHERE d.key = o.depends_on AND d.state = 'done') THEN NULL ELSE o.depends_on END`

const parse = (text: string | null): unknown => (text === null ? null : JSON.parse(text))

export const toOp = (r: OpRow): Op => ({
  seq: r.seq,
  key: r.key,
  kind: r.kind,
  payload: parse(r.payload),
  dependsOn: r.depends_on,
  state: r.state,
  attempts: r.attempts,
  attemptedAt: r.attempted_at,
  result: parse(r.result),
  error: r.error,
  uncertain: r.uncertain === 1,
  sentAt: r.sent_at ?? null,
  before: parse(r.before ?? null)
})

/**
 * The id map of a namespace, whole or a page in source-key order, as `JournalApi.mappings`
 * answers: one reader for the store (db.ts) and its read-only view (read-only.ts).
 */
export const idMapReader = (db: Database.Database): (namespace: string, page?: MappingsPage) => Array<Mapping> => {
  const select = "SELECT source_key, target_id FROM id_map WHERE namespace = ?"
  const whole = db.prepare<[string], MapRow>(`${select} ORDER BY source_key`)
  const first = db.prepare<[string, number], MapRow>(`${select} ORDER BY source_key LIMIT ?`)
  const after = db.prepare<[string, string, number], MapRow>(`${select} AND source_key > ? ORDER BY source_key LIMIT ?`)
  return (namespace, page) => {
    const rows = page === undefined
      ? whole.all(namespace)
      : page.after === undefined
      ? first.all(namespace, page.limit)
      : after.all(namespace, page.after, page.limit)
    return rows.map((r) => ({ namespace, sourceKey: r.source_key, targetId: r.target_id }))
  }
}

/**
 * The ops of the given keys (each once, in no order), as `JournalApi.getMany` answers: one
 * statement prepared once, the keys passed as one JSON array. A statement made per call
 * with a parameter per key is compiled each time and freed only when V8 collects its
 * object (sqlite.ts `statementCache`): a delta pass of a million rows made 8,000.
 */
export const opsReader = (db: Database.Database): (keys: ReadonlyArray<string>) => Array<Op> => {
  const byKeys = db.prepare<[string], OpRow>("SELECT * FROM ops WHERE key IN (SELECT value FROM json_each(?))")
  return (keys) => (keys.length === 0 ? [] : byKeys.all(JSON.stringify(keys)).map(toOp))
}

interface MapRow {
  readonly source_key: string
  readonly target_id: string
}

/**
 * A payload already serialised to JSON (by another thread, see plan-writer.ts): stored as
 * it is instead of being serialised again.
 */
export class JsonText {
  constructor(readonly text: string) {}
}

export const json = (value: unknown): string =>
  value instanceof JsonText ? value.text : JSON.stringify(value === undefined ? null : value)

/**
 * The journal's format (SQLite `user_version`). 1 (or 0, unset): every payload a JSON
 * object. 2: `record.create` payloads may be packed arrays without `workspaceId`
 * (import-csv, see src/sync/plan.ts). 3: `ops.sent_at`, the latest send of unknown
 * outcome, from which the settle window runs (a version that does not know it would
 * measure the window from the claim and could send a create again too early). 4:
 * `ops.before`, what an update or move found on the target before it was sent (undo puts
 * it back; a version that does not know it would send updates without recording it). A
 * file of a newer format is refused at open.
 */
export const JOURNAL_FORMAT = 4

/**
 * Format 3 dates the ops already uncertain: their latest send was no later than their
 * last change (`updated_at`), so the settle window runs from there.
 */
export const DATE_UNCERTAIN_SENDS = "UPDATE ops SET sent_at = updated_at WHERE uncertain = 1 AND state <> 'done'"

/** Format 3's step on SQLite (which has no ADD COLUMN IF NOT EXISTS; a file marked older may have it). */
const addSentAt = (db: Database.Database): void => {
  const columns = db.prepare<[], { name: string }>("SELECT name FROM pragma_table_info('ops')").all()
  if (!columns.some((c) => c.name === "sent_at")) db.exec("ALTER TABLE ops ADD COLUMN sent_at TEXT")
  db.exec(DATE_UNCERTAIN_SENDS)
}

/** Format 4's step on SQLite: `ops.before` (a file marked older may have it). */
const addBefore = (db: Database.Database): void => {
  const columns = db.prepare<[], { name: string }>("SELECT name FROM pragma_table_info('ops')").all()
  if (!columns.some((c) => c.name === "before")) db.exec("ALTER TABLE ops ADD COLUMN before TEXT")
}

/** Rows per planning INSERT: large enough that per-statement overhead vanishes (measured). */
export const INSERT_CHUNK = 256
/** WAL pages between checkpoints while planning (64 MB at 4 KiB pages); SQLite's default otherwise. */
export const PLAN_WAL_AUTOCHECKPOINT = 16384
export const DEFAULT_WAL_AUTOCHECKPOINT = 1000

/**
 * The journal's migrations, through the opener the snapshot uses (src/store/sqlite.ts):
 * one scheme for both stores. 1 creates the tables (`IF NOT EXISTS`, so files of any
 * earlier version, which had no version number, are read as they are and get the
 * `adoptions` table); 2 marks that packed create payloads may be present; 3 adds
 * `ops.sent_at`; 4 adds `ops.before`.
 */
export const JOURNAL_MIGRATIONS: ReadonlyArray<Migration> = [
  { version: 1, description: "ops, id_map, meta and adoptions", up: DDL },
  { version: 2, description: "packed record.create payloads (import-csv)", up: () => {} },
  { version: 3, description: "ops.sent_at: the latest send of unknown outcome", up: addSentAt },
  { version: JOURNAL_FORMAT, description: "ops.before: the target's values before an update", up: addBefore }
]

/**
 * Opens (creating owner-only when missing) and migrates a journal file. Durability is the
 * journal's own: synchronous=FULL (see service.ts), not the opener's NORMAL.
 */
export const openJournalDatabase = (file: string): Database.Database => {
  let db: Database.Database
  try {
    db = openDatabaseSync(file, { migrations: JOURNAL_MIGRATIONS })
  } catch (e) {
    if (e instanceof StoreOpenError && e.reason === "too-new") {
      throw new Error(
        `written by a newer worksync (journal format ${e.detail.replace(/^schema version (\d+).*$/, "$1")}; this version reads formats up to ${JOURNAL_FORMAT}): upgrade worksync or use another journal file`
      )
    }
    throw e
  }
  // Tables added within a format (adoptions) reach files written before them: every
  // statement is `IF NOT EXISTS`.
  db.exec(DDL)
  // An existing file made by another tool or umask keeps no wider mode than the owner's.
  fs.chmodSync(file, 0o600)
  db.pragma("synchronous = FULL")
  return db
}
