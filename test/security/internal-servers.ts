/**
 * Loopback servers that stand in for services inside the importing machine's network,
 * and a Jira export whose attachments link to them: the attachment-host tests of the
 * library and of the command line. Every server listens on 127.0.0.1.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as fs from "node:fs"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import * as path from "node:path"

export interface Seen {
  readonly url: string
  readonly host: string | undefined
  readonly authorization: string | undefined
}

export interface LocalServer {
  readonly port: number
  readonly seen: Array<Seen>
  /** Bytes written by the endless answers, and whether the client hung up on them. */
  readonly endless: { written: number; closed: boolean }
}

/**
 * Two loopback servers. `internal` stands in for a service inside the network: files under
 * /files/, an endless body under /endless/, a body declared larger than any limit under
 * /declared/. `gateway` stands in for an allowed host whose answer redirects inside.
 */
export class Servers extends Context.Service<Servers, { readonly internal: LocalServer; readonly gateway: LocalServer }>()("test/AttachmentHostServers") {}

const listen = (handler: (req: http.IncomingMessage, res: http.ServerResponse, self: LocalServer) => void) =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const self = { port: 0, seen: [] as Array<Seen>, endless: { written: 0, closed: false } }
      const server = http.createServer((req, res) => {
        self.seen.push({ url: req.url ?? "", host: req.headers.host, authorization: req.headers.authorization })
        handler(req, res, self)
      })
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
      self.port = (server.address() as AddressInfo).port
      return { server, self }
    }),
    ({ server }) =>
      Effect.promise(() =>
        new Promise((resolve) => {
          server.closeAllConnections()
          server.close(resolve)
        })
      )
  ).pipe(Effect.map(({ self }) => self as LocalServer))

const CHUNK = Buffer.alloc(64 * 1024, 0x61)

export const serversLayer = Layer.effect(
  Servers,
  Effect.gen(function*() {
    const internal = yield* listen((req, res, self) => {
      const url = req.url ?? ""
      if (url.startsWith("/files/")) {
        res.writeHead(200, { "content-type": "application/octet-stream" })
        res.end(`internal bytes of ${path.basename(url)}`)
      } else if (url.startsWith("/endless/")) {
        // No Content-Length and no end: only a client that stops reading gets out.
        res.writeHead(200, { "content-type": "application/octet-stream" })
        res.on("close", () => (self.endless.closed = true))
        const pump = () => {
          while (!res.destroyed) {
            self.endless.written += CHUNK.length
            if (!res.write(CHUNK)) return void res.once("drain", pump)
          }
        }
        pump()
      } else if (url.startsWith("/declared/")) {
        res.writeHead(200, { "content-type": "application/octet-stream", "content-length": String(200_000_000) })
        res.on("close", () => (self.endless.closed = true))
        res.write(CHUNK)
      } else {
        res.writeHead(404)
        res.end()
      }
    })
    const gateway = yield* listen((req, res) => {
      // Every path redirects to the same file name on the internal server, by a name that resolves to loopback.
      res.writeHead(302, { location: `http://localhost:${internal.port}/files/${path.basename(req.url ?? "")}` })
      res.end()
    })
    return { internal, gateway }
  })
)

/** A Jira export of one issue whose attachment cells are `urls` (file name from the URL). */
export const jiraExport = (dir: string, urls: ReadonlyArray<string>) => {
  const file = path.join(dir, "jira.csv")
  const cells = urls.map((u) => `05/Nov/25 5:20 PM;Mallory;${path.basename(new URL(u).pathname)};${u}`)
  fs.writeFileSync(file, `Summary,Issue id,Status,${urls.map(() => "Attachment").join(",")}\r\nReach inside,1,To Do,${cells.join(",")}\r\n`)
  return file
}

/**
 * One internal file named five ways: by address, by a name that resolves to loopback, as an
 * IPv4-mapped IPv6 address, through a redirect from the gateway, and the cloud metadata
 * address (never contacted: no test names it).
 */
export const internalForms = (internal: LocalServer, gateway: LocalServer) => [
  `http://127.0.0.1:${internal.port}/files/direct.txt`,
  `http://localhost:${internal.port}/files/byname.txt`,
  `http://[::ffff:127.0.0.1]:${internal.port}/files/mapped.txt`,
  `http://127.0.0.1:${gateway.port}/anything/redirected.txt`,
  "http://169.254.169.254/latest/meta-data/iam.txt"
]

/** A Jira attachment is also looked for under --attachments by name: its reason follows the URL's. */
export const noDir = (reason: string) => `${reason}; no --attachments directory given`

/** Forgets what the servers saw. */
export const reset = (...servers: ReadonlyArray<LocalServer>) => servers.forEach((s) => (s.seen.length = 0))

/** Resolves once `condition` holds (checked on every turn of the event loop). */
export const until = (condition: () => boolean) =>
  new Promise<void>((resolve) => {
    const check = () => (condition() ? resolve() : setImmediate(check))
    check()
  })
