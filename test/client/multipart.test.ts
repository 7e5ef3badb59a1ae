import busboy from "busboy"
import { describe, expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import { writeFileSync } from "node:fs"
import { join } from "node:path"
import { checkMultipartLimits, GraphqlClient } from "../../src/client/graphql-client.ts"
import { buildMultipart, fromBytes, fromPath, fromStream, type MultipartBody, type MultipartFile } from "../../src/client/multipart.ts"
import { RestClient } from "../../src/client/rest-client.ts"
import { decodeFormFileName, FORM_NAME_READING } from "../../src/emulator/graphql/multipart.ts"
import { Emulator, tempDir } from "../support/effect.ts"
import { clientFailure, withClient, layerFor, json, recordingServer, testEmulatorLayer } from "./helpers.ts"

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

const boundaryOf = (contentType: string | undefined): string => {
  const m = /boundary=(.+)$/.exec(contentType ?? "")
  if (m === null) throw new Error(`no boundary in ${contentType}`)
  return m[1]!
}

// Real HTTP to the emulator: the live clock (no TestClock), or the client's timeouts and
// retries would never fire.
layer(testEmulatorLayer({ seed: "empty" }), { timeout: 30_000, excludeTestServices: true })((it) => {
  describe("multipart layout (byte for byte, as received by a test server)", () => {
    // R-UPLOAD-MULTIPART-01 R-UPLOAD-MULTIPART-02 R-UPLOAD-MULTIPART-03 R-UPLOAD-MULTIPART-04 R-UPLOAD-MULTIPART-05
    it.effect("R-UPLOAD-MULTIPART-01..05: uploadFile sends operations (file null), map, then the file part", () =>
      Effect.gen(function*() {
        const emu = yield* Emulator
        const server = yield* recordingServer((_r, res) => json(res, 200, { data: { uploadFile: FILE } }))
        const layer = layerFor({ ...emu, baseUrl: server.url })
        const file = yield* withClient(layer, Effect.flatMap(GraphqlClient, (c) => c.uploadFile({ file: fromBytes("a.txt", enc.encode("hello")), projectId: "p" })))
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
      }))

    it.effect("R-UPLOAD-MULTIPART-09: uploadFiles maps part i to variables.input.files.i; files come from disk and streams", () =>
      Effect.gen(function*() {
        const emu = yield* Emulator
        const dir = yield* tempDir("worksync-multipart-")
        const server = yield* recordingServer((_r, res) => json(res, 200, { data: { uploadFiles: [FILE, FILE] } }))
        const path = join(dir, "disk.csv")
        writeFileSync(path, "a,b\n1,2\n")
        const onDisk = yield* fromPath(path)
        const streamed = fromStream("s.bin", Stream.make(enc.encode("ab"), enc.encode("cd")), 4, "application/x-test")
        const layer = layerFor({ ...emu, baseUrl: server.url })
        yield* withClient(layer, Effect.flatMap(GraphqlClient, (c) => c.uploadFiles({ files: [onDisk, streamed], projectId: "p" })))
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
      }))

    it.effect("a stream of unknown size is sent without Content-Length (chunked)", () =>
      Effect.gen(function*() {
        const emu = yield* Emulator
        const server = yield* recordingServer((_r, res) => json(res, 200, { data: { uploadFile: FILE } }))
        const layer = layerFor({ ...emu, baseUrl: server.url })
        yield* withClient(layer, Effect.flatMap(GraphqlClient, (c) => c.uploadFile({ file: fromStream("x.txt", Stream.make(enc.encode("xyz"))), projectId: "p" })))
        const r = server.requests[0]!
        expect(r.headers["content-length"]).toBeUndefined()
        expect(r.body.toString()).toContain("\r\n\r\nxyz\r\n")
      }))
  })

  /**
   * File names as browsers send them (WHATWG multipart/form-data encoding, RFC 7578): raw
   * UTF-8, only `"`, CR and LF escaped, never `filename*`. Each file holds different
   * bytes, every byte value among them, so a mixed-up or re-encoded part shows.
   */
  const BROWSER_NAMES = ["Café — 1.txt", "李.pdf", 'say "hi".txt', "📎 notes.md", "C:\\temp\\back\\slash.txt", "two\r\nlines.txt"]
  const bytesOf = (i: number): Uint8Array => Uint8Array.from({ length: 256 + i }, (_, j) => (j * 7 + i) % 256)
  const browserFiles = (): Array<MultipartFile> =>
    BROWSER_NAMES.map((name, i) => ({ source: fromBytes(name, bytesOf(i)), paths: [`variables.input.files.${i}`] }))

  const collectBody = (body: MultipartBody) =>
    Effect.map(Stream.runCollect(body.stream), (chunks) => Buffer.concat([...chunks].map((c) => Buffer.from(c))))

  /** The parts as busboy reads them, the way the emulator configures and decodes it. */
  const readWithBusboy = (contentType: string, bytes: Buffer): Promise<Map<string, { name: string; bytes: Buffer }>> =>
    new Promise((resolve, reject) => {
      const parts = new Map<string, { name: string; bytes: Buffer }>()
      const bb = busboy({ headers: { "content-type": contentType }, ...FORM_NAME_READING })
      bb.on("file", (field, stream, info) => {
        const chunks: Array<Buffer> = []
        stream.on("data", (c: Buffer) => chunks.push(c))
        stream.on("end", () => parts.set(field, { name: decodeFormFileName(info.filename ?? ""), bytes: Buffer.concat(chunks) }))
      })
      bb.on("error", reject)
      bb.on("close", () => resolve(parts))
      bb.end(bytes)
    })

  describe("file names as browsers send them (RFC 7578, WHATWG form encoding)", () => {
    it.effect("R-UPLOAD-MULTIPART-14: names travel raw in filename=\"...\" with only \", CR and LF escaped, never filename*", () =>
      Effect.gen(function*() {
        const body = buildMultipart({ query: "q", variables: {} }, browserFiles(), "B")
        const bytes = yield* collectBody(body)
        const text = bytes.toString("utf8")
        expect(text).not.toContain("filename*")
        expect(text).toContain(`name="0"; filename="Café — 1.txt"\r\n`)
        expect(text).toContain(`name="2"; filename="say %22hi%22.txt"\r\n`)
        expect(text).toContain(`name="4"; filename="C:\\temp\\back\\slash.txt"\r\n`)
        expect(text).toContain(`name="5"; filename="two%0D%0Alines.txt"\r\n`)
        expect(body.contentLength).toBe(bytes.byteLength)
      }))

    it.effect("R-UPLOAD-MULTIPART-14: Node's Request.formData() reads back every name and every byte exactly", () =>
      Effect.gen(function*() {
        const body = buildMultipart({ query: "q", variables: {} }, browserFiles())
        const bytes = yield* collectBody(body)
        const form = yield* Effect.promise(() => new Request("http://127.0.0.1/graphql", { method: "POST", headers: { "content-type": body.contentType }, body: bytes }).formData())
        for (const [i, name] of BROWSER_NAMES.entries()) {
          const file = form.get(String(i))
          expect(file).toBeInstanceOf(File)
          expect((file as File).name).toBe(name)
          expect(new Uint8Array(yield* Effect.promise(() => (file as File).arrayBuffer()))).toEqual(bytesOf(i))
        }
      }))

    it.effect("R-UPLOAD-MULTIPART-14: busboy, read as the emulator reads it, gets every name and every byte exactly", () =>
      Effect.gen(function*() {
        const body = buildMultipart({ query: "q", variables: {} }, browserFiles())
        const bytes = yield* collectBody(body)
        const parts = yield* Effect.promise(() => readWithBusboy(body.contentType, bytes))
        expect([...parts.keys()].sort()).toEqual(BROWSER_NAMES.map((_, i) => String(i)).sort())
        for (const [i, name] of BROWSER_NAMES.entries()) {
          expect(parts.get(String(i))?.name).toBe(name)
          expect(new Uint8Array(parts.get(String(i))!.bytes)).toEqual(bytesOf(i))
        }
      }))

    it.effect("R-UPLOAD-MULTIPART-14: uploaded to the emulator, the files keep their exact names in the GraphQL answer and in list-files", () =>
      Effect.gen(function*() {
        const emu = yield* Emulator
        const ws = emu.workspaces[0]!
        const layer = layerFor(emu)
        const uploaded = yield* withClient(layer, Effect.flatMap(GraphqlClient, (c) => c.uploadFiles({ files: browserFiles().map((f) => f.source), projectId: ws })))
        expect(uploaded.map((f) => f.name)).toEqual(BROWSER_NAMES)
        expect(uploaded.map((f) => f.size)).toEqual(BROWSER_NAMES.map((_, i) => bytesOf(i).byteLength))
        const listed = yield* withClient(layer, Effect.flatMap(RestClient, (c) => c.listFiles({ workspaceId: ws, limit: 100 })))
        const nameOf = new Map(listed.items.map((f) => [f.uid, f.name]))
        expect(uploaded.map((f) => nameOf.get(f.uid))).toEqual(BROWSER_NAMES)
      }))
  })

  describe("multipart against the emulator", () => {
    // R-UPLOAD-MULTIPART-05 R-UPLOAD-MULTIPART-09
    it.effect("R-UPLOAD-MULTIPART-05/09: uploadFile and uploadFiles land CONFIRMED files in the workspace", () =>
      Effect.gen(function*() {
        const emu = yield* Emulator
        const ws = emu.workspaces[0]!
        const dir = yield* tempDir("worksync-multipart-")
        const layer = layerFor(emu)
        const one = yield* withClient(layer, Effect.flatMap(GraphqlClient, (c) => c.uploadFile({ file: fromBytes("note.txt", enc.encode("hello world")), projectId: ws })))
        expect(one).toMatchObject({ name: "note.txt", size: 11, extension: "txt", status: "CONFIRMED" })
        expect(one.project?.id).toBe(ws)
        const path = join(dir, "data.csv")
        writeFileSync(path, "x\n".repeat(1000))
        const many = yield* withClient(
          layer,
          Effect.gen(function*() {
            const disk = yield* fromPath(path)
            return yield* Effect.flatMap(GraphqlClient, (c) => c.uploadFiles({ files: [disk, fromBytes("b.txt", enc.encode("b"))], projectId: ws }))
          })
        )
        expect(many.map((f) => f.name)).toEqual(["data.csv", "b.txt"])
        expect(many[0]!.size).toBe(2000)
      }))

    it.effect("R-UPLOAD-MULTIPART-08: an organization-level file (no projectId) decodes with project null", () =>
      Effect.gen(function*() {
        const emu = yield* Emulator
        const file = yield* withClient(layerFor(emu), Effect.flatMap(GraphqlClient, (c) => c.uploadFile({ file: fromBytes("org.txt", enc.encode("o")) })))
        expect(file.project).toBe(null)
      }))
  })

  describe("client-side limits, checked before any byte is sent", () => {
    // 256 MB and 1 GB are read as 256,000,000 and 1,000,000,000 bytes (assumptions.ts
    // SIZE_UNITS: decimal, the smaller reading), so nothing we send is over a stricter reading.
    const sized = (name: string, size: number) => fromStream(name, Stream.empty, size)

    it.effect("R-LIMIT-01, R-GQL-ERR-02: a file of 256,000,001 bytes is LimitExceeded naming the file", () =>
      Effect.gen(function*() {
        const emu = yield* Emulator
        const server = yield* recordingServer((_r, res) => json(res, 200, {}))
        const huge = sized("huge.bin", 256_000_001)
        const e = yield* clientFailure(layerFor({ ...emu, baseUrl: server.url }), Effect.flatMap(GraphqlClient, (c) => c.uploadFile({ file: huge, projectId: "p" })))
        expect(e._tag).toBe("LimitExceeded")
        expect(e.message).toContain("huge.bin")
        expect(server.requests.length).toBe(0)
      }))

    it.effect("R-LIMIT-01, R-LIMIT-03: exactly 256,000,000 bytes per file and 1,000,000,000 per batch pass the check; one byte more does not", () =>
      Effect.gen(function*() {
        const check = (operation: string, sizes: ReadonlyArray<number>) =>
          Effect.result(checkMultipartLimits(operation, sizes.map((n, i) => sized(`f${i}.bin`, n))))
        expect((yield* check("uploadFile", [256_000_000]))._tag).toBe("Success")
        expect((yield* check("uploadFile", [256_000_001]))._tag).toBe("Failure")
        expect((yield* check("uploadFiles", [250_000_000, 250_000_000, 250_000_000, 250_000_000]))._tag).toBe("Success")
        expect((yield* check("uploadFiles", [250_000_000, 250_000_000, 250_000_000, 250_000_000, 1]))._tag).toBe("Failure")
      }))

    it.effect("R-LIMIT-02, R-GQL-ERR-03: a batch of 11 files is LimitExceeded", () =>
      Effect.gen(function*() {
        const emu = yield* Emulator
        const server = yield* recordingServer((_r, res) => json(res, 200, {}))
        const files = Array.from({ length: 11 }, (_, i) => fromBytes(`f${i}.txt`, enc.encode("x")))
        const e = yield* clientFailure(layerFor({ ...emu, baseUrl: server.url }), Effect.flatMap(GraphqlClient, (c) => c.uploadFiles({ files, projectId: "p" })))
        expect(e._tag).toBe("LimitExceeded")
        expect(e.message).toContain("11 files")
        expect(server.requests.length).toBe(0)
      }))

    it.effect("R-LIMIT-03, R-GQL-ERR-04: a batch of 1,000,000,001 bytes in total is LimitExceeded", () =>
      Effect.gen(function*() {
        const emu = yield* Emulator
        const server = yield* recordingServer((_r, res) => json(res, 200, {}))
        const files = [...Array.from({ length: 4 }, (_, i) => sized(`part${i}.bin`, 250_000_000)), sized("one-more.bin", 1)]
        const e = yield* clientFailure(layerFor({ ...emu, baseUrl: server.url }), Effect.flatMap(GraphqlClient, (c) => c.uploadFiles({ files, projectId: "p" })))
        expect(e._tag).toBe("LimitExceeded")
        if (e._tag === "LimitExceeded") {
          expect(e.limit).toContain("1 GB")
          expect(e.max).toBe(1_000_000_000)
        }
        expect(server.requests.length).toBe(0)
      }))
  })
})
