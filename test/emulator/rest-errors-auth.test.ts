/** REST errors (R-REST-ERR-*) and authentication headers (R-REST-AUTH-01..06). */
import * as http from "node:http"
import { describe, expect, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { startEmulator, type EmulatorHandle } from "../../src/emulator/index.ts"
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

/** A raw request with header names exactly as given (node keeps their case on the wire). */
const rawRequest = (path: string, headers: Record<string, string>, body: string): Promise<{ status: number; body: any }> =>
  new Promise((resolve, reject) => {
    const url = new URL(`${h.restUrl}${path}`)
    const req = http.request({ host: url.hostname, port: url.port, path: url.pathname, method: "POST", headers }, (res) => {
      let text = ""
      res.on("data", (c: Buffer) => (text += c.toString()))
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) }))
    })
    req.on("error", reject)
    req.end(body)
  })

// Real HTTP and real waits: the live clock (no TestClock), so timers and time scales run.
layer(fileLayer, { timeout: 30_000, excludeTestServices: true })((it) => {
  describe("REST errors", () => {
    it.effect("R-REST-ERR-01: an error is a JSON body {error: ...} with the matching status", () => Effect.promise(async () => {
      const a = await rpc(h, "get-record", { workspaceId: ws, recordId: "000000000000000000000000" })
      expect(a.status).toBe(422)
      expect(a.headers.get("content-type")).toMatch(/application\/json/)
      expect(a.body).toEqual({ error: { code: "NOT_FOUND", message: "Record not found" } })
    }))

    it.effect("R-REST-ERR-02: invalid input is a 400 whose body includes the issues array", () => Effect.promise(async () => {
      const a = await rpc(h, "list-records", { limit: "ten", skip: -1, done: "yes" })
      expect(a.status).toBe(400)
      expect(a.body.error.code).toBe("BAD_REQUEST")
      const paths = a.body.error.issues.map((i: any) => i.path)
      expect(paths).toEqual(expect.arrayContaining([["limit"], ["skip"], ["done"]]))
      for (const issue of a.body.error.issues) expect(typeof issue.message).toBe("string")
      const notJson = await fetch(`${h.restUrl}/v1/list-records`, {
        method: "POST",
        headers: { authorization: `Bearer ${h.token}`, "content-type": "application/json" },
        body: "{not json"
      })
      expect(notJson.status).toBe(400)
      expect(((await notJson.json()) as any).error.code).toBe("BAD_REQUEST")
    }))

    it.effect("R-REST-ERR-03: authentication failures are 401, authorization failures 403", () => Effect.promise(async () => {
      expect((await rpc(h, "list-workspaces", {}, { token: null })).status).toBe(401)
      expect((await rpc(h, "list-workspaces", {}, { token: "pat_unknown" })).status).toBe(401)
      const outsider = h.admin.createUser({ email: "outsider@acme.test", firstName: "Out", lastName: "Sider" })
      // A member of the organization, but not of this workspace.
      const denied = await rpc(h, "list-records", { workspaceId: ws }, { token: outsider.token })
      expect(denied.status).toBe(403)
      expect(denied.body.error.code).toBe("FORBIDDEN")
      const viewer = h.admin.createUser({ email: "viewer@acme.test", firstName: "View", lastName: "Er", workspaces: { [ws]: "VIEW_ONLY" } })
      expect((await rpc(h, "create-tag", { workspaceId: ws, title: "x" }, { token: viewer.token })).status).toBe(403)
    }))

    it.effect("R-REST-ERR-04: an operation that ran but failed its own validation is a 422", () => Effect.promise(async () => {
      const a = await rpc(h, "move-record", { workspaceId: ws, recordId: "nope", listId: "nope" })
      expect(a.status).toBe(422)
      expect((await rpc(h, "create-workspace", { name: "Taken", slug: "website" })).status).toBe(422)
    }))

    it.effect("R-REST-ERR-05: rate limiting is a 429", () => Effect.promise(async () => {
      h.faults.inject({ route: "list-workspaces", kind: "429", retryAfter: 2 })
      const a = await rpc(h, "list-workspaces", {})
      expect(a.status).toBe(429)
      expect(a.body.error.code).toBe("RATE_LIMITED")
      expect(a.headers.get("retry-after")).toBe("2")
    }))

    it.effect("R-REST-ERR-06: a server error is a 500 with an error body", () => Effect.promise(async () => {
      h.faults.inject({ route: "list-workspaces", kind: "500" })
      const a = await rpc(h, "list-workspaces", {})
      expect(a.status).toBe(500)
      expect(a.body.error.code).toBe("INTERNAL_SERVER_ERROR")
      expect((await rpc(h, "list-workspaces", {})).status).toBe(200)
    }))
  })

  describe("REST authentication", () => {
    it.effect("R-REST-AUTH-01: requests authenticate with Authorization: Bearer <token>", () => Effect.promise(async () => {
      expect((await rpc(h, "list-workspaces", {}, { headers: { authorization: `bearer ${h.token}` } })).status).toBe(200)
      expect((await rpc(h, "list-workspaces", {}, { headers: { authorization: `Token ${h.token}` } })).status).toBe(401)
      expect((await rpc(h, "list-workspaces", {}, { headers: { authorization: h.token } })).status).toBe(401)
    }))

    it.effect("R-REST-AUTH-02: svc-org-id names the organization (id or slug)", () => Effect.promise(async () => {
      expect((await ok(rpc(h, "list-workspaces", {}, { org: h.org }))).totalCount).toBe(2)
      expect((await ok(rpc(h, "list-workspaces", {}, { org: h.orgSlug }))).totalCount).toBe(2)
      const other = h.admin.createOrganization({ name: "Other Co", slug: "other-co" })
      // The owner of Acme is no member of Other Co.
      expect((await rpc(h, "list-workspaces", {}, { org: other })).status).toBe(403)
      expect((await rpc(h, "list-workspaces", {}, { org: "no-such-org" })).status).toBe(403)
      // A user of both organizations sees each one's workspaces under its header.
      h.admin.setOrgLevel(h.ownerUserId, "OWNER", other)
      h.admin.createWorkspace({ name: "Other WS", orgId: other })
      expect((await ok(rpc(h, "list-workspaces", {}, { org: "other-co" }))).items.map((w: any) => w.name)).toEqual(["Other WS"])
      expect((await ok(rpc(h, "list-workspaces", {}, { org: "acme" }))).totalCount).toBe(2)
    }))

    it.effect("R-REST-AUTH-03: x-svc-company-id plays the organization role too", () => Effect.promise(async () => {
      const viaCompany = await ok(rpc(h, "list-workspaces", {}, { org: null, headers: { "x-svc-company-id": "acme" } }))
      expect(viaCompany.totalCount).toBe(2)
      expect((await rpc(h, "list-workspaces", {}, { org: null, headers: { "x-svc-company-id": "no-such-org" } })).status).toBe(403)
    }))

    it.effect("R-REST-AUTH-04: a request with a body sends Content-Type: application/json", () => Effect.promise(async () => {
      const plain = await fetch(`${h.restUrl}/v1/list-workspaces`, {
        method: "POST",
        headers: { authorization: `Bearer ${h.token}`, "content-type": "text/plain" },
        body: "{}"
      })
      expect(plain.status).toBe(400)
      const withCharset = await fetch(`${h.restUrl}/v1/list-workspaces`, {
        method: "POST",
        headers: { authorization: `Bearer ${h.token}`, "content-type": "application/json; charset=utf-8" },
        body: "{}"
      })
      expect(withCharset.status).toBe(200)
    }))

    it.effect("R-REST-AUTH-05: header names are case-insensitive (mixed-case raw headers)", () => Effect.promise(async () => {
      const a = await rawRequest(
        "/v1/list-workspaces",
        { AUTHORIZATION: `Bearer ${h.token}`, "SVC-Org-ID": "acme", "Content-TYPE": "application/json" },
        "{}"
      )
      expect(a.status).toBe(200)
      expect(a.body.totalCount).toBe(2)
      const foreign = await rawRequest(
        "/v1/list-workspaces",
        { AuThOrIzAtIoN: `Bearer ${h.token}`, "X-SVC-Company-Id": "no-such-org", "content-type": "application/json" },
        "{}"
      )
      expect(foreign.status).toBe(403)
    }))

    it.effect("R-REST-AUTH-06: the REST token and the GraphQL token id/secret are one personal access token", () => Effect.promise(async () => {
      const me = await ok(rpc(h, "get-current-user", {}))
      const res = await fetch(`${h.baseUrl}/graphql`, {
        method: "POST",
        headers: { "content-type": "application/json", "svc-token-id": h.tokenId, "svc-token-secret": h.tokenSecret, "svc-org-id": h.org },
        body: JSON.stringify({ query: "{ currentUser { id } }" })
      })
      const gql = (await res.json()) as any
      expect(gql.data.currentUser.id).toBe(me.id)
      expect(me.id).toBe(h.ownerUserId)
      const row = h.ctx.db.prepare("SELECT user_id FROM tokens WHERE token = ? AND token_id = ? AND token_secret = ?").get(h.token, h.tokenId, h.tokenSecret)
      expect(row).toEqual({ user_id: h.ownerUserId })
    }))

    it.effect("another header prefix renames every header (<p>-org-id, x-<p>-company-id)", () => Effect.promise(async () => {
      const other = await startEmulator({ variant: "reference", headerPrefix: "acme" })
      try {
        const viaPrefix = await rpc(other, "list-workspaces", {}, { org: null, headers: { "acme-org-id": other.org } })
        expect(viaPrefix.status).toBe(200)
        const wrongPrefix = await rpc(other, "list-workspaces", {}, { org: null, headers: { "acme-org-id": "nope" } })
        expect(wrongPrefix.status).toBe(403)
        // The default prefix's header means nothing here: it is ignored.
        expect((await rpc(other, "list-workspaces", {}, { org: "nope" })).status).toBe(200)
      } finally {
        await other.close()
      }
    }))
  })
})
