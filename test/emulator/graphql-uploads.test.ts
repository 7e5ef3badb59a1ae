import { readdirSync } from "node:fs"
import { request as httpRequest } from "node:http"
import { Readable } from "node:stream"
import { describe, expect, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import type { EmulatorHandle } from "../../src/emulator/index.ts"
import { insertFolder, storageKeyFor } from "../../src/emulator/uploads/files.ts"
import { Emulator, emulatorLayer } from "../support/effect.ts"
import { codeOf, gql, makeUser, upload, UPLOAD_FILE, UPLOAD_FILES, uploadSmall } from "./graphql-support.ts"

let h: EmulatorHandle
let ws: string
let wsSlug: string

// The helpers below read the file's emulator, and what the set-up derives from it, from these
// bindings: the layer fills them once the emulator is up and closes it after the last test.
const fileLayer = Layer.effectDiscard(
  Effect.gen(function* () {
    h = yield* Emulator
    ws = h.workspaces[0]!
    wsSlug = (h.ctx.db.prepare("SELECT slug FROM workspaces WHERE id = ?").get(ws) as { slug: string }).slug
  })
).pipe(Layer.provideMerge(emulatorLayer({ variant: "reference", timeScale: 0.01 })))

const fileCount = () => (h.ctx.db.prepare("SELECT count(*) AS n FROM files").get() as { n: number }).n
const fileRow = (id: string) => h.ctx.db.prepare("SELECT * FROM files WHERE id = ?").get(id) as Record<string, unknown>

const readObject = (key: string): Promise<Buffer> =>
  new Promise((resolve, reject) => {
    const chunks: Array<Buffer> = []
    const stream = h.ctx.objects.read(key)
    stream.on("data", (c: Buffer) => chunks.push(c))
    stream.on("end", () => resolve(Buffer.concat(chunks)))
    stream.on("error", reject)
  })

/**
 * A hand-written multipart request: the operations and map parts, then one file part
 * whose bytes come from `fileBytes`. With `declaredLength` the request announces that
 * Content-Length (and sends only the head); without it the body is chunked. Resolves
 * with the answer as soon as it arrives, without finishing the body.
 */
const rawMultipart = (
  operations: unknown,
  map: Record<string, Array<string>>,
  files: number,
  options: { declaredLength?: number; fileBytes?: number }
): Promise<{ status: number; body: any; sent: number }> =>
  new Promise((resolve, reject) => {
    const boundary = "----worksyncBoundary7MA4YWxkTrZu0gW"
    const head =
      `--${boundary}\r\nContent-Disposition: form-data; name="operations"\r\n\r\n${JSON.stringify(operations)}\r\n` +
      `--${boundary}\r\nContent-Disposition: form-data; name="map"\r\n\r\n${JSON.stringify(map)}\r\n`
    const partHead = (i: number) =>
      `--${boundary}\r\nContent-Disposition: form-data; name="${i}"; filename="big${i}.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`
    const url = new URL(`${h.baseUrl}/graphql`)
    const headers: Record<string, string | number> = {
      "content-type": `multipart/form-data; boundary=${boundary}`,
      "svc-token-id": h.tokenId,
      "svc-token-secret": h.tokenSecret
    }
    if (options.declaredLength !== undefined) headers["content-length"] = options.declaredLength
    let sent = 0
    let answered = false
    const req = httpRequest({ host: url.hostname, port: url.port, path: "/graphql", method: "POST", headers }, (res) => {
      answered = true
      let text = ""
      res.setEncoding("utf8").on("data", (d: string) => (text += d))
      res.on("end", () => {
        req.destroy()
        resolve({ status: res.statusCode ?? 0, body: JSON.parse(text), sent })
      })
    })
    req.on("error", (e) => {
      if (!answered) reject(e)
    })
    req.write(head + partHead(0))
    if (options.fileBytes === undefined) return
    // Stream zeros with backpressure until the server answers.
    const chunk = Buffer.alloc(1024 * 1024)
    let left = options.fileBytes
    const pump = () => {
      while (!answered && left > 0) {
        const piece = left >= chunk.length ? chunk : chunk.subarray(0, left)
        left -= piece.length
        sent += piece.length
        if (!req.write(piece)) return void req.once("drain", pump)
      }
      if (!answered && left === 0) req.end(`\r\n--${boundary}--\r\n`)
    }
    pump()
    void files
  })

// Real HTTP and real waits: the live clock (no TestClock), so timers and time scales run.
layer(fileLayer, { timeout: 30_000, excludeTestServices: true })((it) => {
  describe("uploadFile and uploadFiles (multipart)", () => {
    it.effect("R-UPLOAD-MULTIPART-01: a multipart/form-data POST to /graphql following the convention uploads a file", () => Effect.promise(async () => {
      const r = await upload(h, UPLOAD_FILE, { input: { file: null, companyId: h.org, projectId: ws } }, [
        { path: "variables.input.file", name: "a.txt", bytes: "alpha" }
      ])
      expect(r.status).toBe(200)
      expect(r.body.errors).toBeUndefined()
      expect(r.body.data?.["uploadFile"].name).toBe("a.txt")
    }))

    it.effect("R-UPLOAD-MULTIPART-02: `operations` carries query and variables with the file variable null", () => Effect.promise(async () => {
      const r = await rawMultipart({ query: UPLOAD_FILE, variables: { input: { file: null, companyId: h.org } } }, { "0": ["variables.input.file"] }, 1, {
        fileBytes: 3
      })
      expect(r.body.errors).toBeUndefined()
      expect(r.body.data.uploadFile.size).toBe(3)
      const inline = await gql(h, `mutation { uploadFile(input: { file: "x", companyId: "${h.org}" }) { id } }`)
      expect(codeOf(inline)).toBe("GRAPHQL_VALIDATION_FAILED")
    }))

    it.effect("R-UPLOAD-MULTIPART-03: `map` names, per part, the variable paths the part fills", () => Effect.promise(async () => {
      const form = new FormData()
      form.append("operations", JSON.stringify({ query: UPLOAD_FILE, variables: { input: { file: null, companyId: h.org, projectId: ws } } }))
      form.append("map", JSON.stringify({ picture: ["variables.input.file"] }))
      form.append("picture", new Blob([Buffer.from("pixels")], { type: "image/png" }), "p.png")
      const res = await fetch(`${h.baseUrl}/graphql`, {
        method: "POST",
        headers: { "svc-token-id": h.tokenId, "svc-token-secret": h.tokenSecret },
        body: form
      })
      const body = (await res.json()) as any
      expect(body.data.uploadFile).toMatchObject({ name: "p.png", size: 6, type: "image/png" })
      const badPath = new FormData()
      badPath.append("operations", JSON.stringify({ query: UPLOAD_FILE, variables: { input: { file: null, companyId: h.org } } }))
      badPath.append("map", JSON.stringify({ "0": ["variables.nothing.here"] }))
      badPath.append("0", new Blob(["x"]), "x.txt")
      const bad = (await (
        await fetch(`${h.baseUrl}/graphql`, { method: "POST", headers: { "svc-token-id": h.tokenId, "svc-token-secret": h.tokenSecret }, body: badPath })
      ).json()) as any
      expect(bad.errors[0].extensions.code).toBe("BAD_USER_INPUT")
    }))

    it.effect("R-UPLOAD-MULTIPART-04: each file is its own part, stored byte for byte", () => Effect.promise(async () => {
      const one = Buffer.from("first file \u00e9")
      const two = Buffer.alloc(200_000, 7)
      const r = await upload(h, UPLOAD_FILES, { input: { files: [null, null], companyId: h.org, projectId: ws } }, [
        { path: "variables.input.files.0", name: "one.txt", bytes: one },
        { path: "variables.input.files.1", name: "two.bin", bytes: two }
      ])
      const [f1, f2] = r.body.data?.["uploadFiles"] as Array<{ uid: string; size: number }>
      expect(await readObject(storageKeyFor(f1!.uid))).toEqual(one)
      expect(await readObject(storageKeyFor(f2!.uid))).toEqual(two)
      expect([f1!.size, f2!.size]).toEqual([one.length, two.length])
    }))

    it.effect("R-UPLOAD-MULTIPART-05: uploadFile maps its part to variables.input.file and returns a File", () => Effect.promise(async () => {
      const r = await upload(h, UPLOAD_FILE, { input: { file: null, companyId: h.org, projectId: ws } }, [
        { path: "variables.input.file", name: "five.txt", bytes: "55555" }
      ])
      const file = r.body.data?.["uploadFile"]
      expect(file).toMatchObject({ name: "five.txt", size: 5, status: "CONFIRMED" })
      expect(fileRow(file.id)["uid"]).toBe(file.uid)
    }))

    it.effect("R-UPLOAD-MULTIPART-06: UploadFileInput requires file and companyId", () => Effect.promise(async () => {
      const noFile = await gql(h, `mutation($input: UploadFileInput!) { uploadFile(input: $input) { id } }`, {
        input: { companyId: h.org }
      })
      expect(codeOf(noFile)).toBe("BAD_USER_INPUT")
      const noCompany = await upload(h, UPLOAD_FILE, { input: { file: null } }, [
        { path: "variables.input.file", name: "x.txt", bytes: "x" }
      ])
      expect(codeOf(noCompany)).toBe("BAD_USER_INPUT")
      const bySlug = await upload(h, UPLOAD_FILE, { input: { file: null, companyId: h.orgSlug } }, [
        { path: "variables.input.file", name: "x.txt", bytes: "x" }
      ])
      expect(bySlug.body.errors).toBeUndefined()
    }))

    it.effect("R-UPLOAD-MULTIPART-07: uploadFile with projectId (id or slug) stores the file in that workspace", () => Effect.promise(async () => {
      for (const ref of [ws, wsSlug]) {
        const r = await upload(h, UPLOAD_FILE, { input: { file: null, companyId: h.org, projectId: ref } }, [
          { path: "variables.input.file", name: "w.txt", bytes: "w" }
        ])
        expect(r.body.data?.["uploadFile"].project).toEqual({ id: ws })
        expect(fileRow(r.body.data?.["uploadFile"].id)["workspace_id"]).toBe(ws)
      }
    }))

    it.effect("R-UPLOAD-MULTIPART-08: uploadFile without projectId creates an organization-level file", () => Effect.promise(async () => {
      const r = await upload(h, UPLOAD_FILE, { input: { file: null, companyId: h.org } }, [
        { path: "variables.input.file", name: "org.txt", bytes: "org" }
      ])
      const file = r.body.data?.["uploadFile"]
      expect(file.project).toBeNull()
      const row = fileRow(file.id)
      expect(row["workspace_id"]).toBeNull()
      expect(row["org_id"]).toBe(h.org)
    }))

    it.effect("R-UPLOAD-MULTIPART-09: uploadFiles maps each part to variables.input.files.<index> and returns the Files in order", () => Effect.promise(async () => {
      const r = await upload(h, UPLOAD_FILES, { input: { files: [null, null, null], companyId: h.org, projectId: ws } }, [
        { path: "variables.input.files.0", name: "0.txt", bytes: "a" },
        { path: "variables.input.files.1", name: "1.txt", bytes: "bb" },
        { path: "variables.input.files.2", name: "2.txt", bytes: "ccc" }
      ])
      expect(r.body.data?.["uploadFiles"].map((f: { name: string; size: number }) => [f.name, f.size])).toEqual([
        ["0.txt", 1],
        ["1.txt", 2],
        ["2.txt", 3]
      ])
    }))

    it.effect("R-UPLOAD-MULTIPART-10: UploadFilesInput requires files, companyId and projectId, each id accepting a slug", () => Effect.promise(async () => {
      const noProject = await upload(h, UPLOAD_FILES, { input: { files: [null], companyId: h.org } }, [
        { path: "variables.input.files.0", name: "x.txt", bytes: "x" }
      ])
      expect(codeOf(noProject)).toBe("BAD_USER_INPUT")
      const slugs = await upload(h, UPLOAD_FILES, { input: { files: [null], companyId: h.orgSlug, projectId: wsSlug } }, [
        { path: "variables.input.files.0", name: "x.txt", bytes: "x" }
      ])
      expect(slugs.body.errors).toBeUndefined()
      expect(slugs.body.data?.["uploadFiles"][0].project.id).toBe(ws)
    }))

    it.effect("R-UPLOAD-MULTIPART-11: every file of one uploadFiles call lands in the projectId workspace", () => Effect.promise(async () => {
      const other = h.admin.createWorkspace({ name: "Uploads Elsewhere" })
      const r = await upload(h, UPLOAD_FILES, { input: { files: [null, null], companyId: h.org, projectId: other.slug } }, [
        { path: "variables.input.files.0", name: "a.txt", bytes: "a" },
        { path: "variables.input.files.1", name: "b.txt", bytes: "b" }
      ])
      for (const f of r.body.data?.["uploadFiles"] as Array<{ id: string; project: { id: string } }>) {
        expect(f.project.id).toBe(other.id)
        expect(fileRow(f.id)["workspace_id"]).toBe(other.id)
      }
    }))

    it.effect("R-UPLOAD-MULTIPART-12: a File exposes id, uid, name, size, type, extension, shared, status, createdAt, project, folder", () => Effect.promise(async () => {
      const r = await upload(h, UPLOAD_FILE, { input: { file: null, companyId: h.org, projectId: ws } }, [
        { path: "variables.input.file", name: "fields.txt", bytes: "fields" }
      ])
      const file = r.body.data?.["uploadFile"]
      expect(Object.keys(file).sort()).toEqual(
        ["createdAt", "extension", "folder", "id", "name", "project", "shared", "size", "status", "type", "uid"].sort()
      )
      expect(typeof file.id).toBe("string")
      expect(Number.isNaN(Date.parse(file.createdAt))).toBe(false)
    }))

    it.effect("R-UPLOAD-MULTIPART-13: the uid builds the download URL", () => Effect.promise(async () => {
      const file = await uploadSmall(h, ws, "download me.txt", "downloaded bytes")
      const res = await fetch(`${h.baseUrl}/uploads/${file.uid}/${encodeURIComponent(file.name)}`, { redirect: "manual" })
      expect([301, 302, 303, 307, 308]).toContain(res.status)
      const target = res.headers.get("location")!
      expect(target.startsWith(h.storageUrl)).toBe(true)
      expect(await (await fetch(target)).text()).toBe("downloaded bytes")
    }))

    it.effect("R-UPLOAD-MULTIPART-14: name is the original filename", () => Effect.promise(async () => {
      const file = await uploadSmall(h, ws, "Résumé final (2).txt")
      expect(file.name).toBe("Résumé final (2).txt")
    }))

    it.effect("R-UPLOAD-MULTIPART-15: size is the size in bytes", () => Effect.promise(async () => {
      const file = await uploadSmall(h, ws, "bytes.txt", "\u00e9\u00e9\u00e9")
      expect(file.size).toBe(6)
    }))

    it.effect("R-UPLOAD-MULTIPART-16: type is the MIME type (from the part, else from the name)", () => Effect.promise(async () => {
      const r = await upload(h, UPLOAD_FILES, { input: { files: [null, null], companyId: h.org, projectId: ws } }, [
        { path: "variables.input.files.0", name: "x.csv", bytes: "a,b", type: "text/csv" },
        { path: "variables.input.files.1", name: "photo.png", bytes: "png", type: "application/octet-stream" }
      ])
      expect(r.body.data?.["uploadFiles"].map((f: { type: string }) => f.type)).toEqual(["text/csv", "image/png"])
    }))

    it.effect("R-UPLOAD-MULTIPART-17: extension has no leading dot", () => Effect.promise(async () => {
      const file = await uploadSmall(h, ws, "archive.tar.GZ")
      expect(file.extension).toBe("gz")
      const created = await gql(h, CREATE_FILE, { input: { ...(await storedObject("x")), extension: ".txt", companyId: h.org, projectId: ws } })
      expect(created.body.data?.["createFile"].extension).toBe("txt")
    }))

    it.effect("R-UPLOAD-MULTIPART-18: shared defaults to false, also when createFile omits it", () => Effect.promise(async () => {
      const uploaded = await uploadSmall(h, ws)
      expect(fileRow(uploaded.id)["shared"]).toBe(0)
      const omitted = await gql(h, CREATE_FILE, { input: { ...(await storedObject("s")), companyId: h.org, projectId: ws } })
      expect(omitted.body.data?.["createFile"].shared).toBe(false)
      const shared = await gql(h, CREATE_FILE, { input: { ...(await storedObject("t")), companyId: h.org, projectId: ws, shared: true } })
      expect(shared.body.data?.["createFile"].shared).toBe(true)
    }))

    it.effect("R-UPLOAD-MULTIPART-19: project is the owning workspace", () => Effect.promise(async () => {
      const r = await upload(h, UPLOAD_FILE, { input: { file: null, companyId: h.org, projectId: ws } }, [
        { path: "variables.input.file", name: "p.txt", bytes: "p" }
      ])
      const q = await gql(h, `mutation($input: UploadFileInput!) { uploadFile(input: $input) { project { id slug name } } }`, {
        input: { file: null, companyId: h.org, projectId: ws }
      })
      expect(codeOf(q)).toBe("BAD_USER_INPUT") // a JSON call carries no file part
      expect(r.body.data?.["uploadFile"].project.id).toBe(ws)
    }))

    it.effect("R-UPLOAD-MULTIPART-20: a newly uploaded file is in no folder", () => Effect.promise(async () => {
      const r = await upload(h, UPLOAD_FILE, { input: { file: null, companyId: h.org, projectId: ws } }, [
        { path: "variables.input.file", name: "f.txt", bytes: "f" }
      ])
      expect(r.body.data?.["uploadFile"].folder).toBeNull()
      expect(fileRow(r.body.data?.["uploadFile"].id)["folder_id"]).toBeNull()
    }))
  })

  const CREATE_FILE = `mutation($input: CreateFileInput!) {
  createFile(input: $input) { id uid name size type extension shared status project { id } folder { id name } }
}`

  /** Puts bytes into storage directly (an object that exists outside any upload) and describes it. */
  const storedObject = async (seed: string) => {
    const uid = `obj${seed}${Math.random().toString(36).slice(2, 10)}`
    await h.ctx.objects.put(storageKeyFor(uid), Readable.from([Buffer.from(`stored ${seed}`)]))
    return { uid, name: `${seed}.txt`, size: `stored ${seed}`.length, type: "text/plain", extension: "txt" }
  }

  describe("createFile", () => {
    it.effect("R-UPLOAD-MULTIPART-21: createFile registers an object already in storage and returns a File", () => Effect.promise(async () => {
      const object = await storedObject("reg")
      const r = await gql(h, CREATE_FILE, { input: { ...object, companyId: h.org, projectId: ws } })
      expect(r.body.errors).toBeUndefined()
      expect(r.body.data?.["createFile"]).toMatchObject({ uid: object.uid, name: object.name, size: object.size, status: "CONFIRMED" })
      const missing = await gql(h, CREATE_FILE, {
        input: { uid: "never-stored", name: "n.txt", size: 1, type: "text/plain", extension: "txt", companyId: h.org, projectId: ws }
      })
      expect(codeOf(missing)).toBe("BAD_USER_INPUT")
    }))

    it.effect("R-UPLOAD-MULTIPART-22: CreateFileInput requires uid, name, size, type, extension, companyId and projectId", () => Effect.promise(async () => {
      const object = await storedObject("req")
      for (const key of ["uid", "name", "size", "type", "extension", "companyId", "projectId"]) {
        const input: Record<string, unknown> = { ...object, companyId: h.org, projectId: ws }
        delete input[key]
        const r = await gql(h, CREATE_FILE, { input })
        expect(codeOf(r), key).toBe("BAD_USER_INPUT")
      }
    }))

    it.effect("R-UPLOAD-MULTIPART-23: createFile with folderId places the file in that folder", () => Effect.promise(async () => {
      const folder = insertFolder(h.ctx, { workspaceId: ws, name: "Invoices" })
      const r = await gql(h, CREATE_FILE, { input: { ...(await storedObject("fold")), companyId: h.org, projectId: ws, folderId: folder.id } })
      expect(r.body.data?.["createFile"].folder).toEqual({ id: folder.id, name: "Invoices" })
      const elsewhere = await gql(h, CREATE_FILE, { input: { ...(await storedObject("nofold")), companyId: h.org, projectId: ws, folderId: "nope" } })
      expect(codeOf(elsewhere)).toBe("BAD_USER_INPUT")
    }))

    it.effect("R-UPLOAD-MULTIPART-24: createFile with documentId associates the file with that document", () => Effect.promise(async () => {
      const now = new Date().toISOString()
      h.ctx.db
        .prepare("INSERT INTO documents (id, workspace_id, title, html, created_at, updated_at) VALUES (?, ?, ?, '', ?, ?)")
        .run("d0c0000000000000000000aa", ws, "Spec", now, now)
      const r = await gql(h, CREATE_FILE, {
        input: { ...(await storedObject("doc")), companyId: h.org, projectId: ws, documentId: "d0c0000000000000000000aa" }
      })
      expect(fileRow(r.body.data?.["createFile"].id)["document_id"]).toBe("d0c0000000000000000000aa")
    }))
  })

  describe("file status", () => {
    it.effect("R-FILE-STATUS-01: FileStatus is CONFIRMED or PENDING", () => Effect.promise(async () => {
      const r = await gql(h, `{ __type(name: "FileStatus") { enumValues { name } } }`)
      expect(r.body.data?.["__type"].enumValues.map((v: { name: string }) => v.name).sort()).toEqual(["CONFIRMED", "PENDING"])
    }))

    it.effect("R-FILE-STATUS-02: an accepted upload is CONFIRMED and usable at once", () => Effect.promise(async () => {
      const file = await uploadSmall(h, ws, "now.txt", "usable")
      expect(fileRow(file.id)["status"]).toBe("CONFIRMED")
      const res = await fetch(`${h.baseUrl}/uploads/${file.uid}/now.txt`)
      expect(await res.text()).toBe("usable")
    }))
  })

  describe("upload limits and errors", () => {
    // 256 MB is read as 256,000,000 bytes (assumptions.ts SIZE_UNITS: decimal, the smaller reading).
    it.effect("R-LIMIT-01: a file of exactly 256,000,000 bytes is accepted", () => Effect.promise(async () => {
      const r = await rawMultipart({ query: UPLOAD_FILE, variables: { input: { file: null, companyId: h.org } } }, { "0": ["variables.input.file"] }, 1, {
        fileBytes: 256_000_000
      })
      expect(r.body.errors).toBeUndefined()
      expect(r.body.data.uploadFile.size).toBe(256_000_000)
    }))

    it.effect("R-GQL-ERR-02: a file of 256,000,001 bytes is BAD_USER_INPUT, refused as soon as the stream crosses the limit (R-LIMIT-01)", () => Effect.promise(async () => {
      const before = fileCount()
      const r = await rawMultipart({ query: UPLOAD_FILE, variables: { input: { file: null, companyId: h.org } } }, { "0": ["variables.input.file"] }, 1, {
        fileBytes: 256_000_001
      })
      expect(r.body.errors[0].extensions.code).toBe("BAD_USER_INPUT")
      expect(r.body.errors[0].message).toContain("256 MB (256000000 bytes)")
      expect(fileCount()).toBe(before)
    }))

    it.effect("R-LIMIT-01: a declared body that cannot fit 256,000,000 bytes per file is refused before any file byte", () => Effect.promise(async () => {
      // 260,000,000 bytes: over the decimal limit, under the binary one (268,435,456).
      const r = await rawMultipart({ query: UPLOAD_FILE, variables: { input: { file: null, companyId: h.org } } }, { "0": ["variables.input.file"] }, 1, {
        declaredLength: 260_000_000
      })
      expect(r.body.errors[0].extensions.code).toBe("BAD_USER_INPUT")
      expect(r.sent).toBe(0)
    }))

    it.effect("R-GQL-ERR-03: an uploadFiles batch of more than 10 files is BAD_USER_INPUT; 10 are accepted (R-LIMIT-02)", () => Effect.promise(async () => {
      const files = (n: number) =>
        Array.from({ length: n }, (_, i) => ({ path: `variables.input.files.${i}`, name: `f${i}.txt`, bytes: `${i}` }))
      const eleven = await upload(h, UPLOAD_FILES, { input: { files: Array(11).fill(null), companyId: h.org, projectId: ws } }, files(11))
      expect(codeOf(eleven)).toBe("BAD_USER_INPUT")
      const ten = await upload(h, UPLOAD_FILES, { input: { files: Array(10).fill(null), companyId: h.org, projectId: ws } }, files(10))
      expect(ten.body.errors).toBeUndefined()
      expect(ten.body.data?.["uploadFiles"]).toHaveLength(10)
    }))

    it.effect("R-GQL-ERR-04: an uploadFiles batch over 1,000,000,000 bytes in total is BAD_USER_INPUT, before any file byte (R-LIMIT-03)", () => Effect.promise(async () => {
      const map = Object.fromEntries(Array.from({ length: 5 }, (_, i) => [String(i), [`variables.input.files.${i}`]]))
      // 1,050,000,000 bytes: over the decimal limit, under the binary one (1,073,741,824).
      const r = await rawMultipart(
        { query: UPLOAD_FILES, variables: { input: { files: Array(5).fill(null), companyId: h.org, projectId: ws } } },
        map,
        5,
        { declaredLength: 1_050_000_000 }
      )
      expect(r.body.errors[0].extensions.code).toBe("BAD_USER_INPUT")
      expect(r.body.errors[0].message).toContain("1 GB (1000000000 bytes)")
      expect(r.sent).toBe(0)
    }))

    it.effect("R-GQL-ERR-05: an upload beyond the organization's storage allowance is PLAN_LIMIT_REACHED", () => Effect.promise(async () => {
      const used = (h.ctx.db.prepare("SELECT COALESCE(SUM(size), 0) AS n FROM files WHERE org_id = ?").get(h.org) as { n: number }).n
      h.ctx.limits.storageBytes = used + 10
      try {
        const over = await upload(h, UPLOAD_FILE, { input: { file: null, companyId: h.org, projectId: ws } }, [
          { path: "variables.input.file", name: "big.txt", bytes: "x".repeat(11) }
        ])
        expect(codeOf(over)).toBe("PLAN_LIMIT_REACHED")
        const fits = await upload(h, UPLOAD_FILE, { input: { file: null, companyId: h.org, projectId: ws } }, [
          { path: "variables.input.file", name: "ok.txt", bytes: "x".repeat(10) }
        ])
        expect(fits.body.errors).toBeUndefined()
      } finally {
        h.ctx.limits.storageBytes = null
      }
    }))

    it.effect("R-GQL-ERR-06: a file beyond the per-file tier cap is PLAN_LIMIT_REACHED", () => Effect.promise(async () => {
      h.ctx.limits.perFileBytes = 5
      try {
        const r = await upload(h, UPLOAD_FILES, { input: { files: [null, null], companyId: h.org, projectId: ws } }, [
          { path: "variables.input.files.0", name: "small.txt", bytes: "12345" },
          { path: "variables.input.files.1", name: "large.txt", bytes: "123456" }
        ])
        expect(codeOf(r)).toBe("PLAN_LIMIT_REACHED")
      } finally {
        h.ctx.limits.perFileBytes = null
      }
    }))

    it.effect("R-GQL-ERR-08: an upload by a caller whose workspace role has uploads disabled is FILES_DISABLED_FOR_ROLE", () => Effect.promise(async () => {
      const member = makeUser(h, { workspaces: { [ws]: "MEMBER" } })
      h.admin.setFilesDisabled(ws, member.userId, true)
      const r = await upload(h, UPLOAD_FILE, { input: { file: null, companyId: h.org, projectId: ws } }, [
        { path: "variables.input.file", name: "no.txt", bytes: "no" }
      ], { caller: member })
      expect(codeOf(r)).toBe("FILES_DISABLED_FOR_ROLE")
      h.admin.setFilesDisabled(ws, member.userId, false)
      const allowed = await upload(h, UPLOAD_FILE, { input: { file: null, companyId: h.org, projectId: ws } }, [
        { path: "variables.input.file", name: "yes.txt", bytes: "yes" }
      ], { caller: member })
      expect(allowed.body.errors).toBeUndefined()
    }))

    it.effect("R-GQL-ERR-09: an upload to a projectId that does not resolve is PROJECT_NOT_FOUND", () => Effect.promise(async () => {
      const before = fileCount()
      const r = await upload(h, UPLOAD_FILE, { input: { file: null, companyId: h.org, projectId: "missing-ws" } }, [
        { path: "variables.input.file", name: "x.txt", bytes: "x" }
      ])
      expect(codeOf(r)).toBe("PROJECT_NOT_FOUND")
      expect(fileCount()).toBe(before)
    }))

    it.effect("R-GQL-ERR-10: an upload to a workspace the caller cannot access is PROJECT_NOT_FOUND", () => Effect.promise(async () => {
      const outsider = makeUser(h, { orgLevel: "MEMBER" })
      const r = await upload(h, UPLOAD_FILE, { input: { file: null, companyId: h.org, projectId: ws } }, [
        { path: "variables.input.file", name: "x.txt", bytes: "x" }
      ], { caller: outsider })
      expect(codeOf(r)).toBe("PROJECT_NOT_FOUND")
    }))

    it.effect("R-GQL-ERR-11: a missing (empty) companyId is COMPANY_NOT_FOUND", () => Effect.promise(async () => {
      const r = await upload(h, UPLOAD_FILE, { input: { file: null, companyId: "" } }, [
        { path: "variables.input.file", name: "x.txt", bytes: "x" }
      ])
      expect(codeOf(r)).toBe("COMPANY_NOT_FOUND")
    }))

    it.effect("R-GQL-ERR-12: a companyId that does not resolve is COMPANY_NOT_FOUND", () => Effect.promise(async () => {
      const r = await upload(h, UPLOAD_FILE, { input: { file: null, companyId: "no-such-company" } }, [
        { path: "variables.input.file", name: "x.txt", bytes: "x" }
      ])
      expect(codeOf(r)).toBe("COMPANY_NOT_FOUND")
    }))

    it.effect("R-GQL-ERR-12: a refused upload leaves no stored object behind", () => Effect.promise(async () => {
      const store = h.ctx.objects as unknown as { dir: string }
      const objects = () => readdirSync(store.dir).length
      const before = objects()
      const r = await upload(h, UPLOAD_FILE, { input: { file: null, companyId: "no-such-company" } }, [
        { path: "variables.input.file", name: "x.txt", bytes: "leftover" }
      ])
      expect(codeOf(r)).toBe("COMPANY_NOT_FOUND")
      expect(objects()).toBe(before)
    }))
  })
})
