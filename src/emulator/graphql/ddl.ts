/** The GraphQL area's own tables: invitations, custom roles, comment attachments and checklist item assignees. */
export const GRAPHQL_DDL = `
CREATE TABLE IF NOT EXISTS invitations (
  id TEXT PRIMARY KEY,
  email TEXT NOT NULL,
  access_level TEXT NOT NULL,
  org_id TEXT NOT NULL,
  workspace_id TEXT,
  project_ids TEXT NOT NULL DEFAULT '[]',
  role_id TEXT,
  invited_by TEXT NOT NULL,
  status TEXT NOT NULL DEFAULT 'PENDING',
  expired_at TEXT NOT NULL,
  accepted_at TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS invitations_email ON invitations(email);
CREATE INDEX IF NOT EXISTS invitations_org ON invitations(org_id, status);
CREATE TABLE IF NOT EXISTS workspace_roles (
  id TEXT PRIMARY KEY,
  workspace_id TEXT NOT NULL,
  name TEXT NOT NULL,
  is_records_enabled INTEGER NOT NULL DEFAULT 1,
  can_create_records INTEGER NOT NULL DEFAULT 1,
  can_edit_records INTEGER NOT NULL DEFAULT 1,
  can_delete_records INTEGER NOT NULL DEFAULT 1,
  is_files_enabled INTEGER NOT NULL DEFAULT 1,
  can_upload_files INTEGER NOT NULL DEFAULT 1,
  is_comments_enabled INTEGER NOT NULL DEFAULT 1,
  can_invite_users INTEGER NOT NULL DEFAULT 1,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS workspace_roles_workspace ON workspace_roles(workspace_id);
CREATE TABLE IF NOT EXISTS checklist_item_assignees (
  item_id TEXT NOT NULL,
  user_id TEXT NOT NULL,
  position INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (item_id, user_id)
);
CREATE TABLE IF NOT EXISTS comment_files (
  comment_id TEXT NOT NULL,
  file_id TEXT NOT NULL,
  position INTEGER NOT NULL,
  PRIMARY KEY (comment_id, file_id)
);
`
