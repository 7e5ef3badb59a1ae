import { describe, expect, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { startEmulator, type EmulatorHandle } from "../../src/emulator/index.ts"
import { Emulator, emulatorLayer } from "../support/effect.ts"
import { codeOf, eventually, gql, makeUser, receiver, rest, type Caller } from "./graphql-support.ts"

let h: EmulatorHandle

// The helpers below read the file's emulator, and what the set-up derives from it, from these
// bindings: the layer fills them once the emulator is up and closes it after the last test.
const fileLayer = Layer.effectDiscard(
  Effect.gen(function* () {
    h = yield* Emulator
  })
).pipe(Layer.provideMerge(emulatorLayer({ variant: "reference", timeScale: 0.01 })))

const FIELDS = "id uid name url secret status events projectIds enabled metadata createdAt updatedAt"

const create = (input: Record<string, unknown>, options: { caller?: Caller; org?: string | null } = {}) =>
  gql(h, `mutation($input: CreateWebhookInput!) { createWebhook(input: $input) { ${FIELDS} } }`, { input }, {
    ...(options.caller ? { caller: options.caller } : {}),
    headers: options.org === null ? {} : { "svc-org-id": options.org ?? h.org }
  })

const read = (id: string, caller?: Caller) =>
  gql(h, `query($id: String!) { webhook(id: $id) { ${FIELDS} } }`, { id }, caller ? { caller } : {})

const update = (input: Record<string, unknown>, caller?: Caller) =>
  gql(h, `mutation($input: UpdateWebhookInput!) { updateWebhook(input: $input) { ${FIELDS} } }`, { input }, caller ? { caller } : {})

// Real HTTP and real waits: the live clock (no TestClock), so timers and time scales run.
layer(fileLayer, { timeout: 30_000, excludeTestServices: true })((it) => {
  describe("webhook resource", () => {
    it.effect("R-WEBHOOK-01: a Webhook has id, uid, name, url, secret, status, events, projectIds, enabled, metadata, createdAt, updatedAt", () => Effect.promise(async () => {
      const r = await create({ url: "http://127.0.0.1:9/a", name: "A", events: ["TODO_CREATED"], projectIds: [h.workspaces[0]] })
      const hook = r.body.data?.["createWebhook"]
      expect(Object.keys(hook).sort()).toEqual(FIELDS.split(" ").sort())
      expect(hook).toMatchObject({
        name: "A",
        url: "http://127.0.0.1:9/a",
        status: "HEALTHY",
        enabled: true,
        events: ["TODO_CREATED"],
        projectIds: [h.workspaces[0]]
      })
      expect(hook.uid).toMatch(/^[a-z0-9]+$/)
      expect(Number.isNaN(Date.parse(hook.createdAt))).toBe(false)
      expect(Number.isNaN(Date.parse(hook.updatedAt))).toBe(false)
    }))

    it.effect("R-WEBHOOK-02: name is a label or null", () => Effect.promise(async () => {
      const unnamed = await create({ url: "http://127.0.0.1:9/b" })
      expect(unnamed.body.data?.["createWebhook"].name).toBeNull()
      const named = await create({ url: "http://127.0.0.1:9/b", name: "Billing sync" })
      expect(named.body.data?.["createWebhook"].name).toBe("Billing sync")
    }))

    it.effect("R-WEBHOOK-03: createWebhook returns the signing secret", () => Effect.promise(async () => {
      const r = await create({ url: "http://127.0.0.1:9/c" })
      expect(r.body.data?.["createWebhook"].secret).toMatch(/^[0-9a-f]{32,}$/)
    }))

    it.effect("R-WEBHOOK-04: every other read returns secret null", () => Effect.promise(async () => {
      const created = (await create({ url: "http://127.0.0.1:9/d" })).body.data?.["createWebhook"]
      expect((await read(created.id)).body.data?.["webhook"].secret).toBeNull()
      const list = await gql(h, `{ webhooks { items { id secret } } }`)
      expect(list.body.data?.["webhooks"].items.every((w: { secret: string | null }) => w.secret === null)).toBe(true)
      expect((await update({ id: created.id, name: "renamed" })).body.data?.["updateWebhook"].secret).toBeNull()
      const disabled = await gql(h, `mutation($id: String!) { disableWebhook(id: $id) { secret } }`, { id: created.id })
      expect(disabled.body.data?.["disableWebhook"].secret).toBeNull()
    }))

    it.effect("R-WEBHOOK-05: status is HEALTHY or UNHEALTHY", () => Effect.promise(async () => {
      const r = await gql(h, `{ __type(name: "WebhookStatusType") { enumValues { name } } }`)
      expect(r.body.data?.["__type"].enumValues.map((v: { name: string }) => v.name).sort()).toEqual(["HEALTHY", "UNHEALTHY"])
    }))

    it.effect("R-WEBHOOK-06: metadata holds the scoping data under events and projectIds", () => Effect.promise(async () => {
      const r = await create({ url: "http://127.0.0.1:9/e", events: ["TAG_CREATED", "TAG_DELETED"], projectIds: [h.workspaces[0]] })
      expect(r.body.data?.["createWebhook"].metadata).toEqual({ events: ["TAG_CREATED", "TAG_DELETED"], projectIds: [h.workspaces[0]] })
      const empty = await create({ url: "http://127.0.0.1:9/e" })
      expect(empty.body.data?.["createWebhook"].metadata).toEqual({ events: [], projectIds: [] })
    }))

    it.effect("R-WEBHOOK-07: a webhook is owned by the user who created it", () => Effect.promise(async () => {
      const alice = makeUser(h, { orgLevel: "ADMIN" })
      const bob = makeUser(h, { orgLevel: "ADMIN" })
      const hook = (await create({ url: "http://127.0.0.1:9/own" }, { caller: alice })).body.data?.["createWebhook"]
      expect(h.ctx.db.prepare("SELECT user_id FROM webhooks WHERE id = ?").get(hook.id)).toEqual({ user_id: alice.userId })
      expect((await read(hook.id, alice)).body.data?.["webhook"].id).toBe(hook.id)
      expect(codeOf(await read(hook.id, bob))).toBe("WEBHOOK_NOT_FOUND")
      expect(codeOf(await update({ id: hook.id, enabled: false }, bob))).toBe("WEBHOOK_NOT_FOUND")
    }))

    it.effect("R-WEBHOOK-08: query webhooks returns an object with items", () => Effect.promise(async () => {
      const carol = makeUser(h, { orgLevel: "MEMBER" })
      const a = (await create({ url: "http://127.0.0.1:9/1" }, { caller: carol })).body.data?.["createWebhook"]
      const b = (await create({ url: "http://127.0.0.1:9/2" }, { caller: carol })).body.data?.["createWebhook"]
      const r = await gql(h, `{ webhooks { items { id url } totalCount } }`, {}, { caller: carol })
      expect(r.body.data?.["webhooks"]).toEqual({
        items: [
          { id: a.id, url: "http://127.0.0.1:9/1" },
          { id: b.id, url: "http://127.0.0.1:9/2" }
        ],
        totalCount: 2
      })
    }))

    it.effect("R-WEBHOOK-09: query webhook returns one webhook by id", () => Effect.promise(async () => {
      const hook = (await create({ url: "http://127.0.0.1:9/one", name: "one" })).body.data?.["createWebhook"]
      expect((await read(hook.id)).body.data?.["webhook"]).toMatchObject({ id: hook.id, name: "one", url: "http://127.0.0.1:9/one" })
      expect(codeOf(await read("000000000000000000000000"))).toBe("WEBHOOK_NOT_FOUND")
    }))

    it.effect("R-WEBHOOK-10: updateWebhook changes url, events, scope and enabled", () => Effect.promise(async () => {
      const hook = (await create({ url: "http://127.0.0.1:9/old" })).body.data?.["createWebhook"]
      const second = h.admin.createWorkspace({ name: "Scope target" })
      const r = await update({
        id: hook.id,
        url: "http://127.0.0.1:9/new",
        events: ["COMMENT_CREATED"],
        projectIds: [second.slug],
        enabled: false
      })
      expect(r.body.data?.["updateWebhook"]).toMatchObject({
        url: "http://127.0.0.1:9/new",
        events: ["COMMENT_CREATED"],
        projectIds: [second.id],
        metadata: { events: ["COMMENT_CREATED"], projectIds: [second.id] },
        enabled: false
      })
      expect(codeOf(await update({ id: hook.id, url: "ftp://example.test/x" }))).toBe("BAD_USER_INPUT")
    }))

    it.effect("R-WEBHOOK-11: deleteWebhook deletes the webhook permanently", () => Effect.promise(async () => {
      const hook = (await create({ url: "http://127.0.0.1:9/gone" })).body.data?.["createWebhook"]
      const r = await gql(h, `mutation($id: String!) { deleteWebhook(id: $id) }`, { id: hook.id })
      expect(r.body.data?.["deleteWebhook"]).toBe(true)
      expect(codeOf(await read(hook.id))).toBe("WEBHOOK_NOT_FOUND")
      expect(h.ctx.db.prepare("SELECT count(*) AS n FROM webhooks WHERE id = ?").get(hook.id)).toEqual({ n: 0 })
    }))

    it.effect("R-WEBHOOK-13: disableWebhook sets UNHEALTHY, stops delivery and keeps the webhook", () => Effect.promise(async () => {
      const recv = await receiver()
      const ws = h.admin.createWorkspace({ name: "Disable" }).id
      const hook = (await create({ url: recv.url, projectIds: [ws] })).body.data?.["createWebhook"]
      const r = await gql(h, `mutation($id: String!) { disableWebhook(id: $id) { id status enabled } }`, { id: hook.id })
      expect(r.body.data?.["disableWebhook"]).toEqual({ id: hook.id, status: "UNHEALTHY", enabled: false })
      await rest(h, "create-record", { workspaceId: ws, title: "unseen" })
      expect(h.ctx.db.prepare("SELECT count(*) AS n FROM webhook_deliveries WHERE webhook_id = ?").get(hook.id)).toEqual({ n: 0 })
      expect((await read(hook.id)).body.data?.["webhook"].status).toBe("UNHEALTHY")
      await recv.close()
    }))

    it.effect("R-WEBHOOK-13: a delivery already queued is dropped when the webhook is disabled before it is due", () => Effect.promise(async () => {
      const slow = await startEmulator({ variant: "reference", timeScale: 0.2 })
      try {
        const recv = await receiver()
        const headers = { "content-type": "application/json", "svc-token-id": slow.tokenId, "svc-token-secret": slow.tokenSecret, "svc-org-id": slow.org }
        const post = async (query: string) =>
          (await (await fetch(`${slow.baseUrl}/graphql`, { method: "POST", headers, body: JSON.stringify({ query }) })).json()) as any
        const id = (await post(`mutation { createWebhook(input: { url: "${recv.url}" }) { id } }`)).data.createWebhook.id
        await fetch(`${slow.restUrl}/v1/create-record`, {
          method: "POST",
          headers: { "content-type": "application/json", authorization: `Bearer ${slow.token}` },
          body: JSON.stringify({ workspaceId: slow.workspaces[0], title: "late" })
        })
        await post(`mutation { disableWebhook(id: "${id}") { id } }`)
        const row = await eventually(() => {
          const d = slow.ctx.db.prepare("SELECT status FROM webhook_deliveries WHERE webhook_id = ?").get(id) as { status: string }
          return d.status === "QUEUED" ? undefined : d
        })
        expect(row.status).toBe("DROPPED")
        expect(recv.posts).toHaveLength(0)
        await recv.close()
      } finally {
        await slow.close()
      }
    }))

    it.effect("R-WEBHOOK-14: re-enabling an UNHEALTHY webhook makes it enabled (HEALTHY) and sends WEBHOOK_HEALTH_CHECK", () => Effect.promise(async () => {
      const recv = await receiver()
      const hook = (await create({ url: recv.url, events: ["TAG_CREATED"] })).body.data?.["createWebhook"]
      await gql(h, `mutation($id: String!) { disableWebhook(id: $id) { id } }`, { id: hook.id })
      const r = await update({ id: hook.id, enabled: true })
      expect(r.body.data?.["updateWebhook"]).toMatchObject({ enabled: true, status: "HEALTHY" })
      await recv.next(1)
      const body = recv.posts[0]!.json
      expect(body.event).toBe("WEBHOOK_HEALTH_CHECK")
      expect(body.webhook).toMatchObject({ id: hook.id, status: "HEALTHY", enabled: true })
      expect(body.previousValue).toBeNull()
      // An update that leaves an enabled webhook enabled sends no probe.
      await update({ id: hook.id, enabled: true, name: "still on" })
      expect(h.ctx.db.prepare("SELECT count(*) AS n FROM webhook_deliveries WHERE webhook_id = ?").get(hook.id)).toEqual({ n: 1 })
      await recv.close()
    }))
  })

  describe("webhook authentication", () => {
    it.effect("R-GQL-AUTH-09: createWebhook requires the svc-org-id header", () => Effect.promise(async () => {
      const r = await create({ url: "http://127.0.0.1:9/noorg" }, { org: null })
      expect(codeOf(r)).toBe("COMPANY_NOT_FOUND")
      expect(r.body.errors?.[0]?.message).toContain("svc-org-id")
      const outsider = makeUser(h, {})
      h.ctx.db.prepare("DELETE FROM org_members WHERE user_id = ?").run(outsider.userId)
      expect(codeOf(await create({ url: "http://127.0.0.1:9/x" }, { caller: outsider }))).toBe("COMPANY_NOT_FOUND")
    }))

    it.effect("R-GQL-AUTH-10: the other webhook operations are per user and need no organization header", () => Effect.promise(async () => {
      const dave = makeUser(h, { orgLevel: "MEMBER" })
      const hook = (await create({ url: "http://127.0.0.1:9/dave" }, { caller: dave })).body.data?.["createWebhook"]
      // No svc-org-id on these calls.
      expect((await read(hook.id, dave)).body.data?.["webhook"].id).toBe(hook.id)
      expect((await update({ id: hook.id, name: "d" }, dave)).body.data?.["updateWebhook"].name).toBe("d")
      const list = await gql(h, `{ webhooks { items { id } } }`, {}, { caller: dave })
      expect(list.body.data?.["webhooks"].items).toEqual([{ id: hook.id }])
      const other = await gql(h, `{ webhooks { items { id } } }`, {}, { caller: makeUser(h, { orgLevel: "MEMBER" }) })
      expect(other.body.data?.["webhooks"].items).toEqual([])
      const del = await gql(h, `mutation($id: String!) { deleteWebhook(id: $id) }`, { id: hook.id }, { caller: dave })
      expect(del.body.data?.["deleteWebhook"]).toBe(true)
    }))
  })
})
