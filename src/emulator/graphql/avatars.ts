/**
 * `GET /avatars/{userId}/{n}x{n}.png`: the images behind `User.image` (placeholders, so
 * the URLs the GraphQL interface hands out resolve).
 */
import type { RawRoute } from "../context.ts"
import { sendJson } from "../http.ts"
import { placeholderPng } from "../uploads/png.ts"
import { one } from "./sql.ts"

const SIZES = new Set([50, 100, 200, 500])
const PATH = /^\/avatars\/([0-9a-f]{24})\/(\d+)x(\d+)\.png$/

export const avatarRoute: RawRoute = (ctx, req, res, url, mount) => {
  if (mount !== "base" || !url.pathname.startsWith("/avatars/")) return false
  const m = PATH.exec(url.pathname)
  const size = Number(m?.[2])
  const known = m !== null && m[2] === m[3] && SIZES.has(size) && one(ctx.db, "SELECT 1 FROM users WHERE id = ?", m[1]) !== undefined
  if (!known || (req.method !== "GET" && req.method !== "HEAD")) {
    sendJson(res, 404, { error: { code: "NOT_FOUND", message: "Avatar not found" } })
    return true
  }
  const png = placeholderPng(size, `avatar:${m[1]}`)
  res.writeHead(200, { "content-type": "image/png", "content-length": png.length, "cache-control": "public, max-age=3600" })
  res.end(req.method === "HEAD" ? undefined : png)
  return true
}
