/**
 * The uploads area's tables and the data access other areas use (GraphQL
 * uploadFile / uploadFiles / createFile write file rows through `insertFile`).
 */
import type Database from "better-sqlite3"
import type { EmulatorContext } from "../context.ts"
import { all, run, sql } from "../core/sql.ts"

export type FileStatus = "PENDING" | "CONFIRMED"

export const uploadsDdl = `
CREATE TABLE IF NOT EXISTS files (
  id TEXT PRIMARY KEY,
  uid TEXT NOT NULL UNIQUE,
  name TEXT NOT NULL,
  size INTEGER NOT NULL,
  type TEXT NOT NULL,
  extension TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('PENDING', 'CONFIRMED')),
  shared INTEGER NOT NULL DEFAULT 0,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  workspace_id TEXT,
  org_id TEXT NOT NULL,
  folder_id TEXT,
  todo_id TEXT,
  document_id TEXT,
  user_id TEXT,
  form_id TEXT,
  storage_key TEXT NOT NULL,
  declared_size INTEGER,
  presign_expires_at INTEGER
);
CREATE INDEX IF NOT EXISTS files_by_workspace ON files (workspace_id, created_at, id);
CREATE INDEX IF NOT EXISTS files_by_org ON files (org_id, created_at, id);
CREATE INDEX IF NOT EXISTS files_pending ON files (status, presign_expires_at);
CREATE TABLE IF NOT EXISTS folders (
  id TEXT PRIMARY KEY,
  workspace_id TEXT NOT NULL,
  name TEXT NOT NULL,
  parent_id TEXT,
  created_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS forms (
  id TEXT PRIMARY KEY,
  workspace_id TEXT NOT NULL,
  title TEXT NOT NULL DEFAULT '',
  active INTEGER NOT NULL DEFAULT 1,
  created_by TEXT
);
CREATE TABLE IF NOT EXISTS presign_uses (
  sig TEXT PRIMARY KEY,
  used_at INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS storage_credential_log (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  at TEXT NOT NULL,
  method TEXT NOT NULL,
  path TEXT NOT NULL,
  header TEXT NOT NULL
);
`

/** One row of `files`, as the emulator's code sees it (times are ISO strings, expiry ms). */
export interface FileRow {
  readonly id: string
  readonly uid: string
  readonly name: string
  readonly size: number
  readonly type: string
  readonly extension: string
  readonly status: FileStatus
  readonly shared: boolean
  readonly createdAt: string
  readonly updatedAt: string
  /** null for an organization-level file. */
  readonly workspaceId: string | null
  readonly orgId: string
  readonly folderId: string | null
  readonly todoId: string | null
  readonly documentId: string | null
  readonly userId: string | null
  readonly formId: string | null
  readonly storageKey: string
  /** Size announced at presign; null when none was given (or the file was not presigned). */
  readonly declaredSize: number | null
  /** End of the signing window of a presigned upload, ms since the epoch. */
  readonly presignExpiresAt: number | null
}

interface SqlFileRow {
  id: string
  uid: string
  name: string
  size: number
  type: string
  extension: string
  status: FileStatus
  shared: number
  created_at: string
  updated_at: string
  workspace_id: string | null
  org_id: string
  folder_id: string | null
  todo_id: string | null
  document_id: string | null
  user_id: string | null
  form_id: string | null
  storage_key: string
  declared_size: number | null
  presign_expires_at: number | null
}

const fromSql = (r: SqlFileRow): FileRow => ({
  id: r.id,
  uid: r.uid,
  name: r.name,
  size: r.size,
  type: r.type,
  extension: r.extension,
  status: r.status,
  shared: r.shared !== 0,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
  workspaceId: r.workspace_id,
  orgId: r.org_id,
  folderId: r.folder_id,
  todoId: r.todo_id,
  documentId: r.document_id,
  userId: r.user_id,
  formId: r.form_id,
  storageKey: r.storage_key,
  declaredSize: r.declared_size,
  presignExpiresAt: r.presign_expires_at
})

/** The storage key of a file's bytes: derived from its uid, so `createFile` can find an object. */
export const storageKeyFor = (uid: string): string => `files/${uid}`

/** What a caller gives to create a file row; the rest defaults. */
export interface NewFile {
  readonly name: string
  readonly size: number
  readonly type: string
  readonly extension: string
  readonly orgId: string
  readonly workspaceId: string | null
  readonly status: FileStatus
  /** Defaults to a fresh uid. */
  readonly uid?: string
  readonly shared?: boolean
  readonly folderId?: string | null
  readonly todoId?: string | null
  readonly documentId?: string | null
  readonly userId?: string | null
  readonly formId?: string | null
  /** Defaults to `storageKeyFor(uid)`. */
  readonly storageKey?: string
  readonly declaredSize?: number | null
  readonly presignExpiresAt?: number | null
}

type Ctx = Pick<EmulatorContext, "db" | "ids" | "clock">

/** Inserts a file row and returns it. Throws when the uid is taken (UNIQUE). */
export const insertFile = (ctx: Ctx, input: NewFile): FileRow => {
  const uid = input.uid ?? ctx.ids.uid()
  const now = ctx.clock.iso()
  const row: SqlFileRow = {
    id: ctx.ids.id(),
    uid,
    name: input.name,
    size: input.size,
    type: input.type,
    extension: input.extension,
    status: input.status,
    shared: input.shared === true ? 1 : 0,
    created_at: now,
    updated_at: now,
    workspace_id: input.workspaceId,
    org_id: input.orgId,
    folder_id: input.folderId ?? null,
    todo_id: input.todoId ?? null,
    document_id: input.documentId ?? null,
    user_id: input.userId ?? null,
    form_id: input.formId ?? null,
    storage_key: input.storageKey ?? storageKeyFor(uid),
    declared_size: input.declaredSize ?? null,
    presign_expires_at: input.presignExpiresAt ?? null
  }
  sql(
    ctx.db,
    `INSERT INTO files (id, uid, name, size, type, extension, status, shared, created_at, updated_at,
        workspace_id, org_id, folder_id, todo_id, document_id, user_id, form_id, storage_key,
        declared_size, presign_expires_at)
      VALUES (@id, @uid, @name, @size, @type, @extension, @status, @shared, @created_at, @updated_at,
        @workspace_id, @org_id, @folder_id, @todo_id, @document_id, @user_id, @form_id, @storage_key,
        @declared_size, @presign_expires_at)`
  ).run(row)
  return fromSql(row)
}

export const getFileByUid = (db: Database.Database, uid: string): FileRow | null => {
  const r = sql(db, "SELECT * FROM files WHERE uid = ?").get(uid) as SqlFileRow | undefined
  return r === undefined ? null : fromSql(r)
}

export const getFileById = (db: Database.Database, id: string): FileRow | null => {
  const r = sql(db, "SELECT * FROM files WHERE id = ?").get(id) as SqlFileRow | undefined
  return r === undefined ? null : fromSql(r)
}

export interface FilePage {
  readonly rows: ReadonlyArray<FileRow>
  readonly total: number
}

/**
 * Files of one workspace, or of every workspace of an organization plus its
 * organization-level files when `workspaceId` is null; order createdAt asc, id asc
 * (FILE_ORDER). Both statuses are listed.
 */
export const listFiles = (
  db: Database.Database,
  scope: { readonly workspaceId: string } | { readonly orgId: string },
  page: { readonly skip: number; readonly limit: number }
): FilePage => {
  const [where, arg] = "workspaceId" in scope ? ["workspace_id = ?", scope.workspaceId] : ["org_id = ?", scope.orgId]
  const total = (sql(db, `SELECT COUNT(*) AS n FROM files WHERE ${where}`).get(arg) as { n: number }).n
  const rows = all<SqlFileRow>(
    db,
    `SELECT * FROM files WHERE ${where} ORDER BY created_at ASC, id ASC LIMIT ? OFFSET ?`,
    arg,
    page.limit,
    page.skip
  )
  return { rows: rows.map(fromSql), total }
}

/** PENDING rows whose signing window closed before `beforeMs`. */
export const listExpiredPending = (db: Database.Database, beforeMs: number): ReadonlyArray<FileRow> =>
  all<SqlFileRow>(
    db,
    "SELECT * FROM files WHERE status = 'PENDING' AND presign_expires_at IS NOT NULL AND presign_expires_at < ?",
    beforeMs
  ).map(fromSql)

/** Marks a file CONFIRMED with its stored size. */
export const confirmFile = (ctx: Pick<EmulatorContext, "db" | "clock">, uid: string, size: number): void => {
  run(ctx.db, "UPDATE files SET status = 'CONFIRMED', size = ?, updated_at = ? WHERE uid = ?", size, ctx.clock.iso(), uid)
}

export const deleteFile = (db: Database.Database, uid: string): void => {
  sql(db, "DELETE FROM files WHERE uid = ?").run(uid)
}

/** Total bytes an organization's files hold (both statuses: a PENDING row reserves its size). */
export const orgStorageBytes = (db: Database.Database, orgId: string): number =>
  (sql(db, "SELECT COALESCE(SUM(size), 0) AS n FROM files WHERE org_id = ?").get(orgId) as { n: number }).n

export interface FolderRow {
  readonly id: string
  readonly workspaceId: string
  readonly name: string
  readonly parentId: string | null
}

export const insertFolder = (
  ctx: Ctx,
  input: { readonly workspaceId: string; readonly name: string; readonly parentId?: string | null }
): FolderRow => {
  const id = ctx.ids.id()
  run(
    ctx.db,
    "INSERT INTO folders (id, workspace_id, name, parent_id, created_at) VALUES (?, ?, ?, ?, ?)",
    id,
    input.workspaceId,
    input.name,
    input.parentId ?? null,
    ctx.clock.iso()
  )
  return { id, workspaceId: input.workspaceId, name: input.name, parentId: input.parentId ?? null }
}

export const getFolder = (db: Database.Database, id: string): FolderRow | null => {
  const r = sql(db, "SELECT id, workspace_id, name, parent_id FROM folders WHERE id = ?").get(id) as
    | { id: string; workspace_id: string; name: string; parent_id: string | null }
    | undefined
  return r === undefined ? null : { id: r.id, workspaceId: r.workspace_id, name: r.name, parentId: r.parent_id }
}

export interface FormRow {
  readonly id: string
  readonly workspaceId: string
  readonly active: boolean
  readonly createdBy: string | null
}

export const insertForm = (
  ctx: Ctx,
  input: { readonly workspaceId: string; readonly title?: string; readonly active: boolean; readonly createdBy: string | null }
): FormRow => {
  const id = ctx.ids.id()
  run(
    ctx.db,
    "INSERT INTO forms (id, workspace_id, title, active, created_by) VALUES (?, ?, ?, ?, ?)",
    id,
    input.workspaceId,
    input.title ?? "",
    input.active ? 1 : 0,
    input.createdBy
  )
  return { id, workspaceId: input.workspaceId, active: input.active, createdBy: input.createdBy }
}

export const getForm = (db: Database.Database, id: string): FormRow | null => {
  const r = sql(db, "SELECT id, workspace_id, active, created_by FROM forms WHERE id = ?").get(id) as
    | { id: string; workspace_id: string; active: number; created_by: string | null }
    | undefined
  return r === undefined ? null : { id: r.id, workspaceId: r.workspace_id, active: r.active !== 0, createdBy: r.created_by }
}

/** Header names (never values) of credential-looking headers that reached storage. */
export interface CredentialLogEntry {
  readonly at: string
  readonly method: string
  readonly path: string
  readonly header: string
}

export const recordStorageCredential = (
  ctx: Pick<EmulatorContext, "db" | "clock">,
  entry: Omit<CredentialLogEntry, "at">
): void => {
  run(
    ctx.db,
    "INSERT INTO storage_credential_log (at, method, path, header) VALUES (?, ?, ?, ?)",
    ctx.clock.iso(),
    entry.method,
    entry.path,
    entry.header
  )
}

/** Every credential-looking header storage received, oldest first; empty when clients behave. */
export const storageCredentialLog = (ctx: Pick<EmulatorContext, "db">): ReadonlyArray<CredentialLogEntry> =>
  all<CredentialLogEntry>(ctx.db, "SELECT at, method, path, header FROM storage_credential_log ORDER BY seq")
