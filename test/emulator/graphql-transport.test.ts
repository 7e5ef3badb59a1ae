import { request as httpRequest } from "node:http"
import { describe, expect, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import type { EmulatorHandle } from "../../src/emulator/index.ts"
import { Emulator, emulatorLayer } from "../support/effect.ts"
import { codeOf, gql, makeUser, owner } from "./graphql-support.ts"

let h: EmulatorHandle
let slug: string

// The helpers below read the file's emulator, and what the set-up derives from it, from these
// bindings: the layer fills them once the emulator is up and closes it after the last test.
const fileLayer = Layer.effectDiscard(
  Effect.gen(function* () {
    h = yield* Emulator
    slug = (h.ctx.db.prepare("SELECT slug FROM workspaces WHERE id = ?").get(h.workspaces[0]) as { slug: string }).slug
  })
).pipe(Layer.provideMerge(emulatorLayer({ variant: "reference", timeScale: 0.01 })))

const ME = "{ currentUser { id email } }"

// Real HTTP and real waits: the live clock (no TestClock), so timers and time scales run.
layer(fileLayer, { timeout: 30_000, excludeTestServices: true })((it) => {
  describe("GraphQL transport and authentication", () => {
    it.effect("R-GQL-AUTH-01: GraphQL is POST {base_url}/graphql; other methods are refused", () => Effect.promise(async () => {
      const ok = await gql(h, ME)
      expect(ok.status).toBe(200)
      expect(ok.body.data?.["currentUser"].id).toBe(h.ownerUserId)
      const get = await fetch(`${h.baseUrl}/graphql?query=${encodeURIComponent(ME)}`, {
        headers: { "svc-token-id": h.tokenId, "svc-token-secret": h.tokenSecret }
      })
      expect(get.status).toBe(405)
    }))

    it.effect("R-GQL-AUTH-02: a JSON body carries `query` and `variables`, and the variables are used", () => Effect.promise(async () => {
      const r = await gql(h, "query($p: String!) { workspaceUserList(projectId: $p, first: 1) { totalCount } }", {
        p: h.workspaces[0]
      })
      expect(r.body.errors).toBeUndefined()
      expect(r.body.data?.["workspaceUserList"].totalCount).toBeGreaterThanOrEqual(1)
      const missing = await gql(h, "query($p: String!) { workspaceUserList(projectId: $p) { totalCount } }", {})
      expect(codeOf(missing)).toBe("BAD_USER_INPUT")
    }))

    it.effect("R-GQL-AUTH-03: the endpoint path has no version marker", () => Effect.promise(async () => {
      expect((await gql(h, ME)).status).toBe(200)
      const versioned = await fetch(`${h.baseUrl}/v1/graphql`, {
        method: "POST",
        headers: { "content-type": "application/json", "svc-token-id": h.tokenId, "svc-token-secret": h.tokenSecret },
        body: JSON.stringify({ query: ME })
      })
      expect(versioned.status).toBe(404)
    }))

    it.effect("R-GQL-AUTH-04: the token travels in svc-token-id and svc-token-secret; without a valid pair the call is refused", () => Effect.promise(async () => {
      const post = (headers: Record<string, string>) =>
        fetch(`${h.baseUrl}/graphql`, {
          method: "POST",
          headers: { "content-type": "application/json", ...headers },
          body: JSON.stringify({ query: ME })
        })
      const none = await post({})
      expect(none.status).toBe(401)
      const body = (await none.json()) as { errors: Array<{ extensions: { code: string } }> }
      expect(body.errors[0]!.extensions.code).toBe("UNAUTHENTICATED")
      expect((await post({ "svc-token-id": h.tokenId })).status).toBe(401)
      expect((await post({ "svc-token-id": h.tokenId, "svc-token-secret": "wrong" })).status).toBe(401)
      const bearerOnly = await post({ authorization: `Bearer ${h.token}` })
      expect(bearerOnly.status).toBe(401)
      expect((await post({ "svc-token-id": h.tokenId, "svc-token-secret": h.tokenSecret })).status).toBe(200)
    }))

    it.effect("R-GQL-AUTH-05: svc-org-id accepts the organization id or its slug", () => Effect.promise(async () => {
      const create = `mutation { createWebhook(input: { url: "http://127.0.0.1:9/x" }) { id } }`
      for (const ref of [h.org, h.orgSlug]) {
        const r = await gql(h, create, {}, { headers: { "svc-org-id": ref } })
        expect(r.body.errors).toBeUndefined()
        expect(r.body.data?.["createWebhook"].id).toMatch(/^[0-9a-f]{24}$/)
      }
      const unknown = await gql(h, create, {}, { headers: { "svc-org-id": "no-such-org" } })
      expect(codeOf(unknown)).toBe("COMPANY_NOT_FOUND")
    }))

    it.effect("R-GQL-AUTH-06: svc-workspace-id accepts the workspace id or its slug", () => Effect.promise(async () => {
      const q = "{ workspaceUserList { totalCount users { id } } }"
      for (const ref of [h.workspaces[0]!, slug]) {
        const r = await gql(h, q, {}, { headers: { "svc-workspace-id": ref } })
        expect(r.body.errors).toBeUndefined()
        expect(r.body.data?.["workspaceUserList"].users.map((u: { id: string }) => u.id)).toContain(h.ownerUserId)
      }
    }))

    it.effect("R-GQL-AUTH-07: a workspace-scoped operation without a workspace (argument or header) fails", () => Effect.promise(async () => {
      const r = await gql(h, "{ workspaceUserList { totalCount } }")
      expect(codeOf(r)).toBe("PROJECT_NOT_FOUND")
      expect(r.body.errors?.[0]?.message).toContain("svc-workspace-id")
    }))

    it.effect("R-GQL-AUTH-08: header names are case-insensitive", () => Effect.promise(async () => {
      const status = await new Promise<{ status: number; body: string }>((resolve, reject) => {
        const url = new URL(`${h.baseUrl}/graphql`)
        const req = httpRequest(
          {
            host: url.hostname,
            port: url.port,
            path: "/graphql",
            method: "POST",
            headers: {
              "Content-Type": "application/json",
              "SVC-TOKEN-ID": h.tokenId,
              "Svc-Token-Secret": h.tokenSecret,
              "SVC-Workspace-ID": slug
            }
          },
          (res) => {
            let body = ""
            res.setEncoding("utf8").on("data", (d: string) => (body += d))
            res.on("end", () => resolve({ status: res.statusCode ?? 0, body }))
          }
        )
        req.on("error", reject)
        req.end(JSON.stringify({ query: "{ workspaceUserList { totalCount } }" }))
      })
      expect(status.status).toBe(200)
      expect(JSON.parse(status.body).data.workspaceUserList.totalCount).toBeGreaterThanOrEqual(1)
    }))

    it.effect("R-GQL-AUTH-11: GET /uploads needs both svc-org-id and svc-workspace-id", () => Effect.promise(async () => {
      const presign = (headers: Record<string, string>) =>
        fetch(`${h.baseUrl}/uploads?filename=a.txt&size=1`, {
          headers: { "svc-token-id": h.tokenId, "svc-token-secret": h.tokenSecret, ...headers }
        })
      expect((await presign({})).status).toBe(400)
      expect((await presign({ "svc-org-id": h.org })).status).toBe(400)
      expect((await presign({ "svc-workspace-id": slug })).status).toBe(400)
      const both = await presign({ "svc-org-id": h.orgSlug, "svc-workspace-id": slug })
      expect(both.status).toBe(200)
      expect(((await both.json()) as { method: string }).method).toBe("PUT")
    }))

    it.effect("R-GQL-AUTH-12: GET /uploads with no valid token and no formId is 401", () => Effect.promise(async () => {
      const scope = { "svc-org-id": h.org, "svc-workspace-id": slug }
      expect((await fetch(`${h.baseUrl}/uploads?filename=a.txt`, { headers: scope })).status).toBe(401)
      const wrong = await fetch(`${h.baseUrl}/uploads?filename=a.txt`, {
        headers: { ...scope, "svc-token-id": h.tokenId, "svc-token-secret": "wrong" }
      })
      expect(wrong.status).toBe(401)
    }))

    it.effect("R-GQL-ERR-01: a failed operation is reported in `errors` with the code in extensions.code", () => Effect.promise(async () => {
      const r = await gql(h, "query($p: String!) { workspaceUserList(projectId: $p) { totalCount } }", { p: "nope" })
      expect(r.status).toBe(200)
      expect(r.body.data).toBeNull()
      expect(r.body.errors).toHaveLength(1)
      expect(r.body.errors?.[0]?.extensions?.code).toBe("PROJECT_NOT_FOUND")
      expect(r.body.errors?.[0]?.path).toEqual(["workspaceUserList"])
      const invalid = await gql(h, "{ noSuchField }")
      expect(codeOf(invalid)).toBe("GRAPHQL_VALIDATION_FAILED")
      const broken = await gql(h, "{ currentUser { id ")
      expect(codeOf(broken)).toBe("GRAPHQL_PARSE_FAILED")
    }))

    it.effect("R-GQL-ERR-09: a projectId that does not resolve is PROJECT_NOT_FOUND", () => Effect.promise(async () => {
      const r = await gql(h, `{ workspaceUserList(projectId: "does-not-exist") { totalCount } }`)
      expect(codeOf(r)).toBe("PROJECT_NOT_FOUND")
    }))

    it.effect("R-GQL-ERR-10: a projectId the caller has no access to is PROJECT_NOT_FOUND", () => Effect.promise(async () => {
      const outsider = makeUser(h, { orgLevel: "MEMBER" })
      const r = await gql(h, `query($p: String!) { workspaceUserList(projectId: $p) { totalCount } }`, { p: h.workspaces[0] }, { caller: outsider })
      expect(codeOf(r)).toBe("PROJECT_NOT_FOUND")
    }))

    it.effect("R-GQL-ERR-20: every operation in a suspended organization is COMPANY_BANNED", () => Effect.promise(async () => {
      h.admin.banOrganization()
      try {
        const byHeader = await gql(h, ME, {}, { headers: { "svc-org-id": h.orgSlug } })
        expect(codeOf(byHeader)).toBe("COMPANY_BANNED")
        const byArgument = await gql(h, `query($p: String!) { workspaceUserList(projectId: $p) { totalCount } }`, {
          p: h.workspaces[0]
        })
        expect(codeOf(byArgument)).toBe("COMPANY_BANNED")
        const invite = await gql(h, `mutation($i: InviteUserInput!) { inviteUser(input: $i) }`, {
          i: { email: "banned@example.test", projectId: h.workspaces[0], accessLevel: "MEMBER" }
        })
        expect(codeOf(invite)).toBe("COMPANY_BANNED")
      } finally {
        h.admin.banOrganization(undefined, false)
      }
      expect((await gql(h, ME, {}, { headers: { "svc-org-id": h.orgSlug } })).body.errors).toBeUndefined()
      expect(owner(h).userId).toBe(h.ownerUserId)
    }))
  })
})
