/** Paging (R-REST-PAGE-*; list-files paging, R-REST-PAGE-08, is covered with uploads). */
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
).pipe(Layer.provideMerge(emulatorLayer({ variant: "reference", seed: { workspaces: 1, recordsPerWorkspace: 250 } })))

const list = (body: Record<string, unknown>) => ok(rpc(h, "list-records", { workspaceId: ws, ...body }))

// Real HTTP and real waits: the live clock (no TestClock), so timers and time scales run.
layer(fileLayer, { timeout: 30_000, excludeTestServices: true })((it) => {
  describe("list-records paging", () => {
    it.effect("R-REST-PAGE-01: skip is an offset and defaults to 0", () => Effect.promise(async () => {
      const noSkip = await list({ limit: 20 })
      expect(await list({ limit: 20, skip: 0 })).toEqual(noSkip)
      const skipped = await list({ limit: 10, skip: 10 })
      expect(skipped.items.map((r: any) => r.id)).toEqual(noSkip.items.slice(10, 20).map((r: any) => r.id))
    }))

    it.effect("R-REST-PAGE-02: limit defaults to 50", () => Effect.promise(async () => {
      expect((await list({})).items).toHaveLength(50)
    }))

    it.effect("R-REST-PAGE-03: limit above 100 is capped silently to 100", () => Effect.promise(async () => {
      const a = await rpc(h, "list-records", { workspaceId: ws, limit: 1000 })
      expect(a.status).toBe(200)
      expect(a.body.items).toHaveLength(100)
      expect(a.body.pageInfo.hasNextPage).toBe(true)
    }))

    it.effect("R-REST-PAGE-04: advancing skip by the page size until hasNextPage is false reads everything once", () => Effect.promise(async () => {
      const seen: Array<string> = []
      let pages = 0
      for (let skip = 0; ; skip += 40) {
        const p = await list({ skip, limit: 40 })
        pages++
        seen.push(...p.items.map((r: any) => r.id))
        if (!p.pageInfo.hasNextPage) break
      }
      expect(pages).toBe(7)
      expect(seen).toHaveLength(250)
      expect(new Set(seen).size).toBe(250)
    }))

    it.effect("R-REST-PAGE-05: a page with fewer than limit items is the last page", () => Effect.promise(async () => {
      const last = await list({ skip: 200, limit: 100 })
      expect(last.items).toHaveLength(50)
      expect(last.pageInfo.hasNextPage).toBe(false)
      // A full last page still says it is the last.
      const exact = await list({ skip: 150, limit: 100 })
      expect(exact.items).toHaveLength(100)
      expect(exact.pageInfo.hasNextPage).toBe(false)
      expect((await list({ skip: 250, limit: 100 })).items).toEqual([])
    }))

    it.effect("R-REST-PAGE-06: paged answers do not echo skip or limit", () => Effect.promise(async () => {
      const p = await list({ skip: 5, limit: 5 })
      expect(Object.keys(p).sort()).toEqual(["items", "pageInfo"])
      expect(Object.keys(p.pageInfo).sort()).toEqual(["endCursor", "hasNextPage", "hasPreviousPage", "startCursor"])
    }))

    it.effect("R-REST-PAGE-07: list-records pageInfo has hasNextPage, hasPreviousPage, startCursor, endCursor", () => Effect.promise(async () => {
      const first = await list({ limit: 10 })
      expect(first.pageInfo).toEqual({
        hasNextPage: true,
        hasPreviousPage: false,
        startCursor: first.items[0].id,
        endCursor: first.items[9].id
      })
      const second = await list({ limit: 10, skip: 10 })
      expect(second.pageInfo.hasPreviousPage).toBe(true)
      const empty = await list({ limit: 10, skip: 1000 })
      expect(empty.pageInfo).toEqual({ hasNextPage: false, hasPreviousPage: true, startCursor: null, endCursor: null })
    }))

    it.effect("sequential pages stay exact across writes (the page-boundary shortcut is invalidated)", () => Effect.promise(async () => {
      const p1 = await list({ limit: 30 })
      const p2 = await list({ limit: 30, skip: 30 })
      // A write between pages: offsets shift exactly as plain OFFSET paging does.
      await ok(rpc(h, "delete-record", { workspaceId: ws, recordId: p1.items[0].id }))
      const p2again = await list({ limit: 30, skip: 30 })
      expect(p2again.items[0].id).toBe(p2.items[1].id)
      await ok(rpc(h, "list-records", { workspaceId: ws, limit: 30, skip: 0 }))
    }))
  })

  describe("other paged and unpaged listings", () => {
    it.effect("R-REST-PAGE-09: list-workspaces with {} answers {items, totalCount}, no pageInfo", () => Effect.promise(async () => {
      const p = await ok(rpc(h, "list-workspaces", {}))
      expect(Object.keys(p).sort()).toEqual(["items", "totalCount"])
      expect(p.totalCount).toBe(1)
      expect(Object.keys(p.items[0]).sort()).toEqual(["createdAt", "id", "name", "organizationId", "slug", "updatedAt"])
    }))

    it.effect("R-REST-PAGE-10: list-users answers {users, totalCount}, no pageInfo", () => Effect.promise(async () => {
      const p = await ok(rpc(h, "list-users", {}))
      expect(Object.keys(p).sort()).toEqual(["totalCount", "users"])
      expect(p.totalCount).toBe(2)
      expect(Object.keys(p.users[0]).sort()).toEqual(["accessLevel", "email", "firstName", "fullName", "id", "lastName"])
      const one = await ok(rpc(h, "list-users", { limit: 1, skip: 1 }))
      expect(one.users).toHaveLength(1)
      expect(one.totalCount).toBe(2)
    }))

    it.effect("R-REST-PAGE-11: list-lists is not paged: it returns every list", () => Effect.promise(async () => {
      for (let i = 0; i < 110; i++) await ok(rpc(h, "create-list", { workspaceId: ws, title: `List ${i}` }))
      const lists = await ok(rpc(h, "list-lists", { workspaceId: ws, limit: 5 }))
      expect(lists.items).toHaveLength(113)
      expect(lists.totalCount).toBe(113)
    }))

    it.effect("R-REST-PAGE-12: list-documents limit defaults to 20", () => Effect.promise(async () => {
      for (let i = 0; i < 25; i++) await ok(rpc(h, "create-document", { workspaceId: ws, title: `Doc ${i}` }))
      const p = await ok(rpc(h, "list-documents", { workspaceId: ws }))
      expect(p.items).toHaveLength(20)
      expect(p.totalCount).toBe(25)
      expect((await ok(rpc(h, "list-documents", { workspaceId: ws, skip: 20 }))).items).toHaveLength(5)
    }))

    it.effect("R-REST-PAGE-13: list-saved-views limit defaults to 100", () => Effect.promise(async () => {
      for (let i = 0; i < 105; i++) await ok(rpc(h, "create-saved-view", { workspaceId: ws, name: `View ${i}` }))
      const p = await ok(rpc(h, "list-saved-views", {}))
      expect(p.items).toHaveLength(100)
      expect(p.totalCount).toBe(105)
      expect((await ok(rpc(h, "list-saved-views", { limit: 500 }))).items).toHaveLength(100)
    }))
  })
})
