import { describe, expect, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import type { EmulatorHandle } from "../../src/emulator/index.ts"
import { renderAttachment } from "../../src/schema/comments.ts"
import { Emulator, emulatorLayer } from "../support/effect.ts"
import { codeOf, gql, makeUser, rest, uploadSmall } from "./graphql-support.ts"

let h: EmulatorHandle
let ws: string
let record: string

// The helpers below read the file's emulator, and what the set-up derives from it, from these
// bindings: the layer fills them once the emulator is up and closes it after the last test.
const fileLayer = Layer.effectDiscard(
  Effect.gen(function* () {
    h = yield* Emulator
    yield* Effect.promise(async () => {
      ws = h.workspaces[0]!
      record = (await rest(h, "create-record", { workspaceId: ws, title: "Commented" })).body.id
    })
  })
).pipe(Layer.provideMerge(emulatorLayer({ variant: "reference" })))

const CREATE = `mutation($i: CreateCommentInput!) {
  createComment(input: $i) { id html text createdAt category categoryId parentId files { uid name size type extension status } }
}`

const comment = (input: Record<string, unknown>, options: Parameters<typeof gql>[3] = {}) =>
  gql(h, CREATE, { i: { text: "t", category: "TODO", categoryId: record, ...input } }, options)

const attachment = (f: { uid: string; name: string; size: number; type: string; extension: string }) =>
  renderAttachment({ uid: f.uid, name: f.name, size: f.size, type: f.type, extension: f.extension })

/** A PENDING file: presigned (step 1) and never confirmed. */
const pendingFile = async () => {
  const res = await fetch(`${h.baseUrl}/uploads?filename=pending.txt&size=3`, {
    headers: { "svc-token-id": h.tokenId, "svc-token-secret": h.tokenSecret, "svc-org-id": h.org, "svc-workspace-id": ws }
  })
  const body = (await res.json()) as { fields: Record<string, string> }
  const uid = body.fields["X-Key"]!
  expect((h.ctx.db.prepare("SELECT status FROM files WHERE uid = ?").get(uid) as { status: string }).status).toBe("PENDING")
  return { uid, name: "pending.txt", size: 3, type: "text/plain", extension: "txt" }
}

// Real HTTP and real waits: the live clock (no TestClock), so timers and time scales run.
layer(fileLayer, { timeout: 30_000, excludeTestServices: true })((it) => {
  describe("createComment", () => {
    it.effect("R-COMMENT-01: html, text, category and categoryId are required", () => Effect.promise(async () => {
      for (const key of ["html", "text", "category", "categoryId"]) {
        const input: Record<string, unknown> = { html: "<p>x</p>", text: "x", category: "TODO", categoryId: record }
        delete input[key]
        expect(codeOf(await gql(h, CREATE, { i: input })), key).toBe("BAD_USER_INPUT")
      }
    }))

    it.effect("R-COMMENT-02: category is TODO, DISCUSSION or STATUS_UPDATE", () => Effect.promise(async () => {
      const r = await gql(h, `{ __type(name: "CommentCategory") { enumValues { name } } }`)
      expect(r.body.data?.["__type"].enumValues.map((v: { name: string }) => v.name)).toEqual(["TODO", "DISCUSSION", "STATUS_UPDATE"])
      expect(codeOf(await comment({ html: "<p>x</p>", category: "RECORD" }))).toBe("BAD_USER_INPUT")
      const discussion = await comment(
        { html: "<p>d</p>", category: "DISCUSSION", categoryId: "discussion-1" },
        { headers: { "svc-workspace-id": ws } }
      )
      expect(discussion.body.data?.["createComment"]).toMatchObject({ category: "DISCUSSION", categoryId: "discussion-1" })
    }))

    it.effect("R-COMMENT-03: categoryId is the id of the entity commented on", () => Effect.promise(async () => {
      const r = await comment({ html: "<p>on the record</p>" })
      expect(r.body.data?.["createComment"].categoryId).toBe(record)
      const row = h.ctx.db.prepare("SELECT record_id, category_id FROM activity WHERE id = ?").get(r.body.data?.["createComment"].id)
      expect(row).toEqual({ record_id: record, category_id: record })
      expect(codeOf(await comment({ html: "<p>x</p>", categoryId: "000000000000000000000000" }))).toBe("NOT_FOUND")
    }))

    it.effect("R-COMMENT-04: a record comment (category TODO) is part of the record's activity and commentCount", () => Effect.promise(async () => {
      const fresh = (await rest(h, "create-record", { workspaceId: ws, title: "Counted" })).body.id
      const before = (await rest(h, "get-record", { workspaceId: ws, recordId: fresh })).body.commentCount
      const r = await comment({ html: "<p>counted</p>", text: "counted", categoryId: fresh })
      const id = r.body.data?.["createComment"].id
      const after = await rest(h, "get-record", { workspaceId: ws, recordId: fresh })
      expect(after.body.commentCount).toBe(before + 1)
      const activity = await rest(h, "list-record-activity", { workspaceId: ws, recordId: fresh, type: "comments" })
      expect(activity.body.items.map((i: { id: string; html: string }) => [i.id, i.html])).toContainEqual([id, "<p>counted</p>"])
    }))

    it.effect("R-COMMENT-05: parentId makes the comment a reply to that comment", () => Effect.promise(async () => {
      const parent = (await comment({ html: "<p>question</p>" })).body.data?.["createComment"].id
      const reply = await comment({ html: "<p>answer</p>", parentId: parent })
      expect(reply.body.data?.["createComment"].parentId).toBe(parent)
      expect(h.ctx.db.prepare("SELECT parent_id FROM activity WHERE id = ?").get(reply.body.data?.["createComment"].id)).toEqual({ parent_id: parent })
      expect(codeOf(await comment({ html: "<p>orphan</p>", parentId: "000000000000000000000000" }))).toBe("BAD_USER_INPUT")
    }))

    it.effect("R-COMMENT-06: createComment returns id, html, text and createdAt", () => Effect.promise(async () => {
      const r = await gql(h, `mutation($i: CreateCommentInput!) { createComment(input: $i) { id html text createdAt } }`, {
        i: { html: "<p>Hello <b>there</b></p>", text: "Hello there", category: "TODO", categoryId: record }
      })
      const c = r.body.data?.["createComment"]
      expect(c).toEqual({ id: expect.stringMatching(/^[0-9a-f]{24}$/), html: "<p>Hello <b>there</b></p>", text: "Hello there", createdAt: expect.any(String) })
      expect(Number.isNaN(Date.parse(c.createdAt))).toBe(false)
    }))

    it.effect("R-COMMENT-07: an attachment element is an empty div class=attachment whose file attribute holds uid, name, size, type, extension", () => Effect.promise(async () => {
      const file = await uploadSmall(h, ws, "report.pdf", "%PDF")
      const element = attachment(file)
      expect(element).toMatch(/^<div class="attachment" file="[^"]+"><\/div>$/)
      const r = await comment({ html: `<p>see</p>${element}`, tiptap: true })
      expect(r.body.data?.["createComment"].files).toEqual([
        { uid: file.uid, name: "report.pdf", size: file.size, type: file.type, extension: "pdf", status: "CONFIRMED" }
      ])
      // Malformed elements (no class, bad JSON) attach nothing.
      const malformed = await comment({ html: `<div file='{"uid":"${file.uid}"}'></div><div class="attachment" file="{nope"></div>`, tiptap: true })
      expect(malformed.body.data?.["createComment"].files).toEqual([])
    }))

    it.effect("R-COMMENT-08: with tiptap true the attachment elements are parsed and the files attached", () => Effect.promise(async () => {
      const a = await uploadSmall(h, ws, "a.txt", "aaa")
      const b = await uploadSmall(h, ws, "b.txt", "bbbb")
      const r = await comment({ html: `<p>two files</p>${attachment(a)}${attachment(b)}`, tiptap: true })
      const id = r.body.data?.["createComment"].id
      expect(r.body.data?.["createComment"].files.map((f: { uid: string }) => f.uid)).toEqual([a.uid, b.uid])
      const links = h.ctx.db.prepare("SELECT f.uid FROM comment_files c JOIN files f ON f.id = c.file_id WHERE c.comment_id = ? ORDER BY c.position").all(id)
      expect(links).toEqual([{ uid: a.uid }, { uid: b.uid }])
    }))

    it.effect("R-COMMENT-09: without tiptap true the attachment elements are ignored", () => Effect.promise(async () => {
      const file = await uploadSmall(h, ws, "ignored.txt")
      const html = `<p>plain</p>${attachment(file)}`
      for (const tiptap of [undefined, false]) {
        const r = await comment({ html, ...(tiptap === undefined ? {} : { tiptap }) })
        expect(r.body.data?.["createComment"].files).toEqual([])
        expect(r.body.data?.["createComment"].html).toBe(html)
      }
      // Not even a PENDING file is checked when the markup is not parsed.
      const pending = await pendingFile()
      expect((await comment({ html: attachment(pending) })).body.errors).toBeUndefined()
    }))

    it.effect("R-FILE-STATUS-08: a PENDING file cannot be attached to a comment", () => Effect.promise(async () => {
      const pending = await pendingFile()
      const r = await comment({ html: attachment(pending), tiptap: true })
      expect(codeOf(r)).toBe("BAD_USER_INPUT")
      expect(r.body.errors?.[0]?.message).toContain("CONFIRMED")
    }))

    it.effect("R-COMMENT-04: a VIEW_ONLY member cannot comment; COMMENT_ONLY can", () => Effect.promise(async () => {
      const viewer = makeUser(h, { workspaces: { [ws]: "VIEW_ONLY" } })
      const commenter = makeUser(h, { workspaces: { [ws]: "COMMENT_ONLY" } })
      expect(codeOf(await comment({ html: "<p>v</p>" }, { caller: viewer }))).toBe("FORBIDDEN")
      expect((await comment({ html: "<p>c</p>" }, { caller: commenter })).body.errors).toBeUndefined()
    }))
  })

  let field: string
  // The FILE field the tests below attach to, made once the emulator is up.
  const fieldLayer = Layer.effectDiscard(
    Effect.promise(async () => {
      field = (await rest(h, "create-custom-field", { workspaceId: ws, name: "Files", type: "FILE" })).body.id
    })
  )

  it.layer(fieldLayer)("createRecordCustomFieldFile", (it) => {

    const ATTACH = `mutation($i: CreateRecordCustomFieldFileInput!) { createRecordCustomFieldFile(input: $i) }`

    it.effect("R-CUSTOMFIELD-01: todoId, customFieldId and fileUid are required", () => Effect.promise(async () => {
      const file = await uploadSmall(h, ws)
      for (const key of ["todoId", "customFieldId", "fileUid"]) {
        const i: Record<string, unknown> = { todoId: record, customFieldId: field, fileUid: file.uid }
        delete i[key]
        expect(codeOf(await gql(h, ATTACH, { i })), key).toBe("BAD_USER_INPUT")
      }
    }))

    it.effect("R-CUSTOMFIELD-02: it returns true and the file is the record's value of the field", () => Effect.promise(async () => {
      const file = await uploadSmall(h, ws, "field.txt")
      const r = await gql(h, ATTACH, { i: { todoId: record, customFieldId: field, fileUid: file.uid } })
      expect(r.body.data).toEqual({ createRecordCustomFieldFile: true })
      const detail = await rest(h, "get-record", { workspaceId: ws, recordId: record })
      const value = detail.body.customFields.find((f: { id: string }) => f.id === field)
      expect(JSON.parse(value.text)).toContain(file.uid)
      const notFileField = (await rest(h, "create-custom-field", { workspaceId: ws, name: "Plain", type: "TEXT" })).body.id
      expect(codeOf(await gql(h, ATTACH, { i: { todoId: record, customFieldId: notFileField, fileUid: file.uid } }))).toBe("BAD_USER_INPUT")
    }))

    it.effect("R-CUSTOMFIELD-03: it is requested without a sub-selection", () => Effect.promise(async () => {
      const file = await uploadSmall(h, ws)
      const withSelection = await gql(h, `mutation($i: CreateRecordCustomFieldFileInput!) { createRecordCustomFieldFile(input: $i) { id } }`, {
        i: { todoId: record, customFieldId: field, fileUid: file.uid }
      })
      expect(codeOf(withSelection)).toBe("GRAPHQL_VALIDATION_FAILED")
    }))

    it.effect("R-FILE-STATUS-08: a PENDING file cannot be attached to a custom field", () => Effect.promise(async () => {
      const pending = await pendingFile()
      const r = await gql(h, ATTACH, { i: { todoId: record, customFieldId: field, fileUid: pending.uid } })
      expect(codeOf(r)).toBe("BAD_USER_INPUT")
      const detail = await rest(h, "get-record", { workspaceId: ws, recordId: record })
      const value = detail.body.customFields.find((f: { id: string }) => f.id === field)
      expect(value.text ?? "").not.toContain(pending.uid)
    }))
  })
})
