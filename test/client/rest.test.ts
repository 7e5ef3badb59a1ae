import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { createdListId } from "../../src/schema/records.ts"
import * as Schema from "effect/Schema"
import type { EmulatorHandle } from "../../src/emulator/index.ts"
import { RestClient } from "../../src/client/rest-client.ts"
import { json, layerFor, run, runFailure, startRecordingServer, startTestEmulator } from "./helpers.ts"

let emu: EmulatorHandle
let ws: string
beforeAll(async () => {
  emu = await startTestEmulator({ seed: "demo" })
  ws = emu.workspaces[0]!
})
afterAll(() => emu?.close())

const rest = <A, E>(f: (c: RestClient["Type"]) => Effect.Effect<A, E>) => run(layerFor(emu), Effect.flatMap(RestClient, f))

describe("RestClient against the emulator: every documented shape decodes", () => {
  // R-REST-RECORD-01 R-REST-RECORD-02 R-REST-RECORD-03 R-REST-RECORD-04 R-REST-RECORD-05 R-REST-RECORD-06 R-REST-RECORD-07 R-REST-RECORD-08 R-REST-RECORD-09 R-REST-RECORD-10
  it("R-REST-RECORD-01..10, R-REST-PAGE-07: list-records decodes summaries and pageInfo", async () => {
    const page = await rest((c) => c.listRecords({ workspaceId: ws, limit: 10 }))
    expect(page.items.length).toBe(10)
    const r = page.items[0]!
    expect(typeof r.id).toBe("string")
    expect(typeof r.done).toBe("boolean")
    expect(typeof r.position).toBe("number")
    expect(r.todoList).toHaveProperty("title")
    expect(typeof page.pageInfo.hasNextPage).toBe("boolean")
  })

  it("R-REST-PAGE-03: a limit of 500 is capped silently to 100 items, no error", async () => {
    const big = await startTestEmulator({ seed: { workspaces: 1, recordsPerWorkspace: 130 } })
    try {
      const page = await run(layerFor(big), Effect.flatMap(RestClient, (c) => c.listRecords({ limit: 500 })))
      expect(page.items.length).toBe(100)
      expect(page.pageInfo.hasNextPage).toBe(true)
    } finally {
      await big.close()
    }
  })

  it("R-REST-ACTIVITY-07: list-record-activity limit above 24 is capped without error", async () => {
    const first = (await rest((c) => c.listRecords({ workspaceId: ws, limit: 1 }))).items[0]!
    const page = await rest((c) => c.listRecordActivity({ workspaceId: ws, recordId: first.id, limit: 100 }))
    expect(page.items.length).toBeLessThanOrEqual(24)
    expect(typeof page.totalCount).toBe("number")
  })

  // R-REST-RECORD-19 R-REST-RECORD-20 R-REST-RECORD-21 R-REST-RECORD-22 R-REST-RECORD-23 R-REST-RECORD-24 R-REST-RECORD-25 R-REST-RECORD-26
  it("R-REST-RECORD-19..26: get-record decodes the record detail", async () => {
    const first = (await rest((c) => c.listRecords({ workspaceId: ws, limit: 1 }))).items[0]!
    const detail = await rest((c) => c.getRecord({ workspaceId: ws, recordId: first.id }))
    expect(detail.id).toBe(first.id)
    expect(typeof detail.html).toBe("string")
    expect(Array.isArray(detail.checklists)).toBe(true)
    expect(Array.isArray(detail.customFields)).toBe(true)
  })

  // R-REST-SEARCH-09 R-REST-SEARCH-10 R-REST-SEARCH-11
  it("R-REST-SEARCH-09..11: search-records decodes a bare array", async () => {
    const first = (await rest((c) => c.listRecords({ workspaceId: ws, limit: 1 }))).items[0]!
    const results = await rest((c) => c.searchRecords({ workspaceId: ws, query: first.title.split(" ")[0]! }))
    expect(Array.isArray(results)).toBe(true)
    expect(results.length).toBeGreaterThan(0)
  })

  // R-REST-PAGE-09 R-REST-PAGE-10 R-REST-PAGE-11
  it("R-REST-RECORD-55, R-REST-PAGE-09..11: count, workspaces, users, lists, tags, files decode", async () => {
    const count = await rest((c) => c.countRecords())
    expect(Option.getOrThrow(count)).toBeGreaterThan(0)
    const workspaces = await rest((c) => c.listWorkspaces())
    expect(workspaces.items.map((w) => w.id)).toContain(ws)
    const users = await rest((c) => c.listUsers({}))
    expect(users.users.length).toBeGreaterThan(0)
    const lists = await rest((c) => c.listLists({ workspaceId: ws }))
    expect(lists.length).toBeGreaterThan(0)
    const tags = await rest((c) => c.listTags({ workspaceId: ws }))
    expect(Array.isArray(tags)).toBe(true)
    const files = await rest((c) => c.listFiles({ workspaceId: ws }))
    expect(typeof files.pageInfo.totalItems).toBe("number")
  })

  // R-REST-RECORD-27 R-REST-RECORD-28 R-REST-RECORD-40 R-REST-RECORD-42 R-REST-RECORD-49 R-REST-RECORD-51 R-REST-RECORD-52 R-REST-RECORD-54
  it("R-REST-RECORD-27/28/40/42/49/51/52/54: create (first list), update, move, delete", async () => {
    const lists = await rest((c) => c.listLists({ workspaceId: ws }))
    const created = await rest((c) =>
      c.createRecord({ workspaceId: ws, title: "client test", description: "a\n\nb", duedAt: "2024-05-01" })
    )
    expect(created.title).toBe("client test")
    expect(createdListId(created)).toBe(lists[0]!.id)
    const updated = await rest((c) => c.updateRecord({ workspaceId: ws, recordId: created.id, done: true }))
    expect(Option.getOrThrow(updated).done).toBe(true)
    const target = lists[1] ?? lists[0]!
    const moved = await rest((c) => c.moveRecord({ workspaceId: ws, recordId: created.id, listId: target.id }))
    expect(moved.success).toBe(true)
    const deleted = await rest((c) => c.deleteRecord({ workspaceId: ws, recordId: created.id }))
    expect(deleted.success).toBe(true)
  })

  it("creates a list, a tag and a workspace (create responses are the object itself)", async () => {
    const list = await rest((c) => c.createList({ workspaceId: ws, title: "Client list" }))
    expect(list.title).toBe("Client list")
    const tag = await rest((c) => c.createTag({ workspaceId: ws, title: "client-tag" }))
    expect(tag.title).toBe("client-tag")
    const w = Option.getOrThrow(await rest((c) => c.createWorkspace({ name: "Client WS" })))
    expect(w.name).toBe("Client WS")
  })
})

describe("RestClient resource style", () => {
  // R-REST-CALL-07 R-REST-CALL-08 R-REST-CALL-09 R-REST-CALL-10 R-REST-CALL-11 R-REST-CALL-12 R-REST-CALL-13 R-REST-CALL-14 R-REST-CALL-15
  it("R-REST-CALL-07..15: records, workspaces and lists through their resource paths", async () => {
    const viaRpc = await rest((c) => c.listRecords({ workspaceId: ws, limit: 3, done: false }))
    const viaGet = await rest((c) => c.resource.listRecords({ workspaceId: ws, limit: 3, done: false }))
    expect(viaGet.items.map((r) => r.id)).toEqual(viaRpc.items.map((r) => r.id))

    const detail = await rest((c) => c.resource.getRecord({ workspaceId: ws, recordId: viaGet.items[0]!.id }))
    expect(detail.id).toBe(viaGet.items[0]!.id)

    const lists = await rest((c) => c.resource.listLists({ workspaceId: ws }))
    const created = await rest((c) => c.resource.createRecord({ workspaceId: ws, title: "resource style" }))
    const patched = await rest((c) => c.resource.updateRecord({ workspaceId: ws, recordId: created.id, title: "patched" }))
    expect(Option.getOrThrow(patched).title).toBe("patched")
    const moved = await rest((c) => c.resource.moveRecord({ workspaceId: ws, recordId: created.id, listId: lists.at(-1)!.id }))
    expect(moved.success).toBe(true)
    const deleted = await rest((c) => c.resource.deleteRecord({ workspaceId: ws, recordId: created.id }))
    expect(deleted.success).toBe(true)

    const workspaces = await rest((c) => c.resource.listWorkspaces())
    expect(workspaces.items.length).toBeGreaterThan(0)
    const newWs = Option.getOrThrow(await rest((c) => c.resource.createWorkspace({ name: "Resource WS" })))
    const newList = await rest((c) => c.resource.createList({ workspaceId: newWs.id, title: "Resource list" }))
    expect(newList.workspaceId).toBe(newWs.id)
  })

  it("R-REST-RECORD-16: array arguments travel as repeated query parameters", async () => {
    const server = await startRecordingServer((_req, res) =>
      json(res, 200, { items: [], pageInfo: { hasNextPage: false, hasPreviousPage: false, startCursor: null, endCursor: null } })
    )
    try {
      const layer = layerFor({ ...emu, restUrl: server.url })
      await run(layer, Effect.flatMap(RestClient, (c) => c.resource.listRecords({ assigneeIds: ["u1", "u2"], done: true, limit: 5 })))
      const url = new URL(server.requests[0]!.url, server.url)
      expect(url.pathname).toBe("/v1/records")
      expect(url.searchParams.getAll("assigneeIds")).toEqual(["u1", "u2"])
      expect(url.searchParams.get("done")).toBe("true")
      expect(url.searchParams.get("limit")).toBe("5")
      expect(server.requests[0]!.body.length).toBe(0)
    } finally {
      await server.close()
    }
  })
})

describe("RestClient request form (recorded by a test server)", () => {
  // R-REST-CALL-04 R-REST-CALL-05 R-REST-CALL-06 R-REST-AUTH-01 R-REST-AUTH-02 R-REST-AUTH-04 R-REST-AUTH-05
  it("R-REST-CALL-04/05/06, R-REST-AUTH-01/02/04/05: POST /v1/<op>, JSON body {} when no input, bearer and org headers", async () => {
    const server = await startRecordingServer((_req, res) => json(res, 200, { items: [], totalCount: 0 }))
    try {
      const layer = layerFor({ ...emu, restUrl: `${server.url}/rest` }, { headerPrefix: "acme" })
      await run(layer, Effect.flatMap(RestClient, (c) => c.listWorkspaces()))
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
    } finally {
      await server.close()
    }
  })

  it("R-REST-CALL-05: inputs travel only in the body, undefined fields are not sent", async () => {
    const server = await startRecordingServer((_req, res) =>
      json(res, 200, { items: [], pageInfo: { hasNextPage: false, hasPreviousPage: false, startCursor: null, endCursor: null } })
    )
    try {
      const layer = layerFor({ ...emu, restUrl: server.url })
      await run(layer, Effect.flatMap(RestClient, (c) => c.listRecords({ workspaceId: "w1", search: undefined, limit: 500 })))
      const r = server.requests[0]!
      expect(r.url).toBe("/v1/list-records")
      expect(JSON.parse(r.body.toString())).toEqual({ workspaceId: "w1", limit: 500 })
    } finally {
      await server.close()
    }
  })

  it("R-REST-RECORD-41: extra keys in a create answer are kept; a bad field is a DecodeError naming its path", async () => {
    const server = await startRecordingServer((req, res) =>
      req.url === "/v1/create-record"
        ? json(res, 200, { id: "r1", uid: "u1", title: "t", rank: 1, list: { id: "l1", title: "L" }, position: 3, todoList: { id: "l1" } })
        : json(res, 200, { items: [{ id: 5 }], pageInfo: { hasNextPage: false, hasPreviousPage: false, startCursor: null, endCursor: null } })
    )
    try {
      const layer = layerFor({ ...emu, restUrl: server.url })
      const created = await run(layer, Effect.flatMap(RestClient, (c) => c.createRecord({ workspaceId: "w", title: "t" })))
      expect((created as unknown as { position: number }).position).toBe(3)
      const failure = await runFailure(layer, Effect.flatMap(RestClient, (c) => c.listRecords({})))
      expect(failure._tag).toBe("DecodeError")
      if (failure._tag === "DecodeError") {
        expect(failure.path).toBe("items[0].id")
        expect(failure.operation).toBe("list-records")
      }
    } finally {
      await server.close()
    }
  })

  it("R-REST-RECORD-33: description with descriptionHtml fails with ConflictingInput before sending", async () => {
    const server = await startRecordingServer((_req, res) => json(res, 200, {}))
    try {
      const layer = layerFor({ ...emu, restUrl: server.url })
      const failure = await runFailure(
        layer,
        Effect.flatMap(RestClient, (c) => c.createRecord({ workspaceId: "w", title: "t", description: "a", descriptionHtml: "<p>a</p>" }))
      )
      expect(failure._tag).toBe("ConflictingInput")
      const update = await runFailure(
        layer,
        Effect.flatMap(RestClient, (c) => c.updateRecord({ workspaceId: "w", recordId: "r", description: "a", descriptionHtml: "<p>a</p>" }))
      )
      expect(update._tag).toBe("ConflictingInput")
      expect(server.requests.length).toBe(0)
    } finally {
      await server.close()
    }
  })

  // R-REST-RECORD-34 R-REST-RECORD-35
  it("R-REST-RECORD-34/35: dates must be bare (all-day) or ISO with a zone; bad ones never leave the client", async () => {
    const server = await startRecordingServer((_req, res) => json(res, 200, { id: "r", uid: "u", title: "t", rank: 1, list: { id: "l", title: "L" } }))
    try {
      const layer = layerFor({ ...emu, restUrl: server.url })
      const bad = await runFailure(layer, Effect.flatMap(RestClient, (c) => c.createRecord({ workspaceId: "w", title: "t", duedAt: "05/01/2024" })))
      expect(bad._tag).toBe("InputRejected")
      expect(server.requests.length).toBe(0)
      await run(layer, Effect.flatMap(RestClient, (c) => c.createRecord({ workspaceId: "w", title: "t", duedAt: "2024-05-01", startedAt: "2024-05-01T09:00:00Z" })))
      expect(JSON.parse(server.requests[0]!.body.toString())).toMatchObject({ duedAt: "2024-05-01", startedAt: "2024-05-01T09:00:00Z" })
    } finally {
      await server.close()
    }
  })

  it("call() works for any operation with any schema", async () => {
    const out = await rest((c) => c.call("list-workspaces", undefined, Schema.Struct({ totalCount: Schema.Number }), { idempotent: true }))
    expect(out.totalCount).toBeGreaterThan(0)
  })
})

describe("RestClient against the emulator's alt variant (the other reading of what the documents leave open)", () => {
  // R-REST-CALL-11
  it("R-REST-CALL-11: PATCH /v1/records/{id} updates whether the service reads the workspace from the body or the query", async () => {
    const alt = await startTestEmulator({ seed: "demo", variant: "alt" })
    try {
      const w = alt.workspaces[0]!
      const id = alt.ctx.db.prepare("SELECT id FROM records WHERE workspace_id = ? AND deleted_at IS NULL LIMIT 1").pluck().get(w) as string
      const out = await run(layerFor(alt), Effect.flatMap(RestClient, (c) => c.resource.updateRecord({ workspaceId: w, recordId: id, title: "patched in alt" })))
      // This reading answers {success: true}: no detail, and none needed.
      expect(Option.isNone(out)).toBe(true)
      expect(alt.ctx.db.prepare("SELECT title FROM records WHERE id = ?").pluck().get(id)).toBe("patched in alt")
    } finally {
      await alt.close()
    }
  })
})
