/**
 * The path every REST call takes, checked at its edges against a real HTTP server: an
 * attempt ends at the request timeout with its exchange aborted, an interrupted call
 * aborts its exchange, the retries start from the first failure without sending it
 * again, and an answer is parsed and decoded in one step (a body that is not JSON is read
 * as text only by a call that reads any answer).
 */
import { describe, expect, layer } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import type { DecodeError, ServerError, Timeout } from "../../src/client/errors.ts"
import { RestClient } from "../../src/client/rest-client.ts"
import { clientFailure, json, layerFor, type RecordingServer, recordingServer, withClient } from "./helpers.ts"

/** What the server does with the next requests, in order; past the list it answers an empty page. */
type Step = "hold" | "500" | "text" | "empty" | "bad field"

class Server extends Context.Service<Server, RecordingServer & { readonly steps: Array<Step> }>()("test/RequestPathServer") {}

const serverLayer = Layer.effect(
  Server,
  Effect.gen(function*() {
    const steps: Array<Step> = []
    const server = yield* recordingServer((_req, res) => {
      const step = steps.shift()
      switch (step) {
        // Never answered: the client must give up (or be stopped) and close the exchange.
        case "hold":
          return
        case "500":
          return json(res, 500, { error: { code: "INTERNAL", message: "try again" } })
        case "text":
          res.writeHead(200, { "content-type": "text/plain" })
          return res.end("plain words")
        case "empty":
          res.writeHead(200, { "content-length": "0" })
          return res.end()
        case "bad field":
          return json(res, 200, { items: [{ id: 5, title: "w" }], totalCount: 1 })
        default:
          return json(res, 200, { items: [], totalCount: 0 })
      }
    })
    return { ...server, steps }
  })
)

const conn = (server: RecordingServer) => ({
  restUrl: server.url,
  baseUrl: server.url,
  token: "tok_requestpath_789",
  tokenId: "tid_requestpath",
  tokenSecret: "sec_requestpath_012",
  org: "acme"
})

/** The client of `server`, with this request timeout and this many retries. */
const client = (server: RecordingServer, requestTimeoutMs = 30_000, maxRetries = 4) =>
  layerFor(conn(server), { requestTimeoutMs, retry: { maxRetries, baseDelayMs: 5, capDelayMs: 20 } })

const fresh = (server: RecordingServer & { readonly steps: Array<Step> }, ...steps: Array<Step>) => {
  server.requests.length = 0
  server.steps.length = 0
  server.steps.push(...steps)
}

/** Until the server has no exchange open: each one ends when the client closes it. */
const closed = (server: RecordingServer) =>
  Effect.gen(function*() {
    while (server.concurrency.current > 0) yield* Effect.sleep(5)
  })

// Real HTTP: the live clock (no TestClock), or the client's timeouts would never fire.
layer(serverLayer, { excludeTestServices: true })("the REST request path", (it) => {
  describe("timeouts and interruption", () => {
    it.effect("an attempt unanswered past the request timeout fails with Timeout, and its exchange is closed", () =>
      Effect.gen(function*() {
        const server = yield* Server
        fresh(server, "hold")
        const e = yield* clientFailure(
          client(server, 300, 0),
          Effect.flatMap(RestClient, (c) => c.listWorkspaces())
        )
        expect(e._tag).toBe("Timeout")
        expect((e as Timeout).timeoutMs).toBe(300)
        expect(e.message).toBe("list-workspaces: no answer within 300 ms")
        expect(server.requests).toHaveLength(1)
        yield* closed(server)
      }))

    it.effect("a read timed out is sent again", () =>
      Effect.gen(function*() {
        const server = yield* Server
        fresh(server, "hold")
        const page = yield* withClient(client(server, 1_000, 4), Effect.flatMap(RestClient, (c) => c.listWorkspaces()))
        expect(page.items).toEqual([])
        // A loaded machine may time out an answered attempt too: at least the held one was sent again.
        expect(server.requests.length).toBeGreaterThanOrEqual(2)
      }))

    it.effect("a call interrupted while its request is unanswered closes the exchange", () =>
      Effect.gen(function*() {
        const server = yield* Server
        fresh(server, "hold")
        yield* withClient(
          client(server),
          Effect.gen(function*() {
            const rest = yield* RestClient
            const call = yield* Effect.forkChild(rest.listWorkspaces())
            while (server.requests.length === 0) yield* Effect.sleep(5)
            yield* Fiber.interrupt(call)
            yield* closed(server)
          })
        )
        expect(server.requests).toHaveLength(1)
      }))
  })

  describe("retries", () => {
    it.effect("R-REST-ERR-04: a read answered 500 is retried from that answer, which is not sent again", () =>
      Effect.gen(function*() {
        const server = yield* Server
        fresh(server, "500", "500")
        const page = yield* withClient(client(server), Effect.flatMap(RestClient, (c) => c.listWorkspaces()))
        expect(page.items).toEqual([])
        expect(server.requests).toHaveLength(3)
      }))

    it.effect("R-REST-ERR-04: retries end after maxRetries: one request and that many more", () =>
      Effect.gen(function*() {
        const server = yield* Server
        fresh(server, "500", "500", "500", "500")
        const e = yield* clientFailure(client(server, 30_000, 2), Effect.flatMap(RestClient, (c) => c.listWorkspaces()))
        expect(e._tag).toBe("ServerError")
        expect((e as ServerError).status).toBe(500)
        expect(server.requests).toHaveLength(3)
      }))
  })

  describe("answers", () => {
    it.effect("a 2xx body that is not JSON fails as not JSON where a shape is expected, and reads as its text where any answer is", () =>
      Effect.gen(function*() {
        const server = yield* Server
        fresh(server, "text", "text")
        const [e, any] = yield* withClient(
          client(server),
          Effect.gen(function*() {
            const rest = yield* RestClient
            const e = yield* Effect.flip(rest.listWorkspaces())
            const any = yield* rest.call("read-anything", {}, Schema.Unknown, { idempotent: true })
            return [e, any] as const
          })
        )
        expect(e._tag).toBe("DecodeError")
        expect((e as DecodeError).path).toBe("(root)")
        expect((e as DecodeError).detail).toBe("not JSON: plain words")
        expect(any).toBe("plain words")
      }))

    it.effect("an empty 2xx body is read as null; a bad field fails naming its path", () =>
      Effect.gen(function*() {
        const server = yield* Server
        fresh(server, "empty", "bad field")
        const [nothing, e] = yield* withClient(
          client(server),
          Effect.gen(function*() {
            const rest = yield* RestClient
            const nothing = yield* rest.call("read-anything", {}, Schema.Unknown, { idempotent: true })
            const e = yield* Effect.flip(rest.listWorkspaces())
            return [nothing, e] as const
          })
        )
        expect(nothing).toBeNull()
        expect(e._tag).toBe("DecodeError")
        expect((e as DecodeError).operation).toBe("list-workspaces")
        expect((e as DecodeError).path).toBe("items[0].id")
      }))
  })
})
