import { describe, expect, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import type { EmulatorHandle } from "../../src/emulator/index.ts"
import {
  CHECKLIST_EVENTS,
  COMMENT_EVENTS,
  CUSTOM_FIELD_EVENTS,
  LIST_EVENTS,
  RECORD_EVENTS,
  TAG_EVENTS
} from "../../src/schema/webhooks.ts"
import { Emulator, emulatorLayer } from "../support/effect.ts"
import { codeOf, gql, receiver, rest, uploadSmall } from "./graphql-support.ts"

let h: EmulatorHandle
let enumValues: Array<string>

// The helpers below read the file's emulator, and what the set-up derives from it, from these
// bindings: the layer fills them once the emulator is up and closes it after the last test.
const fileLayer = Layer.effectDiscard(
  Effect.gen(function* () {
    h = yield* Emulator
    yield* Effect.promise(async () => {
      const r = await gql(h, `{ __type(name: "WebhookEvent") { enumValues { name } } }`)
      enumValues = r.body.data?.["__type"].enumValues.map((v: { name: string }) => v.name)
    })
  })
).pipe(Layer.provideMerge(emulatorLayer({ variant: "reference", timeScale: 0.01 })))

let n = 0
/** A fresh workspace with a receiver and a webhook subscribed to `events` there. */
const watch = async (events: ReadonlyArray<string>) => {
  const ws = h.admin.createWorkspace({ name: `Events ${++n}` }).id
  const recv = await receiver()
  const r = await gql(
    h,
    `mutation($input: CreateWebhookInput!) { createWebhook(input: $input) { id } }`,
    { input: { url: recv.url, events, projectIds: [ws] } },
    { headers: { "svc-org-id": h.org } }
  )
  if (r.body.errors !== undefined) throw new Error(JSON.stringify(r.body.errors))
  return { ws, recv }
}

const call = async (operation: string, body: Record<string, unknown>) => {
  const r = await rest(h, operation, body)
  if (r.status !== 200) throw new Error(`${operation}: ${JSON.stringify(r.body)}`)
  return r.body
}

const firstList = async (ws: string): Promise<string> => (await call("list-lists", { workspaceId: ws })).items[0].id

// Real HTTP and real waits: the live clock (no TestClock), so timers and time scales run.
layer(fileLayer, { timeout: 30_000, excludeTestServices: true })((it) => {
  describe("WebhookEvent values", () => {
    it.effect("R-WEBHOOK-EVENT-01: the Record group values are subscribable", () => Effect.sync(() => {
      expect(enumValues).toEqual(expect.arrayContaining([...RECORD_EVENTS]))
      expect(RECORD_EVENTS).toHaveLength(13)
    }))
    it.effect("R-WEBHOOK-EVENT-02: the Checklist group values are subscribable", () => Effect.sync(() => {
      expect(enumValues).toEqual(expect.arrayContaining([...CHECKLIST_EVENTS]))
      expect(CHECKLIST_EVENTS).toHaveLength(12)
    }))
    it.effect("R-WEBHOOK-EVENT-03: the List group values are subscribable", () => Effect.sync(() => {
      expect(enumValues).toEqual(expect.arrayContaining([...LIST_EVENTS]))
    }))
    it.effect("R-WEBHOOK-EVENT-04: the Custom field group values are subscribable", () => Effect.sync(() => {
      expect(enumValues).toEqual(expect.arrayContaining([...CUSTOM_FIELD_EVENTS]))
    }))
    it.effect("R-WEBHOOK-EVENT-05: the Tag group values are subscribable", () => Effect.sync(() => {
      expect(enumValues).toEqual(expect.arrayContaining([...TAG_EVENTS]))
    }))
    it.effect("R-WEBHOOK-EVENT-06: the Comment group values are subscribable, and nothing else is", () => Effect.sync(() => {
      expect(enumValues).toEqual(expect.arrayContaining([...COMMENT_EVENTS]))
      expect(enumValues).toHaveLength(
        RECORD_EVENTS.length + CHECKLIST_EVENTS.length + LIST_EVENTS.length + CUSTOM_FIELD_EVENTS.length + TAG_EVENTS.length + COMMENT_EVENTS.length
      )
    }))
    it.effect("R-WEBHOOK-EVENT-07: WEBHOOK_HEALTH_CHECK is not a WebhookEvent and cannot be subscribed to", () => Effect.promise(async () => {
      expect(enumValues).not.toContain("WEBHOOK_HEALTH_CHECK")
      const r = await gql(
        h,
        `mutation($input: CreateWebhookInput!) { createWebhook(input: $input) { id } }`,
        { input: { url: "http://127.0.0.1:9/x", events: ["WEBHOOK_HEALTH_CHECK"] } },
        { headers: { "svc-org-id": h.org } }
      )
      expect(codeOf(r)).toBe("BAD_USER_INPUT")
    }))
  })

  describe("each value fires on the change its name says", () => {
    it.effect("R-WEBHOOK-EVENT-08: every Record group value fires from the record mutations", () => Effect.promise(async () => {
      const { ws, recv } = await watch(RECORD_EVENTS)
      const listA = await firstList(ws)
      const listB = (await call("create-list", { workspaceId: ws, title: "Later" })).id
      const tag = (await call("create-tag", { workspaceId: ws, title: "t" })).id
      const field = (await call("create-custom-field", { workspaceId: ws, name: "Notes", type: "TEXT" })).id
      const record = (await call("create-record", { workspaceId: ws, title: "R", listId: listA })).id
      const update = (body: Record<string, unknown>) => call("update-record", { workspaceId: ws, recordId: record, ...body })
      await update({ title: "R2" })
      await update({ done: true })
      await update({ duedAt: "2030-01-01" })
      await update({ duedAt: "2030-02-01" })
      await update({ duedAt: null })
      await update({ assigneeIds: [h.ownerUserId] })
      await update({ assigneeIds: [] })
      await call("add-record-tag", { workspaceId: ws, recordId: record, tagId: tag })
      await call("remove-record-tag", { workspaceId: ws, recordId: record, tagId: tag })
      await call("set-record-custom-field", { workspaceId: ws, recordId: record, customFieldId: field, text: "hello" })
      await call("move-record", { workspaceId: ws, recordId: record, listId: listB })
      await call("delete-record", { workspaceId: ws, recordId: record })
      await recv.next(RECORD_EVENTS.length)
      expect(recv.posts.map((p) => p.json.event).sort()).toEqual([...RECORD_EVENTS].sort())
      await recv.close()
    }))

    it.effect("R-WEBHOOK-EVENT-08: every Checklist group value fires, item assignees through GraphQL", () => Effect.promise(async () => {
      const { ws, recv } = await watch(CHECKLIST_EVENTS)
      const record = (await call("create-record", { workspaceId: ws, title: "With checklist" })).id
      const checklist = (await call("create-checklist", { workspaceId: ws, recordId: record, title: "Steps" })).id
      await call("update-checklist", { workspaceId: ws, checklistId: checklist, title: "Steps 2" })
      const item = (await call("create-checklist-item", { workspaceId: ws, checklistId: checklist, title: "one" })).id
      const update = (body: Record<string, unknown>) => call("update-checklist-item", { workspaceId: ws, checklistItemId: item, ...body })
      await update({ title: "one!" })
      await update({ duedAt: "2030-01-01" })
      await update({ duedAt: "2030-01-02" })
      await update({ duedAt: null })
      await update({ done: true })
      const assign = `mutation($input: ChecklistItemAssigneeInput!) { addChecklistItemAssignee(input: $input) { id assignees { id } } }`
      const unassign = `mutation($input: ChecklistItemAssigneeInput!) { removeChecklistItemAssignee(input: $input) { id assignees { id } } }`
      const added = await gql(h, assign, { input: { checklistItemId: item, userId: h.ownerUserId } })
      expect(added.body.data?.["addChecklistItemAssignee"].assignees).toEqual([{ id: h.ownerUserId }])
      const removed = await gql(h, unassign, { input: { checklistItemId: item, userId: h.ownerUserId } })
      expect(removed.body.data?.["removeChecklistItemAssignee"].assignees).toEqual([])
      await call("delete-checklist-item", { workspaceId: ws, checklistItemId: item })
      await call("delete-checklist", { workspaceId: ws, checklistId: checklist })
      await recv.next(CHECKLIST_EVENTS.length)
      expect(recv.posts.map((p) => p.json.event).sort()).toEqual([...CHECKLIST_EVENTS].sort())
      const assigned = recv.posts.find((p) => p.json.event === "TODO_CHECKLIST_ITEM_ASSIGNEE_ADDED")!.json
      expect(assigned.previousValue.assignees).toEqual([])
      expect(assigned.currentValue.assignees).toEqual([expect.objectContaining({ id: h.ownerUserId })])
      await recv.close()
    }))

    it.effect("R-WEBHOOK-EVENT-08: every List group value fires from the list mutations", () => Effect.promise(async () => {
      const { ws, recv } = await watch(LIST_EVENTS)
      const list = (await call("create-list", { workspaceId: ws, title: "Backlog" })).id
      await call("update-list", { workspaceId: ws, listId: list, title: "Icebox" })
      await call("delete-list", { workspaceId: ws, listId: list })
      await recv.next(3)
      // Deliveries run concurrently: arrival order is not promised.
      expect(recv.posts.map((p) => p.json.event).sort()).toEqual([...LIST_EVENTS].sort())
      await recv.close()
    }))

    it.effect("R-WEBHOOK-EVENT-08: every Comment group value fires from the GraphQL comment mutations", () => Effect.promise(async () => {
      const { ws, recv } = await watch(COMMENT_EVENTS)
      const record = (await call("create-record", { workspaceId: ws, title: "Discussed" })).id
      const created = await gql(h, `mutation($i: CreateCommentInput!) { createComment(input: $i) { id } }`, {
        i: { html: "<p>first</p>", text: "first", category: "TODO", categoryId: record }
      })
      const id = created.body.data?.["createComment"].id
      await gql(h, `mutation($i: UpdateCommentInput!) { updateComment(input: $i) { id } }`, { i: { id, html: "<p>edited</p>", text: "edited" } })
      await gql(h, `mutation($id: String!) { deleteComment(id: $id) }`, { id })
      await recv.next(3)
      const byEvent = new Map(recv.posts.map((p) => [p.json.event, p.json]))
      expect([...byEvent.keys()].sort()).toEqual([...COMMENT_EVENTS].sort())
      expect(byEvent.get("COMMENT_CREATED").currentValue).toMatchObject({ id, html: "<p>first</p>", recordId: record })
      expect(byEvent.get("COMMENT_UPDATED").previousValue.html).toBe("<p>first</p>")
      expect(byEvent.get("COMMENT_UPDATED").currentValue.html).toBe("<p>edited</p>")
      expect(byEvent.get("COMMENT_DELETED").currentValue).toBeNull()
      await recv.close()
    }))

    it.effect("R-WEBHOOK-EVENT-09: TODO_MOVED fires when a record moves to another list", () => Effect.promise(async () => {
      const { ws, recv } = await watch(["TODO_MOVED"])
      const listA = await firstList(ws)
      const listB = (await call("create-list", { workspaceId: ws, title: "Done" })).id
      const record = (await call("create-record", { workspaceId: ws, title: "Mover", listId: listA })).id
      await call("move-record", { workspaceId: ws, recordId: record, listId: listB })
      await recv.next(1)
      const body = recv.posts[0]!.json
      expect(body.event).toBe("TODO_MOVED")
      expect(body.previousValue.todoList.id).toBe(listA)
      expect(body.currentValue.todoList.id).toBe(listB)
      await recv.close()
    }))

    it.effect("R-WEBHOOK-EVENT-10: TODO_CUSTOM_FIELD_UPDATED fires when a record's custom field value changes (also a file field over GraphQL)", () => Effect.promise(async () => {
      const { ws, recv } = await watch(["TODO_CUSTOM_FIELD_UPDATED"])
      const record = (await call("create-record", { workspaceId: ws, title: "Fielded" })).id
      const files = (await call("create-custom-field", { workspaceId: ws, name: "Attachments", type: "FILE" })).id
      const file = await uploadSmall(h, ws, "spec.txt")
      const r = await gql(h, `mutation($i: CreateRecordCustomFieldFileInput!) { createRecordCustomFieldFile(input: $i) }`, {
        i: { todoId: record, customFieldId: files, fileUid: file.uid }
      })
      expect(r.body.data?.["createRecordCustomFieldFile"]).toBe(true)
      await recv.next(1)
      const body = recv.posts[0]!.json
      expect(body.event).toBe("TODO_CUSTOM_FIELD_UPDATED")
      expect(body.currentValue.id).toBe(record)
      const after = body.currentValue.customFields.find((f: { id: string }) => f.id === files)
      expect(JSON.parse(after.text)).toEqual([file.uid])
      await recv.close()
    }))

    it.effect("R-WEBHOOK-EVENT-11: CUSTOM_FIELD_UPDATED and TAG_UPDATED fire when a definition is updated", () => Effect.promise(async () => {
      const { ws, recv } = await watch([...CUSTOM_FIELD_EVENTS, ...TAG_EVENTS])
      const field = (await call("create-custom-field", { workspaceId: ws, name: "Cost", type: "NUMBER" })).id
      await call("update-custom-field", { workspaceId: ws, customFieldId: field, name: "Price" })
      const tag = (await call("create-tag", { workspaceId: ws, title: "blue" })).id
      await call("update-tag", { workspaceId: ws, tagId: tag, title: "navy" })
      await call("delete-custom-field", { workspaceId: ws, customFieldId: field })
      await call("delete-tag", { workspaceId: ws, tagId: tag })
      await recv.next(6)
      const byEvent = new Map(recv.posts.map((p) => [p.json.event, p.json]))
      expect([...byEvent.keys()].sort()).toEqual([...CUSTOM_FIELD_EVENTS, ...TAG_EVENTS].sort())
      expect(byEvent.get("CUSTOM_FIELD_UPDATED").previousValue.name).toBe("Cost")
      expect(byEvent.get("CUSTOM_FIELD_UPDATED").currentValue.name).toBe("Price")
      expect(byEvent.get("TAG_UPDATED").previousValue.title).toBe("blue")
      expect(byEvent.get("TAG_UPDATED").currentValue.title).toBe("navy")
      await recv.close()
    }))
  })
})
