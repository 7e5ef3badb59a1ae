/**
 * The client against answers the documents do not show, and operations beyond them
 * (docs/architecture.md, "Decoding policy"). A tiny local server answers fixed JSON over
 * real HTTP: the emulator serves only its own reading of each answer.
 */
import type { ServerResponse } from "node:http"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { isNotFound, notAvailableLine } from "../../src/client/errors.ts"
import { RestClient } from "../../src/client/rest-client.ts"
import type { ClientServices } from "../../src/client/layer.ts"
import { Uploads } from "../../src/client/uploads.ts"
import { clientFailure, json, layerFor, type Recorded, recordingServer, withClient } from "./helpers.ts"

const ORG = "org-1"

/** A server answering each `/v1/<operation>` with `routes[operation]`, 404 for the rest. */
const serve = (routes: Record<string, (req: Recorded, res: ServerResponse) => void>) =>
  Effect.gen(function*() {
    const server = yield* recordingServer((req, res) => {
      const path = req.url.split("?")[0]!.replace(/^\/v1\//, "")
      const route = routes[`${req.method} ${path}`] ?? routes[path]
      if (route === undefined) return json(res, 404, { error: { code: "NOT_FOUND", message: `no route ${path}` } })
      return route(req, res)
    })
    const layer = layerFor({ restUrl: server.url, baseUrl: server.url, token: "t", tokenId: "i", tokenSecret: "s", org: ORG })
    return { layer, server }
  })

const text = (res: ServerResponse, status: number, body: string) => {
  res.writeHead(status, { "content-type": "text/plain", "content-length": Buffer.byteLength(body) })
  res.end(body)
}

const call = <A, E>(layer: Layer.Layer<ClientServices>, f: (c: RestClient["Service"]) => Effect.Effect<A, E>) =>
  withClient(layer, Effect.flatMap(RestClient, f))

describe("update-record: a 2xx is the success, whatever the body", () => {
  // The response body of update-record is "not shown" (rules.md, last section).
  it.live.each([
    ["{success: true}", (res: ServerResponse) => json(res, 200, { success: true })],
    ["{}", (res: ServerResponse) => json(res, 200, {})],
    ["an empty body", (res: ServerResponse) => text(res, 200, "")],
    ["a text body", (res: ServerResponse) => text(res, 200, "OK")],
    ["a partial record", (res: ServerResponse) => json(res, 200, { id: "r1", title: "x" })]
  ] as const)("R-REST-RECORD-42: an answer of %s succeeds with no detail", ([_name, answer]) =>
    Effect.gen(function*() {
      const { layer, server } = yield* serve({ "update-record": (_req, res) => answer(res), "PATCH records/r1": (_req, res) => answer(res) })
      const out = yield* call(layer, (c) => c.updateRecord({ workspaceId: "w", recordId: "r1", done: true }))
      expect(Option.isNone(out)).toBe(true)
      const patched = yield* call(layer, (c) => c.resource.updateRecord({ workspaceId: "w", recordId: "r1", title: "t" }))
      expect(Option.isNone(patched)).toBe(true)
    }))
})

describe("count-records: {count}, {totalCount}, a bare number, or no count", () => {
  it.live.each([
    ["{count}", { count: 7 }, Option.some(7)],
    ["{totalCount}", { totalCount: 7 }, Option.some(7)],
    ["a bare number", 7, Option.some(7)],
    ["{}", {}, Option.none()],
    ["{success: true}", { success: true }, Option.none()]
  ] as const)("R-REST-RECORD-55: an answer of %s", ([_name, body, expected]) =>
    Effect.gen(function*() {
      const { layer, server } = yield* serve({ "count-records": (_req, res) => json(res, 200, body) })
      expect(yield* call(layer, (c) => c.countRecords({ workspaceId: "w" }))).toEqual(expected)
    }))
})

describe("operations beyond the documents: not available from this service", () => {
  it.live.each([
    ["404", (res: ServerResponse) => json(res, 404, { error: "Not Found" })],
    ["405", (res: ServerResponse) => json(res, 405, { error: { code: "METHOD_NOT_ALLOWED", message: "no" } })],
    ["400 unknown operation", (res: ServerResponse) => json(res, 400, { error: { code: "BAD_REQUEST", message: "Unknown operation: list-tags" }, issues: [] })]
  ] as const)("R-REST-CALL-02: list-tags answering %s is NotAvailable, one line", ([_name, answer]) =>
    Effect.gen(function*() {
      const { layer, server } = yield* serve({ "list-tags": (_req, res) => answer(res) })
      const e = yield* clientFailure(layer, Effect.flatMap(RestClient, (c) => c.listTags({ workspaceId: "w" })))
      expect(e._tag).toBe("NotAvailable")
      expect(notAvailableLine("tags", e as { operation: string })).toBe("tags: not available from this service (list-tags)")
      expect(isNotFound(e)).toBe(false)
    }))

  it.live("R-REST-ERR-02: a 400 about the input of an extra operation stays InvalidInput", () =>
    Effect.gen(function*() {
      const { layer, server } = yield* serve({
        "list-tags": (_req, res) => json(res, 400, { error: { code: "VALIDATION", message: "invalid", issues: [{ path: ["workspaceId"], message: "required" }] } })
      })
      const e = yield* clientFailure(layer, Effect.flatMap(RestClient, (c) => c.listTags({ workspaceId: "w" })))
      expect(e._tag).toBe("InvalidInput")
    }))

  it.live("R-REST-ERR-04: a documented operation's 404 is not-found, like 422 NOT_FOUND", () =>
    Effect.gen(function*() {
      const { layer, server } = yield* serve({ "get-record": (_req, res) => json(res, 404, { error: "Not Found" }) })
      const e = yield* clientFailure(layer, Effect.flatMap(RestClient, (c) => c.getRecord({ workspaceId: "w", recordId: "gone" })))
      expect(e._tag).toBe("NotFound")
      expect(isNotFound(e)).toBe(true)
      expect(e.message).toBe("get-record: not found (HTTP 404): Not Found")
    }))

  it.live("create-list falls back to the documented POST /v1/lists; neither is NotAvailable (create-list)", () =>
    Effect.gen(function*() {
      const { layer, server } = yield* serve({ "POST lists": (_req, res) => json(res, 201, { id: "l9", title: "New" }) })
      const list = yield* call(layer, (c) => c.createList({ workspaceId: "w", title: "New" }))
      expect(list.id).toBe("l9")
      expect(server.requests.map((r) => `${r.method} ${r.url}`)).toEqual(["POST /v1/create-list", "POST /v1/lists"])

      const { layer: none } = yield* serve({})
      const e = yield* clientFailure(none, Effect.flatMap(RestClient, (c) => c.createList({ workspaceId: "w", title: "New" })))
      expect(e._tag).toBe("NotAvailable")
      expect((e as { operation: string }).operation).toBe("create-list")
    }))

  it.live("create-tag answering without an id: the tag is found by title", () =>
    Effect.gen(function*() {
      const { layer, server } = yield* serve({
        "create-tag": (_req, res) => json(res, 200, { success: true }),
        "list-tags": (_req, res) => json(res, 200, [{ id: "t1", title: "other" }, { id: "t2", title: "urgent" }])
      })
      const tag = yield* call(layer, (c) => c.createTag({ workspaceId: "w", title: "urgent" }))
      expect(tag.id).toBe("t2")
    }))
})

describe("confirm of a file confirmed already (CONFIRM_IDEMPOTENT is not shown)", () => {
  it.live("R-UPLOAD-PRESIGN-16: a 400 saying the file is confirmed already is a confirmed file; a size mismatch stays one", () =>
    Effect.gen(function*() {
      const server = yield* recordingServer((req, res) =>
        req.url.includes("/u-done/")
          ? json(res, 400, { error: { code: "ALREADY_CONFIRMED", message: "The file is already confirmed" } })
          : json(res, 400, { error: { code: "SIZE_MISMATCH", message: "stored size differs from the declared size" } })
      )
      const layer = layerFor({ restUrl: `${server.url}/rest`, baseUrl: server.url, token: "t", tokenId: "i", tokenSecret: "s", org: ORG })
      const done = yield* withClient(layer, Effect.flatMap(Uploads, (u) => u.confirm({ uid: "u-done", workspaceId: "w", via: "rest" })))
      expect(done.status).toBe("CONFIRMED")
      const e = yield* clientFailure(layer, Effect.flatMap(Uploads, (u) => u.confirm({ uid: "u-short", workspaceId: "w", via: "rest" })))
      expect(e._tag).toBe("UploadSizeMismatch")
    }))
})

describe("organization headers", () => {
  it.live("R-REST-AUTH-02, R-REST-AUTH-03: every REST call carries both svc-org-id and x-svc-company-id", () =>
    Effect.gen(function*() {
      const { layer, server } = yield* serve({
        "list-workspaces": (_req, res) => json(res, 200, { items: [{ id: "w1" }], totalCount: 1 }),
        "GET records": (_req, res) =>
          json(res, 200, { items: [], pageInfo: { hasNextPage: false, hasPreviousPage: false, startCursor: null, endCursor: null } })
      })
      yield* call(layer, (c) => Effect.zip(c.listWorkspaces(), c.resource.listRecords({ workspaceId: "w1" })))
      expect(server.requests).toHaveLength(2)
      for (const r of server.requests) {
        expect(r.headers["svc-org-id"]).toBe(ORG)
        expect(r.headers["x-svc-company-id"]).toBe(ORG)
      }
    }))
})
