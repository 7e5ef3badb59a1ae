/**
 * Shared test plumbing: an emulator per test file, a client layer pointed at it, and a
 * tiny recording HTTP server for cases the emulator cannot script.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import { type EmulatorHandle, type EmulatorOptions, startEmulator } from "../../src/emulator/index.ts"
import { emulatorLayer } from "../support/effect.ts"
import type { ConnectionInput } from "../../src/client/config.ts"
import { type ClientServices, clientLayer } from "../../src/client/layer.ts"

/**
 * The client's conformance tests check answers of the reference reading exactly (statuses,
 * codes, shapes), so they pin it unless a test names a variant; the other reading is
 * checked by the integration suites and the tests of answers-not-shown.test.ts.
 */
export const startTestEmulator = (options: EmulatorOptions = {}): Promise<EmulatorHandle> =>
  startEmulator({ variant: "reference", ...options })

/** The emulator of a test file as a scoped Layer, pinned to the reference reading like `startTestEmulator`. */
export const testEmulatorLayer = (options: EmulatorOptions = {}) => emulatorLayer({ variant: "reference", ...options })

/** A second emulator for one test (other seed or faults), closed when the test's scope closes. */
export const scopedTestEmulator = (options: EmulatorOptions = {}) =>
  Effect.acquireRelease(
    Effect.promise(() => startTestEmulator(options)),
    (handle) => Effect.promise(() => handle.close())
  )

/** Fast retries for tests: the policy is the same, only the numbers are small. */
export const FAST_RETRY = { maxRetries: 4, baseDelayMs: 10, capDelayMs: 100 } as const

export const connectionFor = (
  emu: Pick<EmulatorHandle, "restUrl" | "baseUrl" | "token" | "tokenId" | "tokenSecret" | "org">,
  overrides: Partial<ConnectionInput> = {}
): ConnectionInput => ({
  restUrl: emu.restUrl,
  baseUrl: emu.baseUrl,
  token: emu.token,
  tokenId: emu.tokenId,
  tokenSecret: emu.tokenSecret,
  org: emu.org,
  retry: FAST_RETRY,
  limiter: { initialRps: 1000 },
  ...overrides
})

export const layerFor = (
  emu: Pick<EmulatorHandle, "restUrl" | "baseUrl" | "token" | "tokenId" | "tokenSecret" | "org">,
  overrides: Partial<ConnectionInput> = {}
): Layer.Layer<ClientServices> => clientLayer(connectionFor(emu, overrides))

/** `effect` with a client built from `layer` (built and released around it). */
export const withClient = <A, E, R>(layer: Layer.Layer<ClientServices>, effect: Effect.Effect<A, E, R>) =>
  Effect.provide(effect, layer)

/** The failure of `effect` under the client of `layer`; a success fails the test. */
export const clientFailure = <A, E, R>(layer: Layer.Layer<ClientServices>, effect: Effect.Effect<A, E, R>) =>
  Effect.flip(Effect.provide(effect, layer))

/** A recording server closed when the test's scope closes. */
export const recordingServer = (handler: Handler) =>
  Effect.acquireRelease(
    Effect.promise(() => startRecordingServer(handler)),
    (server) => Effect.promise(() => server.close())
  )

export interface Recorded {
  readonly method: string
  readonly url: string
  readonly headers: IncomingMessage["headers"]
  readonly body: Buffer
  /** Server clock (ms) when the request arrived. */
  readonly at: number
}

export interface RecordingServer {
  readonly url: string
  readonly requests: Array<Recorded>
  /** Requests being handled right now, and the most ever seen at once. */
  readonly concurrency: { current: number; peak: number }
  close(): Promise<void>
}

export type Handler = (req: Recorded, res: ServerResponse, index: number) => unknown

/** A real HTTP server on 127.0.0.1:0 that records every request and answers with `handler`. */
export const startRecordingServer = async (handler: Handler): Promise<RecordingServer> => {
  const requests: Array<Recorded> = []
  const concurrency = { current: 0, peak: 0 }
  const server: Server = createServer((req, res) => {
    const at = Date.now()
    concurrency.current++
    concurrency.peak = Math.max(concurrency.peak, concurrency.current)
    const chunks: Array<Buffer> = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", () => {
      const rec: Recorded = { method: req.method ?? "", url: req.url ?? "", headers: req.headers, body: Buffer.concat(chunks), at }
      const index = requests.push(rec) - 1
      const done = () => {
        concurrency.current--
      }
      res.on("close", done)
      Promise.resolve(handler(rec, res, index)).catch(() => {
        res.destroy()
      })
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    concurrency,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
}

export const json = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
  const text = JSON.stringify(body)
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text), ...headers })
  res.end(text)
}

/** A distinctive secret: if any message contains it, redaction failed. */
export const SECRET_TOKEN = "tok_SUPERSECRET_4f9a2c71e0"
export const SECRET_TOKEN_SECRET = "sec_SUPERSECRET_b81d33aa90"

