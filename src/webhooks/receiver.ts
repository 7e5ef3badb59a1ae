/**
 * A small webhook receiver: a scoped node:http server that reads each POST's raw body,
 * checks `X-Signature` against the secret (constant time), decodes the delivery and
 * hands it on. A bad or missing signature is 401 and nothing is delivered; a body that
 * is not a delivery is 400. Unknown `event` strings are delivered as they are
 * (R-WEBHOOK-DELIVERY-18). A handler failure answers 500, so the service retries.
 *
 * `serveWebhookBatches` hands on together the deliveries verified in one turn of the
 * event loop (a busy sender keeps several in flight), so that a handler can make them
 * durable in one write before any of them is answered.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { Context, Data, Effect, Layer, Queue, Redacted, Result, type Scope } from "effect"
import { decodeUnknownEither, describeParseError } from "../schema/decode.ts"
import { WebhookDelivery } from "../schema/webhooks.ts"
import { SIGNATURE_HEADER, verifySignature } from "./signature.ts"

export class WebhookReceiverError extends Data.TaggedError("WebhookReceiverError")<{
  readonly message: string
  readonly cause?: unknown
}> {}

/** One secret, several (a rotation: deliveries signed with any of them verify), or where to read them each time. */
export type WebhookSecrets =
  | string
  | Redacted.Redacted<string>
  | ReadonlyArray<string | Redacted.Redacted<string>>
  | (() => ReadonlyArray<string | Redacted.Redacted<string>>)

export interface WebhookReceiverOptions {
  /**
   * The webhook's signing secret (as `createWebhook` returned it), or several: while a
   * webhook is replaced, deliveries of the old and the new one both verify.
   */
  readonly secret: WebhookSecrets
  /** Default 127.0.0.1. */
  readonly host?: string
  /** Default 0 (an ephemeral port). */
  readonly port?: number
  /** Only this path is served (others 404); default: any path. */
  readonly path?: string
  /** Largest body accepted, default 10 MB; larger is 413. */
  readonly maxBodyBytes?: number
}

/** A verified, decoded delivery, with the exact bytes that were signed. */
export interface ReceivedDelivery {
  readonly delivery: WebhookDelivery
  readonly rawBody: Uint8Array
  /**
   * The `X-Signature` it verified with, in lower-case hex: the HMAC of the exact body, so
   * the same body signed with the same secret (a delivery sent again) has the same one.
   */
  readonly signature: string
}

export interface WebhookReceiver {
  /** The URL to register as the webhook's endpoint. */
  readonly url: string
  readonly port: number
}

const readRaw = (req: IncomingMessage, max: number): Promise<Buffer | "too-large"> =>
  new Promise((resolve, reject) => {
    const chunks: Array<Buffer> = []
    let size = 0
    let over = false
    req.on("data", (chunk: Buffer) => {
      size += chunk.length
      if (size > max) over = true
      else chunks.push(chunk)
    })
    req.on("end", () => resolve(over ? "too-large" : Buffer.concat(chunks)))
    req.on("error", reject)
  })

const answer = (res: ServerResponse, status: number, message: string) => {
  res.writeHead(status, { "content-type": "text/plain; charset=utf-8" })
  res.end(message)
}

const decodeDelivery = decodeUnknownEither(WebhookDelivery)

/**
 * Serves webhook deliveries until the scope closes; each verified delivery runs
 * `onDelivery` before the answer (2xx only when it succeeds).
 */
export const serveWebhooks = <E, R>(
  options: WebhookReceiverOptions,
  onDelivery: (received: ReceivedDelivery) => Effect.Effect<void, E, R>
): Effect.Effect<WebhookReceiver, WebhookReceiverError, R | Scope.Scope> =>
  Effect.flatMap(Effect.context<R>(), (services) =>
    listen(options, (received) =>
      Effect.runPromiseExitWith(services)(onDelivery(received)).then((exit) => exit._tag === "Success")))

/**
 * Serves webhook deliveries until the scope closes; the deliveries verified in one turn
 * of the event loop run `onBatch` together, in the order they were verified, before
 * any of them is answered: 2xx to each when it succeeds, 500 to each when it fails
 * (the service sends them all again).
 */
export const serveWebhookBatches = <E, R>(
  options: WebhookReceiverOptions,
  onBatch: (batch: ReadonlyArray<ReceivedDelivery>) => Effect.Effect<void, E, R>
): Effect.Effect<WebhookReceiver, WebhookReceiverError, R | Scope.Scope> =>
  Effect.flatMap(Effect.context<R>(), (services) => {
    let waiting: Array<{ readonly received: ReceivedDelivery; readonly settle: (ok: boolean) => void }> = []
    const flush = () => {
      const batch = waiting
      waiting = []
      Effect.runPromiseExitWith(services)(onBatch(batch.map((w) => w.received))).then(
        (exit) => batch.forEach((w) => w.settle(exit._tag === "Success")),
        () => batch.forEach((w) => w.settle(false))
      )
    }
    return listen(options, (received) =>
      new Promise<boolean>((settle) => {
        // After the poll phase: every request already read in this turn joins the batch.
        if (waiting.length === 0) setImmediate(flush)
        waiting.push({ received, settle })
      }))
  })

/** The server: verifies and decodes each POST, then answers as `accept` says (true: 200, false: 500). */
const listen = (
  options: WebhookReceiverOptions,
  accept: (received: ReceivedDelivery) => Promise<boolean>
): Effect.Effect<WebhookReceiver, WebhookReceiverError, Scope.Scope> =>
  Effect.gen(function* () {
    const given = options.secret
    const secrets = (): ReadonlyArray<string | Redacted.Redacted<string>> =>
      typeof given === "function" ? given() : Array.isArray(given) ? given : [given as string | Redacted.Redacted<string>]
    const max = options.maxBodyBytes ?? 10 * 1024 * 1024

    const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
      if (options.path !== undefined && new URL(req.url ?? "/", "http://receiver").pathname !== options.path) {
        return answer(res, 404, "not found")
      }
      if (req.method !== "POST") return answer(res, 405, "method not allowed")
      const raw = await readRaw(req, max)
      if (raw === "too-large") return answer(res, 413, "body too large")
      const signature = req.headers[SIGNATURE_HEADER]
      const signatureGiven = Array.isArray(signature) ? signature[0] : signature
      // Every secret is tried (no early exit), so timing tells nothing about which one matched.
      const verified = signatureGiven !== undefined &&
        secrets().map((secret) => verifySignature(raw, signatureGiven, secret)).some((ok) => ok)
      if (!verified) return answer(res, 401, "bad signature")
      let json: unknown
      try {
        json = JSON.parse(raw.toString("utf8"))
      } catch {
        return answer(res, 400, "body is not JSON")
      }
      const decoded = decodeDelivery(json)
      if (Result.isFailure(decoded)) return answer(res, 400, `not a webhook delivery: ${describeParseError(decoded.failure)}`)
      const delivery = { delivery: decoded.success, rawBody: raw, signature: signatureGiven.trim().toLowerCase() }
      if (!(await accept(delivery))) return answer(res, 500, "delivery handler failed")
      answer(res, 200, "ok")
    }

    const server = yield* Effect.acquireRelease(
      Effect.callback<Server, WebhookReceiverError>((resume) => {
        const s = createServer((req, res) => {
          handle(req, res).catch(() => {
            if (!res.headersSent) answer(res, 500, "receiver error")
            else res.destroy()
          })
        })
        s.once("error", (cause) =>
          resume(Effect.fail(new WebhookReceiverError({ message: "the webhook receiver could not listen", cause })))
        )
        s.listen(options.port ?? 0, options.host ?? "127.0.0.1", () => resume(Effect.succeed(s)))
      }),
      (s) =>
        Effect.callback<void>((resume) => {
          s.close(() => resume(Effect.void))
          s.closeAllConnections()
        })
    )
    const address = server.address() as AddressInfo
    const host = address.family === "IPv6" ? `[${address.address}]` : address.address
    return { url: `http://${host}:${address.port}${options.path ?? "/"}`, port: address.port }
  })

/** A receiver whose verified deliveries land in a queue, read with `Queue.take`. */
export const webhookQueue = (
  options: WebhookReceiverOptions
): Effect.Effect<
  WebhookReceiver & { readonly deliveries: Queue.Dequeue<ReceivedDelivery> },
  WebhookReceiverError,
  Scope.Scope
> =>
  Effect.gen(function* () {
    const queue = yield* Effect.acquireRelease(Queue.unbounded<ReceivedDelivery>(), Queue.shutdown)
    const receiver = yield* serveWebhooks(options, (received) => Queue.offer(queue, received))
    return { ...receiver, deliveries: queue }
  })

/** A running queue receiver as a service: its URL and the verified deliveries. */
export class WebhookDeliveries extends Context.Service<
  WebhookDeliveries,
  WebhookReceiver & { readonly deliveries: Queue.Dequeue<ReceivedDelivery> }
>()("worksync/WebhookDeliveries") {}

/** Starts a queue receiver with the layer and stops it when the layer is released. */
export const WebhookDeliveriesLive = (options: WebhookReceiverOptions): Layer.Layer<WebhookDeliveries, WebhookReceiverError> =>
  Layer.effect(WebhookDeliveries, webhookQueue(options))
