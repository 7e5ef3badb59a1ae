/**
 * Operations beyond the documented shapes (assumptions.ts EXTRA_OPERATIONS): tags,
 * lists, checklists, comments, custom fields, dependencies; each write changes what
 * get-record reads, touches the record and announces its event.
 */
import { describe, expect, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import type { DomainEvent } from "../../src/emulator/context.ts"
import type { EmulatorHandle } from "../../src/emulator/index.ts"
import { Emulator, emulatorLayer } from "../support/effect.ts"
import { ok, rpc } from "./rest-support.ts"

let h: EmulatorHandle
let ws: string
let recordId: string
const events: Array<DomainEvent> = []

// The helpers below read the file's emulator, and what the set-up derives from it, from these
// bindings: the layer fills them once the emulator is up and closes it after the last test.
const fileLayer = Layer.effectDiscard(
  Effect.gen(function* () {
    h = yield* Emulator
    yield* Effect.promise(async () => {
      ws = h.workspaces[0]!
      recordId = (await ok(rpc(h, "create-record", { workspaceId: ws, title: "extras target" }))).id
      h.ctx.events.subscribe((e) => events.push(e))
    })
  })
).pipe(Layer.provideMerge(emulatorLayer({ variant: "reference", seed: "demo" })))

const detail = () => ok(rpc(h, "get-record", { workspaceId: ws, recordId }))
const lastEvent = () => events[events.length - 1]!

// Real HTTP and real waits: the live clock (no TestClock), so timers and time scales run.
layer(fileLayer, { timeout: 30_000, excludeTestServices: true })((it) => {
  describe("tags", () => {
    it.effect("create, update, tag a record, untag, delete (TAG_* and TODO_TAG_* events)", () => Effect.promise(async () => {
      const tag = await ok(rpc(h, "create-tag", { workspaceId: ws, title: "blue" }))
      expect(tag).toEqual({ id: tag.id, title: "blue", color: null })
      expect(lastEvent()).toMatchObject({ event: "TAG_CREATED", previousValue: null, currentValue: tag })
      const renamed = await ok(rpc(h, "update-tag", { workspaceId: ws, tagId: tag.id, title: "navy", color: "#000080" }))
      expect(lastEvent()).toMatchObject({ event: "TAG_UPDATED", previousValue: tag, currentValue: renamed })
      const before = await detail()
      const tagged = await ok(rpc(h, "add-record-tag", { workspaceId: ws, recordId, tagId: tag.id }))
      expect(tagged.tags).toEqual([{ id: tag.id, title: "navy", color: "#000080" }])
      expect(tagged.updatedAt >= before.updatedAt).toBe(true)
      expect(lastEvent().event).toBe("TODO_TAG_ADDED")
      const listed = await ok(rpc(h, "list-records", { workspaceId: ws, tagIds: [tag.id] }))
      expect(listed.items.map((r: any) => r.id)).toEqual([recordId])
      expect((await ok(rpc(h, "remove-record-tag", { workspaceId: ws, recordId, tagId: tag.id }))).tags).toEqual([])
      expect(lastEvent().event).toBe("TODO_TAG_REMOVED")
      await ok(rpc(h, "add-record-tag", { workspaceId: ws, recordId, tagId: tag.id }))
      await ok(rpc(h, "delete-tag", { workspaceId: ws, tagId: tag.id }))
      expect(lastEvent()).toMatchObject({ event: "TAG_DELETED", currentValue: null })
      expect((await detail()).tags).toEqual([])
      expect((await ok(rpc(h, "list-tags", { workspaceId: ws }))).items.map((t: any) => t.id)).not.toContain(tag.id)
    }))
  })

  describe("lists", () => {
    it.effect("create, rename, delete a list (its records go to the trash)", () => Effect.promise(async () => {
      const list = await ok(rpc(h, "create-list", { workspaceId: ws, title: "Temp" }))
      expect(lastEvent()).toMatchObject({ event: "TODO_LIST_CREATED", currentValue: list })
      await ok(rpc(h, "update-list", { workspaceId: ws, listId: list.id, title: "Temporary" }))
      expect(lastEvent()).toMatchObject({ event: "TODO_LIST_NAME_CHANGED", currentValue: { title: "Temporary" } })
      const inside = await ok(rpc(h, "create-record", { workspaceId: ws, title: "in temp", listId: list.id }))
      expect(inside.list).toEqual({ id: list.id, title: "Temporary" })
      await ok(rpc(h, "delete-list", { workspaceId: ws, listId: list.id }))
      expect(lastEvent()).toMatchObject({ event: "TODO_LIST_DELETED", currentValue: null })
      expect((await rpc(h, "get-record", { workspaceId: ws, recordId: inside.id })).status).toBe(422)
      expect((await rpc(h, "list-records", { listId: list.id })).status).toBe(422)
    }))
  })

  describe("checklists", () => {
    it.effect("checklists and items show in the record detail and counts", () => Effect.promise(async () => {
      const checklist = await ok(rpc(h, "create-checklist", { workspaceId: ws, recordId, title: "Launch steps" }))
      expect(checklist).toMatchObject({ title: "Launch steps", checklistItems: [] })
      expect(lastEvent()).toMatchObject({ event: "TODO_CHECKLIST_CREATED", previousValue: null })
      const a = await ok(rpc(h, "create-checklist-item", { workspaceId: ws, checklistId: checklist.id, title: "Write" }))
      const b = await ok(rpc(h, "create-checklist-item", { workspaceId: ws, checklistId: checklist.id, title: "Ship", duedAt: "2025-06-01" }))
      expect(b.duedAt).toBe("2025-06-01T00:00:00.000Z")
      await ok(rpc(h, "update-checklist-item", { workspaceId: ws, checklistItemId: a.id, done: true, title: "Write it" }))
      expect(events.slice(-2).map((e) => e.event)).toEqual(["TODO_CHECKLIST_ITEM_NAME_CHANGED", "TODO_CHECKLIST_ITEM_DONE_STATUS_UPDATED"])
      await ok(rpc(h, "update-checklist-item", { workspaceId: ws, checklistItemId: b.id, duedAt: null }))
      expect(lastEvent().event).toBe("TODO_CHECKLIST_ITEM_DUE_DATE_REMOVED")
      let d = await detail()
      expect(d.checklists).toHaveLength(1)
      expect(d.checklists[0].checklistItems.map((i: any) => [i.title, i.done])).toEqual([["Write it", true], ["Ship", false]])
      expect([d.checklistCount, d.checklistCompletedCount]).toEqual([2, 1])
      await ok(rpc(h, "delete-checklist-item", { workspaceId: ws, checklistItemId: b.id }))
      await ok(rpc(h, "update-checklist", { workspaceId: ws, checklistId: checklist.id, title: "Steps" }))
      expect(lastEvent().event).toBe("TODO_CHECKLIST_NAME_CHANGED")
      d = await detail()
      expect(d.checklists[0]).toMatchObject({ title: "Steps", checklistItems: [expect.objectContaining({ id: a.id })] })
      await ok(rpc(h, "delete-checklist", { workspaceId: ws, checklistId: checklist.id }))
      expect(lastEvent().event).toBe("TODO_CHECKLIST_DELETED")
      expect((await detail()).checklists).toEqual([])
    }))
  })

  describe("comments", () => {
    it.effect("create (sanitized), list, update (author only), delete; commentCount follows", () => Effect.promise(async () => {
      const c = await ok(rpc(h, "create-comment", { workspaceId: ws, recordId, html: '<p>Hello <img src=x onerror="x()"></p>' }))
      expect(c).toMatchObject({ __typename: "Comment", html: '<p>Hello <img src="x"></p>', commentUser: { id: h.ownerUserId } })
      expect(lastEvent()).toMatchObject({ event: "COMMENT_CREATED", previousValue: null })
      const fromText = await ok(rpc(h, "create-comment", { workspaceId: ws, recordId, text: "plain\nline" }))
      expect(fromText.html).toBe("<p>plain<br>line</p>")
      expect((await detail()).commentCount).toBe(2)
      const listed = await ok(rpc(h, "list-comments", { workspaceId: ws, recordId }))
      expect(listed.items.map((i: any) => i.id)).toEqual([fromText.id, c.id])
      const commenter = h.admin.createUser({ email: "commenter@acme.test", firstName: "Com", lastName: "Menter", workspaces: { [ws]: "COMMENT_ONLY" } })
      expect((await rpc(h, "create-comment", { workspaceId: ws, recordId, text: "I may comment" }, { token: commenter.token })).status).toBe(200)
      expect((await rpc(h, "update-comment", { workspaceId: ws, commentId: c.id, text: "hijack" }, { token: commenter.token })).status).toBe(403)
      const edited = await ok(rpc(h, "update-comment", { workspaceId: ws, commentId: c.id, text: "edited" }))
      expect(edited.html).toBe("<p>edited</p>")
      await ok(rpc(h, "delete-comment", { workspaceId: ws, commentId: c.id }))
      expect(lastEvent()).toMatchObject({ event: "COMMENT_DELETED", currentValue: null })
      expect((await detail()).commentCount).toBe(2)
      expect((await rpc(h, "create-comment", { workspaceId: ws, recordId })).status).toBe(400)
    }))
  })

  describe("custom fields", () => {
    it.effect("define fields and set values of each kind; TODO_CUSTOM_FIELD_UPDATED", () => Effect.promise(async () => {
      const select = await ok(
        rpc(h, "create-custom-field", { workspaceId: ws, name: "Stage", type: "SELECT_MULTI", options: [{ title: "A" }, { title: "B", color: "#f00" }] })
      )
      expect(select.customFieldOptions.map((o: any) => o.title)).toEqual(["A", "B"])
      expect(lastEvent()).toMatchObject({ event: "CUSTOM_FIELD_CREATED" })
      const table = await ok(
        rpc(h, "create-custom-field", { workspaceId: ws, name: "Costs", type: "TABLE", tableColumns: [{ name: "What" }, { name: "Amount", type: "NUMBER" }] })
      )
      const [what, amount] = table.tableColumns
      const after = await ok(
        rpc(h, "set-record-custom-field", { workspaceId: ws, recordId, customFieldId: select.id, optionIds: [select.customFieldOptions[1].id] })
      )
      expect(after.customFields.find((f: any) => f.id === select.id).customFieldOptions).toEqual([select.customFieldOptions[1]])
      expect(lastEvent().event).toBe("TODO_CUSTOM_FIELD_UPDATED")
      const withTable = await ok(
        rpc(h, "set-record-custom-field", {
          workspaceId: ws,
          recordId,
          customFieldId: table.id,
          tableRows: [
            { position: 1, cells: [{ columnId: what.id, value: "a" }, { columnId: amount.id, value: 2 }] },
            { position: 2, cells: [{ columnId: what.id, value: "b" }, { columnId: amount.id, value: 3.5 }] }
          ]
        })
      )
      const tableValue = withTable.customFields.find((f: any) => f.id === table.id)
      expect(tableValue.tableRows).toHaveLength(2)
      expect(tableValue.tableTotals).toEqual([{ columnId: what.id, value: null }, { columnId: amount.id, value: 5.5 }])
      expect((await rpc(h, "set-record-custom-field", { workspaceId: ws, recordId, customFieldId: table.id, text: "wrong key" })).status).toBe(400)
      await ok(rpc(h, "update-custom-field", { workspaceId: ws, customFieldId: select.id, name: "Phase" }))
      expect(lastEvent()).toMatchObject({ event: "CUSTOM_FIELD_UPDATED", currentValue: { name: "Phase" } })
      await ok(rpc(h, "delete-custom-field", { workspaceId: ws, customFieldId: select.id }))
      expect((await detail()).customFields.map((f: any) => f.id)).not.toContain(select.id)
    }))
  })

  describe("dependencies, documents and read-only families", () => {
    it.effect("record dependencies", () => Effect.promise(async () => {
      const other = await ok(rpc(h, "create-record", { workspaceId: ws, title: "blocker" }))
      const dep = await ok(rpc(h, "create-record-dependency", { workspaceId: ws, recordId, dependsOnId: other.id }))
      expect(dep).toMatchObject({ recordId, dependsOnId: other.id, type: "BLOCKED_BY" })
      expect((await ok(rpc(h, "list-record-dependencies", { workspaceId: ws, recordId }))).items).toHaveLength(1)
      expect((await rpc(h, "create-record-dependency", { workspaceId: ws, recordId, dependsOnId: recordId })).status).toBe(422)
      await ok(rpc(h, "delete-record-dependency", { workspaceId: ws, dependencyId: dep.id }))
      expect((await ok(rpc(h, "list-record-dependencies", { workspaceId: ws, recordId }))).totalCount).toBe(0)
    }))

    it.effect("list-webhooks reads the caller's webhooks (created through GraphQL) with secret null", () => Effect.promise(async () => {
      const res = await fetch(`${h.baseUrl}/graphql`, {
        method: "POST",
        headers: { "content-type": "application/json", "svc-token-id": h.tokenId, "svc-token-secret": h.tokenSecret, "svc-org-id": h.org },
        body: JSON.stringify({
          query: "mutation($input: CreateWebhookInput!) { createWebhook(input: $input) { id secret } }",
          variables: { input: { url: "http://127.0.0.1:9/hook", name: "Hook", events: ["TODO_CREATED"] } }
        })
      })
      const gql = (await res.json()) as any
      expect(gql.errors).toBeUndefined()
      expect(typeof gql.data.createWebhook.secret).toBe("string")
      const listed = await ok(rpc(h, "list-webhooks", {}))
      expect(listed.items).toEqual([
        expect.objectContaining({ id: gql.data.createWebhook.id, name: "Hook", secret: null, events: ["TODO_CREATED"], metadata: { events: ["TODO_CREATED"], projectIds: [] } })
      ])
    }))

    it.effect("documents are sanitized and readable; empty families answer {items: [], totalCount: 0}", () => Effect.promise(async () => {
      const doc = await ok(rpc(h, "create-document", { workspaceId: ws, title: "Spec", html: "<h1>Spec</h1><script>x</script>" }))
      expect((await ok(rpc(h, "get-document", { workspaceId: ws, documentId: doc.id }))).html).toBe("<h1>Spec</h1>")
      for (const op of ["list-reports", "list-charts", "list-dashboards", "list-form-fields", "list-automations"]) {
        expect(await ok(rpc(h, op, {}))).toEqual({ items: [], totalCount: 0 })
      }
      expect((await ok(rpc(h, "list-forms", { workspaceId: ws }))).totalCount).toBeGreaterThan(0)
    }))
  })
})
