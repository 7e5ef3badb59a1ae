/**
 * The GraphQL multipart request convention, built as a stream: part `operations` (JSON
 * with `query` and `variables`, each file variable null), part `map` (part name → list
 * of variable paths), then one part per file, read from disk or any byte stream without
 * holding a whole file in memory. When every size is known, the exact Content-Length is
 * computed up front.
 */
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import { createReadStream } from "node:fs"
import { stat } from "node:fs/promises"
import { basename, extname } from "node:path"

/** Where a file's bytes come from. */
export type UploadBody =
  | { readonly _tag: "Path"; readonly path: string }
  | { readonly _tag: "Bytes"; readonly bytes: Uint8Array }
  | { readonly _tag: "Stream"; readonly stream: Stream.Stream<Uint8Array, unknown> }

/** One file to upload. */
export interface UploadSource {
  /** File name sent to the service (with extension). */
  readonly name: string
  /** MIME type; guessed from the extension when absent. */
  readonly contentType?: string | undefined
  /** Size in bytes; known for paths and bytes, optional for streams (no Content-Length then). */
  readonly size: number | undefined
  readonly body: UploadBody
}

/** A local file could not be read. */
export class LocalFileError extends Data.TaggedError("LocalFileError")<{
  readonly path: string
  readonly detail: string
}> {
  override get message(): string {
    return `cannot read ${this.path}: ${this.detail}`
  }
}

export const fromBytes = (name: string, bytes: Uint8Array, contentType?: string): UploadSource => ({
  name,
  contentType,
  size: bytes.byteLength,
  body: { _tag: "Bytes", bytes }
})

export const fromStream = (
  name: string,
  stream: Stream.Stream<Uint8Array, unknown>,
  size?: number,
  contentType?: string
): UploadSource => ({ name, contentType, size, body: { _tag: "Stream", stream } })

/** A file on disk; its size is read now, its bytes only while sending. */
export const fromPath = (
  path: string,
  options?: { readonly name?: string; readonly contentType?: string }
): Effect.Effect<UploadSource, LocalFileError> =>
  Effect.tryPromise({
    try: () => stat(path),
    catch: (e) => new LocalFileError({ path, detail: e instanceof Error ? e.message : String(e) })
  }).pipe(
    Effect.filterOrFail(
      (s) => s.isFile(),
      () => new LocalFileError({ path, detail: "not a regular file" })
    ),
    Effect.map((s) => ({
      name: options?.name ?? basename(path),
      contentType: options?.contentType,
      size: s.size,
      body: { _tag: "Path", path } as const
    }))
  )

/** The bytes of a source as a stream (files are read in chunks, lazily). */
export const bodyStream = (source: UploadSource): Stream.Stream<Uint8Array, unknown> => {
  switch (source.body._tag) {
    case "Bytes":
      return Stream.succeed(source.body.bytes)
    case "Stream":
      return source.body.stream
    case "Path": {
      const path = source.body.path
      return Stream.suspend(() =>
        Stream.fromAsyncIterable(
          createReadStream(path, { highWaterMark: 256 * 1024 }) as AsyncIterable<Uint8Array>,
          (e) => new LocalFileError({ path, detail: e instanceof Error ? e.message : String(e) })
        )
      )
    }
  }
}

const MIME: Readonly<Record<string, string>> = {
  txt: "text/plain",
  csv: "text/csv",
  md: "text/markdown",
  html: "text/html",
  json: "application/json",
  xml: "application/xml",
  pdf: "application/pdf",
  zip: "application/zip",
  gz: "application/gzip",
  png: "image/png",
  jpg: "image/jpeg",
  jpeg: "image/jpeg",
  gif: "image/gif",
  webp: "image/webp",
  svg: "image/svg+xml",
  mp4: "video/mp4",
  mp3: "audio/mpeg",
  doc: "application/msword",
  docx: "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
  xls: "application/vnd.ms-excel",
  xlsx: "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
  ppt: "application/vnd.ms-powerpoint",
  pptx: "application/vnd.openxmlformats-officedocument.presentationml.presentation"
}

/** MIME type from a file name's extension; `application/octet-stream` when unknown. */
export const guessContentType = (name: string): string =>
  MIME[extname(name).slice(1).toLowerCase()] ?? "application/octet-stream"

/** One file of a multipart request and the variable paths it fills. */
export interface MultipartFile {
  readonly source: UploadSource
  /** Variable paths, e.g. `["variables.input.file"]`. */
  readonly paths: ReadonlyArray<string>
}

export interface MultipartBody {
  readonly boundary: string
  readonly contentType: string
  /** Exact byte length, when every file size is known. */
  readonly contentLength: number | undefined
  readonly stream: Stream.Stream<Uint8Array, unknown>
}

const encoder = new TextEncoder()
const CRLF = "\r\n"

const escapeFormName = (name: string): string =>
  name.replace(/"/g, "%22").replace(/\r/g, "%0D").replace(/\n/g, "%0A")

/**
 * The `Content-Disposition` of a file part, as browsers and undici's FormData write it
 * (the WHATWG multipart/form-data encoding algorithm, RFC 7578 section 4.2): the name in
 * raw UTF-8 inside `filename="..."`, with only `"`, CR and LF escaped as `%22`, `%0D`
 * and `%0A`, and no `filename*` parameter. RFC 7578 forbids `filename*` in form data,
 * and Node's own parser (`Request.formData()`) refuses a whole body that carries one.
 * Backslashes stay raw, as browsers send them.
 */
export const fileDisposition = (partName: string, fileName: string): string =>
  `form-data; name="${escapeFormName(partName)}"; filename="${escapeFormName(fileName)}"`

/** A fresh boundary; not derived from content, long enough never to occur in it by chance. */
export const makeBoundary = (): string => {
  const bytes = new Uint8Array(16)
  globalThis.crypto.getRandomValues(bytes)
  return `----worksync${Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("")}`
}

/**
 * Builds the multipart body. `operations` must already hold null at every file path.
 * Parts are named `0`, `1`, ... in the order of `files`.
 */
export const buildMultipart = (
  operations: { readonly query: string; readonly variables: unknown; readonly operationName?: string },
  files: ReadonlyArray<MultipartFile>,
  boundary: string = makeBoundary()
): MultipartBody => {
  const map: Record<string, ReadonlyArray<string>> = {}
  files.forEach((f, i) => {
    map[String(i)] = f.paths
  })
  const textPart = (name: string, value: string) =>
    `--${boundary}${CRLF}Content-Disposition: form-data; name="${name}"${CRLF}${CRLF}${value}${CRLF}`
  const head = encoder.encode(
    textPart("operations", JSON.stringify(operations)) + textPart("map", JSON.stringify(map))
  )
  const fileHeads = files.map((f, i) =>
    encoder.encode(
      `--${boundary}${CRLF}Content-Disposition: ${fileDisposition(String(i), f.source.name)}${CRLF}` +
        `Content-Type: ${f.source.contentType ?? guessContentType(f.source.name)}${CRLF}${CRLF}`
    )
  )
  const crlf = encoder.encode(CRLF)
  const tail = encoder.encode(`--${boundary}--${CRLF}`)

  const sizes = files.map((f) => f.source.size)
  const contentLength = sizes.every((s): s is number => s !== undefined)
    ? head.byteLength +
      fileHeads.reduce((n, h) => n + h.byteLength, 0) +
      sizes.reduce((n, s) => n + s, 0) +
      files.length * crlf.byteLength +
      tail.byteLength
    : undefined

  const parts: Array<Stream.Stream<Uint8Array, unknown>> = [Stream.succeed(head)]
  files.forEach((f, i) => {
    parts.push(Stream.succeed(fileHeads[i]!), bodyStream(f.source), Stream.succeed(crlf))
  })
  parts.push(Stream.succeed(tail))
  const stream = parts.reduce((acc, part) => Stream.concat(acc, part))
  return { boundary, contentType: `multipart/form-data; boundary=${boundary}`, contentLength, stream }
}
