import { describe, expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { RestClient } from "../../src/client/rest-client.ts"
import { GraphqlClient } from "../../src/client/graphql-client.ts"
import { Uploads } from "../../src/client/uploads.ts"
import { fromBytes } from "../../src/client/multipart.ts"
import * as Errors from "../../src/client/errors.ts"
import { redact } from "../../src/client/config.ts"
import { Emulator } from "../support/effect.ts"
import { clientFailure, json, layerFor, recordingServer, SECRET_TOKEN, SECRET_TOKEN_SECRET, startRecordingServer, testEmulatorLayer } from "./helpers.ts"

const NO_RETRY = { retry: { maxRetries: 0, baseDelayMs: 1, capDelayMs: 1 } }
const Any = Schema.Unknown

// Real HTTP to the emulator: the live clock (no TestClock), or the client's timeouts and
// retries would never fire.
layer(testEmulatorLayer({ seed: "demo" }), { timeout: 30_000, excludeTestServices: true })((it) => {
  describe("REST error mapping (emulator)", () => {
    // R-REST-ERR-01 R-REST-ERR-02
    it.effect("R-REST-ERR-01/02: 400 becomes InvalidInput with the issues and the operation", () =>
      Effect.gen(function*() {
        const emu = yield* Emulator
        const ws = emu.workspaces[0]!
        const e = yield* clientFailure(layerFor(emu), Effect.flatMap(RestClient, (c) => c.call("create-record", { workspaceId: ws }, Any, { idempotent: false })))
        expect(e._tag).toBe("InvalidInput")
        if (e._tag !== "InvalidInput") return
        expect(e.operation).toBe("create-record")
        expect(e.issues.some((i) => i.path.includes("title"))).toBe(true)
        expect(e.message).toContain("create-record")
        expect(e.message).toContain("400")
      }))

    it.effect("R-REST-ERR-03: unknown token is Unauthorized (401)", () =>
      Effect.gen(function*() {
        const emu = yield* Emulator
        const e = yield* clientFailure(layerFor(emu, { token: "not-a-real-token-123" }), Effect.flatMap(RestClient, (c) => c.listWorkspaces()))
        expect(e._tag).toBe("Unauthorized")
        expect(e.message).toContain("list-workspaces")
      }))

    it.effect("R-REST-ERR-03: a known token naming a foreign organization is Forbidden (403)", () =>
      Effect.gen(function*() {
        const emu = yield* Emulator
        const e = yield* clientFailure(layerFor(emu, { org: "no-such-org" }), Effect.flatMap(RestClient, (c) => c.listWorkspaces()))
        expect(e._tag).toBe("Forbidden")
      }))

    it.effect("R-REST-ERR-04: an id that does not resolve is NotFound (422 NOT_FOUND)", () =>
      Effect.gen(function*() {
        const emu = yield* Emulator
        const ws = emu.workspaces[0]!
        const e = yield* clientFailure(layerFor(emu), Effect.flatMap(RestClient, (c) => c.getRecord({ workspaceId: ws, recordId: "000000000000000000000000" })))
        expect(e._tag).toBe("NotFound")
        if (e._tag === "NotFound") expect([e.status, e.code]).toEqual([422, "NOT_FOUND"])
        expect(e.message).toMatch(/^get-record: not found \(HTTP 422, NOT_FOUND\)/)
      }))

    it.effect("R-REST-ERR-05: 429 is RateLimited with the Retry-After in ms", () =>
      Effect.gen(function*() {
        const emu = yield* Emulator
        emu.faults.inject({ route: "list-workspaces", kind: "429", retryAfter: 2 })
        const e = yield* clientFailure(layerFor(emu, NO_RETRY), Effect.flatMap(RestClient, (c) => c.listWorkspaces()))
        expect(e._tag).toBe("RateLimited")
        if (e._tag === "RateLimited") expect(e.retryAfterMs).toBe(2000)
      }))

    it.effect("R-REST-ERR-06: 500 is ServerError with its status", () =>
      Effect.gen(function*() {
        const emu = yield* Emulator
        emu.faults.inject({ route: "list-workspaces", kind: "500" })
        const e = yield* clientFailure(layerFor(emu, NO_RETRY), Effect.flatMap(RestClient, (c) => c.listWorkspaces()))
        expect(e._tag).toBe("ServerError")
        if (e._tag === "ServerError") expect(e.status).toBe(500)
      }))

    it.effect("a refused connection is a TransportError that was never sent", () =>
      Effect.gen(function*() {
        const emu = yield* Emulator
        // Closed at once, before the call: only its address is wanted.
        const server = yield* Effect.promise(() => startRecordingServer(() => undefined))
        const url = server.url
        yield* Effect.promise(() => server.close())
        const e = yield* clientFailure(layerFor({ ...emu, restUrl: url }, NO_RETRY), Effect.flatMap(RestClient, (c) => c.listWorkspaces()))
        expect(e._tag).toBe("TransportError")
        if (e._tag === "TransportError") expect(e.sent).toBe(false)
      }))

    it.effect("no answer within the per-request timeout is Timeout", () =>
      Effect.gen(function*() {
        const emu = yield* Emulator
        const server = yield* recordingServer(() => undefined) // never answers
        const e = yield* clientFailure(
          layerFor({ ...emu, restUrl: server.url }, { ...NO_RETRY, requestTimeoutMs: 150 }),
          Effect.flatMap(RestClient, (c) => c.listWorkspaces())
        )
        expect(e._tag).toBe("Timeout")
      }))
  })

  describe("GraphQL error mapping", () => {
    it.effect("R-GQL-ERR-01: an errors array becomes GraphqlError with extensions.code, message and path", () =>
      Effect.gen(function*() {
        const emu = yield* Emulator
        const server = yield* recordingServer((_r, res) =>
          json(res, 200, { data: null, errors: [{ message: "Workspace not found", path: ["workspaceUserList"], extensions: { code: "PROJECT_NOT_FOUND" } }] })
        )
        const e = yield* clientFailure(
          layerFor({ ...emu, baseUrl: server.url }),
          Effect.flatMap(GraphqlClient, (c) => c.workspaceUserList({ projectId: "nope" }))
        )
        expect(e._tag).toBe("GraphqlError")
        if (e._tag !== "GraphqlError") return
        expect(e.code).toBe("PROJECT_NOT_FOUND")
        expect(e.path).toEqual(["workspaceUserList"])
        expect(e.message).toContain("workspaceUserList")
      }))

    it.effect("R-GQL-ERR-01: a top-level code is read when extensions has none", () =>
      Effect.gen(function*() {
        const emu = yield* Emulator
        const server = yield* recordingServer((_r, res) => json(res, 200, { errors: [{ message: "no", code: "COMPANY_BANNED" }] }))
        const e = yield* clientFailure(layerFor({ ...emu, baseUrl: server.url }), Effect.flatMap(GraphqlClient, (c) => c.currentUser()))
        expect(e._tag === "GraphqlError" && e.code).toBe("COMPANY_BANNED")
      }))

    // R-GQL-ERR-09 R-GQL-ERR-12
    it.effect("R-GQL-ERR-09/12: the emulator's PROJECT_NOT_FOUND and COMPANY_NOT_FOUND arrive as codes", () =>
      Effect.gen(function*() {
        const emu = yield* Emulator
        const ws = emu.workspaces[0]!
        const p = yield* clientFailure(layerFor(emu), Effect.flatMap(GraphqlClient, (c) => c.assignees({ projectId: "no-such-workspace" })))
        expect(p._tag === "GraphqlError" && p.code).toBe("PROJECT_NOT_FOUND")
        const c2 = yield* clientFailure(
          layerFor(emu),
          Effect.flatMap(GraphqlClient, (c) => c.uploadFile({ file: fromBytes("a.txt", new TextEncoder().encode("hi")), companyId: "no-such-org", projectId: ws }))
        )
        expect(c2._tag === "GraphqlError" && c2.code).toBe("COMPANY_NOT_FOUND")
      }))

    it.effect("R-GQL-ERR-16: inviting oneself is ADD_SELF", () =>
      Effect.gen(function*() {
        const emu = yield* Emulator
        const ws = emu.workspaces[0]!
        const me = yield* Effect.provide(Effect.flatMap(GraphqlClient, (c) => c.currentUser()), layerFor(emu))
        const e = yield* clientFailure(
          layerFor(emu),
          Effect.flatMap(GraphqlClient, (c) => c.inviteUser({ email: me.email, projectId: ws, accessLevel: "MEMBER" }))
        )
        expect(e._tag === "GraphqlError" && e.code).toBe("ADD_SELF")
      }))
  })

  describe("no token in any error message", () => {
    it.effect("tokens are absent from every error kind, even when the server echoes them", () =>
      Effect.gen(function*() {
        const emu = yield* Emulator
        // A hostile server that echoes every credential it receives into its answers.
        const server = yield* recordingServer((req, res, i) => {
          const echo = `auth=${req.headers["authorization"] ?? ""} secret=${req.headers["svc-token-secret"] ?? ""} id=${req.headers["svc-token-id"] ?? ""}`
          const statuses = [400, 401, 403, 422, 429, 500, 404]
          if (req.url?.startsWith("/graphql")) {
            return json(res, 200, { errors: [{ message: echo, path: [echo], extensions: { code: echo } }] })
          }
          if (req.url?.includes("/uploads")) {
            return json(res, 403, { error: { code: "FILES_DISABLED_FOR_ROLE", message: echo } })
          }
          const status = statuses[i % statuses.length]!
          return json(res, status, { error: { code: echo, message: echo, issues: [{ path: [echo], message: echo }] } }, { "retry-after": "0" })
        })
        const layer = layerFor(
          { ...emu, restUrl: server.url, baseUrl: server.url, token: SECRET_TOKEN, tokenId: "tid_SUPERSECRET_77", tokenSecret: SECRET_TOKEN_SECRET },
          NO_RETRY
        )
        const failures: Array<unknown> = []
        for (let i = 0; i < 7; i++) failures.push(yield* clientFailure(layer, Effect.flatMap(RestClient, (c) => c.listWorkspaces())))
        failures.push(yield* clientFailure(layer, Effect.flatMap(GraphqlClient, (c) => c.currentUser())))
        failures.push(yield* clientFailure(layer, Effect.flatMap(Uploads, (u) => u.presign({ filename: "a.txt", workspaceId: "w", via: "rest" }))))
        failures.push(yield* clientFailure(layer, Effect.flatMap(Uploads, (u) => u.presign({ filename: "a.txt", workspaceId: "w", via: "app" }))))
        const tags = new Set(failures.map((f) => (f as { _tag: string })._tag))
        expect([...tags].sort()).toEqual(
          ["Forbidden", "GraphqlError", "InvalidInput", "NotFound", "RateLimited", "ServerError", "Unauthorized", "UploadRejected", "ValidationFailed"].sort()
        )
        for (const f of failures) {
          const texts = [(f as Error).message, Errors.describeError(f), String(f), JSON.stringify(f)]
          for (const t of texts) {
            expect(t).not.toContain(SECRET_TOKEN)
            expect(t).not.toContain(SECRET_TOKEN_SECRET)
            expect(t).not.toContain("tid_SUPERSECRET_77")
          }
        }
      }))

    it.effect("every error class scrubs configured secrets and bearer values from its message", () =>
      Effect.gen(function*() {
        const emu = yield* Emulator
        // Registers the secrets, as any configured client does.
        layerFor({ ...emu, token: SECRET_TOKEN, tokenSecret: SECRET_TOKEN_SECRET })
        const s = `x ${SECRET_TOKEN} y ${SECRET_TOKEN_SECRET} Bearer abc.def`
        const op = "op"
        const all: ReadonlyArray<Error> = [
          new Errors.InvalidInput({ operation: op, issues: [{ path: s, message: s }], detail: s }),
          new Errors.Unauthorized({ operation: op, detail: s }),
          new Errors.Forbidden({ operation: op, code: s, detail: s }),
          new Errors.ValidationFailed({ operation: op, code: s, serverMessage: s }),
          new Errors.NotFound({ operation: op, status: 404, code: s, detail: s }),
          new Errors.RetryWaitTooLong({ operation: `${op} ${s}`, requestedMs: 10_800_000, maxMs: 120_000 }),
          new Errors.RateLimited({ operation: op, retryAfterMs: 1000 }),
          new Errors.ServerError({ operation: op, status: 500, detail: s }),
          new Errors.UnexpectedStatus({ operation: op, status: 404, detail: s }),
          new Errors.GraphqlError({ operation: op, code: s, serverMessage: s, path: [s], others: 0 }),
          new Errors.UploadRejected({ operation: op, status: 403, code: s, detail: s }),
          new Errors.UploadSizeMismatch({ operation: op, uid: "u", detail: s }),
          new Errors.TransportError({ operation: op, detail: s, sent: true }),
          new Errors.Timeout({ operation: op, timeoutMs: 5 }),
          new Errors.OutcomeUnknown({ operation: op, attemptedAt: "t", inputSummary: s, reason: s }),
          new Errors.DecodeError({ operation: op, path: s, detail: s }),
          new Errors.LimitExceeded({ operation: op, limit: "l", subject: s, actual: 2, max: 1 }),
          new Errors.ConflictingInput({ operation: op, fields: ["a", "b"], detail: s }),
          new Errors.InputRejected({ operation: op, path: s, detail: s })
        ]
        for (const e of all) {
          expect(e.message).toContain(op)
          expect(e.message).not.toContain(SECRET_TOKEN)
          expect(e.message).not.toContain(SECRET_TOKEN_SECRET)
          expect(e.message).not.toContain("abc.def")
          expect(Errors.describeError(e)).not.toContain(SECRET_TOKEN)
          expect(Errors.isClientError(e)).toBe(true)
        }
        expect(redact(`token ${SECRET_TOKEN}`)).toBe("token <redacted>")
      }))
  })
})
