/**
 * One HTTP pipeline per connection: each credential family's headers are added once
 * (HttpClient.mapRequest), a request may still name its own organization, storage gets
 * nothing, and the REST, GraphQL and upload clients all pass the one limiter.
 */
import * as Effect from "effect/Effect"
import * as HttpClientRequest from "effect/http/HttpClientRequest"
import { describe, expect, layer } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Layer from "effect/Layer"
import { GraphqlClient } from "../../src/client/graphql-client.ts"
import { Limiter } from "../../src/client/limiter.ts"
import { Pipeline } from "../../src/client/pipeline.ts"
import { RestClient } from "../../src/client/rest-client.ts"
import { Uploads } from "../../src/client/uploads.ts"
import { ServerError } from "../../src/client/errors.ts"
import { json, layerFor, type RecordingServer, recordingServer, withClient } from "./helpers.ts"

/** One recording server for the file: every test reads the headers it received. */
class Server extends Context.Service<Server, RecordingServer>()("test/Server") {}

const serverLayer = Layer.effect(
  Server,
  recordingServer((req, res) => {
    if (req.url.startsWith("/graphql")) return json(res, 200, { data: { currentUser: { id: "u", fullName: "U", email: "u@x", image: null } } })
    if (req.url.startsWith("/uploads")) {
      const fields = { "Content-Type": "text/plain", Key: "k", "X-Key": "k" }
      return json(res, 200, { url: "http://127.0.0.1:1/put", method: "PUT", headers: { "Content-Type": "text/plain" }, fields })
    }
    return json(res, 200, { items: [], totalCount: 0 })
  })
)

const conn = (server: RecordingServer) => ({ restUrl: server.url, baseUrl: server.url, token: "tok_pipeline_123", tokenId: "tid_pipeline", tokenSecret: "sec_pipeline_456", org: "acme" })
const CREDENTIALS = ["authorization", "svc-org-id", "x-svc-company-id", "svc-token-id", "svc-token-secret"]
const sent = (server: RecordingServer, i: number) => Object.fromEntries(CREDENTIALS.flatMap((h) => (server.requests[i]!.headers[h] === undefined ? [] : [[h, server.requests[i]!.headers[h]]])))

// Real HTTP: the live clock (no TestClock), or the client's timeouts would never fire.
layer(serverLayer, { excludeTestServices: true })("one pipeline per connection", (it) => {
  it.effect("REST gets the bearer and both organization headers, the app family its token pair, bare requests nothing", () =>
    Effect.gen(function*() {
      const server = yield* Server
      server.requests.length = 0
      yield* withClient(
        layerFor(conn(server)),
        Effect.gen(function*() {
          const p = yield* Pipeline
          const ok = { idempotent: true, inputSummary: "", failureOf: () => new ServerError({ operation: "t", status: 500, detail: "" }) }
          yield* p.call(p.rest, { ...ok, operation: "rest", request: () => HttpClientRequest.get(`${server.url}/rest`) })
          yield* p.call(p.app, { ...ok, operation: "app", request: () => HttpClientRequest.get(`${server.url}/app`) })
          yield* p.call(p.bare, { ...ok, operation: "bare", request: () => HttpClientRequest.get(`${server.url}/bare`) })
          // A request naming its own organization keeps it.
          yield* p.call(p.rest, {
            ...ok,
            operation: "other org",
            request: () => HttpClientRequest.get(`${server.url}/rest`).pipe(HttpClientRequest.setHeaders({ "svc-org-id": "other", "x-svc-company-id": "other" }))
          })
        })
      )
      expect(sent(server, 0)).toEqual({ authorization: "Bearer tok_pipeline_123", "svc-org-id": "acme", "x-svc-company-id": "acme" })
      expect(sent(server, 1)).toEqual({ "svc-token-id": "tid_pipeline", "svc-token-secret": "sec_pipeline_456", "svc-org-id": "acme" })
      expect(sent(server, 2)).toEqual({})
      expect(sent(server, 3)).toEqual({ authorization: "Bearer tok_pipeline_123", "svc-org-id": "other", "x-svc-company-id": "other" })
    }))

  it.effect("REST, GraphQL and presign all pass the one limiter; a presign for another organization names it", () =>
    Effect.gen(function*() {
      const server = yield* Server
      server.requests.length = 0
      const stats = yield* withClient(
        layerFor(conn(server)),
        Effect.gen(function*() {
          yield* Effect.flatMap(RestClient, (c) => c.listWorkspaces())
          yield* Effect.flatMap(GraphqlClient, (c) => c.currentUser())
          yield* Effect.flatMap(Uploads, (u) => u.presign({ filename: "a.txt", size: 1, workspaceId: "w", companyId: "beta", via: "rest" }))
          return yield* Effect.flatMap(Limiter, (l) => l.stats)
        })
      )
      expect(stats.sent).toBe(3)
      expect(sent(server, 2)).toEqual({ authorization: "Bearer tok_pipeline_123", "svc-org-id": "beta", "x-svc-company-id": "beta" })
      expect(server.requests[2]!.headers["x-svc-project-id"]).toBe("w")
    }))
})
