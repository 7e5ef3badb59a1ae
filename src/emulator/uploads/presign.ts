/**
 * Step 1 and step 3 of the presigned flow, on both mounts: `GET /uploads` creates a
 * PENDING row and answers the upload target; `PUT /uploads/{uid}/confirm` checks the
 * stored object against the declared size and makes the row CONFIRMED.
 */
import type { IncomingMessage, ServerResponse } from "node:http"
import type { EmulatorContext } from "../context.ts"
import { get, sql } from "../core/sql.ts"
import { badRequest, HttpError, sendJson } from "../http.ts"
import { checkConfirmAccess, confirmer, type Mount, presignUploader, type Uploader } from "./access.ts"
import { confirmFile, type FileRow, getFileByUid, insertFile, orgStorageBytes, storageKeyFor } from "./files.ts"
import { readingOf } from "../readings.ts"
import { FALLBACK_MIME, typeOfFilename } from "./mime.ts"
import { presignedPutUrl } from "./signing.ts"

/** Extensions that name binary data as such (their type is octet-stream on purpose). */
const KNOWN_BINARY = new Set(["bin", "dat"])

/** Custom keys become uids and storage key segments: keep them to a safe alphabet. */
const CUSTOM_KEY = /^[A-Za-z0-9._-]{1,128}$/

/** Signing window of a presigned PUT (PRESIGN_TTL_SECONDS), scaled like every documented delay. */
export const presignTtlMs = (ctx: Pick<EmulatorContext, "timeScale" | "variant">): number =>
  readingOf(ctx).presignTtlSeconds * 1000 * ctx.timeScale

const planLimitReached = (message: string) => new HttpError(400, "PLAN_LIMIT_REACHED", message)

const parseSize = (raw: string | null): number | null => {
  if (raw === null || raw === "") return null
  if (!/^\d+$/.test(raw)) {
    throw badRequest("size must be a whole number of bytes", [{ path: ["size"], message: "Expected a non-negative integer" }])
  }
  return Number(raw)
}

/**
 * The size ceiling of an uploader: 4.8 GB presigned, 500 MB for an anonymous form
 * (R-LIMIT-04/05), in the variant's units (SIZE_UNITS).
 */
const maxBytesOf = (ctx: EmulatorContext, uploader: Pick<Uploader, "kind">): number =>
  uploader.kind === "form" ? readingOf(ctx).formMaxFileBytes : readingOf(ctx).presignMaxFileBytes

const tooLarge = (ctx: EmulatorContext, uploader: Pick<Uploader, "kind">, size: number) =>
  badRequest(
    uploader.kind === "form"
      ? `The file is ${size} bytes; anonymous form uploads accept at most 500 MB (${maxBytesOf(ctx, uploader)} bytes)`
      : `The file is ${size} bytes; the presigned flow accepts at most 4.8 GB (${maxBytesOf(ctx, uploader)} bytes)`,
    [{ path: ["size"], message: "Too large" }]
  )

/** Plan limits (R-UPLOAD-PRESIGN-28): per-file tier cap, then the organization's allowance. */
const checkPlanLimits = (ctx: EmulatorContext, orgId: string, size: number, replacing: number): void => {
  if (ctx.limits.perFileBytes !== null && size > ctx.limits.perFileBytes) {
    throw planLimitReached(`The file exceeds the plan's per-file limit of ${ctx.limits.perFileBytes} bytes`)
  }
  const orgLimit =
    get<{ storage_limit: number | null }>(ctx.db, "SELECT storage_limit FROM organizations WHERE id = ?", orgId)
      ?.storage_limit ?? null
  const allowance = orgLimit ?? ctx.limits.storageBytes
  if (allowance !== null && orgStorageBytes(ctx.db, orgId) - replacing + size > allowance) {
    throw planLimitReached(`The upload would exceed the organization's storage allowance of ${allowance} bytes`)
  }
}

export interface PresignAnswer {
  readonly url: string
  readonly method: "PUT"
  readonly headers: { readonly "Content-Type": string }
  readonly fields: { readonly "Content-Type": string; readonly Key: string; readonly "X-Key": string }
}

/** `GET /uploads` (R-UPLOAD-PRESIGN-01..10, 18..21, 27..30, R-FILE-STATUS-03). */
export const handlePresign = (
  ctx: EmulatorContext,
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
  mount: Mount
): void => {
  const uploader = presignUploader(ctx, req, url, mount)
  const filename = url.searchParams.get("filename")
  if (filename === null || filename.trim() === "") {
    throw badRequest("filename is required", [{ path: ["filename"], message: "Required" }])
  }
  const derived = typeOfFilename(filename)
  // PRESIGN_DETAILS, alt: an extension the service does not know is as undeterminable as none.
  if (derived === null || (ctx.variant === "alt" && derived.type === FALLBACK_MIME && !KNOWN_BINARY.has(derived.extension))) {
    throw badRequest(`Cannot determine the extension of "${filename}"`, [
      { path: ["filename"], message: "The name needs an extension" }
    ])
  }
  const size = parseSize(url.searchParams.get("size"))
  if (size !== null && size > maxBytesOf(ctx, uploader)) throw tooLarge(ctx, uploader, size)

  const key = url.searchParams.get("key")
  if (key !== null && !CUSTOM_KEY.test(key)) {
    throw badRequest("key may hold only letters, digits, '.', '_' and '-' (at most 128)", [
      { path: ["key"], message: "Invalid key" }
    ])
  }
  const existing = key === null ? null : getFileByUid(ctx.db, key)
  // Re-presigning one's own PENDING key refreshes it (a retried step 1); any other use is a
  // clash, and in the alt variant (PRESIGN_DETAILS) every reuse is.
  if (existing !== null && (ctx.variant === "alt" || !mayReissue(existing, uploader))) {
    throw new HttpError(400, "KEY_IN_USE", "A file with this key already exists", [{ path: ["key"], message: "In use" }])
  }
  if (size !== null) checkPlanLimits(ctx, uploader.orgId, size, existing?.size ?? 0)

  const expiresAt = ctx.clock.now() + presignTtlMs(ctx)
  const fields = {
    name: filename,
    size: size ?? 0,
    type: derived.type,
    extension: derived.extension,
    declaredSize: size,
    presignExpiresAt: expiresAt
  }
  let row: FileRow
  if (existing !== null) {
    sql(
      ctx.db,
      `UPDATE files SET name = ?, size = ?, type = ?, extension = ?, declared_size = ?, presign_expires_at = ?,
        updated_at = ? WHERE uid = ?`
    ).run(fields.name, fields.size, fields.type, fields.extension, size, expiresAt, ctx.clock.iso(), existing.uid)
    row = getFileByUid(ctx.db, existing.uid) ?? existing
  } else {
    row = insertFile(ctx, {
      ...fields,
      ...(key === null ? {} : { uid: key }),
      status: "PENDING",
      orgId: uploader.orgId,
      workspaceId: uploader.workspaceId,
      userId: uploader.kind === "user" ? uploader.userId : uploader.form.createdBy,
      formId: uploader.kind === "form" ? uploader.form.id : null
    })
  }
  const answer: PresignAnswer = {
    url: presignedPutUrl(ctx, row.storageKey, expiresAt, row.type),
    method: "PUT",
    headers: { "Content-Type": row.type },
    fields: { "Content-Type": row.type, Key: row.storageKey, "X-Key": row.uid }
  }
  sendJson(res, 200, answer, { "x-key": row.uid, "cache-control": "no-store" })
}

const mayReissue = (file: FileRow, uploader: Uploader): boolean =>
  file.status === "PENDING" &&
  file.workspaceId === uploader.workspaceId &&
  (uploader.kind === "user" ? file.userId === uploader.userId && file.formId === null : file.formId === uploader.form.id)

/** `PUT /uploads/{uid}/confirm` (R-UPLOAD-PRESIGN-15..17, 22..26, 31; R-FILE-STATUS-04/05). */
export const handleConfirm = (
  ctx: EmulatorContext,
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
  mount: Mount,
  uid: string
): void => {
  const who = confirmer(ctx, req, url, mount)
  const file = getFileByUid(ctx.db, uid)
  if (file === null) throw new HttpError(404, "FILE_NOT_FOUND", "File not found")
  if (who.kind === "form") {
    if (file.formId !== who.formId) throw new HttpError(404, "FILE_NOT_FOUND", "File not found")
  } else {
    checkConfirmAccess(ctx, who.userId, file.workspaceId, file.orgId)
  }
  // Confirming twice is harmless (CONFIRM_IDEMPOTENT in assumptions.ts); the alt variant
  // reads confirm as the PENDING to CONFIRMED transition only.
  if (file.status === "CONFIRMED") {
    if (ctx.variant === "alt") throw new HttpError(400, "ALREADY_CONFIRMED", "The file is already confirmed")
    return sendJson(res, 200, { message: "File already confirmed", status: "CONFIRMED" })
  }
  const stat = ctx.objects.stat(file.storageKey)
  if (stat === null) throw new HttpError(404, "OBJECT_NOT_FOUND", "No uploaded object for this file")
  if (file.declaredSize !== null && stat.size !== file.declaredSize) {
    throw new HttpError(
      400,
      "SIZE_MISMATCH",
      `The stored object is ${stat.size} bytes but ${file.declaredSize} bytes were declared`
    )
  }
  const limit = file.formId === null ? readingOf(ctx).presignMaxFileBytes : readingOf(ctx).formMaxFileBytes
  if (stat.size > limit) throw new HttpError(400, "FILE_TOO_LARGE", `The stored object is over ${limit} bytes`)
  confirmFile(ctx, file.uid, stat.size)
  sendJson(res, 200, { message: "File confirmed", status: "CONFIRMED" })
}
