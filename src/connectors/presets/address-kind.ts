/**
 * What kind of network an IP address belongs to: a public address anyone on the internet
 * reaches, or one of the special ranges (loopback, private, link-local and the rest of
 * IANA's special-purpose registries) that lead into the machine or the network a worker
 * runs in. An attachment URL taken from another tool's export may only reach the latter
 * when the user named its host (attachment-hosts.ts).
 *
 * IPv6 forms that carry an IPv4 address (IPv4-mapped `::ffff:a.b.c.d`, NAT64
 * `64:ff9b::/96`, 6to4 `2002::/16`) are judged by the IPv4 address they lead to, so
 * `[::ffff:169.254.169.254]` is the metadata address it is.
 */
import * as net from "node:net"

/** A range: its first address's value and its prefix length. */
interface Range {
  readonly base: bigint
  readonly bits: number
  readonly kind: string
}

const v4Value = (text: string): bigint | undefined => {
  const parts = text.split(".")
  if (parts.length !== 4 || parts.some((p) => !/^\d{1,3}$/.test(p) || Number(p) > 255)) return undefined
  return parts.reduce((n, p) => (n << 8n) | BigInt(p), 0n)
}

/** The 128-bit value of an IPv6 address (a trailing dotted IPv4 part and a zone allowed). */
const v6Value = (text: string): bigint | undefined => {
  let body = text.replace(/%.*$/, "")
  const dotted = /^(.*:)(\d+\.\d+\.\d+\.\d+)$/.exec(body)
  if (dotted !== null) {
    const v4 = v4Value(dotted[2]!)
    if (v4 === undefined) return undefined
    body = `${dotted[1]}${(v4 >> 16n).toString(16)}:${(v4 & 0xffffn).toString(16)}`
  }
  const halves = body.split("::")
  if (halves.length > 2) return undefined
  const groups = (s: string) => (s === "" ? [] : s.split(":"))
  const head = groups(halves[0]!)
  const tail = halves.length === 2 ? groups(halves[1]!) : []
  const missing = 8 - head.length - tail.length
  if (halves.length === 2 ? missing < 1 : missing !== 0) return undefined
  const all = [...head, ...Array<string>(halves.length === 2 ? missing : 0).fill("0"), ...tail]
  if (all.some((g) => !/^[0-9a-f]{1,4}$/i.test(g))) return undefined
  return all.reduce((n, g) => (n << 16n) | BigInt(parseInt(g, 16)), 0n)
}

const range = (size: 32 | 128) => (cidr: string, kind: string): Range => {
  const [addr, bits] = cidr.split("/") as [string, string]
  const base = size === 32 ? v4Value(addr) : v6Value(addr)
  if (base === undefined) throw new Error(`bad range ${cidr}`)
  return { base, bits: Number(bits), kind }
}

const inRange = (value: bigint, size: 32 | 128, r: Range): boolean => {
  const shift = BigInt(size - r.bits)
  return value >> shift === r.base >> shift
}

/** IANA IPv4 special-purpose address registry: every block not reachable from the internet. */
const V4: ReadonlyArray<Range> = [
  ["0.0.0.0/8", "unspecified (this network)"],
  ["10.0.0.0/8", "private"],
  ["100.64.0.0/10", "shared (carrier-grade NAT)"],
  ["127.0.0.0/8", "loopback"],
  ["169.254.169.254/32", "link-local (the cloud metadata service)"],
  ["169.254.0.0/16", "link-local"],
  ["172.16.0.0/12", "private"],
  ["192.0.0.0/24", "reserved (IETF protocol assignments)"],
  ["192.0.2.0/24", "reserved (documentation)"],
  ["192.88.99.0/24", "reserved (6to4 relay)"],
  ["192.168.0.0/16", "private"],
  ["198.18.0.0/15", "reserved (benchmarking)"],
  ["198.51.100.0/24", "reserved (documentation)"],
  ["203.0.113.0/24", "reserved (documentation)"],
  ["224.0.0.0/4", "multicast"],
  ["240.0.0.0/4", "reserved"]
].map(([cidr, kind]) => range(32)(cidr!, kind!))

/** IPv6 blocks judged by the IPv4 address inside them (bits 96..127, or 16..47 for 6to4). */
const V6_CARRYING_V4: ReadonlyArray<{ readonly range: Range; readonly shift: bigint }> = [
  { range: range(128)("::ffff:0:0/96", "IPv4-mapped"), shift: 0n },
  { range: range(128)("64:ff9b::/96", "NAT64"), shift: 0n },
  { range: range(128)("2002::/16", "6to4"), shift: 80n }
]

/** IANA IPv6 special-purpose registry, then everything outside global unicast (2000::/3). */
const V6: ReadonlyArray<Range> = [
  ["::/128", "unspecified"],
  ["::1/128", "loopback"],
  ["::/8", "reserved (IPv4-compatible and unassigned)"],
  ["64:ff9b:1::/48", "private (local NAT64)"],
  ["100::/64", "reserved (discard)"],
  ["2001:db8::/32", "reserved (documentation)"],
  ["2001::/23", "reserved (IETF protocol assignments, Teredo)"],
  ["3fff::/20", "reserved (documentation)"],
  ["5f00::/16", "reserved (segment routing)"],
  ["fc00::/7", "private (unique local)"],
  ["fe80::/10", "link-local"],
  ["fec0::/10", "private (site-local)"],
  ["ff00::/8", "multicast"]
].map(([cidr, kind]) => range(128)(cidr!, kind!))

const GLOBAL_UNICAST = range(128)("2000::/3", "global unicast")

const v4Kind = (value: bigint): string | undefined => V4.find((r) => inRange(value, 32, r))?.kind

/**
 * The kind of a non-public address (`loopback`, `private`, `link-local`, ...), or
 * undefined for a public one. Something that is not an IP address is not public either.
 */
export const nonPublicKind = (address: string): string | undefined => {
  const family = net.isIP(address.replace(/%.*$/, ""))
  if (family === 4) return v4Kind(v4Value(address)!)
  if (family !== 6) return "not an IP address"
  const value = v6Value(address)
  if (value === undefined) return "not an IP address"
  for (const { range: r, shift } of V6_CARRYING_V4) {
    if (inRange(value, 128, r)) return v4Kind((value >> shift) & 0xffffffffn)
  }
  const special = V6.find((r) => inRange(value, 128, r))
  if (special !== undefined) return special.kind
  return inRange(value, 128, GLOBAL_UNICAST) ? undefined : "reserved (unassigned)"
}
