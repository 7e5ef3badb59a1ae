/**
 * The core tables. Other areas read and join these (users, tokens, memberships,
 * workspaces, records, activity) and add their own tables in their own DDL.
 *
 * Conventions: ids are TEXT (24 hex), timestamps are ISO 8601 TEXT in UTC (they sort as
 * text), booleans are INTEGER 0/1, soft deletion is `deleted_at` (a deleted row vanishes
 * from every read). Access levels are the UserAccessLevel strings.
 */
export const CORE_DDL = `
CREATE TABLE IF NOT EXISTS organizations (
  id TEXT PRIMARY KEY,
  slug TEXT NOT NULL UNIQUE,
  name TEXT NOT NULL,
  banned INTEGER NOT NULL DEFAULT 0,
  seat_limit INTEGER,
  storage_limit INTEGER,
  created_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS users (
  id TEXT PRIMARY KEY,
  email TEXT NOT NULL UNIQUE,
  first_name TEXT NOT NULL,
  last_name TEXT NOT NULL,
  created_at TEXT NOT NULL
);
-- One personal access token: the REST bearer token and the GraphQL id/secret pair are
-- the same credential (R-REST-AUTH-06).
CREATE TABLE IF NOT EXISTS tokens (
  token_id TEXT PRIMARY KEY,
  token TEXT NOT NULL UNIQUE,
  token_secret TEXT NOT NULL,
  user_id TEXT NOT NULL REFERENCES users(id),
  created_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS org_members (
  org_id TEXT NOT NULL REFERENCES organizations(id),
  user_id TEXT NOT NULL REFERENCES users(id),
  level TEXT NOT NULL,
  created_at TEXT NOT NULL,
  PRIMARY KEY (org_id, user_id)
);
CREATE INDEX IF NOT EXISTS org_members_user ON org_members(user_id);
CREATE TABLE IF NOT EXISTS workspaces (
  id TEXT PRIMARY KEY,
  slug TEXT NOT NULL UNIQUE,
  name TEXT NOT NULL,
  org_id TEXT NOT NULL REFERENCES organizations(id),
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS workspaces_org ON workspaces(org_id);
CREATE TABLE IF NOT EXISTS workspace_members (
  workspace_id TEXT NOT NULL REFERENCES workspaces(id),
  user_id TEXT NOT NULL REFERENCES users(id),
  level TEXT NOT NULL,
  role_id TEXT,
  files_disabled INTEGER NOT NULL DEFAULT 0,
  created_at TEXT NOT NULL,
  PRIMARY KEY (workspace_id, user_id)
);
CREATE INDEX IF NOT EXISTS workspace_members_user ON workspace_members(user_id);
CREATE TABLE IF NOT EXISTS lists (
  id TEXT PRIMARY KEY,
  workspace_id TEXT NOT NULL REFERENCES workspaces(id),
  title TEXT NOT NULL,
  position REAL NOT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  deleted_at TEXT
);
CREATE INDEX IF NOT EXISTS lists_workspace ON lists(workspace_id, position);
CREATE TABLE IF NOT EXISTS tags (
  id TEXT PRIMARY KEY,
  workspace_id TEXT NOT NULL REFERENCES workspaces(id),
  title TEXT NOT NULL,
  color TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  deleted_at TEXT
);
CREATE INDEX IF NOT EXISTS tags_workspace ON tags(workspace_id);
CREATE TABLE IF NOT EXISTS records (
  id TEXT PRIMARY KEY,
  uid TEXT NOT NULL UNIQUE,
  workspace_id TEXT NOT NULL REFERENCES workspaces(id),
  list_id TEXT NOT NULL REFERENCES lists(id),
  title TEXT NOT NULL,
  text TEXT NOT NULL DEFAULT '',
  html TEXT NOT NULL DEFAULT '',
  done INTEGER NOT NULL DEFAULT 0,
  archived INTEGER NOT NULL DEFAULT 0,
  position REAL NOT NULL,
  started_at TEXT,
  started_all_day INTEGER NOT NULL DEFAULT 0,
  dued_at TEXT,
  dued_all_day INTEGER NOT NULL DEFAULT 0,
  color TEXT,
  timezone TEXT NOT NULL DEFAULT '',
  cover TEXT NOT NULL DEFAULT '',
  is_repeating INTEGER NOT NULL DEFAULT 0,
  -- Denormalized copies of record_assignees / record_tags (comma-separated ids in position
  -- order) so a page of summaries needs no join; whoever writes those tables calls
  -- syncRecordLinks (core/writes.ts).
  assignee_ids TEXT NOT NULL DEFAULT '',
  tag_ids TEXT NOT NULL DEFAULT '',
  created_by TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  deleted_at TEXT
);
-- Covering indexes for list-records: a page (and the rows it skips) is read from the index
-- alone, never from the table.
CREATE INDEX IF NOT EXISTS records_order ON records(position, id, workspace_id, list_id, uid, title, done, archived, started_at, dued_at, color, created_at, updated_at, assignee_ids, tag_ids, deleted_at) WHERE deleted_at IS NULL;
CREATE INDEX IF NOT EXISTS records_ws_order ON records(workspace_id, position, id, list_id, uid, title, done, archived, started_at, dued_at, color, created_at, updated_at, assignee_ids, tag_ids, deleted_at) WHERE deleted_at IS NULL;
CREATE INDEX IF NOT EXISTS records_list ON records(list_id, position, id, workspace_id, uid, title, done, archived, started_at, dued_at, color, created_at, updated_at, assignee_ids, tag_ids, deleted_at) WHERE deleted_at IS NULL;
CREATE INDEX IF NOT EXISTS records_ws_updated ON records(workspace_id, updated_at);
-- The end of a list (writes.ts END_OF_LIST) counts records in the trash too, which the
-- partial indexes above leave out: without this one, every record created read every record.
CREATE INDEX IF NOT EXISTS records_list_position ON records(list_id, position);
CREATE TABLE IF NOT EXISTS record_assignees (
  record_id TEXT NOT NULL REFERENCES records(id),
  user_id TEXT NOT NULL REFERENCES users(id),
  position INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (record_id, user_id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS record_assignees_user ON record_assignees(user_id, record_id);
CREATE TABLE IF NOT EXISTS record_tags (
  record_id TEXT NOT NULL REFERENCES records(id),
  tag_id TEXT NOT NULL REFERENCES tags(id),
  position INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (record_id, tag_id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS record_tags_tag ON record_tags(tag_id, record_id);
CREATE TABLE IF NOT EXISTS checklists (
  id TEXT PRIMARY KEY,
  record_id TEXT NOT NULL REFERENCES records(id),
  title TEXT NOT NULL,
  position REAL NOT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  deleted_at TEXT
);
CREATE INDEX IF NOT EXISTS checklists_record ON checklists(record_id, position);
CREATE TABLE IF NOT EXISTS checklist_items (
  id TEXT PRIMARY KEY,
  checklist_id TEXT NOT NULL REFERENCES checklists(id),
  title TEXT NOT NULL,
  done INTEGER NOT NULL DEFAULT 0,
  position REAL NOT NULL,
  started_at TEXT,
  dued_at TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  deleted_at TEXT
);
CREATE INDEX IF NOT EXISTS checklist_items_checklist ON checklist_items(checklist_id, position);
-- type: one of CUSTOM_FIELD_TYPES (assumptions.ts); table_columns: JSON [{id, name, type}].
CREATE TABLE IF NOT EXISTS custom_fields (
  id TEXT PRIMARY KEY,
  workspace_id TEXT NOT NULL REFERENCES workspaces(id),
  name TEXT NOT NULL,
  type TEXT NOT NULL,
  position REAL NOT NULL,
  table_columns TEXT NOT NULL DEFAULT '[]',
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  deleted_at TEXT
);
CREATE INDEX IF NOT EXISTS custom_fields_workspace ON custom_fields(workspace_id, position);
CREATE TABLE IF NOT EXISTS custom_field_options (
  id TEXT PRIMARY KEY,
  custom_field_id TEXT NOT NULL REFERENCES custom_fields(id),
  title TEXT NOT NULL,
  color TEXT,
  position REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS custom_field_options_field ON custom_field_options(custom_field_id, position);
-- One value per record and field. option_ids: JSON array of option ids (SELECT types);
-- table_rows: JSON [{position, cells: [{columnId, value}]}]; a FILE field keeps a JSON
-- array of file uids in text.
CREATE TABLE IF NOT EXISTS record_custom_values (
  record_id TEXT NOT NULL REFERENCES records(id),
  custom_field_id TEXT NOT NULL REFERENCES custom_fields(id),
  text TEXT,
  number REAL,
  checked INTEGER,
  option_ids TEXT,
  table_rows TEXT,
  updated_at TEXT NOT NULL,
  PRIMARY KEY (record_id, custom_field_id)
) WITHOUT ROWID;
-- Comments and actions in one table. kind: 'COMMENT' or 'ACTION'. category: the
-- comment category (TODO for record comments, DISCUSSION, STATUS_UPDATE); category_id
-- is the commented entity (the record id for TODO). Actions carry type/old/new values.
CREATE TABLE IF NOT EXISTS activity (
  id TEXT PRIMARY KEY,
  workspace_id TEXT NOT NULL REFERENCES workspaces(id),
  record_id TEXT,
  kind TEXT NOT NULL,
  category TEXT NOT NULL DEFAULT 'TODO',
  category_id TEXT,
  parent_id TEXT,
  html TEXT,
  text TEXT,
  type TEXT,
  old_value TEXT,
  new_value TEXT,
  automated INTEGER NOT NULL DEFAULT 0,
  user_id TEXT REFERENCES users(id),
  affected_user_id TEXT REFERENCES users(id),
  custom_field_id TEXT REFERENCES custom_fields(id),
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  deleted_at TEXT
);
CREATE INDEX IF NOT EXISTS activity_record ON activity(record_id, created_at DESC, id DESC);
CREATE INDEX IF NOT EXISTS activity_workspace ON activity(workspace_id, created_at DESC, id DESC);
CREATE TABLE IF NOT EXISTS documents (
  id TEXT PRIMARY KEY,
  workspace_id TEXT NOT NULL REFERENCES workspaces(id),
  title TEXT NOT NULL,
  html TEXT NOT NULL DEFAULT '',
  created_by TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  deleted_at TEXT
);
CREATE INDEX IF NOT EXISTS documents_workspace ON documents(workspace_id, created_at, id);
CREATE TABLE IF NOT EXISTS saved_views (
  id TEXT PRIMARY KEY,
  workspace_id TEXT NOT NULL REFERENCES workspaces(id),
  name TEXT NOT NULL,
  config TEXT NOT NULL DEFAULT '{}',
  created_by TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS saved_views_workspace ON saved_views(workspace_id, created_at, id);
CREATE TABLE IF NOT EXISTS record_dependencies (
  id TEXT PRIMARY KEY,
  workspace_id TEXT NOT NULL REFERENCES workspaces(id),
  record_id TEXT NOT NULL REFERENCES records(id),
  depends_on_id TEXT NOT NULL REFERENCES records(id),
  type TEXT NOT NULL,
  created_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS record_dependencies_record ON record_dependencies(record_id);
`

/**
 * The alt variant's list-records order, newest first (RECORD_ORDER): indexes for a
 * workspace's records and for all of them, created when an emulator serves that variant.
 */
export const ALT_ORDER_INDEXES = `
CREATE INDEX IF NOT EXISTS records_ws_created ON records(workspace_id, created_at, id) WHERE deleted_at IS NULL;
CREATE INDEX IF NOT EXISTS records_created ON records(created_at, id) WHERE deleted_at IS NULL;
`
