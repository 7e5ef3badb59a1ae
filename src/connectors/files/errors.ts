/**
 * Failures of a file copy, one tagged error per cause the copy handles differently.
 * Messages name the file; none ever holds a credential (storage URLs are not quoted,
 * since their signatures are short-lived secrets too).
 */
import * as Data from "effect/Data"
import { GB } from "../../schema/limits.ts"

/** `--from` / `--to` is not `workspace:ID` or `dir:PATH`, or names something unusable. */
export class CopySpecInvalid extends Data.TaggedError("CopySpecInvalid")<{
  readonly flag: string
  readonly value: string
  readonly reason: string
}> {
  override get message(): string {
    return `${this.flag}: ${this.reason} (got "${this.value}"; expected workspace:ID or dir:PATH)`
  }
}

/** A file over the presigned flow's limit: rejected before any byte is sent. */
export class FileTooLarge extends Data.TaggedError("FileTooLarge")<{
  readonly name: string
  readonly size: number
  readonly max: number
}> {
  override get message(): string {
    return `${this.name}: ${this.size} bytes is over the ${this.max / GB} GB (${this.max} bytes) limit of the presigned upload; not sent`
  }
}

/**
 * A file whose name is a dot segment (`.` or `..`): every HTTP client and server
 * normalizes such a segment away, so the documented download URL
 * `/uploads/{uid}/{filename}` cannot address it (R-FILE-SERVE-07). Refused with a clear
 * reason instead of requesting a different URL.
 */
export class NameNotAddressable extends Data.TaggedError("NameNotAddressable")<{
  readonly name: string
  readonly uid: string
}> {
  override get message(): string {
    return `file ${this.uid} named "${this.name}": a name that is a dot segment cannot be addressed by the download URL; rename it in the service and rerun`
  }
}

/** The bytes that arrived do not match the size the source declared. */
export class SizeMismatch extends Data.TaggedError("SizeMismatch")<{
  readonly name: string
  readonly stage: "download" | "read" | "upload"
  readonly expected: number
  readonly actual: number
}> {
  override get message(): string {
    return `${this.name}: ${this.stage} gave ${this.actual} bytes but ${this.expected} were declared`
  }
}

/**
 * The source said the file is not there: its download answered that it does not exist
 * (a workspace's file), or it is no longer on disk (a directory's). The file may have
 * been deleted at the source during the copy; the copy confirms that before saying so
 * (deleted-at-source.ts), and counts it failed when it cannot.
 */
export class SourceMissing extends Data.TaggedError("SourceMissing")<{
  readonly name: string
  readonly detail: string
}> {
  override get message(): string {
    return `${this.name}: not found at the source (${this.detail})`
  }
}

/** Reading or writing a local file failed. */
export class LocalIoError extends Data.TaggedError("LocalIoError")<{
  readonly path: string
  readonly operation: string
  readonly detail: string
}> {
  override get message(): string {
    return `${this.path}: ${this.operation} failed: ${this.detail}`
  }
}

/** A local path would land outside the target directory (never written). */
export class UnsafeLocalPath extends Data.TaggedError("UnsafeLocalPath")<{
  readonly name: string
  readonly root: string
}> {
  override get message(): string {
    return `${this.name}: refusing to write outside ${this.root}`
  }
}

/** The upload ended in a state other than CONFIRMED. */
export class NotConfirmed extends Data.TaggedError("NotConfirmed")<{
  readonly name: string
  readonly uid: string
  readonly status: string
}> {
  override get message(): string {
    return `${this.name}: upload ${this.uid} ended ${this.status}, not CONFIRMED`
  }
}

/** Confirm found no stored object of the declared size: the upload is repeated with a fresh presign. */
export class UploadNotLanded extends Data.TaggedError("UploadNotLanded")<{
  readonly name: string
  readonly uid: string
  readonly reason: string
}> {
  override get message(): string {
    return `${this.name}: upload ${this.uid} did not land (${this.reason})`
  }
}

export type FileCopyError = CopySpecInvalid | FileTooLarge | SizeMismatch | LocalIoError | UnsafeLocalPath | NotConfirmed
  | UploadNotLanded | NameNotAddressable | SourceMissing

const TAGS = new Set([
  "CopySpecInvalid",
  "FileTooLarge",
  "SizeMismatch",
  "LocalIoError",
  "UnsafeLocalPath",
  "NotConfirmed",
  "UploadNotLanded",
  "NameNotAddressable",
  "SourceMissing"
])

export const isFileCopyError = (u: unknown): u is FileCopyError =>
  typeof u === "object" && u !== null && "_tag" in u && typeof u._tag === "string" && TAGS.has(u._tag)

/** Short text of an unknown failure cause (never a stack). */
export const detailOf = (error: unknown): string => {
  if (error instanceof Error) return error.message
  if (typeof error === "object" && error !== null && "message" in error) return String(error.message)
  return String(error)
}
