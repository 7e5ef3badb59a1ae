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

/**
 * Read-only views for plain SQL (documented in docs/snapshot.md, "Querying the snapshot
 * with SQL"). They add no data and no table, so a file gains them on open without any
 * rewrite. JSON keys are read with json_extract, which gives NULL for a missing key: a
 * shape without a field yields a NULL column rather than an error.
 *
 * "Latest" is resolved per workspace, not per run: the latest complete run of each scope
 * (`latest_runs`), then for each workspace the newest of those that covered it
 * (`latest_workspace_runs`). A workspace backed up alone after a run of every workspace
 * is then read from its own newer run, and every record appears once even when scopes
 * overlap. Only complete runs count, as for diff: a failed run may have stopped halfway.
 */
const v2 = `
CREATE VIEW IF NOT EXISTS latest_runs AS
SELECT scope, max(id) AS run_id
FROM runs
WHERE status = 'complete'
GROUP BY scope;

CREATE VIEW IF NOT EXISTS latest_workspace_runs AS
SELECT rw.id AS workspace_id, max(lr.run_id) AS run_id
FROM latest_runs AS lr
JOIN run_workspaces AS rw ON rw.run_id = lr.run_id
GROUP BY rw.id;

CREATE VIEW IF NOT EXISTS latest_record_versions AS
SELECT r.id AS id, r.workspace_id AS workspace_id, r.vid AS vid, lw.run_id AS run_id
FROM latest_workspace_runs AS lw
JOIN run_records AS rr ON rr.run_id = lw.run_id
JOIN records AS r ON r.vid = rr.vid AND r.workspace_id = lw.workspace_id;

CREATE VIEW IF NOT EXISTS latest_records AS
SELECT
  r.id AS id,
  r.workspace_id AS workspace_id,
  json_extract(r.detail, '$.title') AS title,
  json_extract(r.detail, '$.todoList.id') AS list_id,
  json_extract(r.detail, '$.todoList.title') AS list_title,
  json_extract(r.detail, '$.done') AS done,
  json_extract(r.detail, '$.archived') AS archived,
  json_extract(r.detail, '$.startedAt') AS started_at,
  json_extract(r.detail, '$.duedAt') AS dued_at,
  json_extract(r.detail, '$.createdAt') AS created_at,
  coalesce(json_extract(r.detail, '$.updatedAt'), r.updated_at) AS updated_at,
  (SELECT group_concat(json_extract(u.value, '$.email'), ',') FROM json_each(r.detail, '$.users') AS u) AS assignees,
  (SELECT group_concat(json_extract(t.value, '$.title'), ',') FROM json_each(r.detail, '$.tags') AS t) AS tags,
  lv.run_id AS run_id
FROM latest_record_versions AS lv
JOIN records AS r ON r.vid = lv.vid;

CREATE VIEW IF NOT EXISTS record_history AS
SELECT
  r.id AS id,
  r.workspace_id AS workspace_id,
  r.vid AS vid,
  json_extract(r.detail, '$.title') AS title,
  json_extract(r.detail, '$.done') AS done,
  coalesce(json_extract(r.detail, '$.updatedAt'), r.updated_at) AS updated_at,
  m.first_run AS first_run,
  m.last_run AS last_run,
  coalesce(m.runs, 0) AS runs
FROM records AS r
LEFT JOIN (
  SELECT rr.vid AS vid, min(rr.run_id) AS first_run, max(rr.run_id) AS last_run, count(*) AS runs
  FROM run_records AS rr
  JOIN runs AS ru ON ru.id = rr.run_id AND ru.status = 'complete'
  GROUP BY rr.vid
) AS m ON m.vid = r.vid;

CREATE VIEW IF NOT EXISTS latest_files AS
SELECT
  f.id AS id,
  json_extract(f.item, '$.uid') AS uid,
  f.workspace_id AS workspace_id,
  json_extract(f.item, '$.name') AS name,
  json_extract(f.item, '$.size') AS size,
  json_extract(f.item, '$.type') AS type,
  json_extract(f.item, '$.status') AS status,
  json_extract(f.item, '$.todo.id') AS record_id,
  json_extract(f.item, '$.createdAt') AS created_at,
  lw.run_id AS run_id
FROM latest_workspace_runs AS lw
JOIN run_files AS rf ON rf.run_id = lw.run_id
JOIN files AS f ON f.vid = rf.vid AND f.workspace_id = lw.workspace_id;

CREATE VIEW IF NOT EXISTS latest_activity AS
SELECT
  lv.id AS record_id,
  lv.workspace_id AS workspace_id,
  a.seq AS seq,
  a.id AS activity_id,
  json_extract(a.item, '$.__typename') AS category,
  json_extract(a.item, '$.type') AS type,
  json_extract(a.item, '$.createdAt') AS created_at,
  coalesce(json_extract(a.item, '$.commentUser.fullName'), json_extract(a.item, '$.actionUser.fullName')) AS author,
  json_extract(a.item, '$.html') AS text,
  lv.run_id AS run_id
FROM latest_record_versions AS lv
JOIN activity AS a ON a.vid = lv.vid;

CREATE VIEW IF NOT EXISTS runs_summary AS
SELECT
  ru.id AS run_id,
  ru.status AS status,
  ru.started AS started_at,
  ru.finished AS finished_at,
  ru.scope AS scope,
  ru.full AS full,
  (SELECT count(*) FROM run_records AS rr WHERE rr.run_id = ru.id) AS records,
  (SELECT count(*) FROM run_files AS rf WHERE rf.run_id = ru.id) AS files,
  (SELECT coalesce(sum(r.activity_count), 0) FROM run_records AS rr JOIN records AS r ON r.vid = rr.vid WHERE rr.run_id = ru.id) AS activities
FROM runs AS ru;
`

/**
 * File bytes (`backup --files DIR`): the objects stored under DIR by sha256, and which of
 * them each run holds, one row per file of the run. An object is named by its content,
 * so a file kept across runs, or identical files in two workspaces, are one row of
 * `file_objects` however many runs hold them. The index on `file_id` answers the
 * incremental question "which object did an earlier run hold for this file id?".
 */
const v3 = `
CREATE TABLE file_objects (
  sha256     TEXT    PRIMARY KEY,
  size       INTEGER NOT NULL
) WITHOUT ROWID;

CREATE TABLE run_file_objects (
  run_id     INTEGER NOT NULL,
  file_id    TEXT    NOT NULL,
  sha256     TEXT    NOT NULL,
  PRIMARY KEY (run_id, file_id)
) WITHOUT ROWID;
CREATE INDEX run_file_objects_file ON run_file_objects (file_id, run_id);
`

/**
 * Verifications (`worksync verify`): one row per verification of a run, each check's
 * outcome as JSON (the `checks` array of `verify --json`). `runs_summary` gains the
 * latest verification of each run: when, and whether every check held (1) or not (0).
 */
const v4 = `
CREATE TABLE verifications (
  run_id      INTEGER NOT NULL,
  verified_at TEXT    NOT NULL,
  ok          INTEGER NOT NULL,
  checks      TEXT    NOT NULL
);
CREATE INDEX verifications_run ON verifications (run_id, verified_at);

DROP VIEW IF EXISTS runs_summary;
CREATE VIEW runs_summary AS
SELECT
  ru.id AS run_id,
  ru.status AS status,
  ru.started AS started_at,
  ru.finished AS finished_at,
  ru.scope AS scope,
  ru.full AS full,
  (SELECT count(*) FROM run_records AS rr WHERE rr.run_id = ru.id) AS records,
  (SELECT count(*) FROM run_files AS rf WHERE rf.run_id = ru.id) AS files,
  (SELECT coalesce(sum(r.activity_count), 0) FROM run_records AS rr JOIN records AS r ON r.vid = rr.vid WHERE rr.run_id = ru.id) AS activities,
  (SELECT max(v.verified_at) FROM verifications AS v WHERE v.run_id = ru.id) AS last_verified_at,
  (SELECT v.ok FROM verifications AS v WHERE v.run_id = ru.id ORDER BY v.verified_at DESC LIMIT 1) AS verified_ok
FROM runs AS ru;
`

/**
 * The mirror's records to read again (`worksync mirror`): one row per delivery that asked
 * for a read, written before the delivery is answered 2xx and removed once a read of its
 * record is in the snapshot. A mirror stopped or killed in between reads them at its next
 * start, so an acknowledged change is never left to the next reconciliation. `event` is
 * the delivery's event while its `--json` line waits for the read, NULL when its line was
 * printed already (a write applied at once, its activity still to read).
 */
const v5 = `
CREATE TABLE mirror_rereads (
  seq        INTEGER PRIMARY KEY AUTOINCREMENT,
  record_id  TEXT    NOT NULL,
  event      TEXT
);
CREATE INDEX mirror_rereads_record ON mirror_rereads (record_id, seq);
`

export const SNAPSHOT_MIGRATIONS: ReadonlyArray<Migration> = [
  { version: 1, description: "runs, versioned entities, run membership, notes", up: v1 },
  { version: 2, description: "views for plain SQL queries", up: v2 },
  { version: 3, description: "file bytes: stored objects and the objects each run holds", up: v3 },
  { version: 4, description: "verifications of runs, shown by runs_summary", up: v4 },
  { version: 5, description: "the mirror's records still to read again", up: v5 }
]

/** Entity tables that follow the plain `(vid, id, hash, item)` + `run_<table>` pattern. */
export type PlainEntity = "workspaces" | "lists" | "users" | "files"
