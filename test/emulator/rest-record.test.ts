/** Record operations, shapes and states (R-REST-RECORD-*), over real HTTP. */
import { describe, expect, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import type { DomainEvent } from "../../src/emulator/context.ts"
import type { EmulatorHandle } from "../../src/emulator/index.ts"
import { Emulator, emulatorLayer } from "../support/effect.ts"
import { ISO, ok, rpc } from "./rest-support.ts"

let h: EmulatorHandle
let ws: string
let ws2: string
let lists: Array<{ id: string; title: string }>
let tags: Array<{ id: string; title: string }>
let users: Array<{ id: string }>
const events: Array<DomainEvent> = []

// The helpers below read the file's emulator, and what the set-up derives from it, from these
// bindings: the layer fills them once the emulator is up and closes it after the last test.
const fileLayer = Layer.effectDiscard(
  Effect.gen(function* () {
    h = yield* Emulator
    yield* Effect.promise(async () => {
      ws = h.workspaces[0]!
      ws2 = h.workspaces[1]!
      lists = (await ok(rpc(h, "list-lists", { workspaceId: ws }))).items
      tags = (await ok(rpc(h, "list-tags", { workspaceId: ws }))).items
      users = (await ok(rpc(h, "list-users", { workspaceId: ws }))).users
      h.ctx.events.subscribe((e) => events.push(e))
    })
  })
).pipe(Layer.provideMerge(emulatorLayer({ variant: "reference", seed: "demo" })))

const page = (body: Record<string, unknown> = {}) => ok(rpc(h, "list-records", { limit: 100, ...body }))
const allOf = async (body: Record<string, unknown>) => {
  const out: Array<any> = []
  for (let skip = 0; ; skip += 100) {
    const p = await page({ ...body, skip })
    out.push(...p.items)
    if (!p.pageInfo.hasNextPage) return out
  }
}
const create = (body: Record<string, unknown>) => ok(rpc(h, "create-record", { workspaceId: ws, ...body }))
const detail = (id: string, workspaceId = ws) => ok(rpc(h, "get-record", { workspaceId, recordId: id }))
const flags = (id: string) =>
  h.ctx.db.prepare("SELECT started_all_day, dued_all_day FROM records WHERE id = ?").get(id) as { started_all_day: number; dued_all_day: number }

// Real HTTP and real waits: the live clock (no TestClock), so timers and time scales run.
layer(fileLayer, { timeout: 30_000, excludeTestServices: true })((it) => {
  describe("record summaries (list-records)", () => {
    it.effect("R-REST-RECORD-01: list-records answers {items, pageInfo} with summaries only", () => Effect.promise(async () => {
      const p = await page({ workspaceId: ws, limit: 5 })
      expect(Object.keys(p).sort()).toEqual(["items", "pageInfo"])
      for (const item of p.items) {
        expect(item).not.toHaveProperty("html")
        expect(item).not.toHaveProperty("checklists")
        expect(item).not.toHaveProperty("customFields")
      }
    }))

    it.effect("R-REST-RECORD-02..10: summary fields have the documented types", () => Effect.promise(async () => {
      const items = (await page({ workspaceId: ws })).items
      expect(items.length).toBeGreaterThan(20)
      for (const r of items) {
        // R-REST-RECORD-02
        for (const k of ["id", "uid", "title"]) expect(typeof r[k]).toBe("string")
        // R-REST-RECORD-03
        expect(typeof r.done).toBe("boolean")
        expect(typeof r.archived).toBe("boolean")
        // R-REST-RECORD-04
        expect(typeof r.position).toBe("number")
        // R-REST-RECORD-05
        for (const k of ["startedAt", "duedAt"]) if (r[k] !== null) expect(r[k]).toMatch(ISO)
        // R-REST-RECORD-06
        expect(r.color === null || typeof r.color === "string").toBe(true)
        // R-REST-RECORD-07
        expect(r.createdAt).toMatch(ISO)
        expect(r.updatedAt).toMatch(ISO)
        // R-REST-RECORD-08
        expect(Object.keys(r.todoList).sort()).toEqual(["id", "title"])
        // R-REST-RECORD-09
        for (const u of r.users) expect(Object.keys(u).sort()).toEqual(["email", "firstName", "id", "lastName"])
        // R-REST-RECORD-10
        for (const t of r.tags) expect(Object.keys(t).sort()).toEqual(["color", "id", "title"])
      }
      // The seed has each variant at least once.
      expect(items.some((r: any) => r.startedAt !== null && r.duedAt !== null && r.color !== null)).toBe(true)
      expect(items.some((r: any) => r.users.length > 1 && r.tags.length > 0)).toBe(true)
    }))
  })

  describe("list-records filters", () => {
    it.effect("R-REST-RECORD-11: without workspaceId, records of all workspaces", () => Effect.promise(async () => {
      const all = await allOf({})
      const workspaces = new Set(all.map((r: any) => (h.ctx.db.prepare("SELECT workspace_id FROM records WHERE id = ?").get(r.id) as any).workspace_id))
      expect(workspaces).toEqual(new Set([ws, ws2]))
    }))

    it.effect("R-REST-RECORD-12: with workspaceId, only that workspace's records", () => Effect.promise(async () => {
      const one = await allOf({ workspaceId: ws2 })
      const count = (h.ctx.db.prepare("SELECT count(*) AS n FROM records WHERE workspace_id = ? AND deleted_at IS NULL").get(ws2) as any).n
      expect(one).toHaveLength(count)
      expect(one.every((r: any) => r.title.endsWith("(app)"))).toBe(true)
    }))

    it.effect("R-REST-RECORD-13: with listId, only that list's records", () => Effect.promise(async () => {
      const items = await allOf({ listId: lists[1]!.id })
      expect(items.length).toBeGreaterThan(0)
      expect(items.every((r: any) => r.todoList.id === lists[1]!.id)).toBe(true)
    }))

    it.effect("R-REST-RECORD-14: with done, only records whose done matches", () => Effect.promise(async () => {
      const done = await allOf({ workspaceId: ws, done: true })
      const open = await allOf({ workspaceId: ws, done: false })
      expect(done.length).toBeGreaterThan(0)
      expect(open.length).toBeGreaterThan(0)
      expect(done.every((r: any) => r.done)).toBe(true)
      expect(open.every((r: any) => !r.done)).toBe(true)
    }))

    it.effect("R-REST-RECORD-15: with archived, only records whose archived matches", () => Effect.promise(async () => {
      const archived = await allOf({ workspaceId: ws, archived: true })
      const live = await allOf({ workspaceId: ws, archived: false })
      expect(archived.length).toBeGreaterThan(0)
      expect(archived.every((r: any) => r.archived)).toBe(true)
      expect(live.every((r: any) => !r.archived)).toBe(true)
    }))

    it.effect("R-REST-RECORD-16: with assigneeIds, records assigned to any of them", () => Effect.promise(async () => {
      const member = users.find((u: any) => u.accessLevel === "MEMBER")!
      const items = await allOf({ workspaceId: ws, assigneeIds: [member.id] })
      expect(items.length).toBeGreaterThan(0)
      expect(items.every((r: any) => r.users.some((u: any) => u.id === member.id))).toBe(true)
      const everyone = await allOf({ workspaceId: ws })
      expect(items.length).toBeLessThan(everyone.length)
    }))

    it.effect("R-REST-RECORD-17: with tagIds, records carrying any of them", () => Effect.promise(async () => {
      const tag = tags.find((t) => t.title === "urgent")!
      const items = await allOf({ workspaceId: ws, tagIds: [tag.id] })
      expect(items.length).toBeGreaterThan(0)
      expect(items.every((r: any) => r.tags.some((t: any) => t.id === tag.id))).toBe(true)
    }))

    it.effect("R-REST-RECORD-18: with search, records whose title contains the text", () => Effect.promise(async () => {
      const items = await allOf({ workspaceId: ws, search: "café" })
      expect(items.map((r: any) => r.title)).toEqual(["Café menu photos — retake in daylight"])
      expect((await allOf({ workspaceId: ws, search: "DARK MODE" })).map((r: any) => r.title)).toEqual(["Ship dark mode"])
    }))
  })

  describe("get-record", () => {
    it.effect("R-REST-RECORD-19: get-record requires workspaceId and recordId (strings) and answers the detail", () => Effect.promise(async () => {
      expect((await rpc(h, "get-record", { workspaceId: ws })).status).toBe(400)
      expect((await rpc(h, "get-record", { workspaceId: ws, recordId: 42 })).status).toBe(400)
      const first = (await page({ workspaceId: ws, limit: 1 })).items[0]
      expect((await detail(first.id)).id).toBe(first.id)
    }))

    it.effect("R-REST-RECORD-20..26: the detail holds every summary field plus typed detail fields", () => Effect.promise(async () => {
      const summary = (await page({ workspaceId: ws, limit: 1 })).items[0]
      const d = await detail(summary.id)
      // R-REST-RECORD-20
      for (const key of Object.keys(summary)) expect(d).toHaveProperty(key)
      // R-REST-RECORD-21
      expect(typeof d.text).toBe("string")
      expect(typeof d.html).toBe("string")
      expect(d.html).toContain("<strong>")
      // R-REST-RECORD-22
      expect(typeof d.timezone).toBe("string")
      expect(typeof d.cover).toBe("string")
      // R-REST-RECORD-23
      for (const k of ["commentCount", "checklistCount", "checklistCompletedCount"]) expect(typeof d[k]).toBe("number")
      expect(d.commentCount).toBeGreaterThan(10)
      // R-REST-RECORD-24
      expect(typeof d.isRepeating).toBe("boolean")
      // R-REST-RECORD-25
      expect(d.checklists.length).toBeGreaterThan(0)
      for (const c of d.checklists) expect(Object.keys(c).sort()).toEqual(["checklistItems", "id", "position", "title"])
      // R-REST-RECORD-26
      for (const item of d.checklists[0].checklistItems) {
        expect(Object.keys(item).sort()).toEqual(["done", "duedAt", "id", "position", "startedAt", "title"])
      }
      expect(d.checklistCount).toBe(d.checklists.reduce((n: number, c: any) => n + c.checklistItems.length, 0))
      // Custom fields: one of each type, every documented key.
      expect(new Set(d.customFields.map((f: any) => f.type))).toEqual(
        new Set(["TEXT", "NUMBER", "CHECKBOX", "DATE", "SELECT_SINGLE", "SELECT_MULTI", "FILE", "TABLE"])
      )
      for (const f of d.customFields) {
        expect(Object.keys(f).sort()).toEqual(
          ["checked", "customFieldOptions", "id", "name", "number", "tableColumns", "tableRows", "tableTotals", "text", "type"].sort()
        )
      }
    }))
  })

  describe("create-record", () => {
    it.effect("R-REST-RECORD-27: create-record requires workspaceId and title (strings)", () => Effect.promise(async () => {
      const noTitle = await rpc(h, "create-record", { workspaceId: ws })
      expect(noTitle.status).toBe(400)
      expect(noTitle.body.error.issues).toContainEqual({ path: ["title"], message: "is missing" })
      expect((await rpc(h, "create-record", { title: "x" })).status).toBe(400)
      expect((await rpc(h, "create-record", { workspaceId: ws, title: 7 })).status).toBe(400)
    }))

    it.effect("R-REST-RECORD-28: without listId the record goes to the workspace's first list", () => Effect.promise(async () => {
      const created = await create({ title: "first list default" })
      expect(created.list.id).toBe(lists[0]!.id)
      expect((await detail(created.id)).todoList.id).toBe(lists[0]!.id)
    }))

    it.effect("R-REST-RECORD-29: with listId the record goes to that list", () => Effect.promise(async () => {
      const created = await create({ title: "third list", listId: lists[2]!.id })
      expect((await detail(created.id)).todoList).toEqual({ id: lists[2]!.id, title: lists[2]!.title })
    }))

    it.effect("R-REST-RECORD-30: blank lines in a plain description become paragraphs", () => Effect.promise(async () => {
      const created = await create({ title: "paragraphs", description: "First paragraph.\n\nSecond paragraph." })
      expect((await detail(created.id)).html).toBe("<p>First paragraph.</p><p>Second paragraph.</p>")
    }))

    it.effect("R-REST-RECORD-31: newlines in a plain description become line breaks (text is escaped)", () => Effect.promise(async () => {
      const created = await create({ title: "breaks", description: "line one\nline <two> & three" })
      const d = await detail(created.id)
      expect(d.html).toBe("<p>line one<br>line &lt;two&gt; &amp; three</p>")
      expect(d.text).toBe("line one\nline <two> & three")
    }))

    it.effect("R-REST-RECORD-32: descriptionHtml is sanitized", () => Effect.promise(async () => {
      const created = await create({
        title: "sanitized",
        descriptionHtml:
          '<p onclick="steal()">Hi <b>there</b><script>alert(1)</script><style>p{}</style></p><a href="javascript:alert(1)">x</a><a href="https://example.com" onmouseover="x()">ok</a><img src="x" onerror="boom()">'
      })
      const d = await detail(created.id)
      expect(d.html).toBe('<p>Hi <b>there</b></p><a>x</a><a href="https://example.com">ok</a><img src="x">')
      expect(d.text).toContain("Hi there")
    }))

    it.effect("R-REST-RECORD-33: description and descriptionHtml together are refused (create and update)", () => Effect.promise(async () => {
      const both = await rpc(h, "create-record", { workspaceId: ws, title: "both", description: "a", descriptionHtml: "<p>a</p>" })
      expect(both.status).toBe(400)
      expect(both.body.error.issues[0].path).toEqual(["descriptionHtml"])
      const created = await create({ title: "update both" })
      const update = await rpc(h, "update-record", { workspaceId: ws, recordId: created.id, description: "a", descriptionHtml: "<p>a</p>" })
      expect(update.status).toBe(400)
    }))

    it.effect("R-REST-RECORD-34: a bare YYYY-MM-DD date is all-day", () => Effect.promise(async () => {
      const created = await create({ title: "all-day", startedAt: "2025-03-01", duedAt: "2025-03-04" })
      const d = await detail(created.id)
      expect(d.startedAt).toBe("2025-03-01T00:00:00.000Z")
      expect(d.duedAt).toBe("2025-03-04T00:00:00.000Z")
      expect(flags(created.id)).toEqual({ started_all_day: 1, dued_all_day: 1 })
    }))

    it.effect("R-REST-RECORD-35: an ISO 8601 timestamp is a timed date", () => Effect.promise(async () => {
      const created = await create({ title: "timed", duedAt: "2025-03-04T15:30:00+02:00" })
      expect((await detail(created.id)).duedAt).toBe("2025-03-04T13:30:00.000Z")
      expect(flags(created.id).dued_all_day).toBe(0)
    }))

    it.effect("R-REST-RECORD-36: allDay true forces an all-day (floating calendar) date", () => Effect.promise(async () => {
      const created = await create({ title: "forced all-day", duedAt: "2025-03-04T23:30:00-05:00", allDay: true })
      // The calendar date as written, not shifted by the zone.
      expect((await detail(created.id)).duedAt).toBe("2025-03-04T00:00:00.000Z")
      expect(flags(created.id).dued_all_day).toBe(1)
    }))

    it.effect("R-REST-RECORD-37: allDay false forces a timed date", () => Effect.promise(async () => {
      const created = await create({ title: "forced timed", duedAt: "2025-03-04", allDay: false })
      expect((await detail(created.id)).duedAt).toBe("2025-03-04T00:00:00.000Z")
      expect(flags(created.id).dued_all_day).toBe(0)
    }))

    it.effect("R-REST-RECORD-38: assigneeIds assigns those users", () => Effect.promise(async () => {
      const created = await create({ title: "assigned", assigneeIds: [users[1]!.id, users[0]!.id] })
      expect((await detail(created.id)).users.map((u: any) => u.id)).toEqual([users[1]!.id, users[0]!.id])
      expect((await rpc(h, "create-record", { workspaceId: ws, title: "x", assigneeIds: ["nobody"] })).status).toBe(422)
    }))

    it.effect("R-REST-RECORD-39: tagIds applies those tags", () => Effect.promise(async () => {
      const created = await create({ title: "tagged", tagIds: [tags[0]!.id, tags[2]!.id] })
      expect((await detail(created.id)).tags.map((t: any) => t.id)).toEqual([tags[0]!.id, tags[2]!.id])
    }))

    it.effect("R-REST-RECORD-40: the answer is {id, uid, title, rank, list: {id, title}}", () => Effect.promise(async () => {
      const created = await create({ title: "answer shape" })
      expect(typeof created.id).toBe("string")
      expect(typeof created.uid).toBe("string")
      expect(created.title).toBe("answer shape")
      expect(typeof created.rank).toBe("number")
      expect(created.list).toEqual({ id: lists[0]!.id, title: lists[0]!.title })
    }))

    it.effect("R-REST-RECORD-41: the answer may carry extra keys (position, todoList) like the spec example", () => Effect.promise(async () => {
      const created = await create({ title: "extra keys" })
      expect(created.position).toBe(created.rank)
      expect(created.todoList).toEqual(created.list)
    }))
  })

  describe("update-record", () => {
    it.effect("R-REST-RECORD-42: update-record requires workspaceId and recordId (strings)", () => Effect.promise(async () => {
      expect((await rpc(h, "update-record", { workspaceId: ws, title: "x" })).status).toBe(400)
      expect((await rpc(h, "update-record", { recordId: "x", title: "x" })).status).toBe(400)
      expect((await rpc(h, "update-record", { workspaceId: ws, recordId: "missing", title: "x" })).status).toBe(422)
    }))

    it.effect("R-REST-RECORD-43: each optional field sent is set", () => Effect.promise(async () => {
      const created = await create({ title: "to update" })
      const updated = await ok(
        rpc(h, "update-record", {
          workspaceId: ws,
          recordId: created.id,
          title: "updated",
          description: "new text",
          done: true,
          startedAt: "2025-01-01T08:00:00Z",
          duedAt: "2025-01-02",
          color: "#00ff00"
        })
      )
      expect(updated).toMatchObject({
        title: "updated",
        text: "new text",
        html: "<p>new text</p>",
        done: true,
        startedAt: "2025-01-01T08:00:00.000Z",
        duedAt: "2025-01-02T00:00:00.000Z",
        color: "#00ff00"
      })
      const html = await ok(rpc(h, "update-record", { workspaceId: ws, recordId: created.id, descriptionHtml: "<p><em>rich</em></p>", allDay: true }))
      expect(html.html).toBe("<p><em>rich</em></p>")
      expect(html.startedAt).toBe("2025-01-01T00:00:00.000Z")
      expect(flags(created.id)).toEqual({ started_all_day: 1, dued_all_day: 1 })
    }))

    it.effect("R-REST-RECORD-44: omitted fields are unchanged", () => Effect.promise(async () => {
      const created = await create({ title: "keep", description: "keep me", duedAt: "2025-05-05", assigneeIds: [users[0]!.id], tagIds: [tags[1]!.id] })
      const before = await detail(created.id)
      const after = await ok(rpc(h, "update-record", { workspaceId: ws, recordId: created.id, color: "#111111" }))
      expect({ ...after, color: before.color, updatedAt: before.updatedAt }).toEqual(before)
    }))

    it.effect("R-REST-RECORD-45: assigneeIds replaces all current assignees", () => Effect.promise(async () => {
      const created = await create({ title: "reassign", assigneeIds: [users[0]!.id, users[1]!.id] })
      const after = await ok(rpc(h, "update-record", { workspaceId: ws, recordId: created.id, assigneeIds: [users[2]!.id] }))
      expect(after.users.map((u: any) => u.id)).toEqual([users[2]!.id])
      const listed = (await allOf({ workspaceId: ws })).find((r: any) => r.id === created.id)
      expect(listed.users.map((u: any) => u.id)).toEqual([users[2]!.id])
    }))

    it.effect("R-REST-RECORD-46: update-record does not change the list (a listId is ignored)", () => Effect.promise(async () => {
      const created = await create({ title: "stay", listId: lists[0]!.id })
      const after = await ok(rpc(h, "update-record", { workspaceId: ws, recordId: created.id, listId: lists[1]!.id, title: "stay!" }))
      expect(after.todoList.id).toBe(lists[0]!.id)
    }))

    it.effect("R-REST-RECORD-47: done false -> true fires TODO_DONE_STATUS_UPDATED", () => Effect.promise(async () => {
      const created = await create({ title: "finish me" })
      events.length = 0
      const after = await ok(rpc(h, "update-record", { workspaceId: ws, recordId: created.id, done: true }))
      expect(after.done).toBe(true)
      const event = events.find((e) => e.event === "TODO_DONE_STATUS_UPDATED")!
      expect(event.workspaceId).toBe(ws)
      expect((event.previousValue as any).done).toBe(false)
      expect((event.currentValue as any).done).toBe(true)
    }))

    it.effect("R-REST-RECORD-48: done true -> false fires TODO_DONE_STATUS_UPDATED", () => Effect.promise(async () => {
      const created = await create({ title: "reopen me" })
      await ok(rpc(h, "update-record", { workspaceId: ws, recordId: created.id, done: true }))
      events.length = 0
      const after = await ok(rpc(h, "update-record", { workspaceId: ws, recordId: created.id, done: false }))
      expect(after.done).toBe(false)
      const event = events.find((e) => e.event === "TODO_DONE_STATUS_UPDATED")!
      expect((event.previousValue as any).done).toBe(true)
      expect((event.currentValue as any).done).toBe(false)
    }))
  })

  describe("move-record and delete-record", () => {
    it.effect("R-REST-RECORD-49: move-record requires workspaceId, recordId and listId (strings)", () => Effect.promise(async () => {
      const created = await create({ title: "move inputs" })
      expect((await rpc(h, "move-record", { workspaceId: ws, recordId: created.id })).status).toBe(400)
      expect((await rpc(h, "move-record", { workspaceId: ws, listId: lists[1]!.id })).status).toBe(400)
      expect((await rpc(h, "move-record", { recordId: created.id, listId: lists[1]!.id })).status).toBe(400)
      expect((await rpc(h, "move-record", { workspaceId: ws, recordId: created.id, listId: "nope" })).status).toBe(422)
    }))

    it.effect("R-REST-RECORD-50: move-record to an existing list leaves the record there (and fires TODO_MOVED)", () => Effect.promise(async () => {
      const created = await create({ title: "mover", listId: lists[0]!.id })
      events.length = 0
      await ok(rpc(h, "move-record", { workspaceId: ws, recordId: created.id, listId: lists[3]!.id }))
      expect((await detail(created.id)).todoList.id).toBe(lists[3]!.id)
      expect((await allOf({ listId: lists[3]!.id })).map((r: any) => r.id)).toContain(created.id)
      expect(events.map((e) => e.event)).toContain("TODO_MOVED")
    }))

    it.effect("R-REST-RECORD-51: the move-record answer is {success: true}", () => Effect.promise(async () => {
      const created = await create({ title: "mover 2" })
      expect(await ok(rpc(h, "move-record", { workspaceId: ws, recordId: created.id, listId: lists[1]!.id }))).toEqual({ success: true })
    }))

    it.effect("R-REST-RECORD-52: delete-record requires workspaceId and recordId (strings)", () => Effect.promise(async () => {
      expect((await rpc(h, "delete-record", { workspaceId: ws })).status).toBe(400)
      expect((await rpc(h, "delete-record", { recordId: "x" })).status).toBe(400)
    }))

    it.effect("R-REST-RECORD-53: a deleted record vanishes from every read", () => Effect.promise(async () => {
      const created = await create({ title: "zzz-unique-doomed", description: "doomed content" })
      events.length = 0
      await ok(rpc(h, "delete-record", { workspaceId: ws, recordId: created.id }))
      expect((await rpc(h, "get-record", { workspaceId: ws, recordId: created.id })).status).toBe(422)
      expect((await allOf({})).map((r: any) => r.id)).not.toContain(created.id)
      expect(await ok(rpc(h, "search-records", { workspaceId: ws, query: "zzz-unique-doomed" }))).toEqual([])
      expect((await rpc(h, "list-record-activity", { workspaceId: ws, recordId: created.id })).status).toBe(422)
      const deleted = events.find((e) => e.event === "TODO_DELETED")!
      expect((deleted.previousValue as any).id).toBe(created.id)
      expect(deleted.currentValue).toBeNull()
    }))

    it.effect("R-REST-RECORD-54: the delete-record answer is {success: true}", () => Effect.promise(async () => {
      const created = await create({ title: "delete answer" })
      expect(await ok(rpc(h, "delete-record", { workspaceId: ws, recordId: created.id }))).toEqual({ success: true })
      expect((await rpc(h, "delete-record", { workspaceId: ws, recordId: created.id })).status).toBe(422)
    }))

    it.effect("R-REST-RECORD-55: count-records takes only optional inputs: {} is valid", () => Effect.promise(async () => {
      const all = await ok(rpc(h, "count-records", {}))
      expect(all).toEqual({ count: (await allOf({})).length })
      const done = await ok(rpc(h, "count-records", { workspaceId: ws, done: true, archived: false }))
      expect(done.count).toBe((await allOf({ workspaceId: ws, done: true, archived: false })).length)
    }))
  })

  describe("events and activity of record writes", () => {
    it.effect("create fires TODO_CREATED with previousValue null; a title change records UPDATE_TITLE", () => Effect.promise(async () => {
      events.length = 0
      const created = await create({ title: "old title", duedAt: "2025-02-02" })
      const createdEvent = events.find((e) => e.event === "TODO_CREATED")!
      expect(createdEvent.previousValue).toBeNull()
      expect((createdEvent.currentValue as any).id).toBe(created.id)
      events.length = 0
      await ok(rpc(h, "update-record", { workspaceId: ws, recordId: created.id, title: "new title", duedAt: null, assigneeIds: [users[0]!.id] }))
      expect(events.map((e) => e.event).sort()).toEqual(["TODO_ASSIGNEE_ADDED", "TODO_DUE_DATE_REMOVED", "TODO_NAME_CHANGED"])
      const actions = await ok(rpc(h, "list-record-activity", { workspaceId: ws, recordId: created.id, type: "actions" }))
      const title = actions.items.find((a: any) => a.type === "UPDATE_TITLE")
      expect(title).toMatchObject({ oldValue: "old title", newValue: "new title", actionUser: { id: h.ownerUserId } })
    }))

    it.effect("VIEW_ONLY and COMMENT_ONLY users cannot write records (403) but can read", () => Effect.promise(async () => {
      for (const level of ["VIEW_ONLY", "COMMENT_ONLY"] as const) {
        const user = h.admin.createUser({ email: `${level.toLowerCase()}@acme.test`, firstName: "Read", lastName: "Only", workspaces: { [ws]: level } })
        const write = await rpc(h, "create-record", { workspaceId: ws, title: "nope" }, { token: user.token })
        expect(write.status).toBe(403)
        expect((await rpc(h, "list-records", { workspaceId: ws, limit: 1 }, { token: user.token })).status).toBe(200)
      }
    }))
  })
})
