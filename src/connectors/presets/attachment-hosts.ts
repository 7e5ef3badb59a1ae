/**
 * Which hosts an attachment URL of another tool's export may be fetched from
 * (`--attachment-hosts HOST[:PORT][,...]`).
 *
 * An export is written by whoever could put a link into the source tool; fetching any URL
 * it names would let that person make the importing machine read its own network (a cloud
 * metadata service, an admin page on localhost) into the target workspace. So:
 *
 * - a URL is fetched only from an allowed host: by default the exporting tool's own
 *   (TOOL_ATTACHMENT_HOSTS), else exactly the hosts the user names;
 * - HOST is a name, `*.` and a domain (any name under it, not the domain itself), or an IP
 *   address (IPv6 in brackets when a port follows); without PORT only the scheme's default
 *   port (80 for http, 443 for https) is allowed, as in a Content-Security-Policy source;
 * - the name is resolved before anything is sent, and a loopback, private, link-local or
 *   other non-public address (address-kind.ts) is allowed only for a host the user named;
 *   a default host never leads there;
 * - every redirect is judged again the same way (attachments.ts);
 * - a URL refused for its host alone says so (`HostRefusal`): a later run of the same
 *   import whose policy allows that host fetches it then (csv/attachment-retries.ts).
 */
import * as net from "node:net"
import * as Result from "effect/Result"
import { nonPublicKind } from "./address-kind.ts"
import type { ToolPresetName } from "./index.ts"

/**
 * Each tool's own attachment hosts, the default of `--attachment-hosts`: where the URLs of
 * its export point and where those redirect to.
 * - Jira Cloud: sites are `*.atlassian.net` (older ones `*.jira.com`); an attachment URL
 *   `https://SITE/secure/attachment/ID/NAME` redirects to the media service
 *   `api.media.atlassian.com`; `api.atlassian.com` serves the same content by cloud id.
 * - Asana: `app.asana.com` links; the bytes are on `asanausercontent.com`, older signed
 *   download URLs on the `asana-user-private-us-east-1` S3 bucket.
 * - Trello: `trello.com/1/cards/.../attachments/.../download/NAME` (and `api.trello.com`);
 *   older exports link the `trello-attachments` S3 bucket directly.
 * - ClickUp: `tTEAM.p.clickup-attachments.com`, older ones `attachments.clickup.com`.
 * An on-premises server (Jira Data Center, ...) is none of these: name its host.
 */
export const TOOL_ATTACHMENT_HOSTS: Readonly<Record<ToolPresetName, ReadonlyArray<string>>> = {
  jira: ["*.atlassian.net", "*.jira.com", "api.media.atlassian.com", "api.atlassian.com"],
  asana: ["app.asana.com", "asanausercontent.com", "*.asanausercontent.com", "asana-user-private-us-east-1.s3.amazonaws.com"],
  trello: ["trello.com", "api.trello.com", "trello-attachments.s3.amazonaws.com"],
  clickup: ["*.clickup-attachments.com", "attachments.clickup.com"]
}

/**
 * The largest attachment fetched by default. Each is held in memory until it is uploaded,
 * and a run fetches up to its concurrency (8 by default) at once: 25 MB keeps that under
 * 200 MB. `--attachment-max-mb` raises it.
 */
export const DEFAULT_ATTACHMENT_MAX_BYTES = 25_000_000

/**
 * The largest limit that can be set: an attachment is uploaded with `uploadFile`, which
 * takes at most 256 MB a file (R-LIMIT-01), counted here in the smaller of the two
 * readings of a megabyte.
 */
export const ATTACHMENT_MAX_BYTES_CEILING = 256_000_000

export interface AllowedHost {
  /** Lower case, no trailing dot: a name, `*.domain`, or an IP address (IPv6 without brackets). */
  readonly host: string
  /** Undefined: the default port of the URL's scheme only. */
  readonly port: number | undefined
  /** Named by the user: the host may resolve to a loopback, private or link-local address. */
  readonly named: boolean
}

export interface AttachmentPolicy {
  readonly hosts: ReadonlyArray<AllowedHost>
  /** Bodies larger than this are not fetched (and never read past it). */
  readonly maxBytes: number
}

/** Allows nothing: what a fetch gets when nobody said which hosts are allowed. */
export const NO_ATTACHMENT_HOSTS: AttachmentPolicy = { hosts: [], maxBytes: DEFAULT_ATTACHMENT_MAX_BYTES }

/** A URL's host as the WHATWG parser writes it (`127.1` is `127.0.0.1`), lower case, no brackets or trailing dot. */
const canonicalHost = (host: string): string | undefined => {
  try {
    const parsed = new URL(`http://${net.isIPv6(host) ? `[${host}]` : host}/`).hostname
    return parsed.replace(/^\[(.*)\]$/, "$1").replace(/\.$/, "")
  } catch {
    return undefined
  }
}

const LABELS = /^(?=.{1,253}$)([a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?)(\.[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?)*$/

/** One `HOST[:PORT]`, or why it is not one. */
const parseEntry = (entry: string, named: boolean): AllowedHost | string => {
  const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(entry)
  const [rawHost, rawPort] = bracketed !== null
    ? [bracketed[1]!, bracketed[2]]
    : net.isIPv6(entry)
    ? [entry, undefined]
    : ((m) => (m === null ? [entry, undefined] : [m[1]!, m[2]]))(/^([^:]*):(\d+)$/.exec(entry))
  if (bracketed !== null && !net.isIPv6(rawHost)) return "only an IPv6 address goes in brackets"
  let port: number | undefined
  if (rawPort !== undefined) {
    port = Number(rawPort)
    if (!Number.isInteger(port) || port < 1 || port > 65535) return `port ${rawPort} is not 1-65535`
  }
  const wildcard = rawHost.startsWith("*.")
  const name = wildcard ? rawHost.slice(2) : rawHost
  // Only a host: no scheme, path, user or port separator left for the URL parser to take apart.
  if (!net.isIPv6(name) && !/^[^\s/\\:@?#%[\]*]+$/u.test(name)) return "not a host name, *.domain or IP address"
  const host = canonicalHost(name)
  if (host === undefined || host === "" || (net.isIP(host) === 0 && !LABELS.test(host)) || (wildcard && net.isIP(host) !== 0)) {
    return "not a host name, *.domain or IP address"
  }
  return { host: wildcard ? `*.${host}` : host, port, named }
}

/**
 * Parses `--attachment-hosts`: entries `HOST[:PORT]` separated by commas (each string of
 * `values` may hold several). Every entry is one the user named.
 */
export const parseAttachmentHosts = (values: ReadonlyArray<string>): Result.Result<ReadonlyArray<AllowedHost>, string> => {
  const text = values.join(",")
  const out: Array<AllowedHost> = []
  for (const raw of text.split(",")) {
    const entry = raw.trim()
    const parsed = entry === "" ? "an empty entry" : parseEntry(entry, true)
    if (typeof parsed === "string") {
      const where = entry === "" || entry === text.trim() ? "" : `${JSON.stringify(entry)}: `
      return Result.fail(
        `--attachment-hosts ${text.trim() === "" ? JSON.stringify(text) : text}: ${where}${parsed}; give HOST[:PORT][,...], e.g. jira.example.com:8443,*.atlassian.net`
      )
    }
    out.push(parsed)
  }
  return Result.succeed(out)
}

/** A tool's default hosts (none of them named: they never lead to a non-public address). */
export const toolAttachmentHosts = (tool: ToolPresetName): ReadonlyArray<AllowedHost> =>
  TOOL_ATTACHMENT_HOSTS[tool].map((entry) => {
    const parsed = parseEntry(entry, false)
    if (typeof parsed === "string") throw new Error(`TOOL_ATTACHMENT_HOSTS.${tool}: ${entry}: ${parsed}`)
    return parsed
  })

/**
 * The policy of an import of `tool`'s export: the hosts named (else the tool's own) and
 * the size limit (else DEFAULT_ATTACHMENT_MAX_BYTES), or why a value is wrong.
 */
export const attachmentPolicy = (
  tool: ToolPresetName | undefined,
  options: { readonly hosts?: ReadonlyArray<string> | undefined; readonly maxBytes?: number | undefined }
): Result.Result<AttachmentPolicy, string> => {
  const maxBytes = options.maxBytes ?? DEFAULT_ATTACHMENT_MAX_BYTES
  if (!Number.isSafeInteger(maxBytes) || maxBytes < 1 || maxBytes > ATTACHMENT_MAX_BYTES_CEILING) {
    return Result.fail(`attachment size limit ${maxBytes}: must be a whole number of bytes from 1 to ${ATTACHMENT_MAX_BYTES_CEILING} (the largest file uploadFile takes)`)
  }
  if (options.hosts !== undefined) return Result.map(parseAttachmentHosts(options.hosts), (hosts) => ({ hosts, maxBytes }))
  return Result.succeed({ hosts: tool === undefined ? [] : toolAttachmentHosts(tool), maxBytes })
}

const defaultPort = (url: URL) => (url.protocol === "https:" ? 443 : 80)

/** `host:port` of a URL, as reasons name it (never its path or query, which may hold a signature). */
export const hostPortOf = (url: URL): string => `${url.hostname}:${url.port === "" ? defaultPort(url) : url.port}`

/** The allowed entry a URL's host and port match, if any. */
export const matchHost = (hosts: ReadonlyArray<AllowedHost>, url: URL): AllowedHost | undefined => {
  const host = canonicalHost(url.hostname.replace(/^\[(.*)\]$/, "$1"))
  if (host === undefined) return undefined
  const port = url.port === "" ? defaultPort(url) : Number(url.port)
  return hosts.find((h) =>
    (h.port ?? defaultPort(url)) === port &&
    (h.host.startsWith("*.") ? host.endsWith(h.host.slice(1)) && net.isIP(host) === 0 : h.host === host)
  )
}

/**
 * A URL refused for its host alone, which a run with other `--attachment-hosts` may fetch:
 * the policy must allow `origin` (scheme, host and port; never a path, which may hold a
 * signature), and name it when `named` (a default host that resolved to a non-public address).
 */
export interface HostRefusal {
  readonly origin: string
  readonly named: boolean
}

/** A refusal of a URL, and whether other `--attachment-hosts` could change it. */
export interface Refused {
  readonly reason: string
  readonly hostRefusal?: HostRefusal
}

const refusalOf = (url: URL, named: boolean): HostRefusal => ({ origin: `${url.protocol}//${url.host}`, named })

/** Whether `policy` allows what `refusal` was refused for: a later run may fetch it. */
export const admitsRefused = (policy: AttachmentPolicy, refusal: HostRefusal): boolean => {
  let url: URL
  try {
    url = new URL(refusal.origin)
  } catch {
    return false
  }
  const admitted = admitUrl(policy, url)
  return "allowed" in admitted && (!refusal.named || admitted.allowed.named)
}

/** Whether a URL may be requested before its host is resolved: its scheme and host. */
export const admitUrl = (policy: AttachmentPolicy, url: URL): { readonly allowed: AllowedHost } | Refused => {
  if (url.protocol !== "http:" && url.protocol !== "https:") return { reason: `${url.protocol} URLs are not fetched` }
  const allowed = matchHost(policy.hosts, url)
  return allowed === undefined
    ? { reason: `${hostPortOf(url)} is not an allowed attachment host (name it in --attachment-hosts)`, hostRefusal: refusalOf(url, false) }
    : { allowed }
}

/**
 * Whether the addresses a host resolved to may be connected to: any, for a host the user
 * named; only public ones otherwise (every one of them: the connection may use any).
 */
export const admitAddresses = (url: URL, allowed: AllowedHost, addresses: ReadonlyArray<string>): Refused | undefined => {
  if (addresses.length === 0) return { reason: `${url.hostname} has no address` }
  if (allowed.named) return undefined
  for (const address of addresses) {
    const kind = nonPublicKind(address)
    if (kind !== undefined) {
      return {
        reason: `${hostPortOf(url)} resolves to ${address} (${kind}): name the host in --attachment-hosts to fetch from it`,
        hostRefusal: refusalOf(url, true)
      }
    }
  }
  return undefined
}
