/**
 * Which attachment URLs of another tool's export may be fetched (`--attachment-hosts`):
 * the parsing of the option, host and port matching, each tool's default hosts, and the
 * judgement of resolved addresses (loopback, private, link-local, IPv4 inside IPv6).
 * Pure functions: no address here is contacted.
 */
import * as Result from "effect/Result"
import { describe, expect, it } from "vitest"
import { nonPublicKind } from "../../../src/connectors/presets/address-kind.ts"
import {
  admitAddresses,
  admitsRefused,
  admitUrl,
  type AllowedHost,
  attachmentPolicy,
  DEFAULT_ATTACHMENT_MAX_BYTES,
  matchHost,
  parseAttachmentHosts,
  TOOL_ATTACHMENT_HOSTS,
  toolAttachmentHosts
} from "../../../src/connectors/presets/attachment-hosts.ts"
import { TOOL_PRESET_NAMES } from "../../../src/connectors/presets/index.ts"

const parsed = (...values: Array<string>): ReadonlyArray<AllowedHost> => {
  const r = parseAttachmentHosts(values)
  if (Result.isFailure(r)) throw new Error(r.failure)
  return r.success
}
const failure = (value: string) => {
  const r = parseAttachmentHosts([value])
  return Result.isFailure(r) ? r.failure : undefined
}
const allows = (hosts: ReadonlyArray<AllowedHost>, url: string) => matchHost(hosts, new URL(url)) !== undefined

describe("--attachment-hosts: parsing", () => {
  it("names, wildcards, IPv4 and IPv6 addresses, with and without a port; every entry is named by the user", () => {
    expect(parsed("Jira.Example.com:8080, *.corp.example,10.0.0.5,[::1]:8443,fe80::1,[fd00::2]")).toEqual([
      { host: "jira.example.com", port: 8080, named: true },
      { host: "*.corp.example", port: undefined, named: true },
      { host: "10.0.0.5", port: undefined, named: true },
      { host: "::1", port: 8443, named: true },
      { host: "fe80::1", port: undefined, named: true },
      { host: "fd00::2", port: undefined, named: true }
    ])
    // Several values are one list; a trailing dot and the URL parser's short IPv4 forms are canonical.
    expect(parsed("a.example.", "127.1:9000")).toEqual([
      { host: "a.example", port: undefined, named: true },
      { host: "127.0.0.1", port: 9000, named: true }
    ])
  })

  it("a bad entry is one line naming it and the expected form", () => {
    for (const bad of ["", "a.example,,b.example", "a.example:0", "a.example:70000", "a.example:http", "http://a.example", "a example", "*.10.0.0.1", "[a.example]:80", "*"]) {
      const line = failure(bad)
      expect(line, bad).toMatch(/^--attachment-hosts .*: .*; give HOST\[:PORT\]\[,\.\.\.\], e\.g\. jira\.example\.com:8443,\*\.atlassian\.net$/)
      expect(line).not.toContain("\n")
    }
    expect(failure("a.example:70000")).toContain("--attachment-hosts a.example:70000: port 70000 is not 1-65535;")
    // In a list, the entry at fault is quoted.
    expect(failure("a.example,http://b.example")).toContain("--attachment-hosts a.example,http://b.example: \"http://b.example\": not a host name")
  })

  it("the size limit must be a whole number of bytes; the default is 25 MB", () => {
    expect(Result.isFailure(attachmentPolicy("jira", { maxBytes: 0 }))).toBe(true)
    expect(Result.isFailure(attachmentPolicy("jira", { maxBytes: 1.5 }))).toBe(true)
    const policy = attachmentPolicy("jira", {})
    expect(Result.isSuccess(policy) && policy.success.maxBytes).toBe(DEFAULT_ATTACHMENT_MAX_BYTES)
  })
})

describe("--attachment-hosts: matching a URL", () => {
  it("a host without a port allows only the scheme's default port; with one, only that port", () => {
    const hosts = parsed("files.example,jira.example:8080")
    expect(allows(hosts, "https://files.example/a")).toBe(true)
    expect(allows(hosts, "http://files.example/a")).toBe(true)
    expect(allows(hosts, "https://files.example:443/a")).toBe(true)
    expect(allows(hosts, "https://files.example:8443/a")).toBe(false)
    expect(allows(hosts, "http://files.example:443/a")).toBe(false)
    expect(allows(hosts, "http://jira.example:8080/a")).toBe(true)
    expect(allows(hosts, "https://jira.example/a")).toBe(false)
  })

  it("names match exactly (any case, a trailing dot); *.domain matches names under it at any depth, not the domain, not a look-alike", () => {
    const hosts = parsed("files.example,*.atlassian.net")
    expect(allows(hosts, "https://FILES.example./a")).toBe(true)
    expect(allows(hosts, "https://cdn.files.example/a")).toBe(false)
    expect(allows(hosts, "https://acme.atlassian.net/a")).toBe(true)
    expect(allows(hosts, "https://a.b.atlassian.net/a")).toBe(true)
    expect(allows(hosts, "https://atlassian.net/a")).toBe(false)
    expect(allows(hosts, "https://evilatlassian.net/a")).toBe(false)
    expect(allows(hosts, "https://acme.atlassian.net.evil.example/a")).toBe(false)
  })

  it("addresses match as the URL parser writes them: short IPv4 forms, IPv6 in brackets, IPv4-mapped IPv6", () => {
    const hosts = parsed("127.0.0.1:8080,[::1]:8080,[::ffff:169.254.169.254]")
    expect(allows(hosts, "http://127.1:8080/")).toBe(true)
    expect(allows(hosts, "http://0x7f000001:8080/")).toBe(true)
    expect(allows(hosts, "http://[0:0:0:0:0:0:0:1]:8080/")).toBe(true)
    expect(allows(hosts, "http://[::ffff:a9fe:a9fe]/")).toBe(true)
    // A name is not its address: `localhost` is not `127.0.0.1`.
    expect(allows(hosts, "http://localhost:8080/")).toBe(false)
    expect(allows(hosts, "http://169.254.169.254/")).toBe(false)
  })

  it("only http and https URLs; the reason names host and port, never the path or query", () => {
    const policy = { hosts: parsed("files.example"), maxBytes: 1 }
    expect(admitUrl(policy, new URL("ftp://files.example/a"))).toEqual({ reason: "ftp: URLs are not fetched" })
    expect(admitUrl(policy, new URL("file:///etc/passwd"))).toEqual({ reason: "file: URLs are not fetched" })
    expect(admitUrl(policy, new URL("https://other.example/x?signature=s3cr3t"))).toEqual({
      reason: "other.example:443 is not an allowed attachment host (name it in --attachment-hosts)",
      hostRefusal: { origin: "https://other.example", named: false }
    })
    expect("allowed" in admitUrl(policy, new URL("https://files.example/x"))).toBe(true)
  })
})

describe("each tool's own hosts (the default)", () => {
  it("every preset has its list, all of it valid; none of it is named by the user", () => {
    expect(Object.keys(TOOL_ATTACHMENT_HOSTS).sort()).toEqual([...TOOL_PRESET_NAMES].sort())
    for (const tool of TOOL_PRESET_NAMES) {
      const hosts = toolAttachmentHosts(tool)
      expect(hosts.length).toBeGreaterThan(0)
      expect(hosts.every((h) => !h.named)).toBe(true)
    }
  })

  it("a tool's export reaches its own storage and nothing else; naming hosts replaces the default", () => {
    const jira = toolAttachmentHosts("jira")
    expect(allows(jira, "https://acme.atlassian.net/secure/attachment/10010/a.png")).toBe(true)
    expect(allows(jira, "https://api.media.atlassian.com/file/uuid/binary?token=t")).toBe(true)
    expect(allows(jira, "https://trello.com/1/cards/c/attachments/a/download/x.png")).toBe(false)
    expect(allows(jira, "http://127.0.0.1:8080/secure/attachment/1/a.png")).toBe(false)
    expect(allows(jira, "http://169.254.169.254/latest/meta-data/")).toBe(false)
    expect(allows(jira, "https://jira.example.com:8443/secure/attachment/1/a.png")).toBe(false)
    expect(allows(toolAttachmentHosts("trello"), "https://trello.com/1/cards/c/attachments/a/download/x.png")).toBe(true)
    expect(allows(toolAttachmentHosts("trello"), "https://trello-attachments.s3.amazonaws.com/a/b/x.png")).toBe(true)
    expect(allows(toolAttachmentHosts("trello"), "https://other-bucket.s3.amazonaws.com/x.png")).toBe(false)
    expect(allows(toolAttachmentHosts("clickup"), "https://t123.p.clickup-attachments.com/t123/uuid/x.png")).toBe(true)
    expect(allows(toolAttachmentHosts("asana"), "https://asanausercontent.com/us1/assets/1/2/x")).toBe(true)
    const named = attachmentPolicy("jira", { hosts: ["jira.example.com:8443"] })
    expect(Result.isSuccess(named) && named.success.hosts).toEqual([{ host: "jira.example.com", port: 8443, named: true }])
    // The generic preset has no tool: no host unless named.
    const generic = attachmentPolicy(undefined, {})
    expect(Result.isSuccess(generic) && generic.success.hosts).toEqual([])
  })
})

describe("resolved addresses", () => {
  it("loopback, private, link-local (the metadata address) and the other special IPv4 ranges are not public", () => {
    expect(nonPublicKind("127.0.0.1")).toBe("loopback")
    expect(nonPublicKind("127.255.0.9")).toBe("loopback")
    expect(nonPublicKind("10.1.2.3")).toBe("private")
    expect(nonPublicKind("172.16.0.1")).toBe("private")
    expect(nonPublicKind("172.31.255.255")).toBe("private")
    expect(nonPublicKind("192.168.1.1")).toBe("private")
    expect(nonPublicKind("169.254.169.254")).toBe("link-local (the cloud metadata service)")
    expect(nonPublicKind("169.254.1.1")).toBe("link-local")
    expect(nonPublicKind("100.64.0.1")).toBe("shared (carrier-grade NAT)")
    expect(nonPublicKind("0.0.0.0")).toBe("unspecified (this network)")
    expect(nonPublicKind("224.0.0.1")).toBe("multicast")
    expect(nonPublicKind("255.255.255.255")).toBe("reserved")
    for (const open of ["8.8.8.8", "172.15.255.255", "172.32.0.0", "100.128.0.1", "169.255.0.1", "1.1.1.1"]) {
      expect(nonPublicKind(open), open).toBeUndefined()
    }
  })

  it("IPv6: loopback, unique local (fc00::/7), link-local (fe80::/10) and everything outside global unicast are not public", () => {
    expect(nonPublicKind("::1")).toBe("loopback")
    expect(nonPublicKind("0:0:0:0:0:0:0:1")).toBe("loopback")
    expect(nonPublicKind("::")).toBe("unspecified")
    expect(nonPublicKind("fc00::1")).toBe("private (unique local)")
    expect(nonPublicKind("fd12:3456::1")).toBe("private (unique local)")
    expect(nonPublicKind("fe80::1")).toBe("link-local")
    expect(nonPublicKind("fe80::1%eth0")).toBe("link-local")
    expect(nonPublicKind("febf::1")).toBe("link-local")
    expect(nonPublicKind("ff02::1")).toBe("multicast")
    expect(nonPublicKind("2001:db8::1")).toBe("reserved (documentation)")
    expect(nonPublicKind("4000::1")).toBe("reserved (unassigned)")
    expect(nonPublicKind("2606:4700:4700::1111")).toBeUndefined()
    expect(nonPublicKind("2a00:1450:4001:81c::200e")).toBeUndefined()
  })

  it("an IPv4 address inside IPv6 (mapped, NAT64, 6to4) is judged as that IPv4 address", () => {
    expect(nonPublicKind("::ffff:127.0.0.1")).toBe("loopback")
    expect(nonPublicKind("::ffff:7f00:1")).toBe("loopback")
    expect(nonPublicKind("::ffff:a9fe:a9fe")).toBe("link-local (the cloud metadata service)")
    expect(nonPublicKind("::ffff:10.0.0.1")).toBe("private")
    expect(nonPublicKind("64:ff9b::169.254.169.254")).toBe("link-local (the cloud metadata service)")
    expect(nonPublicKind("2002:c0a8:0101::1")).toBe("private")
    expect(nonPublicKind("::ffff:8.8.8.8")).toBeUndefined()
    expect(nonPublicKind("2002:0808:0808::1")).toBeUndefined()
    expect(nonPublicKind("localhost")).toBe("not an IP address")
  })

  it("a default host that resolves to a non-public address is refused; a named host may", () => {
    const url = new URL("https://acme.atlassian.net/secure/attachment/1/a.png")
    const [byDefault] = toolAttachmentHosts("jira").filter((h) => h.host === "*.atlassian.net")
    expect(admitAddresses(url, byDefault!, ["104.192.141.1"])).toBeUndefined()
    // Every address counts: the connection may use any of them.
    expect(admitAddresses(url, byDefault!, ["104.192.141.1", "::ffff:169.254.169.254"])).toEqual({
      reason: "acme.atlassian.net:443 resolves to ::ffff:169.254.169.254 (link-local (the cloud metadata service)): name the host in --attachment-hosts to fetch from it",
      hostRefusal: { origin: "https://acme.atlassian.net", named: true }
    })
    expect(admitAddresses(url, byDefault!, ["10.0.0.7"])?.reason).toContain("10.0.0.7 (private)")
    const [named] = parsed("*.atlassian.net")
    expect(admitAddresses(url, named!, ["10.0.0.7", "127.0.0.1"])).toBeUndefined()
    expect(admitAddresses(url, named!, [])).toEqual({ reason: "acme.atlassian.net has no address" })
  })

  it("a host refusal is lifted only by a policy that allows the host (and names it, for a default host that resolved to a non-public address)", () => {
    const jira = { hosts: toolAttachmentHosts("jira"), maxBytes: 1 }
    const named = { hosts: parsed("*.atlassian.net,files.example:8443"), maxBytes: 1 }
    const notAllowed = { origin: "https://files.example:8443", named: false }
    expect(admitsRefused(jira, notAllowed)).toBe(false)
    expect(admitsRefused(named, notAllowed)).toBe(true)
    expect(admitsRefused({ hosts: parsed("files.example"), maxBytes: 1 }, notAllowed)).toBe(false)
    const nonPublic = { origin: "https://acme.atlassian.net", named: true }
    expect(admitsRefused(jira, nonPublic)).toBe(false)
    expect(admitsRefused(named, nonPublic)).toBe(true)
  })
})
