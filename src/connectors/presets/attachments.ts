/**
 * The bytes of an attachment named in another tool's export: from its URL when that needs
 * no credentials and its host is allowed, else from `--attachments DIR` by its file name.
 *
 * - Only hosts the policy allows are asked (attachment-hosts.ts, `--attachment-hosts`):
 *   the name is resolved here, the addresses judged, and the connection made to those
 *   addresses only (a DNS answer that changes between the check and the connection
 *   cannot lead elsewhere). Redirects are followed by hand, each hop judged again; at
 *   most MAX_REDIRECTS, never from https down to http.
 * - The request carries no credential of any kind (no Authorization, no cookie, not the
 *   URL's own user:password): the service's token is never sent to another tool's
 *   storage, and a URL that needs a login is reported as such, never guessed around.
 * - 401/403, or a web page where a file was expected (a login page behind a redirect),
 *   is "needs credentials"; 404/410 "not found at its URL"; anything else unexpected is
 *   named by its status.
 * - Headers within 30 s, at most 30 s idle; the body is read as it comes and the download
 *   stops as soon as it passes the policy's size limit (or its Content-Length says it
 *   will): a larger file is never read whole.
 * - A name from the export is looked up as a direct child of DIR only (`resolveInside`):
 *   `../x` or `a/b` never leaves it.
 *
 * The policy is the import's (AttachmentFetchPolicy, provided around its replay); without
 * one no URL is fetched. What was refused for its host alone is said apart from the
 * reason (`hostRefusals`), so a later run that allows the host can fetch it.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as dns from "node:dns"
import * as fs from "node:fs"
import * as http from "node:http"
import * as https from "node:https"
import * as net from "node:net"
import * as path from "node:path"
import { resolveInside } from "../files/safe-name.ts"
import type { FileSource } from "../../sync/plan-extras.ts"
import {
  admitAddresses,
  admitUrl,
  type AttachmentPolicy,
  type HostRefusal,
  hostPortOf,
  NO_ATTACHMENT_HOSTS,
  type Refused
} from "./attachment-hosts.ts"

const HEADERS_TIMEOUT_MS = 30_000
const IDLE_TIMEOUT_MS = 30_000
const MAX_REDIRECTS = 5

/** The hosts and the size limit attachment fetches of this run obey. */
export const AttachmentFetchPolicy = Context.Reference<AttachmentPolicy>("worksync/AttachmentFetchPolicy", {
  defaultValue: () => NO_ATTACHMENT_HOSTS
})

/** `hostRefusals`: the URLs refused for their host alone (a run allowing it may fetch them). */
export type Fetched =
  | { readonly _tag: "Fetched"; readonly bytes: Uint8Array }
  | { readonly _tag: "NotFetched"; readonly reason: string; readonly hostRefusals?: ReadonlyArray<HostRefusal> }

const notFetched = (reason: string): Fetched => ({ _tag: "NotFetched", reason })

const refused = (r: Refused, via: (reason: string) => string): Fetched => ({
  _tag: "NotFetched",
  reason: via(r.reason),
  ...(r.hostRefusal !== undefined ? { hostRefusals: [r.hostRefusal] } : {})
})

const tooLarge = (maxBytes: number) => notFetched(`larger than ${maxBytes / 1_000_000} MB (--attachment-max-mb raises the limit)`)

const messageOf = (e: unknown) => (e instanceof Error ? (e.cause instanceof Error ? e.cause.message : e.message) : String(e))

interface Resolved {
  readonly address: string
  readonly family: number
}

/** The addresses of a URL's host: the literal itself, or every address its name resolves to. */
const resolve = async (url: URL): Promise<ReadonlyArray<Resolved>> => {
  const host = url.hostname.replace(/^\[(.*)\]$/, "$1")
  const family = net.isIP(host)
  if (family !== 0) return [{ address: host, family }]
  return dns.promises.lookup(host, { all: true, order: "verbatim" })
}

/** A lookup that answers only the addresses already checked, whatever the name. */
const pinnedLookup = (addresses: ReadonlyArray<Resolved>): net.LookupFunction => (_host, options, callback) => {
  const usable = options.family === 4 || options.family === 6 ? addresses.filter((a) => a.family === options.family) : addresses
  if (usable.length === 0) {
    callback(Object.assign(new Error("no checked address of that family"), { code: "ENOTFOUND" }), "", 0)
  } else if (options.all === true) {
    ;(callback as unknown as (e: null, all: ReadonlyArray<Resolved>) => void)(null, usable)
  } else {
    callback(null, usable[0]!.address, usable[0]!.family)
  }
}

/** One GET, connected to the checked addresses only; resolves with the response head. */
const get = (url: URL, addresses: ReadonlyArray<Resolved>): Promise<{ res: http.IncomingMessage; req: http.ClientRequest }> =>
  new Promise((done, fail) => {
    const req = (url.protocol === "https:" ? https : http).request({
      protocol: url.protocol,
      hostname: url.hostname.replace(/^\[(.*)\]$/, "$1"),
      port: url.port === "" ? undefined : Number(url.port),
      path: `${url.pathname}${url.search}`,
      method: "GET",
      // Nothing else: no credential, no cookie, no compression to unpack.
      headers: { accept: "*/*", "user-agent": "worksync" },
      lookup: pinnedLookup(addresses),
      // A connection of its own: a kept-alive one could have been opened for another check.
      agent: false,
      timeout: IDLE_TIMEOUT_MS
    })
    const headers = setTimeout(() => req.destroy(new Error(`no answer within ${HEADERS_TIMEOUT_MS / 1000} s`)), HEADERS_TIMEOUT_MS)
    req.on("timeout", () => req.destroy(new Error(`idle for ${IDLE_TIMEOUT_MS / 1000} s`)))
    req.on("response", (res) => {
      clearTimeout(headers)
      done({ res, req })
    })
    req.on("error", (e) => {
      clearTimeout(headers)
      fail(e)
    })
    req.end()
  })

/** The body, read as it comes and given up as soon as it passes `maxBytes`. */
const readBody = async (res: http.IncomingMessage, req: http.ClientRequest, maxBytes: number): Promise<Fetched> => {
  const declared = Number(res.headers["content-length"])
  if (Number.isFinite(declared) && declared > maxBytes) {
    req.destroy()
    return tooLarge(maxBytes)
  }
  const chunks: Array<Buffer> = []
  let size = 0
  try {
    for await (const chunk of res as AsyncIterable<Buffer>) {
      size += chunk.byteLength
      if (size > maxBytes) {
        req.destroy()
        return tooLarge(maxBytes)
      }
      chunks.push(chunk)
    }
  } catch (e) {
    return notFetched(`the download stopped (${messageOf(e)})`)
  }
  return { _tag: "Fetched", bytes: Buffer.concat(chunks, size) }
}

const isRedirect = (status: number) => status === 301 || status === 302 || status === 303 || status === 307 || status === 308

const fromUrl = async (start: string, name: string, policy: AttachmentPolicy): Promise<Fetched> => {
  let url: URL
  try {
    url = new URL(start)
  } catch {
    return notFetched("not a URL")
  }
  for (let hop = 0;; hop++) {
    // Past a redirect, the reason says so (hop reasons name host and port only: a path may hold a signature).
    const via = (reason: string) => (hop === 0 ? reason : `after a redirect, ${reason}`)
    const admitted = admitUrl(policy, url)
    if ("reason" in admitted) return refused(admitted, via)
    let addresses: ReadonlyArray<Resolved>
    try {
      addresses = await resolve(url)
    } catch (e) {
      return notFetched(via(`not reachable (${messageOf(e)})`))
    }
    const refusal = admitAddresses(url, admitted.allowed, addresses.map((a) => a.address))
    if (refusal !== undefined) return refused(refusal, via)
    let answer: { res: http.IncomingMessage; req: http.ClientRequest }
    try {
      answer = await get(url, addresses)
    } catch (e) {
      return notFetched(via(`not reachable (${messageOf(e)})`))
    }
    const { req, res } = answer
    const status = res.statusCode ?? 0
    if (isRedirect(status)) {
      req.destroy()
      const location = res.headers.location
      if (location === undefined) return notFetched(via(`HTTP ${status} without a Location`))
      if (hop >= MAX_REDIRECTS) return notFetched(`more than ${MAX_REDIRECTS} redirects`)
      let next: URL
      try {
        next = new URL(location, url)
      } catch {
        return notFetched(via(`HTTP ${status} to a Location that is not a URL`))
      }
      if (url.protocol === "https:" && next.protocol === "http:") return notFetched(via(`redirected from https to http (${hostPortOf(next)})`))
      url = next
      continue
    }
    if (status < 200 || status > 299) req.destroy()
    if (status === 401 || status === 403) return notFetched(via(`needs credentials (HTTP ${status})`))
    if (status === 404 || status === 410) return notFetched(via(`not found at its URL (HTTP ${status})`))
    if (status < 200 || status > 299) return notFetched(via(`HTTP ${status} from its URL`))
    const type = res.headers["content-type"] ?? ""
    if (/^text\/html\b/i.test(type) && !/\.html?$/i.test(name)) {
      req.destroy()
      return notFetched(via("needs credentials (the URL answered a web page)"))
    }
    return readBody(res, req, policy.maxBytes)
  }
}

const fromDir = (dir: string, name: string, maxBytes: number): Fetched => {
  const file = resolveInside(dir, name)
  if (file === null) return notFetched(`${JSON.stringify(name)} is not a plain file name`)
  try {
    const stat = fs.statSync(file)
    if (!stat.isFile()) return notFetched(`not a file in ${dir}`)
    if (stat.size > maxBytes) return tooLarge(maxBytes)
    return { _tag: "Fetched", bytes: fs.readFileSync(file) }
  } catch {
    return notFetched(`not found in ${path.resolve(dir)}`)
  }
}

/**
 * The bytes from the first source that has them, or every source's reason in one line.
 * `dir` undefined: `dirName` sources say so. URLs are fetched as AttachmentFetchPolicy allows.
 */
export const fetchAttachment = (
  name: string,
  sources: ReadonlyArray<FileSource>,
  dir: string | undefined
): Effect.Effect<Fetched> =>
  AttachmentFetchPolicy.use((policy) =>
    Effect.promise(async () => {
      const reasons: Array<string> = []
      const hostRefusals: Array<HostRefusal> = []
      for (const source of sources) {
        const got = "url" in source
          ? await fromUrl(source.url, name, policy)
          : dir === undefined
          ? notFetched("no --attachments directory given")
          : fromDir(dir, source.dirName, policy.maxBytes)
        if (got._tag === "Fetched") return got
        reasons.push(got.reason)
        hostRefusals.push(...(got.hostRefusals ?? []))
      }
      return {
        _tag: "NotFetched",
        reason: reasons.length === 0 ? "no source" : reasons.join("; "),
        ...(hostRefusals.length > 0 ? { hostRefusals } : {})
      }
    }))
