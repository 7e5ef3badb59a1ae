import { describe, expect, layer } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import { storageCredentialLog } from "../../src/emulator/uploads/files.ts"
import { Uploads } from "../../src/client/uploads.ts"
import { RestClient } from "../../src/client/rest-client.ts"
import { fromBytes } from "../../src/client/multipart.ts"
import type { EmulatorHandle } from "../../src/emulator/index.ts"
import { Emulator } from "../support/effect.ts"
import { clientFailure, withClient, layerFor, json, recordingServer, testEmulatorLayer, type RecordingServer } from "./helpers.ts"

const enc = new TextEncoder()
const collect = (s: Stream.Stream<Uint8Array, unknown>) =>
  Effect.map(Stream.runCollect(s), (chunks) => Buffer.concat(chunks.map((c) => Buffer.from(c))))

/** Header names a request to storage may carry: the signed ones and what HTTP itself needs. */
const TRANSPORT_HEADERS = new Set(["host", "connection", "content-length", "transfer-encoding", "keep-alive", "accept", "accept-encoding", "user-agent", "accept-language", "sec-fetch-mode"])

/**
 * A stand-in service and storage for the tests that check what goes on the wire: the
 * service presigns to the storage, which takes PUTs and serves GETs.
 */
class WireServers extends Context.Service<WireServers, { readonly service: RecordingServer; readonly storage: RecordingServer }>()("test/WireServers") {}

const wireServersLayer = Layer.effect(
  WireServers,
  Effect.gen(function*() {
    const storage = yield* recordingServer((req, res) => {
      if (req.method === "PUT") {
        res.writeHead(200, { "content-length": 0 })
        return res.end()
      }
      res.writeHead(200, { "content-type": "application/octet-stream", "content-length": 5 })
      res.end("bytes")
    })
    const service = yield* recordingServer((req, res) => {
      const url = new URL(req.url, "http://x")
      if (url.pathname.endsWith("/uploads") && req.method === "GET") {
        return json(res, 200, {
          url: `${storage.url}/o/key-1?sig=abc`,
          method: "PUT",
          headers: { "Content-Type": "text/plain", "x-amz-meta-origin": "signed" },
          fields: { "Content-Type": "text/plain", Key: "key-1", "X-Key": "uid-1" }
        })
      }
      if (url.pathname.endsWith("/confirm")) return json(res, 200, { message: "ok", status: "CONFIRMED" })
      if (url.pathname.startsWith("/uploads/")) {
        res.writeHead(302, { location: `${storage.url}/o/key-1?sig=get`, "content-length": 0 })
        return res.end()
      }
      return json(res, 404, { error: "no" })
    })
    return { service, storage }
  })
)

// Real HTTP to the emulator: the live clock (no TestClock), or the client's timeouts and
// retries would never fire.
layer(testEmulatorLayer({ seed: "empty" }), { timeout: 30_000, excludeTestServices: true })((it) => {
  describe("presigned flow against the emulator", () => {
    for (const via of ["rest", "app"] as const) {
      // R-UPLOAD-PRESIGN-11 R-UPLOAD-PRESIGN-12 R-UPLOAD-PRESIGN-13 R-UPLOAD-PRESIGN-14 R-UPLOAD-PRESIGN-15 R-UPLOAD-PRESIGN-16 R-UPLOAD-PRESIGN-27 R-UPLOAD-PRESIGN-30 R-UPLOAD-PRESIGN-31
      it.effect(`R-UPLOAD-PRESIGN-11/12/13/14/15/16/27/30/31, R-FILE-STATUS-04: presign (${via}), PUT, confirm ends CONFIRMED; storage saw no credential`, () =>
        Effect.gen(function*() {
          const emu = yield* Emulator
          const ws = emu.workspaces[0]!
          const bytes = enc.encode(`hello from ${via}`)
          const layer = layerFor(emu)
          const result = yield* withClient(layer, Effect.flatMap(Uploads, (u) => u.upload(fromBytes(`${via}.txt`, bytes), { workspaceId: ws, via })))
          expect(result.confirmed.status).toBe("CONFIRMED")
          expect(result.presigned.method).toBe("PUT")
          const files = yield* withClient(layer, Effect.flatMap(RestClient, (c) => c.listFiles({ workspaceId: ws })))
          expect(files.items.find((f) => f.uid === result.uid)?.status).toBe("CONFIRMED")
          // The download round-trips the bytes through the redirect.
          const back = yield* withClient(layer, Effect.flatMap(Uploads, (u) => collect(u.download(result.uid, `${via}.txt`))))
          expect(back.toString()).toBe(`hello from ${via}`)
          expect(storageCredentialLog(emu.ctx)).toEqual([])
        }))
    }

    it.effect("R-UPLOAD-PRESIGN-03: a custom key becomes the uid; names with spaces and unicode download fine", () =>
      Effect.gen(function*() {
        const emu = yield* Emulator
        const ws = emu.workspaces[0]!
        const layer = layerFor(emu)
        const name = "Q3 résumé (final).txt"
        const result = yield* withClient(layer, Effect.flatMap(Uploads, (u) => u.upload(fromBytes(name, enc.encode("x")), { workspaceId: ws, key: "my-key-1" })))
        expect(result.uid).toBe("my-key-1")
        const back = yield* withClient(layer, Effect.flatMap(Uploads, (u) => collect(u.download("my-key-1", name))))
        expect(back.toString()).toBe("x")
      }))

    it.effect("R-FILE-STATUS-05: a confirm whose stored size differs is UploadSizeMismatch (upload again)", () =>
      Effect.gen(function*() {
        const emu = yield* Emulator
        const ws = emu.workspaces[0]!
        const layer = layerFor(emu)
        const e = yield* clientFailure(
          layer,
          Effect.gen(function*() {
            const u = yield* Uploads
            const presigned = yield* u.presign({ filename: "short.txt", size: 10, workspaceId: ws })
            yield* u.putToStorage(presigned, fromBytes("short.txt", enc.encode("12345")), 5)
            return yield* u.confirm({ uid: presigned.fields["X-Key"], workspaceId: ws })
          })
        )
        expect(e._tag).toBe("UploadSizeMismatch")
      }))

    it.effect("R-UPLOAD-PRESIGN-24: presign into an unknown workspace is UploadRejected (404)", () =>
      Effect.gen(function*() {
        const emu = yield* Emulator
        const ws = emu.workspaces[0]!
        const e = yield* clientFailure(layerFor(emu), Effect.flatMap(Uploads, (u) => u.presign({ filename: "a.txt", workspaceId: "no-such-ws" })))
        expect(e._tag).toBe("UploadRejected")
        if (e._tag === "UploadRejected") expect(e.status).toBe(404)
      }))

    it.effect("R-UPLOAD-PRESIGN-22: presign without a valid token is UploadRejected (401)", () =>
      Effect.gen(function*() {
        const emu = yield* Emulator
        const ws = emu.workspaces[0]!
        const e = yield* clientFailure(layerFor(emu, { tokenSecret: "wrong-secret-value" }), Effect.flatMap(Uploads, (u) => u.presign({ filename: "a.txt", workspaceId: ws, via: "app" })))
        expect(e._tag === "UploadRejected" && e.status).toBe(401)
      }))

    const storagePuts = (emu: EmulatorHandle) =>
      Object.entries(emu.stats().byRoute).filter(([route]) => route.startsWith("storage:")).reduce((n, [, c]) => n + c, 0)

    it.effect("R-UPLOAD-PRESIGN-07: a dropped storage PUT is sent exactly once and surfaces StoragePutFailed with the uid", () =>
      Effect.gen(function*() {
        const emu = yield* Emulator
        const ws = emu.workspaces[0]!
        const layer = layerFor(emu)
        const presigned = yield* withClient(layer, Effect.flatMap(Uploads, (u) => u.presign({ filename: "drop.txt", size: 4, workspaceId: ws })))
        emu.resetStats()
        emu.faults.inject({ route: /^\/o\//, kind: "drop" })
        const e = yield* clientFailure(layer, Effect.flatMap(Uploads, (u) => u.putToStorage(presigned, fromBytes("drop.txt", enc.encode("abcd")), 4)))
        expect(e._tag).toBe("StoragePutFailed")
        if (e._tag === "StoragePutFailed") {
          expect(e.uid).toBe(presigned.fields["X-Key"])
          // No answer: the bytes may have landed, so the caller confirms before presigning again.
          expect(e.outcome).toBe("unknown")
          expect(e.status).toBeNull()
        }
        expect(storagePuts(emu)).toBe(1)
        expect(emu.faults.pending()).toBe(0)
      }))

    it.effect("R-UPLOAD-PRESIGN-07: a storage 500 is not retried on the same url; a fresh presign then uploads", () =>
      Effect.gen(function*() {
        const emu = yield* Emulator
        const ws = emu.workspaces[0]!
        const layer = layerFor(emu)
        emu.resetStats()
        emu.faults.inject({ route: /^\/o\//, kind: "500" })
        const e = yield* clientFailure(layer, Effect.flatMap(Uploads, (u) => u.upload(fromBytes("retry.txt", enc.encode("abcd")), { workspaceId: ws })))
        expect(e._tag === "StoragePutFailed" && e.status).toBe(500)
        expect(storagePuts(emu)).toBe(1)
        // What a caller does next: presign afresh (a new single-use url) and send again.
        const result = yield* withClient(layer, Effect.flatMap(Uploads, (u) => u.upload(fromBytes("retry.txt", enc.encode("abcd")), { workspaceId: ws })))
        expect(result.confirmed.status).toBe("CONFIRMED")
        expect(storagePuts(emu)).toBe(2)
      }))

    // 4.8 GB is read as 4,800,000,000 bytes (assumptions.ts SIZE_UNITS: decimal, the smaller reading).
    it.effect("R-LIMIT-04, R-UPLOAD-PRESIGN-21: 4,800,000,001 bytes is LimitExceeded before any request; exactly 4,800,000,000 is presigned", () =>
      Effect.gen(function*() {
        const emu = yield* Emulator
        const ws = emu.workspaces[0]!
        emu.resetStats()
        const e = yield* clientFailure(layerFor(emu), Effect.flatMap(Uploads, (u) => u.presign({ filename: "big.iso", size: 4_800_000_001, workspaceId: ws })))
        expect(e._tag).toBe("LimitExceeded")
        expect(e.message).toContain("big.iso")
        expect(emu.stats().total).toBe(0)
        const atLimit = yield* withClient(layerFor(emu), Effect.flatMap(Uploads, (u) => u.presign({ filename: "max.iso", size: 4_800_000_000, workspaceId: ws })))
        expect(atLimit.method).toBe("PUT")
      }))
  })

  it.layer(wireServersLayer)("headers on the wire (test servers record them)", (it) => {

    it.effect("R-UPLOAD-PRESIGN-29, R-REST-AUTH-02, R-REST-AUTH-03, R-REST-AUTH-07: REST presign sends Bearer, both organization headers and x-<p>-project-id", () =>
      Effect.gen(function*() {
        const emu = yield* Emulator
        const { service, storage } = yield* WireServers
        const layer = layerFor({ ...emu, restUrl: `${service.url}/rest`, baseUrl: service.url })
        yield* withClient(layer, Effect.flatMap(Uploads, (u) => u.presign({ filename: "a b.txt", size: 5, key: "k", workspaceId: "ws-1", via: "rest" })))
        const r = service.requests.at(-1)!
        const url = new URL(r.url, "http://x")
        expect(url.pathname).toBe("/rest/uploads")
        expect(Object.fromEntries(url.searchParams)).toEqual({ filename: "a b.txt", size: "5", key: "k" })
        expect(r.headers["authorization"]).toBe(`Bearer ${emu.token}`)
        expect(r.headers["x-svc-company-id"]).toBe(emu.org)
        // Which organization header is canonical is not shown: both are sent.
        expect(r.headers["svc-org-id"]).toBe(emu.org)
        expect(r.headers["x-svc-project-id"]).toBe("ws-1")
      }))

    it.effect("R-GQL-AUTH-04, R-UPLOAD-PRESIGN-01: app presign sends token id/secret, org and workspace headers", () =>
      Effect.gen(function*() {
        const emu = yield* Emulator
        const { service, storage } = yield* WireServers
        const layer = layerFor({ ...emu, restUrl: `${service.url}/rest`, baseUrl: service.url })
        yield* withClient(layer, Effect.flatMap(Uploads, (u) => u.presign({ filename: "a.txt", workspaceId: "ws-1", via: "app" })))
        const r = service.requests.at(-1)!
        expect(new URL(r.url, "http://x").pathname).toBe("/uploads")
        expect(r.headers["svc-token-id"]).toBe(emu.tokenId)
        expect(r.headers["svc-token-secret"]).toBe(emu.tokenSecret)
        expect(r.headers["svc-org-id"]).toBe(emu.org)
        expect(r.headers["svc-workspace-id"]).toBe("ws-1")
        expect(r.headers["authorization"]).toBeUndefined()
      }))

    // R-UPLOAD-PRESIGN-11 R-UPLOAD-PRESIGN-12 R-UPLOAD-PRESIGN-13
    it.effect("R-UPLOAD-PRESIGN-11..13: the storage PUT carries exactly the returned headers plus Content-Length, no credential", () =>
      Effect.gen(function*() {
        const emu = yield* Emulator
        const { service, storage } = yield* WireServers
        const layer = layerFor({ ...emu, restUrl: `${service.url}/rest`, baseUrl: service.url })
        yield* withClient(layer, Effect.flatMap(Uploads, (u) => u.upload(fromBytes("a.txt", enc.encode("hello")), { workspaceId: "ws-1" })))
        const put = storage.requests.find((r) => r.method === "PUT")!
        expect(put.url).toBe("/o/key-1?sig=abc")
        expect(put.body.toString()).toBe("hello")
        expect(put.headers["content-type"]).toBe("text/plain")
        expect(put.headers["x-amz-meta-origin"]).toBe("signed")
        expect(put.headers["content-length"]).toBe("5")
        const extra = Object.keys(put.headers).filter((h) => !TRANSPORT_HEADERS.has(h) && h !== "content-type" && h !== "x-amz-meta-origin")
        expect(extra).toEqual([])
        const confirm = service.requests.find((r) => r.url.endsWith("/confirm"))!
        expect(confirm.method).toBe("PUT")
        expect(confirm.url).toBe("/uploads/uid-1/confirm")
      }))

    // R-FILE-SERVE-01 R-FILE-SERVE-02
    it.effect("R-FILE-SERVE-01/02: download follows the redirect by hand and sends no credential on either hop", () =>
      Effect.gen(function*() {
        const emu = yield* Emulator
        const { service, storage } = yield* WireServers
        const layer = layerFor({ ...emu, restUrl: `${service.url}/rest`, baseUrl: service.url })
        const bytes = yield* withClient(layer, Effect.flatMap(Uploads, (u) => collect(u.download("uid-1", "r é.txt"))))
        expect(bytes.toString()).toBe("bytes")
        const first = service.requests.at(-1)!
        expect(first.url).toBe(`/uploads/uid-1/${encodeURIComponent("r é.txt")}`)
        const second = storage.requests.at(-1)!
        expect(second.method).toBe("GET")
        expect(second.url).toBe("/o/key-1?sig=get")
        for (const hop of [first, second]) {
          expect(Object.keys(hop.headers).filter((h) => !TRANSPORT_HEADERS.has(h))).toEqual([])
        }
      }))
  })
})
