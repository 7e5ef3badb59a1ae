/** search-records (R-REST-SEARCH-*). */
import { describe, expect, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import type { EmulatorHandle } from "../../src/emulator/index.ts"
import { Emulator, emulatorLayer } from "../support/effect.ts"
import { ok, rpc } from "./rest-support.ts"

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

const search = (body: Record<string, unknown>) => ok(rpc(h, "search-records", { workspaceId: ws, ...body }))
const create = (body: Record<string, unknown>) => ok(rpc(h, "create-record", { workspaceId: ws, ...body }))

// Real HTTP and real waits: the live clock (no TestClock), so timers and time scales run.
layer(fileLayer, { timeout: 30_000, excludeTestServices: true })((it) => {
  describe("search-records", () => {
    it.effect("R-REST-SEARCH-01: workspaceId and query are required strings", () => Effect.promise(async () => {
      expect((await rpc(h, "search-records", { query: "x" })).status).toBe(400)
      expect((await rpc(h, "search-records", { workspaceId: ws })).status).toBe(400)
      expect((await rpc(h, "search-records", { workspaceId: ws, query: 5 })).status).toBe(400)
    }))

    it.effect("R-REST-SEARCH-02: workspaceId accepts the workspace id or its slug", () => Effect.promise(async () => {
      const byId = await search({ query: "launch" })
      expect(byId.length).toBeGreaterThan(0)
      expect(await ok(rpc(h, "search-records", { workspaceId: "website", query: "launch" }))).toEqual(byId)
    }))

    it.effect("R-REST-SEARCH-03: the query matches titles and content", () => Effect.promise(async () => {
      const inTitle = await create({ title: "Quokka migration plan" })
      const inText = await create({ title: "Unrelated", description: "notes about the quokka enclosure" })
      const found = (await search({ query: "QUOKKA" })).map((r: any) => r.id).sort()
      expect(found).toEqual([inTitle.id, inText.id].sort())
    }))

    it.effect("R-REST-SEARCH-04: done filters by completion", () => Effect.promise(async () => {
      const open = await create({ title: "Wombat open" })
      const closed = await create({ title: "Wombat closed" })
      await ok(rpc(h, "update-record", { workspaceId: ws, recordId: closed.id, done: true }))
      expect((await search({ query: "wombat", done: true })).map((r: any) => r.id)).toEqual([closed.id])
      expect((await search({ query: "wombat", done: false })).map((r: any) => r.id)).toEqual([open.id])
    }))

    it.effect("R-REST-SEARCH-05: archived records are excluded by default", () => Effect.promise(async () => {
      const live = await create({ title: "Narwhal live" })
      const archived = await create({ title: "Narwhal archived" })
      await ok(rpc(h, "update-record", { workspaceId: ws, recordId: archived.id, archived: true }))
      expect((await search({ query: "narwhal" })).map((r: any) => r.id)).toEqual([live.id])
      expect((await search({ query: "narwhal", archived: false })).map((r: any) => r.id)).toEqual([live.id])
    }))

    it.effect("R-REST-SEARCH-06: archived: true includes archived records", () => Effect.promise(async () => {
      const found = await search({ query: "narwhal", archived: true })
      expect(found).toHaveLength(2)
      expect(found.some((r: any) => r.archived === true)).toBe(true)
    }))

    it.effect("R-REST-SEARCH-07: limit defaults to 20", () => Effect.promise(async () => {
      for (let i = 0; i < 25; i++) await create({ title: `Axolotl ${i}` })
      expect(await search({ query: "axolotl" })).toHaveLength(20)
      expect(await search({ query: "axolotl", limit: 5 })).toHaveLength(5)
    }))

    it.effect("R-REST-SEARCH-08: limit is at most 100 (larger values are capped)", () => Effect.promise(async () => {
      for (let i = 0; i < 105; i++) await create({ title: `Pangolin ${i}` })
      const a = await rpc(h, "search-records", { workspaceId: ws, query: "pangolin", limit: 500 })
      expect(a.status).toBe(200)
      expect(a.body).toHaveLength(100)
    }))

    it.effect("R-REST-SEARCH-09: the answer is a bare JSON array (no envelope, no pageInfo)", () => Effect.promise(async () => {
      const a = await rpc(h, "search-records", { workspaceId: ws, query: "launch" })
      expect(Array.isArray(a.body)).toBe(true)
      expect(await search({ query: "no-such-thing-anywhere" })).toEqual([])
    }))

    it.effect("R-REST-SEARCH-10: a result is the summary without position, startedAt, duedAt and color", () => Effect.promise(async () => {
      const results = await search({ query: "e", limit: 100 })
      expect(results.length).toBeGreaterThan(20)
      for (const r of results) {
        expect(Object.keys(r).sort()).toEqual(["archived", "createdAt", "done", "id", "tags", "title", "todoList", "uid", "updatedAt", "users"])
      }
    }))

    it.effect("R-REST-SEARCH-11: result users are {id, fullName}", () => Effect.promise(async () => {
      const results = await search({ query: "launch" })
      const withUsers = results.find((r: any) => r.users.length > 0)
      expect(withUsers).toBeDefined()
      for (const u of withUsers.users) expect(Object.keys(u).sort()).toEqual(["fullName", "id"])
      expect(withUsers.users.map((u: any) => u.fullName)).toContain("Ada Lovelace")
    }))
  })
})
