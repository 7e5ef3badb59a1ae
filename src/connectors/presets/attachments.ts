/**
 * The bytes of an attachment named in another tool's export: from its URL when that needs
 * no credentials, else from `--attachments DIR` by its file name.
 *
 * - The request carries no credential of any kind (no Authorization, no cookie): the
 *   service's token is never sent to another tool's storage, and a URL that needs a login
 *   is reported as such, never guessed around.
 * - 401/403, or a web page where a file was expected (a login page behind a redirect),
 *   is "needs credentials"; 404/410 "not found at its URL"; anything else unexpected is
 *   named by its status.
 * - Headers within 30 s, the body at most 30 s idle, at most 100 MB (MAX_ATTACHMENT_BYTES).
 * - A name from the export is looked up as a direct child of DIR only (`resolveInside`):
 *   `../x` or `a/b` never leaves it.
 */
import * as Effect from "effect/Effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { resolveInside } from "../files/safe-name.ts"
import type { FileSource } from "../../sync/plan-extras.ts"

export const MAX_ATTACHMENT_BYTES = 100_000_000
const HEADERS_TIMEOUT_MS = 30_000
const BODY_IDLE_MS = 30_000

export type Fetched =
  | { readonly _tag: "Fetched"; readonly bytes: Uint8Array }
  | { readonly _tag: "NotFetched"; readonly reason: string }

const notFetched = (reason: string): Fetched => ({ _tag: "NotFetched", reason })

const readBody = async (res: Response, controller: AbortController): Promise<Fetched> => {
  const reader = res.body?.getReader()
  if (reader === undefined) return { _tag: "Fetched", bytes: new Uint8Array() }
  const chunks: Array<Uint8Array> = []
  let size = 0
  for (;;) {
    const idle = setTimeout(() => controller.abort(), BODY_IDLE_MS)
    const { done, value } = await reader.read().finally(() => clearTimeout(idle))
    if (done) break
    size += value.byteLength
    if (size > MAX_ATTACHMENT_BYTES) {
      controller.abort()
      return notFetched(`larger than ${MAX_ATTACHMENT_BYTES / 1_000_000} MB`)
    }
    chunks.push(value)
  }
  return { _tag: "Fetched", bytes: Buffer.concat(chunks) }
}

const fromUrl = async (url: string, name: string): Promise<Fetched> => {
  const controller = new AbortController()
  const headersTimer = setTimeout(() => controller.abort(), HEADERS_TIMEOUT_MS)
  let res: Response
  try {
    res = await fetch(url, { redirect: "follow", credentials: "omit", signal: controller.signal })
  } catch (e) {
    return notFetched(`not reachable (${e instanceof Error ? (e.cause instanceof Error ? e.cause.message : e.message) : String(e)})`)
  } finally {
    clearTimeout(headersTimer)
  }
  if (res.status === 401 || res.status === 403) return notFetched(`needs credentials (HTTP ${res.status})`)
  if (res.status === 404 || res.status === 410) return notFetched(`not found at its URL (HTTP ${res.status})`)
  if (!res.ok) return notFetched(`HTTP ${res.status} from its URL`)
  const type = res.headers.get("content-type") ?? ""
  if (/^text\/html\b/i.test(type) && !/\.html?$/i.test(name)) return notFetched("needs credentials (the URL answered a web page)")
  try {
    return await readBody(res, controller)
  } catch (e) {
    return notFetched(`the download stopped (${e instanceof Error ? e.message : String(e)})`)
  }
}

const fromDir = (dir: string, name: string): Fetched => {
  const file = resolveInside(dir, name)
  if (file === null) return notFetched(`${JSON.stringify(name)} is not a plain file name`)
  try {
    const stat = fs.statSync(file)
    if (!stat.isFile()) return notFetched(`not a file in ${dir}`)
    if (stat.size > MAX_ATTACHMENT_BYTES) return notFetched(`larger than ${MAX_ATTACHMENT_BYTES / 1_000_000} MB`)
    return { _tag: "Fetched", bytes: fs.readFileSync(file) }
  } catch {
    return notFetched(`not found in ${path.resolve(dir)}`)
  }
}

/**
 * The bytes from the first source that has them, or every source's reason in one line.
 * `dir` undefined: `dirName` sources say so.
 */
export const fetchAttachment = (
  name: string,
  sources: ReadonlyArray<FileSource>,
  dir: string | undefined
): Effect.Effect<Fetched> =>
  Effect.promise(async () => {
    const reasons: Array<string> = []
    for (const source of sources) {
      const got = "url" in source
        ? await fromUrl(source.url, name)
        : dir === undefined
        ? notFetched("no --attachments directory given")
        : fromDir(dir, source.dirName)
      if (got._tag === "Fetched") return got
      reasons.push(got.reason)
    }
    return notFetched(reasons.length === 0 ? "no source" : reasons.join("; "))
  })
