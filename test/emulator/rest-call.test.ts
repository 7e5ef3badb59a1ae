/**
 * REST call styles and response conventions (R-REST-CALL-*), over real HTTP against a
 * demo-seeded emulator.
 */
import { describe, expect, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import type { EmulatorHandle } from "../../src/emulator/index.ts"
import { Emulator, emulatorLayer } from "../support/effect.ts"
import { ok, rest, rpc } from "./rest-support.ts"

let h: EmulatorHandle
let ws: string

// The helpers below read the file's emulator, and what the set-up derives from it, from these
// bindings: the layer fills them once the emulator is up and closes it after the last test.
const fileLayer = Layer.effectDiscard(
  Effect.gen(function* () {
    h = yield* Emulator
    ws = h.workspaces[0]!
  })
).pipe(Layer.provideMerge(emulatorLayer({ variant: "reference", seed: "demo" })))

const firstRecord = async () => (await ok(rpc(h, "list-records", { workspaceId: ws, limit: 1 }))).items[0]

// Real HTTP and real waits: the live clock (no TestClock), so timers and time scales run.
layer(fileLayer, { timeout: 30_000, excludeTestServices: true })((it) => {
  describe("REST call styles", () => {
    it.effect("R-REST-CALL-01: GET /v1/openapi.json is an OpenAPI 3.1 document listing every operation", () => Effect.promise(async () => {
      const a = await rest(h, "GET", "/v1/openapi.json")
      expect(a.status).toBe(200)
      expect(a.headers.get("content-type")).toMatch(/application\/json/)
      expect(a.body.openapi).toMatch(/^3\.1\./)
      for (const op of h.operations) expect(a.body.paths[`/v1/${op}`]?.post?.operationId).toBe(op)
      expect(a.body.paths["/v1/list-records"].post.requestBody.content["application/json"].schema.properties.limit).toBeDefined()
    }))

    it.effect("R-REST-CALL-02: the surface has 50+ operations across the documented families", () => Effect.promise(async () => {
      expect(h.operations.length).toBeGreaterThanOrEqual(50)
      const doc = (await rest(h, "GET", "/v1/openapi.json")).body
      const tags = new Set<string>()
      for (const path of Object.values<any>(doc.paths)) for (const method of Object.values<any>(path)) for (const t of method.tags) tags.add(t)
      for (const family of [
        "records", "workspaces", "lists", "tags", "custom fields", "comments", "checklists", "users", "activity",
        "documents", "saved views", "dependencies", "reports", "charts", "dashboards", "form fields", "forms",
        "automations", "webhooks", "files", "search"
      ]) {
        expect(tags, family).toContain(family)
      }
    }))

    it.effect("R-REST-CALL-03: a comment written through GraphQL is the activity item read through REST", () => Effect.promise(async () => {
      const record = await firstRecord()
      const res = await fetch(`${h.baseUrl}/graphql`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          "svc-token-id": h.tokenId,
          "svc-token-secret": h.tokenSecret,
          "svc-org-id": h.org,
          "svc-workspace-id": ws
        },
        body: JSON.stringify({
          query: "mutation($input: CreateCommentInput!) { createComment(input: $input) { id } }",
          variables: { input: { html: "<p>via GraphQL</p>", text: "via GraphQL", category: "TODO", categoryId: record.id } }
        })
      })
      const gql = (await res.json()) as any
      expect(gql.errors).toBeUndefined()
      const activity = await ok(rpc(h, "list-record-activity", { workspaceId: ws, recordId: record.id, type: "comments" }))
      expect(activity.items.map((i: any) => i.id)).toContain(gql.data.createComment.id)
    }))

    it.effect("R-REST-CALL-04: every registered operation answers POST /v1/<operation> (never 404/405)", () => Effect.promise(async () => {
      for (const op of h.operations) {
        const a = await rpc(h, op, {})
        expect([200, 400, 422], `${op} -> ${a.status}`).toContain(a.status)
      }
    }))

    it.effect("R-REST-CALL-05: RPC inputs come from the JSON body only; query parameters are ignored; the answer is JSON", () => Effect.promise(async () => {
      const res = await fetch(`${h.restUrl}/v1/list-records?limit=1&workspaceId=nope`, {
        method: "POST",
        headers: { authorization: `Bearer ${h.token}`, "content-type": "application/json" },
        body: JSON.stringify({ workspaceId: ws, limit: 3 })
      })
      expect(res.status).toBe(200)
      expect(res.headers.get("content-type")).toMatch(/^application\/json/)
      expect(((await res.json()) as any).items).toHaveLength(3)
    }))

    it.effect("R-REST-CALL-06: an operation without required input takes the body {} (and an empty body is refused)", () => Effect.promise(async () => {
      const page = await ok(rpc(h, "list-workspaces", {}))
      expect(page.items.length).toBe(2)
      const res = await fetch(`${h.restUrl}/v1/list-workspaces`, {
        method: "POST",
        headers: { authorization: `Bearer ${h.token}`, "content-type": "application/json" }
      })
      expect(res.status).toBe(400)
    }))

    it.effect("R-REST-CALL-07: the same inputs give the same JSON in RPC and resource style", () => Effect.promise(async () => {
      const viaRpc = await ok(rpc(h, "list-records", { workspaceId: ws, limit: 5, skip: 2 }))
      const viaResource = await ok(rest(h, "GET", `/v1/records?workspaceId=${ws}&limit=5&skip=2`))
      expect(viaResource).toEqual(viaRpc)
      const id = viaRpc.items[0].id
      expect(await ok(rest(h, "GET", `/v1/records/${id}?workspaceId=${ws}`))).toEqual(
        await ok(rpc(h, "get-record", { workspaceId: ws, recordId: id }))
      )
    }))

    it.effect("R-REST-CALL-08: GET /v1/records is list-records with arguments as query parameters", () => Effect.promise(async () => {
      const done = await ok(rest(h, "GET", `/v1/records?workspaceId=${ws}&done=true&limit=100`))
      expect(done.items.length).toBeGreaterThan(0)
      expect(done.items.every((r: any) => r.done === true)).toBe(true)
      const list = done.items[0].todoList.id
      const both = await ok(rest(h, "GET", `/v1/records?workspaceId=${ws}&listId=${list}&archived=false&limit=2`))
      expect(both.items.length).toBeLessThanOrEqual(2)
      expect(both.items.every((r: any) => r.todoList.id === list && r.archived === false)).toBe(true)
      expect(both.pageInfo).toBeDefined()
    }))

    it.effect("R-REST-CALL-09: GET /v1/records/{id}?workspaceId= reads that record", () => Effect.promise(async () => {
      const record = await firstRecord()
      const detail = await ok(rest(h, "GET", `/v1/records/${record.id}?workspaceId=${ws}`))
      expect(detail.id).toBe(record.id)
      expect(detail).toHaveProperty("checklists")
    }))

    it.effect("R-REST-CALL-10: POST /v1/records is create-record with the same body", () => Effect.promise(async () => {
      const created = await ok(rest(h, "POST", "/v1/records", { workspaceId: ws, title: "resource-style create" }))
      expect(created.title).toBe("resource-style create")
      const detail = await ok(rpc(h, "get-record", { workspaceId: ws, recordId: created.id }))
      expect(detail.title).toBe("resource-style create")
    }))

    it.effect("R-REST-CALL-11: PATCH /v1/records/{id} updates that record", () => Effect.promise(async () => {
      const created = await ok(rpc(h, "create-record", { workspaceId: ws, title: "before patch" }))
      const patched = await ok(rest(h, "PATCH", `/v1/records/${created.id}`, { workspaceId: ws, title: "after patch", done: true }))
      expect(patched.title).toBe("after patch")
      const detail = await ok(rpc(h, "get-record", { workspaceId: ws, recordId: created.id }))
      expect(detail.title).toBe("after patch")
      expect(detail.done).toBe(true)
    }))

    it.effect("R-REST-CALL-12: DELETE /v1/records/{id}?workspaceId= deletes that record", () => Effect.promise(async () => {
      const created = await ok(rpc(h, "create-record", { workspaceId: ws, title: "to delete" }))
      expect(await ok(rest(h, "DELETE", `/v1/records/${created.id}?workspaceId=${ws}`))).toEqual({ success: true })
      expect((await rpc(h, "get-record", { workspaceId: ws, recordId: created.id })).status).toBe(422)
    }))

    it.effect("R-REST-CALL-13: POST /v1/records/{id}/move with {workspaceId, listId} moves record {id}", () => Effect.promise(async () => {
      const lists = (await ok(rpc(h, "list-lists", { workspaceId: ws }))).items
      const created = await ok(rpc(h, "create-record", { workspaceId: ws, title: "to move", listId: lists[0].id }))
      const moved = await ok(rest(h, "POST", `/v1/records/${created.id}/move`, { workspaceId: ws, listId: lists[1].id }))
      expect(moved).toEqual({ success: true })
      expect((await ok(rpc(h, "get-record", { workspaceId: ws, recordId: created.id }))).todoList.id).toBe(lists[1].id)
    }))

    it.effect("R-REST-CALL-14: GET and POST /v1/workspaces are the workspace endpoints", () => Effect.promise(async () => {
      const before = await ok(rest(h, "GET", "/v1/workspaces"))
      expect(before).toEqual(await ok(rpc(h, "list-workspaces", {})))
      const created = await ok(rest(h, "POST", "/v1/workspaces", { name: "Resource Style WS" }))
      expect(created).toMatchObject({ name: "Resource Style WS", slug: "resource-style-ws", organizationId: h.org })
      const after = await ok(rest(h, "GET", "/v1/workspaces"))
      expect(after.totalCount).toBe(before.totalCount + 1)
    }))

    it.effect("R-REST-CALL-15: GET and POST /v1/lists are the list endpoints", () => Effect.promise(async () => {
      const created = await ok(rest(h, "POST", "/v1/lists", { workspaceId: ws, title: "Resource list" }))
      expect(created).toMatchObject({ title: "Resource list", workspaceId: ws })
      const lists = await ok(rest(h, "GET", `/v1/lists?workspaceId=${ws}`))
      expect(lists).toEqual(await ok(rpc(h, "list-lists", { workspaceId: ws })))
      expect(lists.items.map((l: any) => l.id)).toContain(created.id)
    }))

    it.effect("R-REST-CALL-16: only records, workspaces and lists have resource paths; the rest is RPC-only", () => Effect.promise(async () => {
      expect((await rest(h, "GET", `/v1/tags?workspaceId=${ws}`)).status).toBe(404)
      expect((await rest(h, "GET", "/v1/users")).status).toBe(404)
      expect((await rest(h, "GET", `/v1/list-tags?workspaceId=${ws}`)).status).toBe(405)
      expect((await rpc(h, "list-tags", { workspaceId: ws })).status).toBe(200)
    }))

    it.effect("R-REST-CALL-17: answers are untrimmed: null and empty fields are present", () => Effect.promise(async () => {
      const created = await ok(rpc(h, "create-record", { workspaceId: ws, title: "bare record" }))
      const detail = await ok(rpc(h, "get-record", { workspaceId: ws, recordId: created.id }))
      for (const key of ["startedAt", "duedAt", "color"]) expect(detail).toHaveProperty(key, null)
      expect(detail.users).toEqual([])
      expect(detail.tags).toEqual([])
      expect(detail.text).toBe("")
      const page = await ok(rpc(h, "list-records", { workspaceId: ws, limit: 100 }))
      const bare = page.items.find((r: any) => r.id === created.id)
      expect(Object.keys(bare).sort()).toEqual(Object.keys(page.items[0]).sort())
    }))

    it.effect("R-REST-CALL-18: a create answer is the created object itself, not an envelope", () => Effect.promise(async () => {
      const tag = await ok(rpc(h, "create-tag", { workspaceId: ws, title: "plain", color: "#123456" }))
      expect(Object.keys(tag).sort()).toEqual(["color", "id", "title"])
      const list = await ok(rpc(h, "create-list", { workspaceId: ws, title: "plain list" }))
      expect(list).toMatchObject({ title: "plain list" })
      expect(list).not.toHaveProperty("data")
    }))

    it.effect("R-REST-CALL-19: every REST path is under /v1", () => Effect.promise(async () => {
      const doc = (await rest(h, "GET", "/v1/openapi.json")).body
      expect(Object.keys(doc.paths).every((p) => p.startsWith("/v1/"))).toBe(true)
      expect((await rest(h, "POST", "/list-records", {})).status).toBe(404)
      expect((await rest(h, "POST", "/v2/list-records", {})).status).toBe(404)
    }))
  })
})
