/**
 * The presigned upload flow and file downloads.
 *
 * - presign: REST `GET {restUrl}/uploads` (Bearer, `x-<p>-company-id`, `x-<p>-project-id`)
 *   or app `GET {baseUrl}/uploads` (token id/secret, `<p>-org-id`, `<p>-workspace-id`).
 * - putToStorage: `PUT` to the returned url with exactly the returned headers plus
 *   Content-Length, and no service credential at all (storage is another origin). Sent
 *   once: the url is single-use (R-UPLOAD-PRESIGN-07), so a failure is `StoragePutFailed`
 *   and the caller confirms (the bytes may have landed) or presigns afresh.
 * - confirm: `PUT .../uploads/{uid}/confirm`, safe to repeat; a 400 (stored size differs)
 *   is `UploadSizeMismatch` so the caller uploads again.
 * - download: `GET {baseUrl}/uploads/{uid}/{name}` answers a redirect to signed storage;
 *   the redirect is followed by hand so no credential is forwarded (none is sent at all:
 *   serving needs no authentication).
 */
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as HttpClientRequest from "effect/http/HttpClientRequest"
import type * as HttpClientResponse from "effect/http/HttpClientResponse"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import type * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import { PRESIGN_MAX_FILE_BYTES } from "../schema/limits.ts"
import { ConfirmResponse, PresignResponse } from "../schema/uploads.ts"
import { Connection, type ConnectionConfig, headerNames } from "./config.ts"
import {
  type HttpFailure,
  InputRejected,
  LimitExceeded,
  type OutcomeUnknown,
  RateLimited,
  ServerError,
  StoragePutFailed,
  Timeout,
  TransportError,
  UnexpectedStatus,
  UploadRejected,
  UploadSizeMismatch
} from "./errors.ts"
import { bodyStream, type UploadSource } from "./multipart.ts"
import { Pipeline, type PipelineApi } from "./pipeline.ts"
import { errorPartsOf, failureOfStatus } from "./responses.ts"
import { type Answer, decodeWith, exchange, parseJson } from "./transport.ts"

export type UploadError =
  | HttpFailure
  | UploadRejected
  | UploadSizeMismatch
  | LimitExceeded
  | InputRejected
  | OutcomeUnknown
  | StoragePutFailed

/** Which authentication family to use for presign and confirm. */
export type UploadVia = "rest" | "app"

export interface PresignInput {
  /** Name with extension; the service derives MIME type and extension from it. */
  readonly filename: string
  /** Bytes; checked against the 4.8 GB limit before anything is sent. */
  readonly size?: number
  /** Custom file id (uid). */
  readonly key?: string
  /** Workspace id or slug (the project header). */
  readonly workspaceId: string
  /** Organization id or slug; defaults to the configured org. */
  readonly companyId?: string
  /** Default: "app" when a token id and secret are configured, else "rest". */
  readonly via?: UploadVia
}

export interface ConfirmInput {
  readonly uid: string
  readonly workspaceId?: string
  readonly companyId?: string
  readonly via?: UploadVia
}

export interface UploadResult {
  readonly uid: string
  readonly presigned: PresignResponse
  readonly confirmed: ConfirmResponse
}

export interface UploadsApi {
  readonly presign: (input: PresignInput) => Effect.Effect<PresignResponse, UploadError>
  /** PUTs `body` (exactly `size` bytes) to the presigned url; no service credential is sent. */
  readonly putToStorage: (
    presigned: PresignResponse,
    body: Stream.Stream<Uint8Array, unknown> | UploadSource,
    size: number
  ) => Effect.Effect<void, UploadError>
  readonly confirm: (input: ConfirmInput) => Effect.Effect<ConfirmResponse, UploadError>
  /** presign, PUT, confirm; the file ends CONFIRMED. */
  readonly upload: (
    source: UploadSource,
    options: Omit<PresignInput, "filename" | "size"> & { readonly filename?: string }
  ) => Effect.Effect<UploadResult, UploadError>
  /** The download URL of a file (`{baseUrl}/uploads/{uid}/{encoded name}`). */
  readonly downloadUrl: (uid: string, name: string) => string
  /** The file's bytes, following the redirect to storage by hand. */
  readonly download: (uid: string, name: string) => Stream.Stream<Uint8Array, UploadError>
}

export class Uploads extends Context.Service<Uploads, UploadsApi>()("worksync/Uploads") {}

/** A confirm refused because the file is confirmed already (its code or message says so). */
const ALREADY_CONFIRMED = /already[ _-]?confirmed/i

/** Presign/confirm/serve answers: 400/401/403/404 are upload rejections. */
const uploadFailure = (
  operation: string,
  answer: Answer,
  nowMs: number,
  onConfirm: string | null
): RateLimited | ServerError | UploadSizeMismatch | UploadRejected | UnexpectedStatus => {
  const parts = errorPartsOf(answer.text)
  return failureOfStatus(operation, answer, nowMs, parts.message, (status): UploadSizeMismatch | UploadRejected | undefined => {
    if (status === 400 && onConfirm !== null) {
      // The code is kept in the detail: it may say the file is confirmed already.
      const detail = parts.code !== null && !parts.message.includes(parts.code) ? `${parts.code}: ${parts.message}` : parts.message
      return new UploadSizeMismatch({ operation, uid: onConfirm, detail })
    }
    if (status === 400 || status === 401 || status === 403 || status === 404) {
      return new UploadRejected({ operation, status, code: parts.code, detail: parts.message })
    }
    return undefined
  })
}

/** Lets a transfer of `size` bytes take its time: the timeout grows with the size (at 256 KB/s). */
const transferTimeout = (baseMs: number, size: number): number => baseMs + Math.ceil(size / 256)

export const makeUploads = (config: ConnectionConfig, pipeline: PipelineApi): UploadsApi => {
  const names = headerNames(config.headerPrefix)
  const hasAppToken = Option.isSome(config.tokenId) && Option.isSome(config.tokenSecret)
  const viaOf = (via: UploadVia | undefined): UploadVia => via ?? (hasAppToken ? "app" : "rest")
  /** The pipeline's client of the family: its credentials and organization go on there. */
  const clientOf = (via: UploadVia) => (via === "rest" ? pipeline.rest : pipeline.app)

  /**
   * The scope of one presign or confirm: the workspace (the project header, as documented
   * for REST /uploads; the workspace header for app /uploads) and an organization other
   * than the connection's when one is named (both organization headers on REST, as on
   * every REST call).
   */
  const scopeHeaders = (via: UploadVia, workspaceId: string | undefined, companyId: string | undefined) => {
    const h: Record<string, string> = {}
    if (via === "rest") {
      if (companyId !== undefined) {
        h[names.companyId] = companyId
        h[names.orgId] = companyId
      }
      if (workspaceId !== undefined) h[names.projectId] = workspaceId
    } else {
      if (companyId !== undefined) h[names.orgId] = companyId
      if (workspaceId !== undefined) h[names.workspaceId] = workspaceId
    }
    return h
  }

  const serviceCall = <A, I>(
    operation: string,
    via: UploadVia,
    build: () => HttpClientRequest.HttpClientRequest,
    schema: Schema.Codec<A, I>,
    confirmUid: string | null,
    summary: string
  ): Effect.Effect<A, UploadError> =>
    pipeline.call(clientOf(via), {
      operation,
      request: build,
      idempotent: true,
      inputSummary: summary,
      failureOf: (answer, now) => uploadFailure(operation, answer, now, confirmUid)
    }).pipe(
      Effect.flatMap((answer) => parseJson(operation, answer.text)),
      Effect.flatMap((json) => decodeWith(operation, schema, json))
    )

  const presign = (input: PresignInput): Effect.Effect<PresignResponse, UploadError> => {
    const operation = "presign upload"
    if (input.size !== undefined && input.size > PRESIGN_MAX_FILE_BYTES) {
      return Effect.fail(
        new LimitExceeded({
          operation,
          limit: "4.8 GB per presigned upload",
          subject: `file ${input.filename}`,
          actual: input.size,
          max: PRESIGN_MAX_FILE_BYTES
        })
      )
    }
    const via = viaOf(input.via)
    const params = new URLSearchParams({ filename: input.filename })
    if (input.size !== undefined) params.set("size", String(input.size))
    if (input.key !== undefined) params.set("key", input.key)
    const base = via === "rest" ? config.restUrl : config.baseUrl
    const url = `${base}/uploads?${params.toString()}`
    return serviceCall(
      operation,
      via,
      () => HttpClientRequest.get(url).pipe(HttpClientRequest.setHeaders(scopeHeaders(via, input.workspaceId, input.companyId))),
      PresignResponse,
      null,
      `filename=${JSON.stringify(input.filename)}, size=${input.size ?? "?"}`
    )
  }

  const confirm = (input: ConfirmInput): Effect.Effect<ConfirmResponse, UploadError> => {
    const via = viaOf(input.via)
    const base = via === "rest" ? config.restUrl : config.baseUrl
    const url = `${base}/uploads/${encodeURIComponent(input.uid)}/confirm`
    return serviceCall(
      "confirm upload",
      via,
      () => HttpClientRequest.put(url).pipe(HttpClientRequest.setHeaders(scopeHeaders(via, input.workspaceId, input.companyId))),
      ConfirmResponse,
      input.uid,
      `uid=${input.uid}`
    ).pipe(
      // What confirming a CONFIRMED file answers is not shown (assumptions.ts
      // CONFIRM_IDEMPOTENT): a refusal that says so (e.g. after a confirm whose answer
      // was lost) means the file is confirmed, not that its bytes must go again.
      Effect.catchIf(
        (e) => e._tag === "UploadSizeMismatch" && ALREADY_CONFIRMED.test(e.detail),
        (): Effect.Effect<ConfirmResponse> => Effect.succeed({ message: "already confirmed", status: "CONFIRMED" })
      )
    )
  }

  const putToStorage = (
    presigned: PresignResponse,
    body: Stream.Stream<Uint8Array, unknown> | UploadSource,
    size: number
  ): Effect.Effect<void, UploadError> => {
    const operation = "storage PUT"
    const stream = Stream.isStream(body)
      ? (body as Stream.Stream<Uint8Array, unknown>)
      : bodyStream(body as UploadSource)
    // Exactly the headers the service returned (the signature is bound to them) and the
    // length; nothing from the connection config.
    const headers: Record<string, string> = {}
    for (const [k, v] of Object.entries(presigned.headers)) {
      if (typeof v === "string") headers[k] = v
    }
    const build = () => {
      const req = HttpClientRequest.make("PUT")(presigned.url).pipe(HttpClientRequest.setHeaders(headers))
      return size === 0
        ? req.pipe(HttpClientRequest.bodyUint8Array(new Uint8Array(0)), HttpClientRequest.setHeader("content-length", "0"))
        : req.pipe(HttpClientRequest.bodyStream(stream, { contentLength: size }))
    }
    const contentType = headers["Content-Type"] ?? headers["content-type"]
    const uid = presigned.fields["X-Key"]
    const failed = (status: number | null, outcome: StoragePutFailed["outcome"], detail: string) =>
      new StoragePutFailed({ operation, uid, status, outcome, detail })
    // Storage is not the service: no limiter. One attempt only: the url is single-use.
    return Effect.suspend(() => {
      let req = build()
      // bodyStream/bodyUint8Array set their own content type; put the signed one back.
      if (contentType !== undefined) req = HttpClientRequest.setHeader(req, "content-type", contentType)
      return exchange(pipeline.bare, req, operation, transferTimeout(config.requestTimeoutMs, size))
    }).pipe(
      Effect.catchTags({
        TransportError: (e) => Effect.fail(e.sent ? failed(null, "unknown", e.message) : failed(null, "not-stored", e.detail)),
        Timeout: (e) => Effect.fail(failed(null, "unknown", e.message))
      }),
      Effect.flatMap((answer) => {
        if (answer.status >= 200 && answer.status < 300) return Effect.void
        const detail = errorPartsOf(answer.text).message
        // A 5xx may come after the bytes were stored; any other refusal stored nothing.
        return Effect.fail(failed(answer.status, answer.status >= 500 ? "unknown" : "not-stored", detail))
      })
    )
  }

  const upload = (
    source: UploadSource,
    options: Omit<PresignInput, "filename" | "size"> & { readonly filename?: string }
  ): Effect.Effect<UploadResult, UploadError> =>
    Effect.gen(function*() {
      const size = source.size
      if (size === undefined) {
        return yield* Effect.fail(
          new InputRejected({
            operation: "presign upload",
            path: "size",
            detail: `the size of ${source.name} must be known: the presigned flow declares it up front`
          })
        )
      }
      const presigned = yield* presign({ ...options, filename: options.filename ?? source.name, size })
      yield* putToStorage(presigned, source, size)
      const uid = presigned.fields["X-Key"]
      const confirmed = yield* confirm({
        uid,
        workspaceId: options.workspaceId,
        ...(options.companyId !== undefined ? { companyId: options.companyId } : {}),
        ...(options.via !== undefined ? { via: options.via } : {})
      })
      return { uid, presigned, confirmed }
    })

  const downloadUrl = (uid: string, name: string): string =>
    `${config.baseUrl}/uploads/${encodeURIComponent(uid)}/${encodeURIComponent(name)}`

  const drain = (response: HttpClientResponse.HttpClientResponse) => Effect.ignore(response.text)

  /**
   * One GET answered with headers only (the body is left for streaming), with no header
   * at all: serving needs no authentication, storage must see no credential. Storage
   * (`limited: false`) is not the service and takes no share of its rate.
   */
  const head = (
    operation: string,
    url: string,
    limited: boolean
  ): Effect.Effect<HttpClientResponse.HttpClientResponse, UploadError> =>
    pipeline.open(pipeline.bare, {
      operation,
      request: () => HttpClientRequest.get(url),
      idempotent: true,
      inputSummary: url.split("?")[0] ?? "",
      failureOf: (answer, now) => uploadFailure(operation, answer, now, null),
      limited
    })

  const download = (uid: string, name: string): Stream.Stream<Uint8Array, UploadError> => {
    // The file's name in every failure, so a copy's summary says which file it was.
    const operation = `download ${JSON.stringify(name)}`
    const first = downloadUrl(uid, name)
    return Stream.unwrap(
      Effect.gen(function*() {
        let response = yield* head(operation, first, true)
        let url = first
        // Follow at most a few redirects by hand, sending nothing but the bare GET.
        for (let hops = 0; response.status >= 300 && response.status < 400; hops++) {
          const location = response.headers["location"]
          yield* drain(response)
          if (location === undefined || hops >= 5) {
            return yield* Effect.fail(
              new UnexpectedStatus({ operation, status: response.status, detail: location === undefined ? "redirect without Location" : "too many redirects" })
            )
          }
          url = new URL(location, url).toString()
          response = yield* head(operation, url, false)
        }
        const idleMs = config.bodyIdleTimeoutMs
        return response.stream.pipe(
          Stream.mapError((e) =>
            new TransportError({ operation, detail: e.reason._tag === "DecodeError" ? "download interrupted" : e.message, sent: true })
          ),
          // The headers are timed above; a body that stops coming must end too, or the
          // download waits forever. Ending the stream aborts the request. The wait restarts
          // with every chunk.
          Stream.timeoutOrElse({
            duration: Duration.millis(idleMs),
            orElse: () => Stream.fail(new Timeout({ operation, timeoutMs: idleMs, idleBody: true }))
          })
        )
      })
    )
  }

  return { presign, putToStorage, confirm, upload, downloadUrl, download }
}

export const uploadsLayer: Layer.Layer<Uploads, never, Connection | Pipeline> = Layer.effect(
  Uploads,
  Effect.gen(function*() {
    return makeUploads(yield* Connection, yield* Pipeline)
  })
)
