/** Rows of the emulator's tables as the objects the GraphQL types resolve from. */
import type { EmulatorContext } from "../context.ts"
import type { FileRow } from "../uploads/files.ts"
import { one } from "./sql.ts"

export interface UserModel {
  readonly id: string
  readonly firstName: string
  readonly lastName: string
  readonly fullName: string
  readonly email: string
  readonly image: { readonly thumbnail: string; readonly small: string; readonly medium: string; readonly large: string }
}

interface UserSql {
  readonly id: string
  readonly email: string
  readonly first_name: string
  readonly last_name: string
}

export const userModel = (ctx: EmulatorContext, row: UserSql): UserModel => {
  const avatar = (size: number) => `${ctx.urls.baseUrl}/avatars/${row.id}/${size}x${size}.png`
  return {
    id: row.id,
    firstName: row.first_name,
    lastName: row.last_name,
    fullName: `${row.first_name} ${row.last_name}`.trim(),
    email: row.email,
    image: { thumbnail: avatar(50), small: avatar(100), medium: avatar(200), large: avatar(500) }
  }
}

export const userById = (ctx: EmulatorContext, id: string): UserModel | null => {
  const row = one<UserSql>(ctx.db, "SELECT id, email, first_name, last_name FROM users WHERE id = ?", id)
  return row === undefined ? null : userModel(ctx, row)
}

export const userByEmail = (ctx: EmulatorContext, email: string): UserModel | null => {
  const row = one<UserSql>(
    ctx.db,
    "SELECT id, email, first_name, last_name FROM users WHERE lower(email) = lower(?)",
    email
  )
  return row === undefined ? null : userModel(ctx, row)
}

export interface WorkspaceModel {
  readonly id: string
  readonly slug: string
  readonly name: string
}

export const workspaceModel = (ctx: EmulatorContext, id: string | null): WorkspaceModel | null =>
  id === null
    ? null
    : (one<WorkspaceModel>(ctx.db, "SELECT id, slug, name FROM workspaces WHERE id = ?", id) ?? null)

export const organizationModel = (ctx: EmulatorContext, id: string | null): WorkspaceModel | null =>
  id === null
    ? null
    : (one<WorkspaceModel>(ctx.db, "SELECT id, slug, name FROM organizations WHERE id = ?", id) ?? null)

/** The GraphQL File: the uploads area's row plus lazily resolved relations. */
export const fileModel = (ctx: EmulatorContext, row: FileRow) => ({
  id: row.id,
  uid: row.uid,
  name: row.name,
  size: row.size,
  type: row.type,
  extension: row.extension,
  shared: row.shared,
  status: row.status,
  createdAt: row.createdAt,
  project: () => workspaceModel(ctx, row.workspaceId),
  folder: () =>
    row.folderId === null
      ? null
      : (one<{ id: string; name: string }>(ctx.db, "SELECT id, name FROM folders WHERE id = ?", row.folderId) ?? null)
})
