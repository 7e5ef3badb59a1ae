/**
 * The uploads area: file tables, the presigned flow on both mounts (`/uploads` and
 * `/rest/uploads`), storage (a separate origin), serving, `list-files`, background
 * reconciliation and the seeded files.
 */
import type { EmulatorArea, RawRoute } from "../context.ts"
import { HttpError } from "../http.ts"
import { uploadsDdl } from "./files.ts"
import { listFilesOperation } from "./list-files.ts"
import { handleConfirm, handlePresign } from "./presign.ts"
import { startReconciliation } from "./reconcile.ts"
import { seedUploads } from "./seed.ts"
import { serveFile } from "./serve.ts"
import { storageRoute } from "./storage.ts"

const decodeSegment = (segment: string): string => {
  try {
    return decodeURIComponent(segment)
  } catch {
    throw new HttpError(404, "FILE_NOT_FOUND", "File not found")
  }
}

/** `/uploads`, `/uploads/{uid}/confirm` (both mounts) and the serving paths (app mount). */
const uploadsRoute: RawRoute = (ctx, req, res, url, mount) => {
  const path = url.pathname
  if (path !== "/uploads" && !path.startsWith("/uploads/")) return false
  const method = req.method ?? "GET"
  const segments = path.split("/").slice(2)
  if (path === "/uploads" || path === "/uploads/") {
    if (method !== "GET") throw new HttpError(405, "METHOD_NOT_ALLOWED", "Use GET to presign an upload")
    handlePresign(ctx, req, res, url, mount)
    return true
  }
  if (segments.length === 2 && segments[1] === "confirm" && method === "PUT") {
    handleConfirm(ctx, req, res, url, mount, decodeSegment(segments[0] ?? ""))
    return true
  }
  if (mount === "base" && (method === "GET" || method === "HEAD")) {
    serveFile(ctx, res, url, segments, method === "HEAD")
    return true
  }
  return false
}

export const uploadsArea: EmulatorArea = {
  name: "uploads",
  ddl: uploadsDdl,
  operations: [listFilesOperation],
  routes: [uploadsRoute],
  storageRoutes: [storageRoute],
  seed: seedUploads,
  start: startReconciliation
}
