/**
 * The presigned flow against a real emulator over HTTP: step 1 (`GET /uploads` on both
 * mounts), step 2 (PUT to storage), step 3 (confirm), with every documented status.
 */
import { createHash } from "node:crypto"
import { describe, expect, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import type { EmulatorHandle } from "../../src/emulator/index.ts"
import { getFileByUid, insertForm, storageCredentialLog, storageKeyFor } from "../../src/emulator/uploads/files.ts"
import { Emulator, emulatorLayer } from "../support/effect.ts"

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

type Headers = Record<string, string>

const appHeaders = (extra: Headers = {}): Headers => ({
  "svc-token-id": h.tokenId,
  "svc-token-secret": h.tokenSecret,
  "svc-org-id": h.org,
  "svc-workspace-id": ws,
  ...extra
})

const restHeaders = (extra: Headers = {}): Headers => ({
  authorization: `Bearer ${h.token}`,
  "x-svc-company-id": h.org,
  "x-svc-project-id": ws,
  ...extra
})

const without = (headers: Headers, ...names: Array<string>): Headers =>
  Object.fromEntries(Object.entries(headers).filter(([k]) => !names.includes(k)))

interface Answer {
  url: string
  method: string
  headers: Record<string, string>
  fields: Record<string, string>
}

const presign = (params: Record<string, string>, headers: Headers, base: string = h.baseUrl) =>
  fetch(`${base}/uploads?${new URLSearchParams(params).toString()}`, { headers })

const presignOk = async (params: Record<string, string>, headers: Headers = appHeaders(), base?: string) => {
  const res = await presign(params, headers, base)
  expect(res.status).toBe(200)
  return (await res.json()) as Answer
}

const put = (answer: Answer, bytes: Uint8Array, headers: Headers = answer.headers) =>
  fetch(answer.url, { method: "PUT", headers, body: bytes })

const confirm = (uid: string, headers: Headers, base: string = h.baseUrl, query = "") =>
  fetch(`${base}/uploads/${encodeURIComponent(uid)}/confirm${query}`, { method: "PUT", headers })

const errorCode = async (res: Response): Promise<string> => ((await res.json()) as { error: { code: string } }).error.code

const bytesOf = (n: number, label = "x") => {
  const out = Buffer.alloc(n)
  for (let i = 0; i < n; i++) out[i] = (i * 31 + label.charCodeAt(0)) & 255
  return out
}

const newForm = (active: boolean) => insertForm(h.ctx, { workspaceId: ws, active, createdBy: h.ownerUserId })

// Real HTTP and real waits: the live clock (no TestClock), so timers and time scales run.
layer(fileLayer, { timeout: 30_000, excludeTestServices: true })((it) => {
  describe("presign (GET /uploads)", () => {
    it.effect("R-UPLOAD-PRESIGN-01: GET {base_url}/uploads with filename answers an upload target", () => Effect.promise(async () => {
      const res = await presign({ filename: "plan.txt" }, appHeaders())
      expect(res.status).toBe(200)
      expect(((await res.json()) as Answer).url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\//)
    }))

    it.effect("R-UPLOAD-PRESIGN-06: the answer has keys url, method, headers and fields", () => Effect.promise(async () => {
      const answer = await presignOk({ filename: "keys.txt" })
      expect(Object.keys(answer).sort()).toEqual(["fields", "headers", "method", "url"])
    }))

    it.effect("R-UPLOAD-PRESIGN-08: method is always PUT", () => Effect.promise(async () => {
      for (const filename of ["a.txt", "b.png", "c.zip"]) expect((await presignOk({ filename })).method).toBe("PUT")
    }))

    it.effect("R-UPLOAD-PRESIGN-09: headers is an object with Content-Type", () => Effect.promise(async () => {
      const answer = await presignOk({ filename: "doc.pdf" })
      expect(answer.headers).toEqual({ "Content-Type": "application/pdf" })
    }))

    it.effect("R-UPLOAD-PRESIGN-10: fields hold Content-Type, Key (storage key) and X-Key (file uid)", () => Effect.promise(async () => {
      const answer = await presignOk({ filename: "fields.csv" })
      expect(answer.fields["Content-Type"]).toBe("text/csv")
      const uid = answer.fields["X-Key"]!
      expect(answer.fields.Key).toBe(storageKeyFor(uid))
      expect(getFileByUid(h.ctx.db, uid)?.storageKey).toBe(answer.fields.Key)
    }))

    it.effect("R-UPLOAD-PRESIGN-02: MIME type and extension derive from the filename", () => Effect.promise(async () => {
      const cases: Array<[string, string, string]> = [
        ["Photo.JPG", "image/jpeg", "jpg"],
        ["data.tar.gz", "application/gzip", "gz"],
        ["sheet.xlsx", "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet", "xlsx"],
        ["odd.qqq", "application/octet-stream", "qqq"]
      ]
      for (const [filename, type, extension] of cases) {
        const answer = await presignOk({ filename })
        expect(answer.headers["Content-Type"]).toBe(type)
        const row = getFileByUid(h.ctx.db, answer.fields["X-Key"]!)
        expect(row).toMatchObject({ name: filename, type, extension })
      }
    }))

    it.effect("R-UPLOAD-PRESIGN-03: query key becomes the file's id (uid)", () => Effect.promise(async () => {
      const answer = await presignOk({ filename: "custom.txt", key: "my-custom-key-1" })
      expect(answer.fields["X-Key"]).toBe("my-custom-key-1")
      expect(getFileByUid(h.ctx.db, "my-custom-key-1")?.name).toBe("custom.txt")
    }))

    it.effect("R-UPLOAD-PRESIGN-03: a key in use is refused, except a retried presign of one's own PENDING key", () => Effect.promise(async () => {
      const first = await presignOk({ filename: "retry.txt", key: "retry-key", size: "4" })
      const again = await presignOk({ filename: "retry.txt", key: "retry-key", size: "5" })
      expect(again.fields["X-Key"]).toBe("retry-key")
      expect(again.url).not.toBe(first.url)
      expect(getFileByUid(h.ctx.db, "retry-key")?.declaredSize).toBe(5)
      const other = h.admin.createUser({ email: "key-thief@acme.test", firstName: "Key", lastName: "Thief", workspaces: { [ws]: "MEMBER" } })
      const res = await presign(
        { filename: "retry.txt", key: "retry-key" },
        appHeaders({ "svc-token-id": other.tokenId, "svc-token-secret": other.tokenSecret })
      )
      expect(res.status).toBe(400)
      expect(await errorCode(res)).toBe("KEY_IN_USE")
      expect((await put(again, bytesOf(5))).status).toBe(200)
      expect((await confirm("retry-key", appHeaders())).status).toBe(200)
      expect((await presign({ filename: "retry.txt", key: "retry-key" }, appHeaders())).status).toBe(400)
      expect((await presign({ filename: "bad.txt", key: "../etc/passwd" }, appHeaders())).status).toBe(400)
    }))

    it.effect("R-UPLOAD-PRESIGN-04: without key a file id is generated and returned as X-Key", () => Effect.promise(async () => {
      const a = await presignOk({ filename: "gen.txt" })
      const b = await presignOk({ filename: "gen.txt" })
      expect(a.fields["X-Key"]).toMatch(/^[a-z0-9]+$/)
      expect(a.fields["X-Key"]).not.toBe(b.fields["X-Key"])
      expect(getFileByUid(h.ctx.db, a.fields["X-Key"]!)).not.toBeNull()
    }))

    it.effect("R-FILE-STATUS-03: a valid presign creates a PENDING file row", () => Effect.promise(async () => {
      const answer = await presignOk({ filename: "pending.txt", size: "12" })
      const row = getFileByUid(h.ctx.db, answer.fields["X-Key"]!)
      expect(row).toMatchObject({ status: "PENDING", workspaceId: ws, orgId: h.org, declaredSize: 12 })
    }))

    it.effect("R-UPLOAD-PRESIGN-05: with formId the upload is anonymous (no authentication headers)", () => Effect.promise(async () => {
      const form = newForm(true)
      const answer = await presignOk({ filename: "anon.txt", formId: form.id, size: "3" }, {})
      const row = getFileByUid(h.ctx.db, answer.fields["X-Key"]!)
      expect(row).toMatchObject({ formId: form.id, workspaceId: ws, status: "PENDING" })
    }))

    it.effect("R-UPLOAD-PRESIGN-18: presign without filename is a 400", () => Effect.promise(async () => {
      const res = await presign({}, appHeaders())
      expect(res.status).toBe(400)
      expect((await presign({ filename: "" }, appHeaders())).status).toBe(400)
    }))

    it.effect("R-UPLOAD-PRESIGN-19: neither organization nor workspace header is a 400 saying both IDs are required", () => Effect.promise(async () => {
      const res = await presign({ filename: "a.txt" }, without(appHeaders(), "svc-org-id", "svc-workspace-id"))
      expect(res.status).toBe(400)
      const body = (await res.json()) as { error: { message: string } }
      expect(body.error.message).toMatch(/both/i)
      expect(body.error.message).toMatch(/organization/i)
      expect(body.error.message).toMatch(/workspace/i)
    }))

    it.effect("R-GQL-AUTH-11: GET /uploads requires both svc-org-id and svc-workspace-id", () => Effect.promise(async () => {
      expect((await presign({ filename: "a.txt" }, without(appHeaders(), "svc-org-id"))).status).toBe(400)
      expect((await presign({ filename: "a.txt" }, without(appHeaders(), "svc-workspace-id"))).status).toBe(400)
      expect((await presign({ filename: "a.txt" }, appHeaders())).status).toBe(200)
    }))

    it.effect("R-GQL-AUTH-12: GET /uploads with no valid token and no formId is a 401", () => Effect.promise(async () => {
      expect((await presign({ filename: "a.txt" }, without(appHeaders(), "svc-token-id", "svc-token-secret"))).status).toBe(401)
      expect((await presign({ filename: "a.txt" }, appHeaders({ "svc-token-secret": "wrong" }))).status).toBe(401)
    }))

    it.effect("R-UPLOAD-PRESIGN-20: a filename whose extension cannot be determined is a 400", () => Effect.promise(async () => {
      for (const filename of ["README", ".env", "trailing.", "space.a b"]) {
        expect((await presign({ filename }, appHeaders())).status).toBe(400)
      }
    }))

    // 4.8 GB and 500 MB are read as 4,800,000,000 and 500,000,000 bytes (assumptions.ts
    // SIZE_UNITS: decimal, the smaller reading).
    it.effect("R-UPLOAD-PRESIGN-21: size above 4.8 GB (4,800,000,001 bytes) is rejected early with a 400 (no bytes sent)", () => Effect.promise(async () => {
      const res = await presign({ filename: "huge.bin", size: "4800000001" }, appHeaders())
      expect(res.status).toBe(400)
      expect(((await res.json()) as { error: { message: string } }).error.message).toContain("4.8 GB (4800000000 bytes)")
    }))

    it.effect("R-LIMIT-04: the presigned flow accepts at most 4.8 GB, 4,800,000,000 bytes, per file", () => Effect.promise(async () => {
      expect((await presign({ filename: "max.bin", size: "4800000000" }, appHeaders())).status).toBe(200)
      expect((await presign({ filename: "over.bin", size: "4800000001" }, appHeaders())).status).toBe(400)
    }))

    it.effect("R-LIMIT-05: an anonymous form upload accepts at most 500 MB, 500,000,000 bytes, per file", () => Effect.promise(async () => {
      const form = newForm(true)
      expect((await presign({ filename: "f.bin", formId: form.id, size: "500000000" }, {})).status).toBe(200)
      const over = await presign({ filename: "f.bin", formId: form.id, size: "500000001" }, {})
      expect(over.status).toBe(400)
      expect(((await over.json()) as { error: { message: string } }).error.message).toContain("500 MB (500000000 bytes)")
    }))

    it.effect("R-LIMIT-06: an anonymous form upload requires the form to be active", () => Effect.promise(async () => {
      const inactive = newForm(false)
      const res = await presign({ filename: "f.txt", formId: inactive.id }, {})
      expect(res.status).toBe(403)
      expect(await errorCode(res)).toBe("FORM_INACTIVE")
      expect((await presign({ filename: "f.txt", formId: newForm(true).id }, {})).status).toBe(200)
    }))

    it.effect("R-UPLOAD-PRESIGN-23: presign when the workspace role has uploads disabled is a 403 FILES_DISABLED_FOR_ROLE", () => Effect.promise(async () => {
      const member = h.admin.createUser({
        email: "no-files-presign@acme.test",
        firstName: "No",
        lastName: "Files",
        workspaces: { [ws]: "MEMBER" }
      })
      const headers = appHeaders({ "svc-token-id": member.tokenId, "svc-token-secret": member.tokenSecret })
      expect((await presign({ filename: "a.txt" }, headers)).status).toBe(200)
      h.admin.setFilesDisabled(ws, member.userId, true)
      const res = await presign({ filename: "a.txt" }, headers)
      expect(res.status).toBe(403)
      expect(await errorCode(res)).toBe("FILES_DISABLED_FOR_ROLE")
    }))

    it.effect("R-UPLOAD-PRESIGN-24: presign whose company or project is not found is a 404", () => Effect.promise(async () => {
      expect((await presign({ filename: "a.txt" }, appHeaders({ "svc-org-id": "no-such-org" }))).status).toBe(404)
      expect((await presign({ filename: "a.txt" }, appHeaders({ "svc-workspace-id": "no-such-workspace" }))).status).toBe(404)
      expect((await presign({ filename: "a.txt" }, restHeaders({ "x-svc-company-id": "no-such-org" }), h.restUrl)).status).toBe(
        404
      )
      expect(
        (await presign({ filename: "a.txt" }, restHeaders({ "x-svc-project-id": "no-such-workspace" }), h.restUrl)).status
      ).toBe(404)
    }))

    it.effect("R-UPLOAD-PRESIGN-24: organization and workspace headers accept slugs", () => Effect.promise(async () => {
      const slug = (h.ctx.db.prepare("SELECT slug FROM workspaces WHERE id = ?").get(ws) as { slug: string }).slug
      const answer = await presignOk({ filename: "slug.txt" }, appHeaders({ "svc-org-id": h.orgSlug, "svc-workspace-id": slug }))
      expect(getFileByUid(h.ctx.db, answer.fields["X-Key"]!)?.workspaceId).toBe(ws)
    }))
  })

  describe("presign over REST (GET {rest_url}/uploads)", () => {
    it.effect("R-UPLOAD-PRESIGN-27: GET {rest_url}/uploads takes filename (required), size and key", () => Effect.promise(async () => {
      const answer = await presignOk({ filename: "rest.txt", size: "5", key: "rest-key-27" }, restHeaders(), h.restUrl)
      expect(answer.fields["X-Key"]).toBe("rest-key-27")
      expect(getFileByUid(h.ctx.db, "rest-key-27")).toMatchObject({ name: "rest.txt", declaredSize: 5 })
      expect((await presign({ size: "5" }, restHeaders(), h.restUrl)).status).toBe(400)
    }))

    it.effect("R-UPLOAD-PRESIGN-29: step 1 over REST authenticates with Bearer, x-svc-company-id and x-svc-project-id", () => Effect.promise(async () => {
      expect((await presign({ filename: "a.txt" }, restHeaders(), h.restUrl)).status).toBe(200)
      expect((await presign({ filename: "a.txt" }, without(restHeaders(), "authorization"), h.restUrl)).status).toBe(401)
      expect((await presign({ filename: "a.txt" }, restHeaders({ authorization: "Bearer nope" }), h.restUrl)).status).toBe(401)
      // The app credential pair is not a REST credential.
      const appOnly = { ...without(restHeaders(), "authorization"), "svc-token-id": h.tokenId, "svc-token-secret": h.tokenSecret }
      expect((await presign({ filename: "a.txt" }, appOnly, h.restUrl)).status).toBe(401)
    }))

    it.effect("R-REST-AUTH-07: GET {rest_url}/uploads additionally requires x-svc-project-id", () => Effect.promise(async () => {
      const res = await presign({ filename: "a.txt" }, without(restHeaders(), "x-svc-project-id"), h.restUrl)
      expect(res.status).toBe(400)
      expect(((await res.json()) as { error: { message: string } }).error.message).toMatch(/both/i)
    }))

    it.effect("R-UPLOAD-PRESIGN-30: the REST answer is {url, method: PUT, headers: {Content-Type}, fields: {Content-Type, Key, X-Key}}", () => Effect.promise(async () => {
      const answer = await presignOk({ filename: "shape.png" }, restHeaders(), h.restUrl)
      expect(answer.method).toBe("PUT")
      expect(answer.headers).toEqual({ "Content-Type": "image/png" })
      expect(Object.keys(answer.fields).sort()).toEqual(["Content-Type", "Key", "X-Key"])
      expect(answer.fields["Content-Type"]).toBe("image/png")
    }))

    it.effect("R-UPLOAD-PRESIGN-28: size is validated against the workspace upload limit", () => Effect.promise(async () => {
      h.ctx.limits.perFileBytes = 1000
      try {
        const res = await presign({ filename: "big.txt", size: "1001" }, restHeaders(), h.restUrl)
        expect(res.status).toBe(400)
        expect(await errorCode(res)).toBe("PLAN_LIMIT_REACHED")
        expect((await presign({ filename: "ok.txt", size: "1000" }, restHeaders(), h.restUrl)).status).toBe(200)
      } finally {
        h.ctx.limits.perFileBytes = null
      }
    }))

    it.effect("R-UPLOAD-PRESIGN-28: a size over the organization's storage allowance is refused", () => Effect.promise(async () => {
      const used = (h.ctx.db.prepare("SELECT SUM(size) AS n FROM files WHERE org_id = ?").get(h.org) as { n: number }).n
      h.ctx.limits.storageBytes = used + 100
      try {
        const res = await presign({ filename: "fill.txt", size: "101" }, restHeaders(), h.restUrl)
        expect(res.status).toBe(400)
        expect(await errorCode(res)).toBe("PLAN_LIMIT_REACHED")
      } finally {
        h.ctx.limits.storageBytes = null
      }
    }))

    it.effect("R-UPLOAD-PRESIGN-31: PUT {rest_url}/uploads/{uid}/confirm with Authorization finalizes the file", () => Effect.promise(async () => {
      const bytes = bytesOf(77)
      const answer = await presignOk({ filename: "rest-confirm.bin", size: "77" }, restHeaders(), h.restUrl)
      expect((await put(answer, bytes)).status).toBe(200)
      const uid = answer.fields["X-Key"]!
      expect((await confirm(uid, {}, h.restUrl)).status).toBe(401)
      const res = await confirm(uid, { authorization: `Bearer ${h.token}` }, h.restUrl)
      expect(res.status).toBe(200)
      expect(await res.json()).toMatchObject({ status: "CONFIRMED" })
      expect(getFileByUid(h.ctx.db, uid)?.status).toBe("CONFIRMED")
    }))
  })

  describe("storage (step 2)", () => {
    it.effect("R-UPLOAD-PRESIGN-11: step 2 is a PUT of the raw bytes, stored exactly", () => Effect.promise(async () => {
      const bytes = bytesOf(4096 + 3, "r")
      const answer = await presignOk({ filename: "raw.bin", size: String(bytes.length) })
      expect((await put(answer, bytes)).status).toBe(200)
      const stored = await new Promise<Buffer>((resolve, reject) => {
        const chunks: Array<Buffer> = []
        h.ctx.objects
          .read(answer.fields.Key!)
          .on("data", (c: Buffer) => chunks.push(c))
          .on("end", () => resolve(Buffer.concat(chunks)))
          .on("error", reject)
      })
      expect(createHash("sha256").update(stored).digest("hex")).toBe(createHash("sha256").update(bytes).digest("hex"))
    }))

    it.effect("R-UPLOAD-PRESIGN-12: step 2 must send Content-Type exactly as returned (a different one is a 403)", () => Effect.promise(async () => {
      const answer = await presignOk({ filename: "typed.png" })
      const wrong = await put(answer, bytesOf(10), { "Content-Type": "application/octet-stream" })
      expect(wrong.status).toBe(403)
      expect((await put(answer, bytesOf(10))).status).toBe(200)
    }))

    it.effect("R-UPLOAD-PRESIGN-14: a 2xx answer to step 2 means the bytes landed in storage", () => Effect.promise(async () => {
      const answer = await presignOk({ filename: "landed.txt", size: "321" })
      expect(h.ctx.objects.stat(answer.fields.Key!)).toBeNull()
      const res = await put(answer, bytesOf(321))
      expect(res.ok).toBe(true)
      expect(h.ctx.objects.stat(answer.fields.Key!)).toEqual({ size: 321 })
    }))

    it.effect("R-UPLOAD-PRESIGN-07: the url is single-use (a second PUT is a 403)", () => Effect.promise(async () => {
      const answer = await presignOk({ filename: "once.txt" })
      expect((await put(answer, bytesOf(5))).status).toBe(200)
      expect((await put(answer, bytesOf(6))).status).toBe(403)
      expect(h.ctx.objects.stat(answer.fields.Key!)).toEqual({ size: 5 })
    }))

    it.effect("R-UPLOAD-PRESIGN-07: the url is used exactly as given (a changed signature or expiry is a 403)", () => Effect.promise(async () => {
      const answer = await presignOk({ filename: "signed.txt" })
      const url = new URL(answer.url)
      const badSig = new URL(url)
      const sig = badSig.searchParams.get("sig")!
      badSig.searchParams.set("sig", `${sig.slice(0, -1)}${sig.endsWith("0") ? "1" : "0"}`)
      expect((await fetch(badSig, { method: "PUT", headers: answer.headers, body: bytesOf(3) })).status).toBe(403)
      const later = new URL(url)
      later.searchParams.set("exp", String(Number(url.searchParams.get("exp")) + 3_600_000))
      expect((await fetch(later, { method: "PUT", headers: answer.headers, body: bytesOf(3) })).status).toBe(403)
      const otherKey = new URL(url)
      otherKey.pathname = otherKey.pathname.replace(/[^/]+$/, "files%2Fsomeone-else")
      expect((await fetch(otherKey, { method: "PUT", headers: answer.headers, body: bytesOf(3) })).status).toBe(403)
      // The untouched URL still works: none of the above spent it.
      expect((await put(answer, bytesOf(3))).status).toBe(200)
    }))

    it.effect("R-UPLOAD-PRESIGN-13: a client that sends no credentials leaves the storage credential log empty", () => Effect.promise(async () => {
      const before = storageCredentialLog(h.ctx).length
      const answer = await presignOk({ filename: "clean.txt" })
      expect((await put(answer, bytesOf(8))).status).toBe(200)
      expect(storageCredentialLog(h.ctx).length).toBe(before)
    }))

    it.effect("R-UPLOAD-PRESIGN-13: storage records every credential-looking header it receives (names only)", () => Effect.promise(async () => {
      const before = storageCredentialLog(h.ctx).length
      const answer = await presignOk({ filename: "leaky.txt" })
      const res = await put(answer, bytesOf(8), {
        ...answer.headers,
        Authorization: `Bearer ${h.token}`,
        "svc-token-secret": h.tokenSecret,
        "x-svc-company-id": h.org
      })
      expect(res.status).toBe(200)
      const log = storageCredentialLog(h.ctx).slice(before)
      expect(log.map((e) => e.header).sort()).toEqual(["authorization", "svc-token-secret", "x-svc-company-id"])
      expect(log.every((e) => e.method === "PUT" && e.path.startsWith("/o/"))).toBe(true)
      // The log keeps header names, never their values.
      expect(JSON.stringify(log)).not.toContain(h.token)
      expect(JSON.stringify(log)).not.toContain(h.tokenSecret)
    }))
  })

  describe("confirm (step 3)", () => {
    const uploaded = async (size: number, params: Record<string, string> = {}, headers: Headers = appHeaders()) => {
      const answer = await presignOk({ filename: "step3.bin", size: String(size), ...params }, headers)
      expect((await put(answer, bytesOf(size))).status).toBe(200)
      return answer.fields["X-Key"]!
    }

    it.effect("R-UPLOAD-PRESIGN-15: step 3 is PUT {base_url}/uploads/{uid}/confirm with the authentication headers", () => Effect.promise(async () => {
      const uid = await uploaded(40)
      const res = await confirm(uid, { "svc-token-id": h.tokenId, "svc-token-secret": h.tokenSecret })
      expect(res.status).toBe(200)
    }))

    it.effect("R-UPLOAD-PRESIGN-16: a successful confirm answers 200 {message: string, status: CONFIRMED}", () => Effect.promise(async () => {
      const uid = await uploaded(41)
      const res = await confirm(uid, appHeaders())
      expect(res.status).toBe(200)
      const body = (await res.json()) as { message: unknown; status: unknown }
      expect(typeof body.message).toBe("string")
      expect(body.status).toBe("CONFIRMED")
    }))

    it.effect("R-FILE-STATUS-04: confirm of a PENDING file whose object has the declared size makes it CONFIRMED", () => Effect.promise(async () => {
      const uid = await uploaded(42)
      expect(getFileByUid(h.ctx.db, uid)?.status).toBe("PENDING")
      expect((await confirm(uid, appHeaders())).status).toBe(200)
      expect(getFileByUid(h.ctx.db, uid)).toMatchObject({ status: "CONFIRMED", size: 42 })
    }))

    it.effect("R-FILE-STATUS-05: a stored size different from the declared size is a 400 and the file stays PENDING", () => Effect.promise(async () => {
      const answer = await presignOk({ filename: "short.bin", size: "100" })
      expect((await put(answer, bytesOf(99))).status).toBe(200)
      const uid = answer.fields["X-Key"]!
      const res = await confirm(uid, appHeaders())
      expect(res.status).toBe(400)
      expect(getFileByUid(h.ctx.db, uid)?.status).toBe("PENDING")
    }))

    it.effect("R-UPLOAD-PRESIGN-16: confirming an already CONFIRMED file answers 200 again", () => Effect.promise(async () => {
      const uid = await uploaded(43)
      expect((await confirm(uid, appHeaders())).status).toBe(200)
      const again = await confirm(uid, appHeaders())
      expect(again.status).toBe(200)
      expect(await again.json()).toMatchObject({ status: "CONFIRMED" })
    }))

    it.effect("R-UPLOAD-PRESIGN-17: anonymous confirm is PUT /uploads/{uid}/confirm?formId=<form_id>", () => Effect.promise(async () => {
      const form = newForm(true)
      const answer = await presignOk({ filename: "anon.bin", size: "9", formId: form.id }, {})
      expect((await put(answer, bytesOf(9))).status).toBe(200)
      const uid = answer.fields["X-Key"]!
      expect((await confirm(uid, {}, h.baseUrl, `?formId=${newForm(true).id}`)).status).toBe(404)
      const res = await confirm(uid, {}, h.baseUrl, `?formId=${encodeURIComponent(form.id)}`)
      expect(res.status).toBe(200)
      expect(getFileByUid(h.ctx.db, uid)?.status).toBe("CONFIRMED")
    }))

    it.effect("R-UPLOAD-PRESIGN-22: confirm without a valid token is a 401", () => Effect.promise(async () => {
      const uid = await uploaded(44)
      expect((await confirm(uid, {})).status).toBe(401)
      expect((await confirm(uid, { "svc-token-id": h.tokenId, "svc-token-secret": "wrong" })).status).toBe(401)
      expect(getFileByUid(h.ctx.db, uid)?.status).toBe("PENDING")
    }))

    it.effect("R-UPLOAD-PRESIGN-23: confirm when the workspace role has uploads disabled is a 403 FILES_DISABLED_FOR_ROLE", () => Effect.promise(async () => {
      const member = h.admin.createUser({
        email: "no-files-confirm@acme.test",
        firstName: "No",
        lastName: "Confirm",
        workspaces: { [ws]: "MEMBER" }
      })
      const headers = appHeaders({ "svc-token-id": member.tokenId, "svc-token-secret": member.tokenSecret })
      const uid = await uploaded(45, {}, headers)
      h.admin.setFilesDisabled(ws, member.userId, true)
      const res = await confirm(uid, headers)
      expect(res.status).toBe(403)
      expect(await errorCode(res)).toBe("FILES_DISABLED_FOR_ROLE")
    }))

    it.effect("R-UPLOAD-PRESIGN-24: confirm whose company or project is not found is a 404", () => Effect.promise(async () => {
      const uid = await uploaded(46)
      expect((await confirm(uid, appHeaders({ "svc-org-id": "missing-org" }))).status).toBe(404)
      expect((await confirm(uid, appHeaders({ "svc-workspace-id": "missing-ws" }))).status).toBe(404)
      expect(getFileByUid(h.ctx.db, uid)?.status).toBe("PENDING")
    }))

    it.effect("R-UPLOAD-PRESIGN-25: confirm whose file row is missing is a 404", () => Effect.promise(async () => {
      expect((await confirm("no-such-file-uid", appHeaders())).status).toBe(404)
      expect((await confirm("no-such-file-uid", { authorization: `Bearer ${h.token}` }, h.restUrl)).status).toBe(404)
    }))

    it.effect("R-UPLOAD-PRESIGN-14: a 0-byte file goes through all three steps", () => Effect.promise(async () => {
      const answer = await presignOk({ filename: "zero.txt", size: "0" })
      expect((await put(answer, new Uint8Array(0))).status).toBe(200)
      expect((await confirm(answer.fields["X-Key"]!, appHeaders())).status).toBe(200)
      expect(getFileByUid(h.ctx.db, answer.fields["X-Key"]!)).toMatchObject({ status: "CONFIRMED", size: 0 })
    }))

    it.effect("R-FILE-SERVE-01: a file uploaded by the presigned flow downloads byte for byte under its unicode name", () => Effect.promise(async () => {
      const name = "Übersicht 2024 – 日本 #1.png"
      const bytes = bytesOf(10_000, "u")
      const answer = await presignOk({ filename: name, size: String(bytes.length) })
      expect((await put(answer, bytes)).status).toBe(200)
      const uid = answer.fields["X-Key"]!
      expect((await confirm(uid, appHeaders())).status).toBe(200)
      const res = await fetch(`${h.baseUrl}/uploads/${uid}/${encodeURIComponent(name)}`)
      expect(res.status).toBe(200)
      expect(res.headers.get("content-type")).toBe("image/png")
      const got = Buffer.from(await res.arrayBuffer())
      expect(createHash("sha256").update(got).digest("hex")).toBe(createHash("sha256").update(bytes).digest("hex"))
    }))

    it.effect("R-UPLOAD-PRESIGN-26: confirm whose stored object is missing is a 404", () => Effect.promise(async () => {
      const answer = await presignOk({ filename: "never-sent.txt", size: "10" })
      const res = await confirm(answer.fields["X-Key"]!, appHeaders())
      expect(res.status).toBe(404)
      expect(getFileByUid(h.ctx.db, answer.fields["X-Key"]!)?.status).toBe("PENDING")
    }))
  })
})
