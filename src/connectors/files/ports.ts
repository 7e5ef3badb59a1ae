/**
 * What the copy needs from one workspace connection. Source and target may be two
 * accounts, so the copy takes two of these plain values rather than one set of services;
 * `workspace-files.ts` builds one from the client's services.
 */
import type * as Effect from "effect/Effect"
import type * as Stream from "effect/Stream"
import type { GraphqlCallError } from "../../client/graphql-client.ts"
import type { RestError } from "../../client/rest-client.ts"
import type { UploadError } from "../../client/uploads.ts"
import type { FileItem } from "../../schema/files.ts"
import type { PresignResponse } from "../../schema/uploads.ts"
import type { PageError } from "../../streams/paging.ts"
import type { ScanUnstable } from "../../streams/stable-scan.ts"
import type { NameNotAddressable } from "./errors.ts"

/** What a workspace connection fails with: the client's own tagged errors. */
export type FilePortError = RestError | UploadError | GraphqlCallError | PageError | ScanUnstable | NameNotAddressable

/** Where one presigned PUT goes (R-UPLOAD-PRESIGN-06..10). */
export interface UploadTarget {
  /** The new file's uid (`fields["X-Key"]`). */
  readonly uid: string
  /** The presign answer as given: url and headers are used exactly as returned. */
  readonly presigned: PresignResponse
}

/** The result of uploading a batch through GraphQL `uploadFiles`, in input order. */
export interface BatchUploaded {
  readonly uid: string
  readonly name: string
  readonly size: number
  readonly status: string | null
}

export interface WorkspaceFiles {
  /** Identifies the account (base URL and organization) in journal keys; no secret. */
  readonly origin: string
  /** Every file item of the workspace, page by page (R-REST-PAGE-04/05). */
  readonly listFiles: (workspaceId: string) => Stream.Stream<FileItem, FilePortError>
  /** The bytes of a CONFIRMED file, through `/uploads/{uid}/{name}` and its redirect. */
  readonly download: (file: { readonly uid: string; readonly name: string }) => Stream.Stream<Uint8Array, FilePortError>
  /** Step 1: a PENDING file and where to PUT its bytes. */
  readonly presign: (workspaceId: string, filename: string, size: number) => Effect.Effect<UploadTarget, FilePortError>
  /** Step 2: the bytes, with exactly the returned headers and no service credentials. */
  readonly put: (
    target: UploadTarget,
    body: Stream.Stream<Uint8Array, unknown>,
    size: number
  ) => Effect.Effect<void, FilePortError>
  /** Step 3: returns the status the service reports (`CONFIRMED` on success). */
  readonly confirm: (workspaceId: string, uid: string) => Effect.Effect<string, FilePortError>
  /**
   * GraphQL `uploadFiles` (at most 10 files, 1 GB in all, 256 MB each), when the client
   * offers it. The bodies are streams; results come back in input order.
   */
  readonly uploadBatch?: (
    workspaceId: string,
    files: ReadonlyArray<{ readonly name: string; readonly size: number; readonly body: Stream.Stream<Uint8Array, unknown> }>
  ) => Effect.Effect<ReadonlyArray<BatchUploaded>, FilePortError>
}

const tagOf = (e: unknown): string =>
  typeof e === "object" && e !== null && "_tag" in e && typeof e._tag === "string" ? e._tag : ""

const statusOf = (e: unknown): number | null =>
  typeof e === "object" && e !== null && "status" in e && typeof e.status === "number" ? e.status : null

/** Confirm answered that the stored object is missing or of the wrong size: upload again. */
export const needsReupload = (e: unknown): boolean => {
  const tag = tagOf(e)
  if (tag === "UploadSizeMismatch") return true
  if (tag === "UploadRejected" || tag === "UnexpectedStatus") {
    const status = statusOf(e)
    return status === 404 || status === 400
  }
  return false
}

/** The answer was lost or the service stumbled: the same request may simply be repeated. */
export { isTransient } from "../../client/predicates.ts"
