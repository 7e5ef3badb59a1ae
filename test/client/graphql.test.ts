import { describe, expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { GraphqlClient } from "../../src/client/graphql-client.ts"
import { RestClient } from "../../src/client/rest-client.ts"
import { fromBytes } from "../../src/client/multipart.ts"
import { Readable } from "node:stream"
import { storageKeyFor } from "../../src/emulator/uploads/files.ts"
import { parseAttachments } from "../../src/schema/comments.ts"
import { Emulator } from "../support/effect.ts"
import { withClient, layerFor, json, recordingServer, scopedTestEmulator, testEmulatorLayer } from "./helpers.ts"

const gql = <A, E>(f: (c: GraphqlClient["Service"]) => Effect.Effect<A, E>) =>
  Effect.flatMap(Emulator, (emu) => withClient(layerFor(emu), Effect.flatMap(GraphqlClient, f)))

// Real HTTP to the emulator: the live clock (no TestClock), or the client's timeouts and
// retries would never fire.
layer(testEmulatorLayer({ seed: "demo" }), { timeout: 30_000, excludeTestServices: true })((it) => {
  describe("GraphQL request form (recorded by a test server)", () => {
    // R-GQL-AUTH-01 R-GQL-AUTH-02 R-GQL-AUTH-04
    it.effect("R-GQL-AUTH-01/02/04: POST {baseUrl}/graphql, JSON {query, variables}, token id/secret and org headers", () =>
      Effect.gen(function*() {
        const emu = yield* Emulator
        const server = yield* recordingServer((_r, res) => json(res, 200, { data: { webhook: null } }))
        const layer = layerFor({ ...emu, baseUrl: server.url }, { headerPrefix: "acme" })
        yield* Effect.provide(
          Effect.flatMap(GraphqlClient, (c) => c.execute("query one($id: String!) { webhook(id: $id) { id } }", { id: "w1" }, Schema.Unknown)),
          layer
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
      }))

    it.effect("a data field that does not match is a DecodeError naming data.<path>", () =>
      Effect.gen(function*() {
        const emu = yield* Emulator
        const server = yield* recordingServer((_r, res) => json(res, 200, { data: { currentUser: { id: 1 } } }))
        const e = yield* Effect.provide(Effect.flip(Effect.flatMap(GraphqlClient, (c) => c.currentUser())), layerFor({ ...emu, baseUrl: server.url }))
        expect(e._tag).toBe("DecodeError")
        if (e._tag === "DecodeError") expect(e.path).toBe("data.currentUser.id")
      }))
  })

  describe("typed GraphQL operations against the emulator", () => {
    it.effect("R-USER-03: currentUser, workspaceUserList and assignees decode", () =>
      Effect.gen(function*() {
        const emu = yield* Emulator
        const ws = emu.workspaces[0]!
        const me = yield* gql((c) => c.currentUser())
        expect(me.id).toBe(emu.ownerUserId)
        const list = yield* gql((c) => c.workspaceUserList({ projectId: ws, first: 2 }))
        expect(list.users.length).toBeLessThanOrEqual(2)
        expect(typeof list.pageInfo.hasNextPage).toBe("boolean")
        const assignees = yield* gql((c) => c.assignees({ projectId: ws }))
        expect(assignees.length).toBeGreaterThan(0)
      }))

    // R-INVITE-01 R-INVITE-02 R-INVITE-14 R-INVITE-15 R-INVITE-16
    it.effect("R-INVITE-01/02/14/15/16: invite (Boolean, no selection), list, resend and cancel an invitation", () =>
      Effect.gen(function*() {
        const emu = yield* Emulator
        const ws = emu.workspaces[0]!
        const ok = yield* gql((c) => c.inviteUser({ email: "new.person@example.com", projectId: ws, accessLevel: "MEMBER" }))
        expect(ok).toBe(true)
        const pending = yield* gql((c) => c.invitations({ projectId: ws, pending: true }))
        const inv = pending.find((i) => i.email === "new.person@example.com")!
        expect(inv.accessLevel).toBe("MEMBER")
        const resent = yield* gql((c) => c.resendInvitation(inv.id))
        expect(resent.id).toBe(inv.id)
        expect(yield* gql((c) => c.cancelInvitation(inv.id))).toBe(true)
        expect(Array.isArray(yield* gql((c) => c.myInvitations()))).toBe(true)
        expect(Array.isArray(yield* gql((c) => c.invitations({ projectId: ws })))).toBe(true)
      }))

    it.effect("R-USER-08: removeProjectUser and removeOrganizationUser decode their results", () =>
      Effect.gen(function*() {
        const emu = yield* Emulator
        const ws = emu.workspaces[0]!
        const member = emu.admin.createUser({ email: "leaver@example.com", firstName: "Lea", lastName: "Ver", workspaces: { [ws]: "MEMBER" } })
        const removed = yield* gql((c) => c.removeProjectUser({ projectId: ws, userId: member.userId }))
        expect(removed.success).toBe(true)
        const gone = yield* gql((c) => c.removeOrganizationUser({ companyId: emu.org, userId: member.userId }))
        expect(gone === true || gone === null).toBe(true)
      }))

    // R-ROLE-02 R-ROLE-03 R-ROLE-04 R-ROLE-05
    it.effect("R-ROLE-02..05: role create, read, update, delete", () =>
      Effect.gen(function*() {
        const emu = yield* Emulator
        const ws = emu.workspaces[0]!
        const role = yield* gql((c) => c.createWorkspaceUserRole({ projectId: ws, name: "Reviewer", canCreateRecords: false, canDeleteRecords: false }))
        expect(role.name).toBe("Reviewer")
        // Returns not shown by the documents: read as an Option, Some against the emulator.
        expect(Option.getOrThrow(yield* gql((c) => c.workspaceUserRole(role.id))).id).toBe(role.id)
        expect(Option.getOrThrow(yield* gql((c) => c.workspaceUserRoles(ws))).map((r) => r.id)).toContain(role.id)
        const updated = Option.getOrThrow(yield* gql((c) => c.updateWorkspaceUserRole({ id: role.id, canCreateRecords: true })))
        expect(updated.canCreateRecords).toBe(true)
        expect(yield* gql((c) => c.deleteWorkspaceUserRole(role.id))).toBe(true)
      }))

    // R-WEBHOOK-01 R-WEBHOOK-03 R-WEBHOOK-04 R-WEBHOOK-08 R-WEBHOOK-09 R-WEBHOOK-10 R-WEBHOOK-11 R-WEBHOOK-13
    it.effect("R-WEBHOOK-01/03/04/08/09/10/11/13: webhook create (secret once), list, read, update, disable, delete", () =>
      Effect.gen(function*() {
        // Returns not shown by the documents: read as an Option, Some against the emulator.
        const hook = Option.getOrThrow(yield* gql((c) => c.createWebhook({ url: "http://127.0.0.1:9/hook", events: ["TODO_CREATED"] })))
        expect(typeof hook.secret).toBe("string")
        const again = Option.getOrThrow(yield* gql((c) => c.webhook(hook.id)))
        expect(again.secret).toBe(null)
        expect((yield* gql((c) => c.webhooks())).items.map((w) => w.id)).toContain(hook.id)
        const updated = Option.getOrThrow(yield* gql((c) => c.updateWebhook({ id: hook.id, name: "renamed" })))
        expect(updated.name).toBe("renamed")
        const disabled = Option.getOrThrow(yield* gql((c) => c.disableWebhook(hook.id)))
        expect(disabled.status).toBe("UNHEALTHY")
        expect(yield* gql((c) => c.deleteWebhook(hook.id))).toBe(true)
      }))

    // R-COMMENT-04 R-COMMENT-06 R-COMMENT-07
    it.effect("R-COMMENT-04/06/07: createComment on a record embeds attachment elements with tiptap true", () =>
      Effect.gen(function*() {
        const emu = yield* Emulator
        const ws = emu.workspaces[0]!
        const file = yield* gql((c) => c.uploadFile({ file: fromBytes("pic.png", new Uint8Array([137, 80, 78, 71])), projectId: ws }))
        const record = (yield* withClient(layerFor(emu), Effect.flatMap(RestClient, (c) => c.listRecords({ workspaceId: ws, limit: 1 })))).items[0]!
        const comment = yield* gql((c) =>
          c.createComment({
            html: "<p>see attached</p>",
            text: "see attached",
            category: "TODO",
            categoryId: record.id,
            attachments: [{ uid: file.uid, name: file.name, size: file.size, type: file.type, extension: file.extension }]
          })
        )
        expect(parseAttachments(comment.html).map((a) => a.uid)).toEqual([file.uid])
      }))

    it.effect("createFile and createRecordCustomFieldFile", () =>
      Effect.gen(function*() {
        const emu = yield* Emulator
        const ws = emu.workspaces[0]!
        const uploaded = yield* gql((c) => c.uploadFile({ file: fromBytes("cf.txt", new TextEncoder().encode("cf")), projectId: ws }))
        const field = emu.ctx.db.prepare("SELECT id FROM custom_fields WHERE workspace_id = ? AND type = 'FILE'").get(ws) as { id: string }
        const record = (yield* withClient(layerFor(emu), Effect.flatMap(RestClient, (c) => c.listRecords({ workspaceId: ws, limit: 1 })))).items[0]!
        const attached = yield* gql((c) => c.createRecordCustomFieldFile({ todoId: record.id, customFieldId: field.id, fileUid: uploaded.uid }))
        expect(attached).toBe(true)
        // An object already in storage without a file row (what createFile registers).
        yield* Effect.promise(() => emu.ctx.objects.put(storageKeyFor("loose-object-1"), Readable.from([Buffer.from("cf")])))
        const registered = yield* gql((c) =>
          c.createFile({ uid: "loose-object-1", name: "copy.txt", size: 2, type: "text/plain", extension: "txt", projectId: ws })
        )
        expect(registered.name).toBe("copy.txt")
      }))
  })

  describe("GraphQL against the emulator's alt variant (the other reading of what the documents leave open)", () => {
    // R-WEBHOOK-01 R-WEBHOOK-08 R-WEBHOOK-11 R-WEBHOOK-13 R-ROLE-02 R-ROLE-05
    it.effect("R-WEBHOOK-01/08/11/13, R-ROLE-02/05: webhook and role operations whose returns are not shown work as scalars too", () =>
      Effect.gen(function*() {
        const alt = yield* scopedTestEmulator({ seed: "demo", variant: "alt" })
        const g = <A, E>(f: (c: GraphqlClient["Service"]) => Effect.Effect<A, E>) => withClient(layerFor(alt), Effect.flatMap(GraphqlClient, f))
        const hook = Option.getOrThrow(yield* g((c) => c.createWebhook({ url: "http://127.0.0.1:9/hook" })))
        expect(typeof hook.secret).toBe("string")
        // disableWebhook returns Boolean in this reading: the selection is dropped, the call done.
        expect(Option.isNone(yield* g((c) => c.disableWebhook(hook.id)))).toBe(true)
        expect(Option.getOrThrow(yield* g((c) => c.webhook(hook.id))).enabled).toBe(false)
        expect(yield* g((c) => c.deleteWebhook(hook.id))).toBe(true)
        const role = yield* g((c) => c.createWorkspaceUserRole({ projectId: alt.workspaces[0]!, name: "Reader", canCreateRecords: false }))
        const updated = yield* g((c) => c.updateWorkspaceUserRole({ id: role.id, name: "Reader 2" }))
        expect(Option.map(updated, (r) => r.name)).toEqual(Option.some("Reader 2"))
        expect(yield* g((c) => c.deleteWorkspaceUserRole(role.id))).toBe(true)
      }))
  })
})
