/**
 * The GraphQL multipart request convention (R-UPLOAD-MULTIPART-01..04): part `operations`
 * (JSON `{query, variables}` with the file variables null), part `map` (part name to
 * variable paths), then one part per file. Parsed with busboy; each file streams
 * straight into the object store, so no file is held in memory.
 *
 * Limits (R-GQL-ERR-02..04, R-LIMIT-01..03): 256 MB per file, 10 files and 1 GB per
 * batch, read as decimal units (256,000,000 and 1,000,000,000 bytes; `SIZE_UNITS` in
 * assumptions.ts), all BAD_USER_INPUT. A request whose Content-Length already proves a
 * limit is broken is refused as soon as `map` is read, before any file byte is stored;
 * otherwise the stream is refused the moment it crosses a limit.
 */
import busboy from "busboy"
import type { IncomingMessage } from "node:http"
import { Transform } from "node:stream"
import type { GraphQLError } from "graphql"
import { BATCH_MAX_BYTES, BATCH_MAX_FILES, GB, MB, MULTIPART_MAX_FILE_BYTES } from "../../schema/limits.ts"
import type { EmulatorContext } from "../context.ts"
import { storageKeyFor } from "../uploads/files.ts"
import { badInput } from "./errors.ts"
import type { UploadedPart } from "./request.ts"

export interface GraphqlRequest {
  readonly query: string
  readonly variables: Record<string, unknown> | null
  readonly operationName: string | null
}

export interface MultipartResult {
  readonly request: GraphqlRequest
  readonly parts: ReadonlyArray<UploadedPart>
}

/** The limits as the documents write them, with the exact figure we read them as. */
const FILE_LIMIT_TEXT = `${MULTIPART_MAX_FILE_BYTES / MB} MB (${MULTIPART_MAX_FILE_BYTES} bytes)`
const BATCH_TOO_LARGE = `The batch exceeds ${BATCH_MAX_BYTES / GB} GB (${BATCH_MAX_BYTES} bytes) in total`

/** Room for one part's headers and boundary; generous, so the early check never misfires. */
const PART_OVERHEAD = 64 * 1024

/**
 * How busboy must read file names to get back what a browser or undici's FormData sent
 * (the WHATWG multipart/form-data encoding, RFC 7578): the names are raw UTF-8 (busboy's
 * default for header parameters is latin1), and a backslash is part of the name, not a
 * path separator to cut at (busboy keeps only the last path segment by default).
 * busboy still reads a quoted-string the RFC 2616 way, where a backslash before another
 * backslash or a quote escapes it: a name with two backslashes in a row comes back with
 * one, and a name that ends in a backslash makes the part unreadable. Browsers never
 * escape a backslash, so those rare names are the ones this reading cannot give back
 * exactly.
 */
export const FORM_NAME_READING = { defParamCharset: "utf8", preservePath: true } as const

/**
 * A file name as sent, from what busboy read: browsers escape only `"`, CR and LF, as
 * `%22`, `%0D` and `%0A`, and busboy leaves those escapes in place. Any other `%` is
 * part of the name (the same decoding as Node's own `Request.formData()`).
 */
export const decodeFormFileName = (name: string): string =>
  name.replace(/%22|%0[AaDd]/g, (escape) => String.fromCharCode(parseInt(escape.slice(1), 16)))

class Refused extends Error {
  constructor(readonly error: GraphQLError) {
    super(error.message)
  }
}

/** A GraphQL request from its decoded JSON form; BAD_USER_INPUT when it is not one. */
export const asGraphqlRequest = (value: unknown): GraphqlRequest => {
  if (Array.isArray(value)) throw badInput("Batched operations are not supported")
  if (value === null || typeof value !== "object") throw badInput("The request must be a JSON object with `query`")
  const o = value as Record<string, unknown>
  if (typeof o["query"] !== "string" || o["query"].trim() === "") throw badInput("`query` must be a non-empty string")
  const variables = o["variables"]
  if (variables !== undefined && variables !== null && (typeof variables !== "object" || Array.isArray(variables))) {
    throw badInput("`variables` must be an object")
  }
  const operationName = o["operationName"]
  return {
    query: o["query"],
    variables: (variables as Record<string, unknown> | undefined) ?? null,
    operationName: typeof operationName === "string" ? operationName : null
  }
}

/** Sets `value` at a `variables.input.files.0` path of the operations object. */
const setPath = (root: Record<string, unknown>, path: string, value: unknown): void => {
  const segments = path.split(".")
  let node: unknown = root
  for (let i = 0; i < segments.length - 1; i++) {
    const key = segments[i]!
    const next: unknown = (node as Record<string, unknown>)[key]
    if (next === null || typeof next !== "object") throw badInput(`map path ${path} does not exist in operations`)
    node = next
  }
  const last = segments[segments.length - 1]!
  if (Array.isArray(node)) {
    const index = Number(last)
    if (!Number.isInteger(index) || index < 0 || index >= node.length) throw badInput(`map path ${path} does not exist in operations`)
    node[index] = value
  } else {
    ;(node as Record<string, unknown>)[last] = value
  }
}

const parseJsonField = (name: string, value: string): unknown => {
  try {
    return JSON.parse(value)
  } catch {
    throw badInput(`Part \`${name}\` is not valid JSON`)
  }
}

/**
 * Reads a multipart GraphQL request. Rejects with a GraphQLError (BAD_USER_INPUT) on a
 * malformed request or a broken limit; stored objects of a refused request are removed.
 */
export const readMultipart = (ctx: EmulatorContext, req: IncomingMessage): Promise<MultipartResult> =>
  new Promise((resolve, reject) => {
    let bb: busboy.Busboy
    try {
      bb = busboy({
        headers: req.headers,
        ...FORM_NAME_READING,
        limits: { files: BATCH_MAX_FILES + 1, fields: 16, fieldSize: 16 * 1024 * 1024, parts: BATCH_MAX_FILES + 32 }
      })
    } catch {
      reject(badInput("A multipart/form-data body with a boundary is required"))
      return
    }
    const declaredLength = Number(req.headers["content-length"] ?? Number.NaN)
    let received = 0
    let operations: unknown = undefined
    let map: Map<string, ReadonlyArray<string>> | undefined
    const parts = new Map<string, UploadedPart>()
    const writes: Array<Promise<unknown>> = []
    const active = new Set<Transform>()
    let batchBytes = 0
    let settled = false

    const cleanup = () => {
      for (const part of parts.values()) ctx.objects.remove(part.storageKey)
    }
    const fail = (error: unknown) => {
      if (settled) return
      settled = true
      req.unpipe(bb)
      // Stop reading: the answer goes out and the connection closes (see the route).
      req.pause()
      // Writes still open would wait forever for bytes that will not come.
      for (const limiter of active) limiter.destroy(new Refused(badInput("The request was refused")))
      Promise.allSettled(writes).then(cleanup, cleanup)
      reject(error instanceof Refused ? error.error : error)
    }

    req.on("data", (chunk: Buffer) => {
      received += chunk.length
    })

    bb.on("field", (name, value) => {
      if (settled) return
      try {
        if (name === "operations") {
          operations = parseJsonField(name, value)
        } else if (name === "map") {
          if (operations === undefined) throw badInput("Part `operations` must come before `map`")
          const raw = parseJsonField(name, value)
          if (raw === null || typeof raw !== "object" || Array.isArray(raw)) throw badInput("Part `map` must be an object")
          map = new Map()
          for (const [key, paths] of Object.entries(raw as Record<string, unknown>)) {
            if (!Array.isArray(paths) || paths.length === 0 || !paths.every((p) => typeof p === "string")) {
              throw badInput(`map entry ${key} must be a non-empty list of variable paths`)
            }
            map.set(key, paths as Array<string>)
          }
          if (map.size > BATCH_MAX_FILES) {
            throw badInput(`At most ${BATCH_MAX_FILES} files per batch (got ${map.size})`)
          }
          earlyCheck(map.size)
        }
      } catch (e) {
        fail(e)
      }
    })

    // What is left of a request with a Content-Length is known before any file byte
    // arrives; more than the limits allow is refused without storing anything.
    const earlyCheck = (files: number) => {
      if (!Number.isFinite(declaredLength) || files === 0) return
      const remaining = declaredLength - received
      if (remaining > BATCH_MAX_BYTES + (files + 1) * PART_OVERHEAD) {
        throw badInput(BATCH_TOO_LARGE)
      }
      if (remaining > files * MULTIPART_MAX_FILE_BYTES + (files + 1) * PART_OVERHEAD) {
        throw badInput(`A file exceeds ${FILE_LIMIT_TEXT}`)
      }
    }

    bb.on("file", (name, stream, info) => {
      if (settled || map === undefined) {
        stream.resume()
        if (map === undefined) fail(badInput("Parts `operations` and `map` must come before the files"))
        return
      }
      if (!map.has(name)) {
        stream.resume()
        return
      }
      const uid = ctx.ids.uid()
      const part: UploadedPart = {
        kind: "upload",
        uid,
        storageKey: storageKeyFor(uid),
        filename: info.filename === undefined ? name : decodeFormFileName(info.filename),
        mimeType: info.mimeType,
        size: 0,
        claimed: false
      }
      parts.set(name, part)
      let fileBytes = 0
      const limiter = new Transform({
        transform(chunk: Buffer, _enc, done) {
          fileBytes += chunk.length
          batchBytes += chunk.length
          if (fileBytes > MULTIPART_MAX_FILE_BYTES) return done(new Refused(badInput(`File ${part.filename} exceeds ${FILE_LIMIT_TEXT}`)))
          if (batchBytes > BATCH_MAX_BYTES) return done(new Refused(badInput(BATCH_TOO_LARGE)))
          done(null, chunk)
        }
      })
      active.add(limiter)
      limiter.on("close", () => active.delete(limiter))
      stream.on("error", (e) => limiter.destroy(e))
      stream.pipe(limiter)
      writes.push(
        ctx.objects.put(part.storageKey, limiter).then(
          (stored) => {
            ;(part as { size: number }).size = stored.size
          },
          (e: unknown) => {
            fail(e instanceof Refused ? e : badInput(`File ${part.filename} could not be stored`))
          }
        )
      )
    })

    bb.on("filesLimit", () => fail(badInput(`At most ${BATCH_MAX_FILES} files per batch`)))
    bb.on("error", (e) => fail(badInput(`Malformed multipart body: ${e instanceof Error ? e.message : String(e)}`)))

    bb.on("close", () => {
      if (settled) return
      Promise.all(writes).then(
        () => {
          if (settled) return
          try {
            if (operations === undefined) throw badInput("Part `operations` is missing")
            const request = asGraphqlRequest(operations)
            const ops = operations as Record<string, unknown>
            for (const [name, paths] of map ?? new Map<string, ReadonlyArray<string>>()) {
              const part = parts.get(name)
              if (part === undefined) throw badInput(`File part ${name} named in map is missing`)
              for (const path of paths) setPath(ops, path, part)
            }
            settled = true
            resolve({
              request: { ...request, variables: (ops["variables"] as Record<string, unknown> | null | undefined) ?? null },
              parts: [...parts.values()]
            })
          } catch (e) {
            fail(e)
          }
        },
        (e: unknown) => fail(e)
      )
    })

    req.on("aborted", () => fail(badInput("The request was aborted")))
    req.pipe(bb)
  })
