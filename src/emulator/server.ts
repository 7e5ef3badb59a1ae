/**
 * The two HTTP servers (plain node:http with keep-alive): the main one (REST under
 * `/rest`, GraphQL and app routes at the root) and storage (a separate origin, so a client
 * that leaks service credentials to storage is caught).
 *
 * Main dispatch: `/rest/v1/openapi.json`, the resource-style paths (records, workspaces,
 * lists: the same handlers as RPC, R-REST-CALL-07..16), `POST /rest/v1/<operation>`
 * (RPC, R-REST-CALL-04), then each area's raw routes, then 404. Faults are applied here,
 * generically, before a handler runs (or, for ambiguous writes, after it committed).
 */
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import { authenticateRest, tokenKeyOf } from "./auth.ts"
import type { EmulatorArea, EmulatorContext, RawRoute, RestOperation } from "./context.ts"
import type { FaultController, FaultDecision } from "./faults.ts"
import { stallBody } from "./stall-body.ts"
import { answerThenCommitLate, discarded, garbleAnswer } from "./write-faults.ts"
import { altAnswer, altInput } from "./alt/answers.ts"
import { HttpError, readJsonObject, sendError, sendJson } from "./http.ts"
import type { EmulatorVariant } from "./options.ts"
import type { StatsRecorder } from "./stats.ts"

export interface ServerDeps {
  readonly ctx: EmulatorContext
  readonly areas: ReadonlyArray<EmulatorArea>
  readonly operations: ReadonlyMap<string, RestOperation>
  readonly faults: FaultController
  readonly stats: StatsRecorder
  readonly openapi: () => unknown
}

export interface RunningServers {
  readonly mainPort: number
  readonly storagePort: number
  close(): Promise<void>
}

/** A REST request resolved to an operation, with where its input comes from. */
interface RestTarget {
  readonly op: string
  /** "body": the JSON body; "query": the query string (GET/DELETE resource style). */
  readonly source: "body" | "query"
  /** Path parameters merged over the input (the record id of `/records/{id}`). */
  readonly extra?: Record<string, string>
}

const BOOLEAN_PARAMS = new Set(["done", "archived", "allDay", "shared"])
const NUMBER_PARAMS = new Set(["skip", "limit"])
const ARRAY_PARAMS = new Set(["assigneeIds", "tagIds"])

/**
 * Query parameters as operation input: booleans and numbers are converted when they
 * parse (otherwise left as strings, so validation reports them); array parameters may
 * repeat or be comma separated (RESOURCE_QUERY_ENCODING). The alt variant reads an array
 * from one comma-separated value: a repeated parameter keeps its last value.
 */
export const queryInput = (params: URLSearchParams, variant: EmulatorVariant = "reference"): Record<string, unknown> => {
  const input: Record<string, unknown> = {}
  for (const key of new Set(params.keys())) {
    if (ARRAY_PARAMS.has(key)) {
      const values = params.getAll(key)
      input[key] = (variant === "alt" ? values.slice(-1) : values)
        .flatMap((v) => v.split(","))
        .map((v) => v.trim())
        .filter((v) => v !== "")
      continue
    }
    const value = params.get(key)!
    if (BOOLEAN_PARAMS.has(key) && (value === "true" || value === "false")) input[key] = value === "true"
    else if (NUMBER_PARAMS.has(key) && /^-?\d+(\.\d+)?$/.test(value)) input[key] = Number(value)
    else input[key] = value
  }
  return input
}

/** Resource-style paths (records, workspaces, lists only: R-REST-CALL-16). */
const resourceTarget = (method: string, parts: ReadonlyArray<string>): RestTarget | "method" | null => {
  const [resource, id, action] = parts
  if (resource === "records") {
    if (parts.length === 1) {
      if (method === "GET") return { op: "list-records", source: "query" }
      if (method === "POST") return { op: "create-record", source: "body" }
      return "method"
    }
    const recordId = decodeURIComponent(id!)
    if (parts.length === 2) {
      if (method === "GET") return { op: "get-record", source: "query", extra: { recordId } }
      if (method === "PATCH") return { op: "update-record", source: "body", extra: { recordId } }
      if (method === "DELETE") return { op: "delete-record", source: "query", extra: { recordId } }
      return "method"
    }
    if (parts.length === 3 && action === "move") {
      return method === "POST" ? { op: "move-record", source: "body", extra: { recordId } } : "method"
    }
    return null
  }
  if ((resource === "workspaces" || resource === "lists") && parts.length === 1) {
    if (method === "GET") return { op: `list-${resource}`, source: "query" }
    if (method === "POST") return { op: resource === "workspaces" ? "create-workspace" : "create-list", source: "body" }
    return "method"
  }
  return null
}

const CONFIRM_PATH = /^\/uploads\/[^/]+\/confirm$/

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

/** Swallows the answer and destroys the socket once the handler has committed. */
const makeAmbiguous = (req: http.IncomingMessage, res: http.ServerResponse): void => {
  const socket = req.socket
  const r = res as unknown as Record<string, unknown>
  r["writeHead"] = () => res
  r["setHeader"] = () => res
  r["write"] = () => true
  r["end"] = () => {
    socket.destroy()
    return res
  }
}

/** A decision with nothing to apply before the handler runs (no fault, or "not-applied"). */
const passesThrough = (decision: FaultDecision): boolean =>
  (decision.action === "none" || decision.action === "not-applied") && decision.latencyMs <= 0 && decision.before === undefined

/** Applies a decided fault; returns true when the request is finished. */
const applyFault = async (
  decision: FaultDecision,
  req: http.IncomingMessage,
  res: http.ServerResponse,
  variant: EmulatorVariant
): Promise<boolean> => {
  if (decision.before !== undefined) await decision.before
  if (decision.latencyMs > 0) await sleep(decision.latencyMs)
  switch (decision.action) {
    case "hold":
      await decision.gate
      return false
    case "drop":
      req.socket.destroy()
      return true
    case "429":
      sendError(
        res,
        new HttpError(429, "RATE_LIMITED", "Too many requests", undefined, { "retry-after": decision.retryAfter ?? "1" }),
        variant
      )
      return true
    case "500":
      sendError(res, new HttpError(500, "INTERNAL_SERVER_ERROR", "Internal server error (injected)"), variant)
      return true
    case "401":
      sendError(res, new HttpError(401, "UNAUTHORIZED", "Unauthorized (injected)"), variant)
      return true
    case "ambiguous":
      makeAmbiguous(req, res)
      return false
    case "stall-body":
      stallBody(res)
      return false
    case "garble":
      garbleAnswer(res)
      return false
    case "late-commit":
      await answerThenCommitLate(req, res, variant, decision.held!)
      return false
    default:
      return false
  }
}

const trackStats = (stats: StatsRecorder, route: string, res: http.ServerResponse): void => {
  res.once("close", () => stats.record(route, res.writableFinished ? String(res.statusCode) : "dropped"))
}

const listen = (server: http.Server, host: string, port: number): Promise<number> =>
  new Promise((resolve, reject) => {
    server.once("error", reject)
    server.listen(port, host, () => {
      server.off("error", reject)
      resolve((server.address() as AddressInfo).port)
    })
  })

const closeServer = (server: http.Server): Promise<void> =>
  new Promise((resolve) => {
    server.close(() => resolve())
    server.closeAllConnections()
  })

export const startServers = async (
  deps: ServerDeps,
  host: string,
  port: number,
  storagePort: number
): Promise<RunningServers> => {
  const { areas, ctx, faults, operations, stats } = deps
  const rawRoutes: Array<RawRoute> = areas.flatMap((a) => a.routes ?? [])
  const storageRoutes: Array<RawRoute> = areas.flatMap((a) => a.storageRoutes ?? [])

  const decide = (req: http.IncomingMessage, route: string, isWrite: boolean): FaultDecision =>
    faults.idle ? { latencyMs: 0, action: "none" } : faults.decide(route, faults.needsTokenKey ? tokenKeyOf(ctx, req) : null, isWrite)

  const runRest = async (
    req: http.IncomingMessage,
    res: http.ServerResponse,
    url: URL,
    op: RestOperation,
    target: RestTarget,
    notApplied: boolean
  ): Promise<void> => {
    const principal = authenticateRest(ctx, req)
    const alt = ctx.variant === "alt"
    let input = target.source === "body" ? await readJsonObject(req, alt) : queryInput(url.searchParams, ctx.variant)
    if (target.extra !== undefined) Object.assign(input, target.extra)
    // "not-applied": the answer is computed as usual, then everything it wrote is undone.
    const answer = (compute: () => unknown) => (notApplied ? discarded(ctx.db, ctx.events, compute) : compute())
    if (!alt) {
      sendJson(res, 200, answer(() => op.handle(ctx, principal, input)))
      return
    }
    if (req.method === "PATCH") {
      // RESOURCE_STYLE_SHAPES, alt: the workspace is a query parameter, as for GET and DELETE.
      delete input["workspaceId"]
      const workspaceId = url.searchParams.get("workspaceId")
      if (workspaceId !== null) input["workspaceId"] = workspaceId
    }
    input = altInput(op.name, input)
    const altInputs = input
    sendJson(res, 200, answer(() => altAnswer(ctx, op.name, altInputs, op.handle(ctx, principal, altInputs))))
  }

  const handleRest = async (
    req: http.IncomingMessage,
    res: http.ServerResponse,
    url: URL,
    rest: string
  ): Promise<void> => {
    const method = req.method ?? "GET"
    const parts = rest.split("/").filter((p) => p !== "")
    if (parts.length === 1 && parts[0] === "openapi.json") {
      trackStats(stats, "openapi.json", res)
      if (await applyFault(decide(req, "openapi.json", false), req, res, ctx.variant)) return
      if (method !== "GET") throw new HttpError(405, "METHOD_NOT_ALLOWED", "Use GET")
      sendJson(res, 200, deps.openapi())
      return
    }
    let target = resourceTarget(method, parts)
    if (target === null && parts.length === 1 && operations.has(parts[0]!)) {
      target = method === "POST" ? { op: parts[0]!, source: "body" } : "method"
    }
    if (target === null) {
      trackStats(stats, url.pathname, res)
      // REST_TRANSPORT_DETAILS, alt: an unknown operation is a bad request.
      if (ctx.variant === "alt" && parts.length === 1) {
        throw new HttpError(400, "UNKNOWN_OPERATION", `Unknown operation: ${parts[0]}`)
      }
      throw new HttpError(404, "NOT_FOUND", `No such operation: ${parts.join("/")}`)
    }
    if (target === "method") {
      trackStats(stats, url.pathname, res)
      // REST_TRANSPORT_DETAILS, alt: a route is a method and a path; another method matches none.
      if (ctx.variant === "alt") throw new HttpError(404, "NOT_FOUND", `No route for ${method} ${url.pathname}`)
      throw new HttpError(405, "METHOD_NOT_ALLOWED", `Method ${method} is not allowed here`)
    }
    const op = operations.get(target.op)
    if (op === undefined) {
      trackStats(stats, target.op, res)
      throw new HttpError(404, "NOT_FOUND", `No such operation: ${target.op}`)
    }
    trackStats(stats, op.name, res)
    const decision = decide(req, op.name, op.write)
    if (!passesThrough(decision) && (await applyFault(decision, req, res, ctx.variant))) return
    await runRest(req, res, url, op, target, decision.action === "not-applied")
  }

  const handleMain = async (req: http.IncomingMessage, res: http.ServerResponse): Promise<void> => {
    const url = new URL(req.url ?? "/", "http://emulator")
    const path = url.pathname
    if (path.startsWith("/rest/v1/")) return handleRest(req, res, url, path.slice("/rest/v1/".length))
    const mount: "rest" | "base" = path === "/rest" || path.startsWith("/rest/") ? "rest" : "base"
    if (mount === "rest") url.pathname = path.slice("/rest".length) || "/"
    const method = req.method ?? "GET"
    const isWrite =
      (method === "POST" && url.pathname === "/graphql") || (method === "PUT" && CONFIRM_PATH.test(url.pathname))
    trackStats(stats, path, res)
    if (await applyFault(decide(req, path, isWrite), req, res, ctx.variant)) return
    for (const route of rawRoutes) {
      if (await route(ctx, req, res, url, mount)) return
    }
    throw new HttpError(404, "NOT_FOUND", `Not found: ${path}`)
  }

  const handleStorage = async (req: http.IncomingMessage, res: http.ServerResponse): Promise<void> => {
    const url = new URL(req.url ?? "/", "http://storage")
    const route = `storage:${url.pathname}`
    trackStats(stats, route, res)
    if (await applyFault(decide(req, url.pathname, req.method === "PUT"), req, res, ctx.variant)) return
    for (const r of storageRoutes) {
      if (await r(ctx, req, res, url, "base")) return
    }
    throw new HttpError(404, "NOT_FOUND", `Not found: ${url.pathname}`)
  }

  // The Date header is the service's clock (EmulatorOptions.clockStart), as a real
  // service's is its own: a clock set apart from real time is a skewed service clock.
  // It names whole seconds, so it is formatted once per second of that clock.
  let dateSecond = Number.NaN
  let dateText = ""
  const dateHeader = (): string => {
    const now = ctx.clock.now()
    const second = Math.floor(now / 1000)
    if (second !== dateSecond) {
      dateSecond = second
      dateText = new Date(now).toUTCString()
    }
    return dateText
  }

  const wrap =
    (handler: (req: http.IncomingMessage, res: http.ServerResponse) => Promise<void>) =>
    (req: http.IncomingMessage, res: http.ServerResponse) => {
      res.setHeader("Date", dateHeader())
      handler(req, res).catch((error: unknown) => {
        if (!(error instanceof HttpError)) console.error("emulator: unexpected error", error)
        sendError(res, error, ctx.variant)
      })
    }

  const main = http.createServer({ keepAlive: true }, wrap(handleMain))
  const storage = http.createServer({ keepAlive: true }, wrap(handleStorage))
  main.keepAliveTimeout = 30_000
  storage.keepAliveTimeout = 30_000
  const mainPort = await listen(main, host, port)
  let storageListening: number
  try {
    storageListening = await listen(storage, host, storagePort)
  } catch (error) {
    await closeServer(main)
    throw error
  }
  return {
    mainPort,
    storagePort: storageListening,
    close: async () => {
      await Promise.all([closeServer(main), closeServer(storage)])
    }
  }
}
