/** list-record-activity and list-activity (R-REST-ACTIVITY-*). */
import { describe, expect, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import type { EmulatorHandle } from "../../src/emulator/index.ts"
import { Emulator, emulatorLayer } from "../support/effect.ts"
import { ISO, ok, rpc } from "./rest-support.ts"

let h: EmulatorHandle
let ws: string
/** The demo record with more than 24 activity items. */
let busy: string

// The helpers below read the file's emulator, and what the set-up derives from it, from these
// bindings: the layer fills them once the emulator is up and closes it after the last test.
const fileLayer = Layer.effectDiscard(
  Effect.gen(function* () {
    h = yield* Emulator
    yield* Effect.promise(async () => {
      ws = h.workspaces[0]!
      busy = (await ok(rpc(h, "search-records", { workspaceId: ws, query: "Draft the launch announcement" })))[0].id
    })
  })
).pipe(Layer.provideMerge(emulatorLayer({ variant: "reference", seed: "demo" })))

const activity = (body: Record<string, unknown>) => ok(rpc(h, "list-record-activity", { workspaceId: ws, recordId: busy, ...body }))
const KEYS = ["__typename", "id", "html", "createdAt", "deletedAt", "commentUser", "type", "oldValue", "newValue", "automated", "actionUser", "affectedBy", "customField"]

// Real HTTP and real waits: the live clock (no TestClock), so timers and time scales run.
layer(fileLayer, { timeout: 30_000, excludeTestServices: true })((it) => {
  describe("list-record-activity", () => {
    it.effect("R-REST-ACTIVITY-01: workspaceId and recordId are required strings", () => Effect.promise(async () => {
      expect((await rpc(h, "list-record-activity", { workspaceId: ws })).status).toBe(400)
      expect((await rpc(h, "list-record-activity", { recordId: busy })).status).toBe(400)
      expect((await rpc(h, "list-record-activity", { workspaceId: ws, recordId: 1 })).status).toBe(400)
    }))

    it.effect("R-REST-ACTIVITY-02: type accepts all, comments or actions (and nothing else)", () => Effect.promise(async () => {
      for (const type of ["all", "comments", "actions"]) expect((await rpc(h, "list-record-activity", { workspaceId: ws, recordId: busy, type })).status).toBe(200)
      const bad = await rpc(h, "list-record-activity", { workspaceId: ws, recordId: busy, type: "likes" })
      expect(bad.status).toBe(400)
      expect(bad.body.error.issues[0].path).toEqual(["type"])
    }))

    it.effect("R-REST-ACTIVITY-03: without type, items mix comments and actions (as type all)", () => Effect.promise(async () => {
      const mixed = await activity({ limit: 24 })
      expect(new Set(mixed.items.map((i: any) => i.__typename))).toEqual(new Set(["Comment", "Action"]))
      expect(await activity({ type: "all", limit: 24 })).toEqual(mixed)
    }))

    it.effect("R-REST-ACTIVITY-04: type comments returns only comments", () => Effect.promise(async () => {
      const comments = await activity({ type: "comments", limit: 24 })
      expect(comments.items.length).toBe(15)
      expect(comments.items.every((i: any) => i.__typename === "Comment" && i.type === null && i.commentUser !== null)).toBe(true)
    }))

    it.effect("R-REST-ACTIVITY-05: type actions returns only actions", () => Effect.promise(async () => {
      const actions = await activity({ type: "actions", limit: 24 })
      expect(actions.items.length).toBeGreaterThan(10)
      expect(actions.items.every((i: any) => i.__typename === "Action" && typeof i.type === "string" && i.commentUser === null)).toBe(true)
    }))

    it.effect("R-REST-ACTIVITY-06: limit defaults to 20", () => Effect.promise(async () => {
      const page = await activity({})
      expect(page.totalCount).toBeGreaterThan(24)
      expect(page.items).toHaveLength(20)
    }))

    it.effect("R-REST-ACTIVITY-07: limit is at most 24 (larger values are capped)", () => Effect.promise(async () => {
      expect((await activity({ limit: 100 })).items).toHaveLength(24)
    }))

    it.effect("R-REST-ACTIVITY-08: skip defaults to 0", () => Effect.promise(async () => {
      const first = await activity({ limit: 10 })
      expect(await activity({ limit: 10, skip: 0 })).toEqual(first)
      const next = await activity({ limit: 10, skip: 5 })
      expect(next.items.slice(0, 5)).toEqual(first.items.slice(5))
    }))

    it.effect("R-REST-ACTIVITY-09: the answer is {items, totalCount}", () => Effect.promise(async () => {
      const page = await activity({ limit: 3 })
      expect(Object.keys(page).sort()).toEqual(["items", "totalCount"])
      const total = (h.ctx.db.prepare("SELECT count(*) AS n FROM activity WHERE record_id = ?").get(busy) as any).n
      expect(page.totalCount).toBe(total)
    }))

    it.effect("R-REST-ACTIVITY-10: every item has every documented key, comments and actions alike", () => Effect.promise(async () => {
      for (const item of (await activity({ limit: 24 })).items) {
        expect(Object.keys(item).sort()).toEqual([...KEYS].sort())
        expect(item.createdAt).toMatch(ISO)
      }
    }))

    it.effect("R-REST-ACTIVITY-11: commentUser, actionUser and affectedBy are {id, fullName}", () => Effect.promise(async () => {
      const items = (await activity({ limit: 24 })).items
      for (const item of items) {
        for (const key of ["commentUser", "actionUser", "affectedBy"]) {
          if (item[key] !== null) expect(Object.keys(item[key]).sort()).toEqual(["fullName", "id"])
        }
      }
      const all = [...items, ...(await activity({ limit: 24, skip: 24 })).items]
      expect(all.some((i: any) => i.affectedBy !== null)).toBe(true)
      expect(all.some((i: any) => i.actionUser?.fullName === "Ada Lovelace" || i.commentUser?.fullName === "Ada Lovelace")).toBe(true)
    }))

    it.effect("R-REST-ACTIVITY-12: customField is {id, name} on a custom field action", () => Effect.promise(async () => {
      const field = (await ok(rpc(h, "list-custom-fields", { workspaceId: ws }))).items.find((f: any) => f.type === "NUMBER")
      await ok(rpc(h, "set-record-custom-field", { workspaceId: ws, recordId: busy, customFieldId: field.id, number: 42 }))
      const latest = (await activity({ type: "actions", limit: 1 })).items[0]
      expect(latest.type).toBe("UPDATE_CUSTOM_FIELD")
      expect(latest.customField).toEqual({ id: field.id, name: field.name })
      expect(latest.newValue.number).toBe(42)
    }))

    it.effect("R-REST-ACTIVITY-13: automated is a boolean", () => Effect.promise(async () => {
      for (const item of (await activity({ limit: 24 })).items) expect(typeof item.automated).toBe("boolean")
    }))

    it.effect("R-REST-ACTIVITY-14: an action's type is its kind; UPDATE_TITLE is one", () => Effect.promise(async () => {
      const created = await ok(rpc(h, "create-record", { workspaceId: ws, title: "before" }))
      await ok(rpc(h, "update-record", { workspaceId: ws, recordId: created.id, title: "after" }))
      const items = (await ok(rpc(h, "list-record-activity", { workspaceId: ws, recordId: created.id }))).items
      expect(items.map((i: any) => i.type)).toEqual(["UPDATE_TITLE", "CREATE"])
      expect(items[0]).toMatchObject({ oldValue: "before", newValue: "after" })
    }))
  })

  describe("list-activity", () => {
    it.effect("R-REST-ACTIVITY-15: list-activity limit defaults to 20", () => Effect.promise(async () => {
      const page = await ok(rpc(h, "list-activity", { workspaceId: ws }))
      expect(page.totalCount).toBeGreaterThan(20)
      expect(page.items).toHaveLength(20)
      expect(page.items[0]).toHaveProperty("recordId")
      expect((await ok(rpc(h, "list-activity", {}))).items).toHaveLength(20)
    }))
  })
})
