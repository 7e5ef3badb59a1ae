import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import type { EmulatorHandle } from "../../src/emulator/index.ts"
import { GraphqlClient } from "../../src/client/graphql-client.ts"
import { buildMultipart, fromBytes, fromPath, fromStream } from "../../src/client/multipart.ts"
import { MB } from "../../src/schema/limits.ts"
import { json, layerFor, run, runFailure, startRecordingServer, startTestEmulator } from "./helpers.ts"

const enc = new TextEncoder()
const FILE = {
  id: "f1",
  uid: "u1",
  name: "a.txt",
  size: 5,
  type: "text/plain",
  extension: "txt",
  shared: false,
  status: "CONFIRMED",
  createdAt: "2024-01-01T00:00:00.000Z",
  project: { id: "p" },
  folder: null
}

let emu: EmulatorHandle
let ws: string
let dir: string
beforeAll(async () => {
  emu = await startTestEmulator({ seed: "empty" })
  ws = emu.workspaces[0]!
  dir = mkdtempSync(join(tmpdir(), "worksync-multipart-"))
})
afterAll(() => emu?.close())

const boundaryOf = (contentType: string | undefined): string => {
  const m = /boundary=(.+)$/.exec(contentType ?? "")
  if (m === null) throw new Error(`no boundary in ${contentType}`)
  return m[1]!
}

describe("multipart layout (byte for byte, as received by a test server)", () => {
  // R-UPLOAD-MULTIPART-01 R-UPLOAD-MULTIPART-02 R-UPLOAD-MULTIPART-03 R-UPLOAD-MULTIPART-04 R-UPLOAD-MULTIPART-05
  it("R-UPLOAD-MULTIPART-01..05: uploadFile sends operations (file null), map, then the file part", async () => {
    const server = await startRecordingServer((_r, res) => json(res, 200, { data: { uploadFile: FILE } }))
    try {
      const layer = layerFor({ ...emu, baseUrl: server.url })
      const file = await run(layer, Effect.flatMap(GraphqlClient, (c) => c.uploadFile({ file: fromBytes("a.txt", enc.encode("hello")), projectId: "p" })))
      expect(file.uid).toBe("u1")
      const r = server.requests[0]!
      expect(r.method).toBe("POST")
      expect(r.url).toBe("/graphql")
      expect(r.headers["content-type"]).toMatch(/^multipart\/form-data; boundary=/)
      const b = boundaryOf(r.headers["content-type"])
      const operations = JSON.stringify({
        query: "mutation uploadFile($input: UploadFileInput!) { uploadFile(input: $input) { id uid name size type extension shared status createdAt project { id } folder { id } } }",
        variables: { input: { file: null, companyId: emu.org, projectId: "p" } }
      })
      const expected =
        `--${b}\r\nContent-Disposition: form-data; name="operations"\r\n\r\n${operations}\r\n` +
        `--${b}\r\nContent-Disposition: form-data; name="map"\r\n\r\n{"0":["variables.input.file"]}\r\n` +
        `--${b}\r\nContent-Disposition: form-data; name="0"; filename="a.txt"\r\nContent-Type: text/plain\r\n\r\nhello\r\n` +
        `--${b}--\r\n`
      expect(r.body.toString("utf8")).toBe(expected)
      expect(Number(r.headers["content-length"])).toBe(r.body.length)
      expect(r.headers["svc-token-id"]).toBe(emu.tokenId)
      expect(r.headers["svc-token-secret"]).toBe(emu.tokenSecret)
      expect(r.headers["svc-org-id"]).toBe(emu.org)
      expect(r.headers["svc-workspace-id"]).toBe("p")
    } finally {
      await server.close()
    }
  })

  it("R-UPLOAD-MULTIPART-09: uploadFiles maps part i to variables.input.files.i; files come from disk and streams", async () => {
    const server = await startRecordingServer((_r, res) => json(res, 200, { data: { uploadFiles: [FILE, FILE] } }))
    try {
      const path = join(dir, "disk.csv")
      writeFileSync(path, "a,b\n1,2\n")
      const onDisk = await Effect.runPromise(fromPath(path))
      const streamed = fromStream("s.bin", Stream.make(enc.encode("ab"), enc.encode("cd")), 4, "application/x-test")
      const layer = layerFor({ ...emu, baseUrl: server.url })
      await run(layer, Effect.flatMap(GraphqlClient, (c) => c.uploadFiles({ files: [onDisk, streamed], projectId: "p" })))
      const r = server.requests[0]!
      const b = boundaryOf(r.headers["content-type"])
      const body = r.body.toString("utf8")
      expect(body).toContain(`name="map"\r\n\r\n{"0":["variables.input.files.0"],"1":["variables.input.files.1"]}\r\n`)
      expect(body).toContain(`"variables":{"input":{"files":[null,null],"companyId":"${emu.org}","projectId":"p"}}`)
      expect(body).toContain(
        `--${b}\r\nContent-Disposition: form-data; name="0"; filename="disk.csv"\r\nContent-Type: text/csv\r\n\r\na,b\n1,2\n\r\n`
      )
      expect(body).toContain(
        `--${b}\r\nContent-Disposition: form-data; name="1"; filename="s.bin"\r\nContent-Type: application/x-test\r\n\r\nabcd\r\n--${b}--\r\n`
      )
      expect(Number(r.headers["content-length"])).toBe(r.body.length)
    } finally {
      await server.close()
    }
  })

  it("a stream of unknown size is sent without Content-Length (chunked)", async () => {
    const server = await startRecordingServer((_r, res) => json(res, 200, { data: { uploadFile: FILE } }))
    try {
      const layer = layerFor({ ...emu, baseUrl: server.url })
      await run(layer, Effect.flatMap(GraphqlClient, (c) => c.uploadFile({ file: fromStream("x.txt", Stream.make(enc.encode("xyz"))), projectId: "p" })))
      const r = server.requests[0]!
      expect(r.headers["content-length"]).toBeUndefined()
      expect(r.body.toString()).toContain("\r\n\r\nxyz\r\n")
    } finally {
      await server.close()
    }
  })

  it("a non-ASCII file name also travels as filename* (RFC 5987)", async () => {
    const body = buildMultipart({ query: "q", variables: {} }, [{ source: fromBytes("résumé \"v2\".txt", enc.encode("x")), paths: ["variables.f"] }], "B")
    const chunks = await Effect.runPromise(Stream.runCollect(body.stream))
    const text = Buffer.concat([...chunks].map((c) => Buffer.from(c))).toString("utf8")
    expect(text).toContain(`filename="r_sum_ %22v2%22.txt"; filename*=UTF-8''r%C3%A9sum%C3%A9%20%22v2%22.txt`)
    expect(body.contentLength).toBe(Buffer.byteLength(text))
  })
})

describe("multipart against the emulator", () => {
  // R-UPLOAD-MULTIPART-05 R-UPLOAD-MULTIPART-09
  it("R-UPLOAD-MULTIPART-05/09: uploadFile and uploadFiles land CONFIRMED files in the workspace", async () => {
    const layer = layerFor(emu)
    const one = await run(layer, Effect.flatMap(GraphqlClient, (c) => c.uploadFile({ file: fromBytes("note.txt", enc.encode("hello world")), projectId: ws })))
    expect(one).toMatchObject({ name: "note.txt", size: 11, extension: "txt", status: "CONFIRMED" })
    expect(one.project?.id).toBe(ws)
    const path = join(dir, "data.csv")
    writeFileSync(path, "x\n".repeat(1000))
    const many = await run(
      layer,
      Effect.gen(function*() {
        const disk = yield* fromPath(path)
        return yield* Effect.flatMap(GraphqlClient, (c) => c.uploadFiles({ files: [disk, fromBytes("b.txt", enc.encode("b"))], projectId: ws }))
      })
    )
    expect(many.map((f) => f.name)).toEqual(["data.csv", "b.txt"])
    expect(many[0]!.size).toBe(2000)
  })

  it("R-UPLOAD-MULTIPART-08: an organization-level file (no projectId) decodes with project null", async () => {
    const file = await run(layerFor(emu), Effect.flatMap(GraphqlClient, (c) => c.uploadFile({ file: fromBytes("org.txt", enc.encode("o")) })))
    expect(file.project).toBe(null)
  })
})

describe("client-side limits, checked before any byte is sent", () => {
  it("R-LIMIT-01, R-GQL-ERR-02: a file over 256 MB is LimitExceeded naming the file", async () => {
    const server = await startRecordingServer((_r, res) => json(res, 200, {}))
    try {
      const huge = fromStream("huge.bin", Stream.empty, 256 * MB + 1)
      const e = await runFailure(layerFor({ ...emu, baseUrl: server.url }), Effect.flatMap(GraphqlClient, (c) => c.uploadFile({ file: huge, projectId: "p" })))
      expect(e._tag).toBe("LimitExceeded")
      expect(e.message).toContain("huge.bin")
      expect(server.requests.length).toBe(0)
    } finally {
      await server.close()
    }
  })

  it("R-LIMIT-02, R-GQL-ERR-03: a batch of 11 files is LimitExceeded", async () => {
    const server = await startRecordingServer((_r, res) => json(res, 200, {}))
    try {
      const files = Array.from({ length: 11 }, (_, i) => fromBytes(`f${i}.txt`, enc.encode("x")))
      const e = await runFailure(layerFor({ ...emu, baseUrl: server.url }), Effect.flatMap(GraphqlClient, (c) => c.uploadFiles({ files, projectId: "p" })))
      expect(e._tag).toBe("LimitExceeded")
      expect(e.message).toContain("11 files")
      expect(server.requests.length).toBe(0)
    } finally {
      await server.close()
    }
  })

  it("R-LIMIT-03, R-GQL-ERR-04: a batch over 1 GB in total is LimitExceeded", async () => {
    const server = await startRecordingServer((_r, res) => json(res, 200, {}))
    try {
      const files = Array.from({ length: 5 }, (_, i) => fromStream(`part${i}.bin`, Stream.empty, 250 * MB))
      const e = await runFailure(layerFor({ ...emu, baseUrl: server.url }), Effect.flatMap(GraphqlClient, (c) => c.uploadFiles({ files, projectId: "p" })))
      expect(e._tag).toBe("LimitExceeded")
      if (e._tag === "LimitExceeded") expect(e.limit).toContain("1 GB")
      expect(server.requests.length).toBe(0)
    } finally {
      await server.close()
    }
  })
})
