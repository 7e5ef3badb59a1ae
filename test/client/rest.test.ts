import { describe, expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { createdListId } from "../../src/schema/records.ts"
import * as Schema from "effect/Schema"
import { RestClient } from "../../src/client/rest-client.ts"
import { Emulator } from "../support/effect.ts"
import { clientFailure, withClient, layerFor, json, recordingServer, scopedTestEmulator, testEmulatorLayer } from "./helpers.ts"

const rest = <A, E>(f: (c: RestClient["Service"]) => Effect.Effect<A, E>) =>
  Effect.flatMap(Emulator, (emu) => withClient(layerFor(emu), Effect.flatMap(RestClient, f)))

// Real HTTP to the emulator: the live clock (no TestClock), or the client's timeouts and
// retries would never fire.
layer(testEmulatorLayer({ seed: "demo" }), { timeout: 30_000, excludeTestServices: true })((it) => {
  describe("RestClient against the emulator: every documented shape decodes", () => {
    // R-REST-RECORD-01 R-REST-RECORD-02 R-REST-RECORD-03 R-REST-RECORD-04 R-REST-RECORD-05 R-REST-RECORD-06 R-REST-RECORD-07 R-REST-RECORD-08 R-REST-RECORD-09 R-REST-RECORD-10
    it.effect("R-REST-RECORD-01..10, R-REST-PAGE-07: list-records decodes summaries and pageInfo", () =>
      Effect.gen(function*() {
        const emu = yield* Emulator
        const ws = emu.workspaces[0]!
        const page = yield* rest((c) => c.listRecords({ workspaceId: ws, limit: 10 }))
        expect(page.items.length).toBe(10)
        const r = page.items[0]!
        expect(typeof r.id).toBe("string")
        expect(typeof r.done).toBe("boolean")
        expect(typeof r.position).toBe("number")
        expect(r.todoList).toHaveProperty("title")
        expect(typeof page.pageInfo.hasNextPage).toBe("boolean")
      }))

    it.effect("R-REST-PAGE-03: a limit of 500 is capped silently to 100 items, no error", () =>
      Effect.gen(function*() {
        const big = yield* scopedTestEmulator({ seed: { workspaces: 1, recordsPerWorkspace: 130 } })
        const page = yield* withClient(layerFor(big), Effect.flatMap(RestClient, (c) => c.listRecords({ limit: 500 })))
        expect(page.items.length).toBe(100)
        expect(page.pageInfo.hasNextPage).toBe(true)
      }))

    it.effect("R-REST-ACTIVITY-07: list-record-activity limit above 24 is capped without error", () =>
      Effect.gen(function*() {
        const emu = yield* Emulator
        const ws = emu.workspaces[0]!
        const first = (yield* rest((c) => c.listRecords({ workspaceId: ws, limit: 1 }))).items[0]!
        const page = yield* rest((c) => c.listRecordActivity({ workspaceId: ws, recordId: first.id, limit: 100 }))
        expect(page.items.length).toBeLessThanOrEqual(24)
        expect(typeof page.totalCount).toBe("number")
      }))

    // R-REST-RECORD-19 R-REST-RECORD-20 R-REST-RECORD-21 R-REST-RECORD-22 R-REST-RECORD-23 R-REST-RECORD-24 R-REST-RECORD-25 R-REST-RECORD-26
    it.effect("R-REST-RECORD-19..26: get-record decodes the record detail", () =>
      Effect.gen(function*() {
        const emu = yield* Emulator
        const ws = emu.workspaces[0]!
        const first = (yield* rest((c) => c.listRecords({ workspaceId: ws, limit: 1 }))).items[0]!
        const detail = yield* rest((c) => c.getRecord({ workspaceId: ws, recordId: first.id }))
        expect(detail.id).toBe(first.id)
        expect(typeof detail.html).toBe("string")
        expect(Array.isArray(detail.checklists)).toBe(true)
        expect(Array.isArray(detail.customFields)).toBe(true)
      }))

    // R-REST-SEARCH-09 R-REST-SEARCH-10 R-REST-SEARCH-11
    it.effect("R-REST-SEARCH-09..11: search-records decodes a bare array", () =>
      Effect.gen(function*() {
        const emu = yield* Emulator
        const ws = emu.workspaces[0]!
        const first = (yield* rest((c) => c.listRecords({ workspaceId: ws, limit: 1 }))).items[0]!
        const results = yield* rest((c) => c.searchRecords({ workspaceId: ws, query: first.title.split(" ")[0]! }))
        expect(Array.isArray(results)).toBe(true)
        expect(results.length).toBeGreaterThan(0)
      }))

    // R-REST-PAGE-09 R-REST-PAGE-10 R-REST-PAGE-11
    it.effect("R-REST-RECORD-55, R-REST-PAGE-09..11: count, workspaces, users, lists, tags, files decode", () =>
      Effect.gen(function*() {
        const emu = yield* Emulator
        const ws = emu.workspaces[0]!
        const count = yield* rest((c) => c.countRecords())
        expect(Option.getOrThrow(count)).toBeGreaterThan(0)
        const workspaces = yield* rest((c) => c.listWorkspaces())
        expect(workspaces.items.map((w) => w.id)).toContain(ws)
        const users = yield* rest((c) => c.listUsers({}))
        expect(users.users.length).toBeGreaterThan(0)
        const lists = yield* rest((c) => c.listLists({ workspaceId: ws }))
        expect(lists.length).toBeGreaterThan(0)
        const tags = yield* rest((c) => c.listTags({ workspaceId: ws }))
        expect(Array.isArray(tags)).toBe(true)
        const files = yield* rest((c) => c.listFiles({ workspaceId: ws }))
        expect(typeof files.pageInfo.totalItems).toBe("number")
      }))

    // R-REST-RECORD-27 R-REST-RECORD-28 R-REST-RECORD-40 R-REST-RECORD-42 R-REST-RECORD-49 R-REST-RECORD-51 R-REST-RECORD-52 R-REST-RECORD-54
    it.effect("R-REST-RECORD-27/28/40/42/49/51/52/54: create (first list), update, move, delete", () =>
      Effect.gen(function*() {
        const emu = yield* Emulator
        const ws = emu.workspaces[0]!
        const lists = yield* rest((c) => c.listLists({ workspaceId: ws }))
        const created = yield* rest((c) =>
          c.createRecord({ workspaceId: ws, title: "client test", description: "a\n\nb", duedAt: "2024-05-01" })
        )
        expect(created.title).toBe("client test")
        expect(createdListId(created)).toBe(lists[0]!.id)
        const updated = yield* rest((c) => c.updateRecord({ workspaceId: ws, recordId: created.id, done: true }))
        expect(Option.getOrThrow(updated).done).toBe(true)
        const target = lists[1] ?? lists[0]!
        const moved = yield* rest((c) => c.moveRecord({ workspaceId: ws, recordId: created.id, listId: target.id }))
        expect(moved.success).toBe(true)
        const deleted = yield* rest((c) => c.deleteRecord({ workspaceId: ws, recordId: created.id }))
        expect(deleted.success).toBe(true)
      }))

    it.effect("creates a list, a tag and a workspace (create responses are the object itself)", () =>
      Effect.gen(function*() {
        const emu = yield* Emulator
        const ws = emu.workspaces[0]!
        const list = yield* rest((c) => c.createList({ workspaceId: ws, title: "Client list" }))
        expect(list.title).toBe("Client list")
        const tag = yield* rest((c) => c.createTag({ workspaceId: ws, title: "client-tag" }))
        expect(tag.title).toBe("client-tag")
        const w = Option.getOrThrow(yield* rest((c) => c.createWorkspace({ name: "Client WS" })))
        expect(w.name).toBe("Client WS")
      }))
  })

  describe("RestClient resource style", () => {
    // R-REST-CALL-07 R-REST-CALL-08 R-REST-CALL-09 R-REST-CALL-10 R-REST-CALL-11 R-REST-CALL-12 R-REST-CALL-13 R-REST-CALL-14 R-REST-CALL-15
    it.effect("R-REST-CALL-07..15: records, workspaces and lists through their resource paths", () =>
      Effect.gen(function*() {
        const emu = yield* Emulator
        const ws = emu.workspaces[0]!
        const viaRpc = yield* rest((c) => c.listRecords({ workspaceId: ws, limit: 3, done: false }))
        const viaGet = yield* rest((c) => c.resource.listRecords({ workspaceId: ws, limit: 3, done: false }))
        expect(viaGet.items.map((r) => r.id)).toEqual(viaRpc.items.map((r) => r.id))

        const detail = yield* rest((c) => c.resource.getRecord({ workspaceId: ws, recordId: viaGet.items[0]!.id }))
        expect(detail.id).toBe(viaGet.items[0]!.id)

        const lists = yield* rest((c) => c.resource.listLists({ workspaceId: ws }))
        const created = yield* rest((c) => c.resource.createRecord({ workspaceId: ws, title: "resource style" }))
        const patched = yield* rest((c) => c.resource.updateRecord({ workspaceId: ws, recordId: created.id, title: "patched" }))
        expect(Option.getOrThrow(patched).title).toBe("patched")
        const moved = yield* rest((c) => c.resource.moveRecord({ workspaceId: ws, recordId: created.id, listId: lists.at(-1)!.id }))
        expect(moved.success).toBe(true)
        const deleted = yield* rest((c) => c.resource.deleteRecord({ workspaceId: ws, recordId: created.id }))
        expect(deleted.success).toBe(true)

        const workspaces = yield* rest((c) => c.resource.listWorkspaces())
        expect(workspaces.items.length).toBeGreaterThan(0)
        const newWs = Option.getOrThrow(yield* rest((c) => c.resource.createWorkspace({ name: "Resource WS" })))
        const newList = yield* rest((c) => c.resource.createList({ workspaceId: newWs.id, title: "Resource list" }))
        expect(newList.workspaceId).toBe(newWs.id)
      }))

    it.effect("R-REST-RECORD-16: array arguments travel as repeated query parameters", () =>
      Effect.gen(function*() {
        const emu = yield* Emulator
        const server = yield* recordingServer((_req, res) =>
          json(res, 200, { items: [], pageInfo: { hasNextPage: false, hasPreviousPage: false, startCursor: null, endCursor: null } })
        )
        const layer = layerFor({ ...emu, restUrl: server.url })
        yield* withClient(layer, Effect.flatMap(RestClient, (c) => c.resource.listRecords({ assigneeIds: ["u1", "u2"], done: true, limit: 5 })))
        const url = new URL(server.requests[0]!.url, server.url)
        expect(url.pathname).toBe("/v1/records")
        expect(url.searchParams.getAll("assigneeIds")).toEqual(["u1", "u2"])
        expect(url.searchParams.get("done")).toBe("true")
        expect(url.searchParams.get("limit")).toBe("5")
        expect(server.requests[0]!.body.length).toBe(0)
      }))
  })

  describe("RestClient request form (recorded by a test server)", () => {
    // R-REST-CALL-04 R-REST-CALL-05 R-REST-CALL-06 R-REST-AUTH-01 R-REST-AUTH-02 R-REST-AUTH-04 R-REST-AUTH-05
    it.effect("R-REST-CALL-04/05/06, R-REST-AUTH-01/02/04/05: POST /v1/<op>, JSON body {} when no input, bearer and org headers", () =>
      Effect.gen(function*() {
        const emu = yield* Emulator
        const server = yield* recordingServer((_req, res) => json(res, 200, { items: [], totalCount: 0 }))
        const layer = layerFor({ ...emu, restUrl: `${server.url}/rest` }, { headerPrefix: "acme" })
        yield* withClient(layer, Effect.flatMap(RestClient, (c) => c.listWorkspaces()))
        const r = server.requests[0]!
        expect(r.method).toBe("POST")
        expect(r.url).toBe("/rest/v1/list-workspaces")
        expect(r.body.toString()).toBe("{}")
        expect(r.headers["content-type"]).toMatch(/^application\/json/)
        expect(r.headers["authorization"]).toBe(`Bearer ${emu.token}`)
        expect(r.headers["acme-org-id"]).toBe(emu.org)
        // No trace propagation or other extra headers leak into requests.
        expect(r.headers["traceparent"]).toBeUndefined()
        expect(r.headers["b3"]).toBeUndefined()
      }))

    it.effect("R-REST-CALL-05: inputs travel only in the body, undefined fields are not sent", () =>
      Effect.gen(function*() {
        const emu = yield* Emulator
        const server = yield* recordingServer((_req, res) =>
          json(res, 200, { items: [], pageInfo: { hasNextPage: false, hasPreviousPage: false, startCursor: null, endCursor: null } })
        )
        const layer = layerFor({ ...emu, restUrl: server.url })
        yield* withClient(layer, Effect.flatMap(RestClient, (c) => c.listRecords({ workspaceId: "w1", search: undefined, limit: 500 })))
        const r = server.requests[0]!
        expect(r.url).toBe("/v1/list-records")
        expect(JSON.parse(r.body.toString())).toEqual({ workspaceId: "w1", limit: 500 })
      }))

    it.effect("R-REST-RECORD-41: extra keys in a create answer are kept; a bad field is a DecodeError naming its path", () =>
      Effect.gen(function*() {
        const emu = yield* Emulator
        const server = yield* recordingServer((req, res) =>
          req.url === "/v1/create-record"
            ? json(res, 200, { id: "r1", uid: "u1", title: "t", rank: 1, list: { id: "l1", title: "L" }, position: 3, todoList: { id: "l1" } })
            : json(res, 200, { items: [{ id: 5 }], pageInfo: { hasNextPage: false, hasPreviousPage: false, startCursor: null, endCursor: null } })
        )
        const layer = layerFor({ ...emu, restUrl: server.url })
        const created = yield* withClient(layer, Effect.flatMap(RestClient, (c) => c.createRecord({ workspaceId: "w", title: "t" })))
        expect((created as unknown as { position: number }).position).toBe(3)
        const failure = yield* clientFailure(layer, Effect.flatMap(RestClient, (c) => c.listRecords({})))
        expect(failure._tag).toBe("DecodeError")
        if (failure._tag === "DecodeError") {
          expect(failure.path).toBe("items[0].id")
          expect(failure.operation).toBe("list-records")
        }
      }))

    it.effect("R-REST-RECORD-33: description with descriptionHtml fails with ConflictingInput before sending", () =>
      Effect.gen(function*() {
        const emu = yield* Emulator
        const server = yield* recordingServer((_req, res) => json(res, 200, {}))
        const layer = layerFor({ ...emu, restUrl: server.url })
        const failure = yield* clientFailure(
          layer,
          Effect.flatMap(RestClient, (c) => c.createRecord({ workspaceId: "w", title: "t", description: "a", descriptionHtml: "<p>a</p>" }))
        )
        expect(failure._tag).toBe("ConflictingInput")
        const update = yield* clientFailure(
          layer,
          Effect.flatMap(RestClient, (c) => c.updateRecord({ workspaceId: "w", recordId: "r", description: "a", descriptionHtml: "<p>a</p>" }))
        )
        expect(update._tag).toBe("ConflictingInput")
        expect(server.requests.length).toBe(0)
      }))

    // R-REST-RECORD-34 R-REST-RECORD-35
    it.effect("R-REST-RECORD-34/35: dates must be bare (all-day) or ISO with a zone; bad ones never leave the client", () =>
      Effect.gen(function*() {
        const emu = yield* Emulator
        const server = yield* recordingServer((_req, res) => json(res, 200, { id: "r", uid: "u", title: "t", rank: 1, list: { id: "l", title: "L" } }))
        const layer = layerFor({ ...emu, restUrl: server.url })
        const bad = yield* clientFailure(layer, Effect.flatMap(RestClient, (c) => c.createRecord({ workspaceId: "w", title: "t", duedAt: "05/01/2024" })))
        expect(bad._tag).toBe("InputRejected")
        expect(server.requests.length).toBe(0)
        yield* withClient(layer, Effect.flatMap(RestClient, (c) => c.createRecord({ workspaceId: "w", title: "t", duedAt: "2024-05-01", startedAt: "2024-05-01T09:00:00Z" })))
        expect(JSON.parse(server.requests[0]!.body.toString())).toMatchObject({ duedAt: "2024-05-01", startedAt: "2024-05-01T09:00:00Z" })
      }))

    it.effect("call() works for any operation with any schema", () =>
      Effect.gen(function*() {
        const out = yield* rest((c) => c.call("list-workspaces", undefined, Schema.Struct({ totalCount: Schema.Number }), { idempotent: true }))
        expect(out.totalCount).toBeGreaterThan(0)
      }))
  })

  describe("RestClient against the emulator's alt variant (the other reading of what the documents leave open)", () => {
    // R-REST-CALL-11
    it.effect("R-REST-CALL-11: PATCH /v1/records/{id} updates whether the service reads the workspace from the body or the query", () =>
      Effect.gen(function*() {
        const alt = yield* scopedTestEmulator({ seed: "demo", variant: "alt" })
        const w = alt.workspaces[0]!
        const id = alt.ctx.db.prepare("SELECT id FROM records WHERE workspace_id = ? AND deleted_at IS NULL LIMIT 1").pluck().get(w) as string
        const out = yield* withClient(layerFor(alt), Effect.flatMap(RestClient, (c) => c.resource.updateRecord({ workspaceId: w, recordId: id, title: "patched in alt" })))
        // This reading answers {success: true}: no detail, and none needed.
        expect(Option.isNone(out)).toBe(true)
        expect(alt.ctx.db.prepare("SELECT title FROM records WHERE id = ?").pluck().get(id)).toBe("patched in alt")
      }))
  })
})
