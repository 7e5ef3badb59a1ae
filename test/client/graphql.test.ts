import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import type { EmulatorHandle } from "../../src/emulator/index.ts"
import { GraphqlClient } from "../../src/client/graphql-client.ts"
import { RestClient } from "../../src/client/rest-client.ts"
import { fromBytes } from "../../src/client/multipart.ts"
import { Readable } from "node:stream"
import { storageKeyFor } from "../../src/emulator/uploads/files.ts"
import { parseAttachments } from "../../src/schema/comments.ts"
import { json, layerFor, run, startRecordingServer, startTestEmulator } from "./helpers.ts"

let emu: EmulatorHandle
let ws: string
beforeAll(async () => {
  emu = await startTestEmulator({ seed: "demo" })
  ws = emu.workspaces[0]!
})
afterAll(() => emu?.close())

const gql = <A, E>(f: (c: GraphqlClient["Type"]) => Effect.Effect<A, E>) => run(layerFor(emu), Effect.flatMap(GraphqlClient, f))

describe("GraphQL request form (recorded by a test server)", () => {
  // R-GQL-AUTH-01 R-GQL-AUTH-02 R-GQL-AUTH-04
  it("R-GQL-AUTH-01/02/04: POST {baseUrl}/graphql, JSON {query, variables}, token id/secret and org headers", async () => {
    const server = await startRecordingServer((_r, res) => json(res, 200, { data: { webhook: null } }))
    try {
      const layer = layerFor({ ...emu, baseUrl: server.url }, { headerPrefix: "acme" })
      await Effect.runPromise(
        Effect.provide(
          Effect.flatMap(GraphqlClient, (c) => c.execute("query one($id: String!) { webhook(id: $id) { id } }", { id: "w1" }, Schema.Unknown)),
          layer
        )
      )
      const r = server.requests[0]!
      expect(r.method).toBe("POST")
      expect(r.url).toBe("/graphql")
      expect(r.headers["content-type"]).toMatch(/^application\/json/)
      expect(JSON.parse(r.body.toString())).toEqual({ query: "query one($id: String!) { webhook(id: $id) { id } }", variables: { id: "w1" } })
      expect(r.headers["acme-token-id"]).toBe(emu.tokenId)
      expect(r.headers["acme-token-secret"]).toBe(emu.tokenSecret)
      expect(r.headers["acme-org-id"]).toBe(emu.org)
      expect(r.headers["authorization"]).toBeUndefined()
    } finally {
      await server.close()
    }
  })

  it("a data field that does not match is a DecodeError naming data.<path>", async () => {
    const server = await startRecordingServer((_r, res) => json(res, 200, { data: { currentUser: { id: 1 } } }))
    try {
      const e = await Effect.runPromise(
        Effect.provide(Effect.flip(Effect.flatMap(GraphqlClient, (c) => c.currentUser())), layerFor({ ...emu, baseUrl: server.url }))
      )
      expect(e._tag).toBe("DecodeError")
      if (e._tag === "DecodeError") expect(e.path).toBe("data.currentUser.id")
    } finally {
      await server.close()
    }
  })
})

describe("typed GraphQL operations against the emulator", () => {
  it("R-USER-03: currentUser, workspaceUserList and assignees decode", async () => {
    const me = await gql((c) => c.currentUser())
    expect(me.id).toBe(emu.ownerUserId)
    const list = await gql((c) => c.workspaceUserList({ projectId: ws, first: 2 }))
    expect(list.users.length).toBeLessThanOrEqual(2)
    expect(typeof list.pageInfo.hasNextPage).toBe("boolean")
    const assignees = await gql((c) => c.assignees({ projectId: ws }))
    expect(assignees.length).toBeGreaterThan(0)
  })

  // R-INVITE-01 R-INVITE-02 R-INVITE-14 R-INVITE-15 R-INVITE-16
  it("R-INVITE-01/02/14/15/16: invite (Boolean, no selection), list, resend and cancel an invitation", async () => {
    const ok = await gql((c) => c.inviteUser({ email: "new.person@example.com", projectId: ws, accessLevel: "MEMBER" }))
    expect(ok).toBe(true)
    const pending = await gql((c) => c.invitations({ projectId: ws, pending: true }))
    const inv = pending.find((i) => i.email === "new.person@example.com")!
    expect(inv.accessLevel).toBe("MEMBER")
    const resent = await gql((c) => c.resendInvitation(inv.id))
    expect(resent.id).toBe(inv.id)
    expect(await gql((c) => c.cancelInvitation(inv.id))).toBe(true)
    expect(Array.isArray(await gql((c) => c.myInvitations()))).toBe(true)
    expect(Array.isArray(await gql((c) => c.invitations({ projectId: ws })))).toBe(true)
  })

  it("R-USER-08: removeProjectUser and removeOrganizationUser decode their results", async () => {
    const member = emu.admin.createUser({ email: "leaver@example.com", firstName: "Lea", lastName: "Ver", workspaces: { [ws]: "MEMBER" } })
    const removed = await gql((c) => c.removeProjectUser({ projectId: ws, userId: member.userId }))
    expect(removed.success).toBe(true)
    const gone = await gql((c) => c.removeOrganizationUser({ companyId: emu.org, userId: member.userId }))
    expect(gone === true || gone === null).toBe(true)
  })

  // R-ROLE-02 R-ROLE-03 R-ROLE-04 R-ROLE-05
  it("R-ROLE-02..05: role create, read, update, delete", async () => {
    const role = await gql((c) => c.createWorkspaceUserRole({ projectId: ws, name: "Reviewer", canCreateRecords: false, canDeleteRecords: false }))
    expect(role.name).toBe("Reviewer")
    // Returns not shown by the documents: read as an Option, Some against the emulator.
    expect(Option.getOrThrow(await gql((c) => c.workspaceUserRole(role.id))).id).toBe(role.id)
    expect(Option.getOrThrow(await gql((c) => c.workspaceUserRoles(ws))).map((r) => r.id)).toContain(role.id)
    const updated = Option.getOrThrow(await gql((c) => c.updateWorkspaceUserRole({ id: role.id, canCreateRecords: true })))
    expect(updated.canCreateRecords).toBe(true)
    expect(await gql((c) => c.deleteWorkspaceUserRole(role.id))).toBe(true)
  })

  // R-WEBHOOK-01 R-WEBHOOK-03 R-WEBHOOK-04 R-WEBHOOK-08 R-WEBHOOK-09 R-WEBHOOK-10 R-WEBHOOK-11 R-WEBHOOK-13
  it("R-WEBHOOK-01/03/04/08/09/10/11/13: webhook create (secret once), list, read, update, disable, delete", async () => {
    // Returns not shown by the documents: read as an Option, Some against the emulator.
    const hook = Option.getOrThrow(await gql((c) => c.createWebhook({ url: "http://127.0.0.1:9/hook", events: ["TODO_CREATED"] })))
    expect(typeof hook.secret).toBe("string")
    const again = Option.getOrThrow(await gql((c) => c.webhook(hook.id)))
    expect(again.secret).toBe(null)
    expect((await gql((c) => c.webhooks())).items.map((w) => w.id)).toContain(hook.id)
    const updated = Option.getOrThrow(await gql((c) => c.updateWebhook({ id: hook.id, name: "renamed" })))
    expect(updated.name).toBe("renamed")
    const disabled = Option.getOrThrow(await gql((c) => c.disableWebhook(hook.id)))
    expect(disabled.status).toBe("UNHEALTHY")
    expect(await gql((c) => c.deleteWebhook(hook.id))).toBe(true)
  })

  // R-COMMENT-04 R-COMMENT-06 R-COMMENT-07
  it("R-COMMENT-04/06/07: createComment on a record embeds attachment elements with tiptap true", async () => {
    const file = await gql((c) => c.uploadFile({ file: fromBytes("pic.png", new Uint8Array([137, 80, 78, 71])), projectId: ws }))
    const record = (await run(layerFor(emu), Effect.flatMap(RestClient, (c) => c.listRecords({ workspaceId: ws, limit: 1 })))).items[0]!
    const comment = await gql((c) =>
      c.createComment({
        html: "<p>see attached</p>",
        text: "see attached",
        category: "TODO",
        categoryId: record.id,
        attachments: [{ uid: file.uid, name: file.name, size: file.size, type: file.type, extension: file.extension }]
      })
    )
    expect(parseAttachments(comment.html).map((a) => a.uid)).toEqual([file.uid])
  })

  it("createFile and createRecordCustomFieldFile", async () => {
    const uploaded = await gql((c) => c.uploadFile({ file: fromBytes("cf.txt", new TextEncoder().encode("cf")), projectId: ws }))
    const field = emu.ctx.db.prepare("SELECT id FROM custom_fields WHERE workspace_id = ? AND type = 'FILE'").get(ws) as { id: string }
    const record = (await run(layerFor(emu), Effect.flatMap(RestClient, (c) => c.listRecords({ workspaceId: ws, limit: 1 })))).items[0]!
    const attached = await gql((c) => c.createRecordCustomFieldFile({ todoId: record.id, customFieldId: field.id, fileUid: uploaded.uid }))
    expect(attached).toBe(true)
    // An object already in storage without a file row (what createFile registers).
    await emu.ctx.objects.put(storageKeyFor("loose-object-1"), Readable.from([Buffer.from("cf")]))
    const registered = await gql((c) =>
      c.createFile({ uid: "loose-object-1", name: "copy.txt", size: 2, type: "text/plain", extension: "txt", projectId: ws })
    )
    expect(registered.name).toBe("copy.txt")
  })
})

describe("GraphQL against the emulator's alt variant (the other reading of what the documents leave open)", () => {
  // R-WEBHOOK-01 R-WEBHOOK-08 R-WEBHOOK-11 R-WEBHOOK-13 R-ROLE-02 R-ROLE-05
  it("R-WEBHOOK-01/08/11/13, R-ROLE-02/05: webhook and role operations whose returns are not shown work as scalars too", async () => {
    const alt = await startTestEmulator({ seed: "demo", variant: "alt" })
    try {
      const g = <A, E>(f: (c: GraphqlClient["Type"]) => Effect.Effect<A, E>) => run(layerFor(alt), Effect.flatMap(GraphqlClient, f))
      const hook = Option.getOrThrow(await g((c) => c.createWebhook({ url: "http://127.0.0.1:9/hook" })))
      expect(typeof hook.secret).toBe("string")
      // disableWebhook returns Boolean in this reading: the selection is dropped, the call done.
      expect(Option.isNone(await g((c) => c.disableWebhook(hook.id)))).toBe(true)
      expect(Option.getOrThrow(await g((c) => c.webhook(hook.id))).enabled).toBe(false)
      expect(await g((c) => c.deleteWebhook(hook.id))).toBe(true)
      const role = await g((c) => c.createWorkspaceUserRole({ projectId: alt.workspaces[0]!, name: "Reader", canCreateRecords: false }))
      const updated = await g((c) => c.updateWorkspaceUserRole({ id: role.id, name: "Reader 2" }))
      expect(Option.map(updated, (r) => r.name)).toEqual(Option.some("Reader 2"))
      expect(await g((c) => c.deleteWorkspaceUserRole(role.id))).toBe(true)
    } finally {
      await alt.close()
    }
  })
})
