/**
 * Another reading of the service, made from the emulator: a real HTTP proxy on
 * 127.0.0.1 that forwards every request to the emulator and changes what a test names:
 * REST operations the service does not have (404, as for an unknown operation), and
 * answers rewritten into another plausible shape. For the cases the emulator's variants
 * do not serve.
 */
import { createServer, request as httpRequest, type IncomingMessage, type Server } from "node:http"
import type { AddressInfo } from "node:net"

export interface ReadingProxyOptions {
  /** REST operations (`list-tags`, `POST /v1/lists`, ...) answered 404 as unknown. */
  readonly unavailable?: ReadonlyArray<string>
  /** Rewrites the JSON answer of a REST operation (2xx answers only). */
  readonly rewrite?: (operation: string, body: unknown, requestBody: unknown) => unknown
  /** Answers a request itself (not forwarded) when this returns an answer, e.g. a 400 for an input it does not take. */
  readonly refuse?: (operation: string, requestBody: unknown) => { readonly status: number; readonly body: unknown } | undefined
}

export interface ReadingProxy {
  /** The proxy's origin: use `${url}/rest` where the emulator gives `${origin}/rest`. */
  readonly url: string
  /** Operations seen, in order (`list-records`, `GET /v1/records`, ...). */
  readonly operations: Array<string>
  /** Request bodies seen per operation (parsed JSON, or null). */
  readonly bodies: Array<{ readonly operation: string; readonly body: unknown }>
  close(): Promise<void>
}

/** `POST /rest/v1/list-tags` → `list-tags`; a resource path → `METHOD /v1/path`. */
const operationOf = (method: string, url: string): string => {
  const path = url.split("?")[0]!.replace(/^\/rest/, "")
  const rpc = /^\/v1\/([a-z][a-z-]*)$/.exec(path)
  if (method === "POST" && rpc !== null && !["records", "workspaces", "lists"].includes(rpc[1]!)) return rpc[1]!
  return `${method} ${path}`
}

const readAll = (stream: IncomingMessage): Promise<Buffer> =>
  new Promise((resolve, reject) => {
    const chunks: Array<Buffer> = []
    stream.on("data", (c: Buffer) => chunks.push(c))
    stream.on("end", () => resolve(Buffer.concat(chunks)))
    stream.on("error", reject)
  })

const parse = (b: Buffer): unknown => {
  try {
    return b.length === 0 ? null : JSON.parse(b.toString("utf8"))
  } catch {
    return null
  }
}

/** Starts a proxy in front of `target` (the emulator's origin, e.g. `http://127.0.0.1:P`). */
export const startReadingProxy = async (target: string, options: ReadingProxyOptions = {}): Promise<ReadingProxy> => {
  const to = new URL(target)
  const operations: Array<string> = []
  const bodies: Array<{ operation: string; body: unknown }> = []
  const unavailable = new Set(options.unavailable ?? [])
  const server: Server = createServer((req, res) => {
    void (async () => {
      const body = await readAll(req)
      const operation = operationOf(req.method ?? "GET", req.url ?? "/")
      operations.push(operation)
      bodies.push({ operation, body: parse(body) })
      const refused = unavailable.has(operation)
        ? { status: 404, body: { error: { code: "NOT_FOUND", message: `Unknown operation ${operation}` } } }
        : options.refuse?.(operation, parse(body))
      if (refused !== undefined) {
        const text = JSON.stringify(refused.body)
        res.writeHead(refused.status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) })
        res.end(text)
        return
      }
      const upstream = httpRequest(
        { host: to.hostname, port: to.port, method: req.method, path: req.url, headers: { ...req.headers, host: to.host } },
        (answer) => {
          void (async () => {
            const raw = await readAll(answer)
            const status = answer.statusCode ?? 502
            let out = raw
            if (options.rewrite !== undefined && status >= 200 && status < 300 && req.url?.startsWith("/rest/v1/")) {
              const json = parse(raw)
              if (json !== null) out = Buffer.from(JSON.stringify(options.rewrite(operation, json, parse(body))))
            }
            const headers = { ...answer.headers, "content-length": String(out.length) }
            delete headers["transfer-encoding"]
            res.writeHead(status, headers)
            res.end(out)
          })().catch(() => res.destroy())
        }
      )
      upstream.on("error", () => res.destroy())
      upstream.end(body)
    })().catch(() => res.destroy())
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    operations,
    bodies,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
}
