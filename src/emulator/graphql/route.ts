/**
 * `POST {base_url}/graphql` (R-GQL-AUTH-01..08): JSON `{query, variables}` or a
 * multipart upload, authenticated by the token id and secret headers, executed by
 * graphql-js. Failures are in `errors` with `extensions.code` (R-GQL-ERR-01).
 */
import type { IncomingMessage, ServerResponse } from "node:http"
import { execute, GraphQLError, parse, validate, type DocumentNode, type ExecutionResult, type GraphQLSchema } from "graphql"
import { authenticateApp } from "../auth.ts"
import type { EmulatorContext, RawRoute } from "../context.ts"
import { HttpError, readBody } from "../http.ts"
import { checkHeaderOrgNotBanned } from "./access.ts"
import { buildExecutableSchema } from "./executable.ts"
import { asGraphqlRequest, readMultipart, type GraphqlRequest } from "./multipart.ts"
import type { GqlContext, UploadedPart } from "./request.ts"
import type { EmulatorVariant } from "../options.ts"

const schemas = new Map<EmulatorVariant, GraphQLSchema>()
const executableSchema = (variant: EmulatorVariant): GraphQLSchema => {
  let schema = schemas.get(variant)
  if (schema === undefined) {
    schema = buildExecutableSchema(variant)
    schemas.set(variant, schema)
  }
  return schema
}

type ErrorJson = { message: string; locations?: unknown; path?: unknown; extensions: Record<string, unknown> }

const errorJson = (error: GraphQLError, fallbackCode: string): ErrorJson => {
  const original = error.originalError
  // Anything a resolver threw that is not a GraphQLError is a bug: never leak its text.
  if (original !== undefined && original !== null && !(original instanceof GraphQLError)) {
    return { message: "Internal server error", path: error.path, extensions: { code: "INTERNAL_SERVER_ERROR" } }
  }
  const json = error.toJSON() as ErrorJson
  return { ...json, extensions: { ...json.extensions, code: json.extensions?.["code"] ?? fallbackCode } }
}

/**
 * GRAPHQL_ERROR_CODE_PATH: the code in `extensions.code`; the alt variant carries it as
 * `errors[i].code`, with no extensions.
 */
const forVariant = (variant: EmulatorVariant, body: unknown): unknown => {
  if (variant !== "alt") return body
  const b = body as { errors?: Array<ErrorJson> }
  if (b.errors === undefined) return body
  return {
    ...b,
    errors: b.errors.map(({ extensions, ...rest }) => ({ ...rest, code: extensions?.["code"] }))
  }
}

const send = (res: ServerResponse, status: number, body: unknown, close = false) => {
  const text = JSON.stringify(body)
  const headers: Record<string, string | number> = {
    "content-type": "application/json; charset=utf-8",
    "content-length": Buffer.byteLength(text)
  }
  if (close) headers["connection"] = "close"
  res.writeHead(status, headers)
  res.end(text)
}

const fail = (res: ServerResponse, variant: EmulatorVariant, status: number, code: string, message: string, close = false) =>
  send(res, status, forVariant(variant, { errors: [{ message, extensions: { code } }], data: null }), close)

/** An answer sent before the body was read: drain what still comes, then drop the connection. */
const abandonBody = (req: IncomingMessage) => {
  req.resume()
  const timer = setTimeout(() => req.socket.destroy(), 5_000)
  timer.unref()
  req.once("end", () => clearTimeout(timer))
  req.once("close", () => clearTimeout(timer))
}

const run = (g: GqlContext, request: GraphqlRequest): ExecutionResult | { errors: Array<ErrorJson> } => {
  let document: DocumentNode
  try {
    document = parse(request.query)
  } catch (e) {
    if (e instanceof GraphQLError) return { errors: [errorJson(e, "GRAPHQL_PARSE_FAILED")] }
    throw e
  }
  const invalid = validate(executableSchema(g.ctx.variant), document)
  if (invalid.length > 0) return { errors: invalid.map((e) => errorJson(e, "GRAPHQL_VALIDATION_FAILED")) }
  checkHeaderOrgNotBanned(g)
  const result = execute({
    schema: executableSchema(g.ctx.variant),
    document,
    variableValues: request.variables,
    operationName: request.operationName,
    contextValue: g
  })
  if (result instanceof Promise) throw new Error("resolvers are synchronous")
  return result
}

const respond = (res: ServerResponse, variant: EmulatorVariant, result: ExecutionResult | { errors: Array<ErrorJson> }) => {
  const body: Record<string, unknown> = {}
  if (result.errors !== undefined && result.errors.length > 0) {
    // Errors before execution (variable coercion) have no data and no path.
    const beforeExecution = !("data" in result) || result.data === undefined
    body["errors"] = result.errors.map((e) =>
      e instanceof GraphQLError ? errorJson(e, beforeExecution ? "BAD_USER_INPUT" : "INTERNAL_SERVER_ERROR") : e
    )
  }
  body["data"] = "data" in result && result.data !== undefined ? result.data : null
  send(res, 200, forVariant(variant, body))
}

const isMultipart = (req: IncomingMessage) => /^multipart\/form-data\b/i.test(req.headers["content-type"] ?? "")

export const graphqlRoute: RawRoute = async (ctx: EmulatorContext, req, res, url, mount) => {
  if (mount !== "base" || url.pathname !== "/graphql") return false
  if (req.method !== "POST") {
    res.setHeader("allow", "POST")
    fail(res, ctx.variant, 405, "METHOD_NOT_ALLOWED", "GraphQL is served by POST")
    return true
  }
  let principal
  try {
    principal = authenticateApp(ctx, req)
  } catch (e) {
    if (e instanceof HttpError) {
      // GRAPHQL_TRANSPORT: 401; in the alt variant every answer is a 200 with the error in `errors`.
      fail(res, ctx.variant, ctx.variant === "alt" ? 200 : e.status, "UNAUTHENTICATED", e.message, true)
      abandonBody(req)
      return true
    }
    throw e
  }
  const g: GqlContext = { ctx, principal }
  let request: GraphqlRequest
  let parts: ReadonlyArray<UploadedPart> = []
  try {
    if (isMultipart(req)) {
      const multipart = await readMultipart(ctx, req)
      request = multipart.request
      parts = multipart.parts
    } else {
      const raw = await readBody(req)
      let json: unknown
      try {
        json = JSON.parse(raw.toString("utf8"))
      } catch {
        fail(res, ctx.variant, 400, "BAD_REQUEST", "The body must be JSON `{query, variables}` or a multipart upload")
        return true
      }
      request = asGraphqlRequest(json)
    }
  } catch (e) {
    if (e instanceof GraphQLError) {
      const multipart = isMultipart(req)
      // The connection stays open while the rest of the body drains: a sender still writing
      // a small body gets the answer, not a broken pipe (abandonBody drops a long one).
      send(res, 200, forVariant(ctx.variant, { errors: [errorJson(e, "BAD_USER_INPUT")], data: null }))
      if (multipart) abandonBody(req)
      return true
    }
    throw e
  }
  try {
    let result: ExecutionResult | { errors: Array<ErrorJson> }
    try {
      result = run(g, request)
    } catch (e) {
      if (!(e instanceof GraphQLError)) throw e
      result = { errors: [errorJson(e, "INTERNAL_SERVER_ERROR")] }
    }
    respond(res, ctx.variant, result)
  } finally {
    // Objects stored for file parts no resolver turned into files are not kept.
    for (const part of parts) if (!part.claimed) ctx.objects.remove(part.storageKey)
  }
  return true
}
