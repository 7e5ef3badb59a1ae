/**
 * Serving stored files (R-FILE-SERVE-01..07, R-FILE-STATUS-07):
 * `GET /uploads/{uid}/{url-encoded filename}` redirects to a short-lived signed storage
 * URL, no authentication needed; `/50x50/` and `/500x500/` answer image placeholders.
 * A filename that is not the file's name is a 404 (SERVE_NAME_MUST_MATCH).
 */
import type { ServerResponse } from "node:http"
import type { EmulatorContext } from "../context.ts"
import { readingOf } from "../readings.ts"
import { sendJson } from "../http.ts"
import { applyFileDeletes } from "./delete-faults.ts"
import { getFileByUid } from "./files.ts"
import { isImageMime } from "./mime.ts"
import { placeholderPng } from "./png.ts"
import { type Disposition, signedGetUrl } from "./signing.ts"

/** Download URLs live DOWNLOAD_URL_TTL_SECONDS scaled, but never under a second (a redirect must be followable). */
export const downloadTtlMs = (ctx: Pick<EmulatorContext, "timeScale" | "variant">): number =>
  Math.max(1000, readingOf(ctx).downloadUrlTtlSeconds * 1000 * ctx.timeScale)

export const THUMBNAIL_SIZES: Readonly<Record<string, number>> = { "50x50": 50, "500x500": 500 }

const notFound = (res: ServerResponse, message = "File not found"): void =>
  sendJson(res, 404, { error: { code: "NOT_FOUND", message } })

const decode = (segment: string): string | null => {
  try {
    return decodeURIComponent(segment)
  } catch {
    return null
  }
}

/**
 * Serves `segments` (the encoded path segments after `/uploads/`): `[uid]`,
 * `[uid, name]` or `[uid, size, name]`.
 */
export const serveFile = (
  ctx: EmulatorContext,
  res: ServerResponse,
  url: URL,
  segments: ReadonlyArray<string>,
  head: boolean
): void => {
  const [rawUid, second, third] = segments
  // Both uid and filename are required (R-FILE-SERVE-06).
  if (rawUid === undefined || second === undefined || second === "" || segments.length > 3) return notFound(res)
  const uid = decode(rawUid)
  if (uid !== null) applyFileDeletes(ctx, "serve", uid)
  const file = uid === null ? null : getFileByUid(ctx.db, uid)
  // Only CONFIRMED files are served (R-FILE-STATUS-07).
  if (file === null || file.status !== "CONFIRMED") return notFound(res)
  // SERVE_NAME_MUST_MATCH: the alt variant serves the uid whatever name segment follows.
  const nameMatches = (segment: string): boolean => ctx.variant === "alt" || decode(segment) === file.name

  if (segments.length === 3) {
    const size = THUMBNAIL_SIZES[second]
    if (size === undefined || third === undefined || third === "" || !nameMatches(third)) return notFound(res)
    if (!isImageMime(file.type)) return notFound(res, "Thumbnails exist for images only")
    const png = placeholderPng(size, `${file.uid}:${size}`)
    res.writeHead(200, {
      "content-type": "image/png",
      "content-length": png.length,
      "cache-control": "private, max-age=300"
    })
    res.end(head ? undefined : png)
    return
  }

  if (!nameMatches(second)) return notFound(res)
  const disposition: Disposition = url.searchParams.get("content-disposition") === "inline" ? "inline" : "attachment"
  const location = signedGetUrl(
    ctx,
    file.storageKey,
    ctx.clock.now() + downloadTtlMs(ctx),
    disposition,
    file.name,
    file.type
  )
  res.writeHead(302, { location, "cache-control": "no-store", "content-length": 0 })
  res.end()
}
