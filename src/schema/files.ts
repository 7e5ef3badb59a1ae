/**
 * File shapes: the REST list-files item and the GraphQL File object.
 */
import { Schema } from "effect"
import { IsoTimestamp } from "./dates.ts"
import { openStruct } from "./open.ts"
import { FilesPageInfo } from "./paging.ts"

export const FileStatus = Schema.Literals(["CONFIRMED", "PENDING"])
export type FileStatus = typeof FileStatus.Type

/** Folder and record references: only `id` is documented; other keys are kept. */
export const FolderRef = openStruct({ id: Schema.String })
export type FolderRef = typeof FolderRef.Type
export const FileRecordRef = openStruct({ id: Schema.String })
export type FileRecordRef = typeof FileRecordRef.Type

export const FileUser = openStruct({
  id: Schema.String,
  fullName: Schema.String,
  email: Schema.String
})
export type FileUser = typeof FileUser.Type

/** A list-files item (R-REST-FILES-03..08). */
export const FileItem = openStruct({
  id: Schema.String,
  uid: Schema.String,
  name: Schema.String,
  size: Schema.Number,
  type: Schema.String,
  extension: Schema.String,
  status: FileStatus,
  shared: Schema.Boolean,
  createdAt: IsoTimestamp,
  updatedAt: IsoTimestamp,
  folder: Schema.NullOr(FolderRef),
  todo: Schema.NullOr(FileRecordRef),
  // The emulator always sends the uploader; null accepted for anonymous form uploads.
  user: Schema.NullOr(FileUser)
})
export type FileItem = typeof FileItem.Type

/** list-files response. */
export const FilesPage = openStruct({
  items: Schema.Array(FileItem),
  pageInfo: FilesPageInfo
})
export type FilesPage = typeof FilesPage.Type

export const FileProjectRef = openStruct({ id: Schema.String })
export type FileProjectRef = typeof FileProjectRef.Type

/** GraphQL `File` (R-UPLOAD-MULTIPART-12). */
export const GraphqlFile = openStruct({
  id: Schema.String,
  uid: Schema.String,
  name: Schema.String,
  size: Schema.Number,
  type: Schema.String,
  extension: Schema.String,
  shared: Schema.Boolean,
  status: Schema.NullOr(FileStatus),
  createdAt: IsoTimestamp,
  project: FileProjectRef,
  folder: Schema.NullOr(FolderRef)
})
export type GraphqlFile = typeof GraphqlFile.Type

/** GraphQL `CreateFileInput`. */
export const CreateFileInput = openStruct({
  uid: Schema.String,
  name: Schema.String,
  size: Schema.Number,
  type: Schema.String,
  extension: Schema.String,
  companyId: Schema.String,
  projectId: Schema.String,
  folderId: Schema.optional(Schema.String),
  documentId: Schema.optional(Schema.String),
  shared: Schema.optional(Schema.Boolean)
})
export type CreateFileInput = typeof CreateFileInput.Type

/** GraphQL `CreateRecordCustomFieldFileInput`. */
export const CreateRecordCustomFieldFileInput = openStruct({
  todoId: Schema.String,
  customFieldId: Schema.String,
  fileUid: Schema.String
})
export type CreateRecordCustomFieldFileInput = typeof CreateRecordCustomFieldFileInput.Type
