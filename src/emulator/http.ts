/**
 * HTTP helpers shared by every area: the error type handlers throw, JSON body reading,
 * and the REST error body `{"error": {code, message, issues?}}` (R-REST-ERR-01..06).
 */
import type { IncomingMessage, ServerResponse } from "node:http"
import type { Schema } from "effect"
import { formatIssues } from "../schema/decode.ts"
import { altErrorAnswer } from "./alt/errors.ts"
import type { EmulatorVariant } from "./options.ts"

export interface Issue {
  readonly path: ReadonlyArray<string | number>
  readonly message: string
}

/** An error answer: status, machine code, message and (on 400) the validation issues. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly issues?: ReadonlyArray<Issue>,
    /** Extra response headers (Retry-After on 429). */
    readonly headers?: Readonly<Record<string, string>>
  ) {
    super(message)
    this.name = "HttpError"
  }
}

/**
 * A 403 for a known token without access to the organization or workspace it names
 * (not for a level too low): the alt variant answers it 401 (AUTH_401_VS_403).
 */
export class NoAccessError extends HttpError {
  constructor(message: string) {
    super(403, "FORBIDDEN", message)
  }
}

export const noAccess = (message: string) => new NoAccessError(message)

export const badRequest = (message: string, issues: ReadonlyArray<Issue> = []) =>
  new HttpError(400, "BAD_REQUEST", message, issues)
export const unauthorized = (message = "A valid personal access token is required") =>
  new HttpError(401, "UNAUTHORIZED", message)
export const forbidden = (message = "Not allowed", code = "FORBIDDEN") => new HttpError(403, code, message)
export const notFound = (what: string) => new HttpError(422, "NOT_FOUND", `${what} not found`)
export const invalid = (message: string, code = "VALIDATION_FAILED") => new HttpError(422, code, message)

/** Validation issues of a SchemaError as `[{path, message}]` (R-REST-ERR-02). */
export const issuesOf = (error: Schema.SchemaError): Array<Issue> =>
  formatIssues(error).map((issue) => ({ path: [...issue.path], message: issue.message }))

/** Reads the whole body as a Buffer. */
export const readBody = (req: IncomingMessage, maxBytes = 16 * 1024 * 1024): Promise<Buffer> =>
  new Promise((resolve, reject) => {
    const chunks: Array<Buffer> = []
    let size = 0
    req.on("data", (chunk: Buffer) => {
      size += chunk.length
      if (size > maxBytes) {
        reject(new HttpError(413, "PAYLOAD_TOO_LARGE", "Request body too large"))
        req.destroy()
        return
      }
      chunks.push(chunk)
    })
    req.on("end", () => resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)))
    req.on("error", reject)
  })

/**
 * Reads a JSON body. 400 when it is empty (the RPC style always sends a body, `{}` at
 * least: R-REST-CALL-06), not JSON, or not sent as `application/json` (R-REST-AUTH-04).
 */
export const readJson = async (req: IncomingMessage, lenient = false): Promise<unknown> => {
  const raw = await readBody(req)
  // The alt variant's transport (REST_TRANSPORT_DETAILS): no body is `{}`, any type is read as JSON.
  if (lenient && raw.length === 0) return {}
  if (raw.length === 0) throw badRequest("A JSON body is required (send {} when there is no input)")
  const type = req.headers["content-type"]
  if (!lenient && (type === undefined || !/^application\/(?:[\w.+-]+\+)?json\b/i.test(type))) {
    throw badRequest("Content-Type must be application/json")
  }
  try {
    return JSON.parse(raw.toString("utf8"))
  } catch {
    throw badRequest("The body is not valid JSON")
  }
}

/** Reads a JSON object body (RPC inputs are objects). */
export const readJsonObject = async (req: IncomingMessage, lenient = false): Promise<Record<string, unknown>> => {
  const value = await readJson(req, lenient)
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    throw badRequest("The body must be a JSON object", [{ path: [], message: "Expected an object" }])
  }
  return value as Record<string, unknown>
}

export const sendJson = (
  res: ServerResponse,
  status: number,
  body: unknown,
  headers?: Readonly<Record<string, string>>
): void => {
  const text = JSON.stringify(body)
  res.writeHead(status, {
    "content-type": "application/json; charset=utf-8",
    "content-length": Buffer.byteLength(text),
    ...headers
  })
  res.end(text)
}

/** The REST error body for any thrown value; unknown throwables are a 500. */
export const errorBody = (
  error: unknown,
  variant: EmulatorVariant = "reference"
): { status: number; body: unknown; headers?: Readonly<Record<string, string>> } => {
  if (error instanceof HttpError && variant === "alt") {
    const { body, status } = altErrorAnswer(error, error instanceof NoAccessError)
    return error.headers === undefined ? { status, body } : { status, body, headers: error.headers }
  }
  if (error instanceof HttpError) {
    const payload: { code: string; message: string; issues?: ReadonlyArray<Issue> } = {
      code: error.code,
      message: error.message
    }
    if (error.issues !== undefined) payload.issues = error.issues
    return error.headers === undefined
      ? { status: error.status, body: { error: payload } }
      : { status: error.status, body: { error: payload }, headers: error.headers }
  }
  return { status: 500, body: { error: { code: "INTERNAL_SERVER_ERROR", message: "Internal server error" } } }
}

export const sendError = (res: ServerResponse, error: unknown, variant: EmulatorVariant = "reference"): void => {
  if (res.headersSent) {
    res.destroy()
    return
  }
  const { body, headers, status } = errorBody(error, variant)
  sendJson(res, status, body, headers)
}
