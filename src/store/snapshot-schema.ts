/**
 * The snapshot's tables (documented in docs/snapshot.md). Entities are stored as
 * versions: a row per distinct content of an id, shared by every run that saw that
 * content. `run_*` tables say which version each run saw, so any two runs can be
 * compared exactly with set operations, and any run can be exported as it was.
 *
 * Never holds a token or any connection setting.
 */
import type { Migration } from "./sqlite.ts"

const v1 = `
CREATE TABLE runs (
  id         INTEGER PRIMARY KEY,
  scope      TEXT    NOT NULL,
  started    TEXT    NOT NULL,
  finished   TEXT,
  status     TEXT    NOT NULL CHECK (status IN ('running', 'complete', 'failed')),
  full       INTEGER NOT NULL DEFAULT 0,
  error      TEXT,
  stats      TEXT
);
CREATE INDEX runs_scope_status ON runs (scope, status, id);

CREATE TABLE workspaces (
  vid        INTEGER PRIMARY KEY,
  id         TEXT    NOT NULL,
  hash       TEXT    NOT NULL,
  item       TEXT    NOT NULL,
  first_run  INTEGER NOT NULL,
  last_run   INTEGER NOT NULL,
  UNIQUE (id, hash)
);
CREATE TABLE run_workspaces (
  run_id     INTEGER NOT NULL,
  id         TEXT    NOT NULL,
  vid        INTEGER NOT NULL,
  PRIMARY KEY (run_id, id)
) WITHOUT ROWID;

CREATE TABLE lists (
  vid          INTEGER PRIMARY KEY,
  id           TEXT    NOT NULL,
  workspace_id TEXT    NOT NULL,
  hash         TEXT    NOT NULL,
  item         TEXT    NOT NULL,
  first_run    INTEGER NOT NULL,
  last_run     INTEGER NOT NULL,
  UNIQUE (id, hash)
);
CREATE TABLE run_lists (
  run_id     INTEGER NOT NULL,
  id         TEXT    NOT NULL,
  vid        INTEGER NOT NULL,
  PRIMARY KEY (run_id, id)
) WITHOUT ROWID;

CREATE TABLE users (
  vid        INTEGER PRIMARY KEY,
  id         TEXT    NOT NULL,
  hash       TEXT    NOT NULL,
  item       TEXT    NOT NULL,
  first_run  INTEGER NOT NULL,
  last_run   INTEGER NOT NULL,
  UNIQUE (id, hash)
);
CREATE TABLE run_users (
  run_id     INTEGER NOT NULL,
  id         TEXT    NOT NULL,
  vid        INTEGER NOT NULL,
  PRIMARY KEY (run_id, id)
) WITHOUT ROWID;

CREATE TABLE records (
  vid            INTEGER PRIMARY KEY,
  id             TEXT    NOT NULL,
  workspace_id   TEXT    NOT NULL,
  hash           TEXT    NOT NULL,
  summary_hash   TEXT    NOT NULL,
  updated_at     TEXT,
  comment_count  INTEGER,
  activity_count INTEGER NOT NULL DEFAULT 0,
  summary        TEXT    NOT NULL,
  detail         TEXT    NOT NULL,
  first_run      INTEGER NOT NULL,
  last_run       INTEGER NOT NULL,
  UNIQUE (id, hash)
);
CREATE INDEX records_id_vid ON records (id, vid);
CREATE TABLE run_records (
  run_id     INTEGER NOT NULL,
  id         TEXT    NOT NULL,
  vid        INTEGER NOT NULL,
  PRIMARY KEY (run_id, id)
) WITHOUT ROWID;

CREATE TABLE activity (
  vid        INTEGER NOT NULL,
  seq        INTEGER NOT NULL,
  id         TEXT    NOT NULL,
  item       TEXT    NOT NULL,
  PRIMARY KEY (vid, seq)
) WITHOUT ROWID;

CREATE TABLE files (
  vid          INTEGER PRIMARY KEY,
  id           TEXT    NOT NULL,
  workspace_id TEXT    NOT NULL,
  hash         TEXT    NOT NULL,
  item         TEXT    NOT NULL,
  first_run    INTEGER NOT NULL,
  last_run     INTEGER NOT NULL,
  UNIQUE (id, hash)
);
CREATE TABLE run_files (
  run_id     INTEGER NOT NULL,
  id         TEXT    NOT NULL,
  vid        INTEGER NOT NULL,
  PRIMARY KEY (run_id, id)
) WITHOUT ROWID;

CREATE TABLE run_notes (
  run_id       INTEGER NOT NULL,
  seq          INTEGER NOT NULL,
  workspace_id TEXT,
  kind         TEXT    NOT NULL,
  subject      TEXT,
  detail       TEXT,
  PRIMARY KEY (run_id, seq)
) WITHOUT ROWID;
`

export const SNAPSHOT_MIGRATIONS: ReadonlyArray<Migration> = [
  { version: 1, description: "runs, versioned entities, run membership, notes", up: v1 }
]

/** Entity tables that follow the plain `(vid, id, hash, item)` + `run_<table>` pattern. */
export type PlainEntity = "workspaces" | "lists" | "users" | "files"
