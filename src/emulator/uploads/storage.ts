/**
 * The storage origin: presigned PUT targets and signed download URLs (`/o/<key>`).
 * It knows no service credentials and records the name of every credential-looking
 * header it receives, so tests can prove clients send none (R-UPLOAD-PRESIGN-13).
 */
import type { IncomingMessage, ServerResponse } from "node:http"
import { pipeline } from "node:stream/promises"
import type { EmulatorContext, RawRoute } from "../context.ts"
import { applyFileDeletes } from "./delete-faults.ts"
import { recordStorageCredential } from "./files.ts"
import { contentDisposition, type Disposition, verifyGet, verifyPut } from "./signing.ts"
import { run } from "../core/sql.ts"

/** Keys with a PUT in flight, per emulator; reconciliation leaves their rows alone. */
const inFlight = new WeakMap<object, Set<string>>()

export const uploadsInFlight = (ctx: Pick<EmulatorContext, "db">): ReadonlySet<string> =>
  inFlight.get(ctx.db) ?? new Set()

const inFlightOf = (ctx: Pick<EmulatorContext, "db">): Set<string> => {
  let set = inFlight.get(ctx.db)
  if (set === undefined) {
    set = new Set()
    inFlight.set(ctx.db, set)
  }
  return set
}

/** Is this header a credential a client should never send to storage? */
export const isCredentialHeader = (name: string, prefix: string): boolean => {
  const n = name.toLowerCase()
  return (
    n === "authorization" ||
    n === "proxy-authorization" ||
    n === "cookie" ||
    n.includes("token") ||
    n.includes("secret") ||
    n.startsWith(`${prefix.toLowerCase()}-`) ||
    n.startsWith(`x-${prefix.toLowerCase()}-`)
  )
}

const logCredentials = (ctx: EmulatorContext, req: IncomingMessage, url: URL): void => {
  for (const name of Object.keys(req.headers)) {
    if (isCredentialHeader(name, ctx.prefix)) {
      recordStorageCredential(ctx, { method: req.method ?? "", path: url.pathname, header: name.toLowerCase() })
    }
  }
}

/** Storage answers are S3-like: a short text body, never JSON error envelopes of the service. */
const deny = (res: ServerResponse, status: number, message: string): void => {
  res.writeHead(status, { "content-type": "text/plain; charset=utf-8", "content-length": Buffer.byteLength(message) })
  res.end(message)
}

const keyOf = (url: URL): string | null => {
  const m = /^\/o\/([^/]+)$/.exec(url.pathname)
  if (m === null || m[1] === undefined) return null
  try {
    return decodeURIComponent(m[1])
  } catch {
    return null
  }
}

const putObject = async (ctx: EmulatorContext, req: IncomingMessage, res: ServerResponse, url: URL, key: string) => {
  const exp = Number(url.searchParams.get("exp"))
  const ct = url.searchParams.get("ct") ?? ""
  const sig = url.searchParams.get("sig") ?? ""
  if (!Number.isFinite(exp) || !verifyPut(ctx, key, exp, ct, sig)) return deny(res, 403, "SignatureDoesNotMatch")
  if (ctx.clock.now() > exp) return deny(res, 403, "Request has expired")
  // The signature is bound to the Content-Type (R-UPLOAD-PRESIGN-12).
  if ((req.headers["content-type"] ?? "") !== ct) return deny(res, 403, "Content-Type does not match the signed value")
  const set = inFlightOf(ctx)
  // Single use (R-UPLOAD-PRESIGN-07): claim the signature before taking the bytes.
  const claimed = run(ctx.db, "INSERT OR IGNORE INTO presign_uses (sig, used_at) VALUES (?, ?)", sig, ctx.clock.now())
  if (claimed.changes === 0) return deny(res, 403, "This upload URL has already been used")
  set.add(key)
  let stored: { size: number; sha256: string }
  try {
    stored = await ctx.objects.put(key, req)
  } catch {
    // Nothing landed: release the claim so the same URL can be retried while valid; the
    // alt variant keeps it spent (PRESIGN_SINGLE_USE).
    if (ctx.variant !== "alt") run(ctx.db, "DELETE FROM presign_uses WHERE sig = ?", sig)
    if (!res.headersSent && !res.destroyed) deny(res, 400, "Upload interrupted")
    return
  } finally {
    set.delete(key)
  }
  res.writeHead(200, { "content-length": 0, etag: `"${stored.sha256}"` })
  res.end()
}

/** One `bytes=a-b` range (inclusive), or null for none or an unsupported form. */
const rangeOf = (header: string | undefined, size: number): { start: number; end: number } | "invalid" | null => {
  if (header === undefined) return null
  const m = /^bytes=(\d*)-(\d*)$/.exec(header.trim())
  if (m === null) return null
  const [, a = "", b = ""] = m
  if (a === "" && b === "") return "invalid"
  let start: number
  let end: number
  if (a === "") {
    start = Math.max(0, size - Number(b))
    end = size - 1
  } else {
    start = Number(a)
    end = b === "" ? size - 1 : Math.min(Number(b), size - 1)
  }
  return start > end || start >= size ? "invalid" : { start, end }
}

const getObject = async (ctx: EmulatorContext, req: IncomingMessage, res: ServerResponse, url: URL, key: string) => {
  const exp = Number(url.searchParams.get("exp"))
  const disposition = url.searchParams.get("disposition") ?? ""
  const name = url.searchParams.get("name") ?? ""
  const ct = url.searchParams.get("ct") ?? ""
  const sig = url.searchParams.get("sig") ?? ""
  if (!Number.isFinite(exp) || !verifyGet(ctx, key, exp, disposition, name, ct, sig)) {
    return deny(res, 403, "SignatureDoesNotMatch")
  }
  if (ctx.clock.now() > exp) return deny(res, 403, "Request has expired")
  applyFileDeletes(ctx, "storage", key)
  const stat = ctx.objects.stat(key)
  if (stat === null) return deny(res, 404, "NoSuchKey")
  const headers: Record<string, string | number> = {
    "content-type": ct === "" ? "application/octet-stream" : ct,
    "content-disposition": contentDisposition(disposition === "inline" ? "inline" : ("attachment" as Disposition), name),
    "accept-ranges": "bytes",
    "cache-control": "private, max-age=0"
  }
  const range = rangeOf(req.headers.range, stat.size)
  if (range === "invalid") {
    res.writeHead(416, { "content-range": `bytes */${stat.size}`, "content-length": 0 })
    return res.end()
  }
  if (req.method === "HEAD") {
    res.writeHead(200, { ...headers, "content-length": stat.size })
    return res.end()
  }
  if (range === null) {
    res.writeHead(200, { ...headers, "content-length": stat.size })
    if (stat.size === 0) return res.end()
    await pipeline(ctx.objects.read(key), res).catch(() => res.destroy())
    return
  }
  res.writeHead(206, {
    ...headers,
    "content-length": range.end - range.start + 1,
    "content-range": `bytes ${range.start}-${range.end}/${stat.size}`
  })
  await pipeline(ctx.objects.read(key, range), res).catch(() => res.destroy())
}

/**
 * The storage origin's route: `/o/<key>` for PUT (presigned) and GET/HEAD (signed).
 * Credential headers are logged on every path, before anything else.
 */
export const storageRoute: RawRoute = async (ctx, req, res, url) => {
  logCredentials(ctx, req, url)
  const key = keyOf(url)
  // Not an object path: leave it to the next route (or the server's 404).
  if (key === null) return false
  switch (req.method) {
    case "PUT":
      await putObject(ctx, req, res, url, key)
      return true
    case "GET":
    case "HEAD":
      await getObject(ctx, req, res, url, key)
      return true
    default:
      deny(res, 405, "MethodNotAllowed")
      return true
  }
}
