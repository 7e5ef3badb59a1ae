/**
 * Serving stored files, REST list-files and the seeded files, against a real emulator
 * over HTTP.
 */
import { createHash } from "node:crypto"
import { Readable } from "node:stream"
import { describe, expect, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { startEmulator, type EmulatorHandle } from "../../src/emulator/index.ts"
import { type FileRow, getFileByUid, insertFile, insertFolder, storageCredentialLog, storageKeyFor } from "../../src/emulator/uploads/files.ts"
import { pngSize } from "../../src/emulator/uploads/png.ts"
import { Emulator, emulatorLayer } from "../support/effect.ts"

let h: EmulatorHandle
let ws: string

/** uid, name and sha256 of every file, as the seed left them. */
const seedDigest = async (e: EmulatorHandle): Promise<Array<string>> => {
  const list = e.ctx.db.prepare("SELECT uid, name, status, storage_key FROM files ORDER BY uid").all() as Array<{
    uid: string
    name: string
    status: string
    storage_key: string
  }>
  const out: Array<string> = []
  for (const r of list) {
    const chunks: Array<Buffer> = []
    if (r.status === "CONFIRMED") for await (const c of e.ctx.objects.read(r.storage_key)) chunks.push(c as Buffer)
    out.push(`${r.uid} ${r.name} ${r.status} ${sha(Buffer.concat(chunks))}`)
  }
  return out
}
let seededAtStart: Array<string>

// The helpers below read the file's emulator, and what the set-up derives from it, from these
// bindings: the layer fills them once the emulator is up and closes it after the last test.
const fileLayer = Layer.effectDiscard(
  Effect.gen(function* () {
    h = yield* Emulator
    yield* Effect.promise(async () => {
      ws = h.workspaces[0]!
      seededAtStart = await seedDigest(h)
    })
  })
).pipe(Layer.provideMerge(emulatorLayer({ variant: "reference", seed: "demo" })))

interface Item {
  id: string
  uid: string
  name: string
  size: number
  type: string
  extension: string
  status: string
  shared: unknown
  createdAt: string
  updatedAt: string
  folder: { id: string; name: string } | null
  todo: { id: string; title: string } | null
  user: { id: string; fullName: string; email: string } | null
}
interface Page {
  items: Array<Item>
  pageInfo: { totalItems: number; hasNextPage: boolean }
}

const listFiles = async (body: Record<string, unknown>, token: string = h.token): Promise<Response> =>
  fetch(`${h.restUrl}/v1/list-files`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify(body)
  })

const listPage = async (body: Record<string, unknown>): Promise<Page> => {
  const res = await listFiles(body)
  expect(res.status).toBe(200)
  return (await res.json()) as Page
}

const allFiles = async (workspaceId: string): Promise<Array<Item>> => (await listPage({ workspaceId, limit: 100 })).items

const seeded = async (name: string, workspaceId = ws): Promise<Item> => {
  const item = (await allFiles(workspaceId)).find((f) => f.name === name && f.status === "CONFIRMED")
  if (item === undefined) throw new Error(`no seeded file ${name}`)
  return item
}

const download = (uid: string, name: string, query = "") =>
  fetch(`${h.baseUrl}/uploads/${encodeURIComponent(uid)}/${encodeURIComponent(name)}${query}`, { redirect: "manual" })

const sha = (b: Uint8Array) => createHash("sha256").update(b).digest("hex")

const storedBytes = (key: string) =>
  new Promise<Buffer>((resolve, reject) => {
    const chunks: Array<Buffer> = []
    h.ctx.objects
      .read(key)
      .on("data", (c: Buffer) => chunks.push(c))
      .on("end", () => resolve(Buffer.concat(chunks)))
      .on("error", reject)
  })

// Real HTTP and real waits: the live clock (no TestClock), so timers and time scales run.
layer(fileLayer, { timeout: 30_000, excludeTestServices: true })((it) => {
  describe("serving files", () => {
    it.effect("R-FILE-SERVE-01: GET /uploads/{uid}/{encoded filename} redirects to a short-lived signed storage URL", () => Effect.promise(async () => {
      const file = await seeded("notes.txt")
      const res = await download(file.uid, file.name)
      expect(res.status).toBe(302)
      const location = new URL(res.headers.get("location")!)
      expect(location.origin).toBe(h.storageUrl)
      expect(Number(location.searchParams.get("exp"))).toBeGreaterThan(Date.now())
      expect(location.searchParams.get("sig")).toMatch(/^[0-9a-f]{64}$/)
      const bytes = Buffer.from(await (await fetch(location)).arrayBuffer())
      expect(sha(bytes)).toBe(sha(await storedBytes(storageKeyFor(file.uid))))
    }))

    it.effect("R-FILE-SERVE-02: the download needs no authentication headers", () => Effect.promise(async () => {
      const file = await seeded("one-byte.bin")
      const res = await fetch(`${h.baseUrl}/uploads/${file.uid}/${encodeURIComponent(file.name)}`)
      expect(res.status).toBe(200)
      expect(res.headers.get("content-length")).toBe("1")
      expect(res.headers.get("content-type")).toBe("application/octet-stream")
      expect(res.headers.get("content-disposition")).toMatch(/^attachment;/)
      expect((await res.arrayBuffer()).byteLength).toBe(1)
    }))

    it.effect("R-FILE-SERVE-03: content-disposition=inline is passed through (displayed, not downloaded)", () => Effect.promise(async () => {
      const file = await seeded("pixel.png")
      const res = await fetch(`${h.baseUrl}/uploads/${file.uid}/${file.name}?content-disposition=inline`)
      expect(res.status).toBe(200)
      expect(res.headers.get("content-disposition")).toMatch(/^inline;/)
      expect(res.headers.get("content-type")).toBe("image/png")
    }))

    it.effect("R-FILE-SERVE-04: /uploads/{uid}/50x50/{filename} serves a 50x50 thumbnail for images only", () => Effect.promise(async () => {
      const image = await seeded("pixel.png")
      const res = await fetch(`${h.baseUrl}/uploads/${image.uid}/50x50/${image.name}`)
      expect(res.status).toBe(200)
      expect(res.headers.get("content-type")).toBe("image/png")
      expect(pngSize(new Uint8Array(await res.arrayBuffer()))).toEqual({ width: 50, height: 50 })
      const text = await seeded("notes.txt")
      expect((await fetch(`${h.baseUrl}/uploads/${text.uid}/50x50/${text.name}`)).status).toBe(404)
    }))

    it.effect("R-FILE-SERVE-05: /uploads/{uid}/500x500/{filename} serves a 500x500 preview for images only", () => Effect.promise(async () => {
      const image = await seeded("pixel.png")
      const res = await fetch(`${h.baseUrl}/uploads/${image.uid}/500x500/${image.name}`)
      expect(res.status).toBe(200)
      expect(pngSize(new Uint8Array(await res.arrayBuffer()))).toEqual({ width: 500, height: 500 })
      const pdf = await seeded("quarterly report 2024.pdf")
      expect((await fetch(`${h.baseUrl}/uploads/${pdf.uid}/500x500/${encodeURIComponent(pdf.name)}`)).status).toBe(404)
      expect((await fetch(`${h.baseUrl}/uploads/${image.uid}/64x64/${image.name}`)).status).toBe(404)
    }))

    it.effect("R-FILE-SERVE-06: a download URL with the uid but no filename is a 404", () => Effect.promise(async () => {
      const file = await seeded("notes.txt")
      expect((await fetch(`${h.baseUrl}/uploads/${file.uid}`, { redirect: "manual" })).status).toBe(404)
      expect((await fetch(`${h.baseUrl}/uploads/${file.uid}/`, { redirect: "manual" })).status).toBe(404)
    }))

    it.effect("R-FILE-SERVE-07: the filename segment is URL-encoded (spaces, unicode, %, #, ?)", () => Effect.promise(async () => {
      for (const name of ["quarterly report 2024.pdf", "résumé – ünïcödé 日本語.txt", "100% done #1?.csv", "archive+plus&amp=eq.zip"]) {
        const file = await seeded(name)
        const res = await download(file.uid, name)
        expect(res.status, name).toBe(302)
        const served = await fetch(res.headers.get("location")!)
        expect(served.status).toBe(200)
        expect(Number(served.headers.get("content-length"))).toBe(file.size)
      }
      // Unencoded, `#` and `?` cut the name short: it no longer matches.
      const tricky = await seeded("100% done #1?.csv")
      expect((await fetch(`${h.baseUrl}/uploads/${tricky.uid}/100%25 done #1?.csv`, { redirect: "manual" })).status).toBe(404)
    }))

    it.effect("R-FILE-SERVE-07: a filename that is not the file's name is a 404", () => Effect.promise(async () => {
      const file = await seeded("notes.txt")
      expect((await download(file.uid, "other.txt")).status).toBe(404)
      expect((await download("nosuchuid000", file.name)).status).toBe(404)
    }))

    it.effect("R-FILE-SERVE-01: Content-Disposition names the file with RFC 5987 filename* for unicode", () => Effect.promise(async () => {
      const file = await seeded("résumé – ünïcödé 日本語.txt")
      const res = await fetch(`${h.baseUrl}/uploads/${file.uid}/${encodeURIComponent(file.name)}`)
      const cd = res.headers.get("content-disposition")!
      const star = /filename\*=UTF-8''([^;]+)/.exec(cd)?.[1]
      expect(star).toBeDefined()
      expect(decodeURIComponent(star!)).toBe(file.name)
      expect(cd).toMatch(/filename="[\x20-\x7e]+"/)
      expect(res.headers.get("content-type")).toBe("text/plain")
    }))

    it.effect("R-FILE-SERVE-01: a zero-byte file downloads as an empty body", () => Effect.promise(async () => {
      const file = await seeded("empty.txt")
      const res = await fetch(`${h.baseUrl}/uploads/${file.uid}/${file.name}`)
      expect(res.status).toBe(200)
      expect(res.headers.get("content-length")).toBe("0")
      expect((await res.arrayBuffer()).byteLength).toBe(0)
    }))

    it.effect("R-FILE-STATUS-07: a PENDING file is not served; once CONFIRMED it is", () => Effect.promise(async () => {
      const pending = (await allFiles(ws)).find((f) => f.status === "PENDING")!
      expect(pending).toBeDefined()
      expect((await download(pending.uid, pending.name)).status).toBe(404)
      const row = getFileByUid(h.ctx.db, pending.uid)!
      await h.ctx.objects.put(row.storageKey, Readable.from([Buffer.alloc(row.declaredSize ?? 0)]))
      const res = await fetch(`${h.baseUrl}/uploads/${pending.uid}/confirm`, {
        method: "PUT",
        headers: { "svc-token-id": h.tokenId, "svc-token-secret": h.tokenSecret }
      })
      expect(res.status).toBe(200)
      expect((await download(pending.uid, pending.name)).status).toBe(302)
    }))

    it.effect("storage: a signed download URL with a changed signature or name is a 403", () => Effect.promise(async () => {
      const file = await seeded("notes.txt")
      const location = new URL((await download(file.uid, file.name)).headers.get("location")!)
      const renamed = new URL(location)
      renamed.searchParams.set("name", "evil.html")
      expect((await fetch(renamed)).status).toBe(403)
      const inline = new URL(location)
      inline.searchParams.set("disposition", "inline")
      expect((await fetch(inline)).status).toBe(403)
      expect((await fetch(location)).status).toBe(200)
      // Download URLs are short-lived, not single-use: the same URL serves again.
      expect((await fetch(location)).status).toBe(200)
    }))

    it.effect("R-FILE-SERVE-02: token headers carried across the redirect reach storage and are recorded there", () => Effect.promise(async () => {
      const file = await seeded("notes.txt")
      const before = storageCredentialLog(h.ctx).length
      // fetch drops Authorization on a cross-origin redirect but keeps custom headers:
      // a client must not send its token headers on the download at all.
      const res = await fetch(`${h.baseUrl}/uploads/${file.uid}/${file.name}`, {
        headers: { "svc-token-id": h.tokenId, "svc-token-secret": h.tokenSecret }
      })
      expect(res.status).toBe(200)
      const log = storageCredentialLog(h.ctx).slice(before)
      expect(log.map((e) => e.header).sort()).toEqual(["svc-token-id", "svc-token-secret"])
      expect(log.every((e) => e.method === "GET")).toBe(true)
    }))

    it.effect("storage: a byte range is served as 206 with Content-Range", () => Effect.promise(async () => {
      const file = await seeded("notes.txt")
      const location = (await download(file.uid, file.name)).headers.get("location")!
      const res = await fetch(location, { headers: { range: "bytes=10-19" } })
      expect(res.status).toBe(206)
      expect(res.headers.get("content-range")).toBe(`bytes 10-19/${file.size}`)
      const whole = await storedBytes(storageKeyFor(file.uid))
      expect(Buffer.from(await res.arrayBuffer()).equals(whole.subarray(10, 20))).toBe(true)
    }))
  })

  describe("list-files", () => {
    it.effect("R-REST-FILES-01: list-files takes workspaceId, skip and limit", () => Effect.promise(async () => {
      const all = await allFiles(ws)
      const page = await listPage({ workspaceId: ws, skip: 2, limit: 3 })
      expect(page.items.map((f) => f.id)).toEqual(all.slice(2, 5).map((f) => f.id))
      const other = await allFiles(h.workspaces[1]!)
      expect(other.length).toBeGreaterThan(0)
      expect(other.some((f) => all.some((g) => g.id === f.id))).toBe(false)
    }))

    it.effect("R-REST-FILES-02: the response is {items, pageInfo} whose items are file items", () => Effect.promise(async () => {
      const page = await listPage({ workspaceId: ws })
      expect(Object.keys(page).sort()).toEqual(["items", "pageInfo"])
      expect(page.items.length).toBeGreaterThan(0)
    }))

    it.effect("R-REST-FILES-03: a file item has exactly the documented keys", () => Effect.promise(async () => {
      for (const item of await allFiles(ws)) {
        expect(Object.keys(item).sort()).toEqual(
          ["createdAt", "extension", "folder", "id", "name", "shared", "size", "status", "todo", "type", "uid", "updatedAt", "user"].sort()
        )
      }
    }))

    it.effect("R-REST-FILES-04: status is CONFIRMED or PENDING, and both are listed", () => Effect.promise(async () => {
      const statuses = new Set((await allFiles(ws)).map((f) => f.status))
      expect([...statuses].sort()).toEqual(["CONFIRMED", "PENDING"].filter((s) => statuses.has(s)))
      expect(statuses.has("CONFIRMED")).toBe(true)
      const presigned = await fetch(`${h.baseUrl}/uploads?filename=listed.txt&size=4`, {
        headers: { "svc-token-id": h.tokenId, "svc-token-secret": h.tokenSecret, "svc-org-id": h.org, "svc-workspace-id": ws }
      })
      const uid = ((await presigned.json()) as { fields: Record<string, string> }).fields["X-Key"]
      expect((await allFiles(ws)).find((f) => f.uid === uid)?.status).toBe("PENDING")
    }))

    it.effect("R-FILE-STATUS-01: file status values are CONFIRMED or PENDING only", () => Effect.promise(async () => {
      const values = (h.ctx.db.prepare("SELECT DISTINCT status FROM files").all() as Array<{ status: string }>).map((r) => r.status)
      expect(values.every((v) => v === "CONFIRMED" || v === "PENDING")).toBe(true)
      expect(() =>
        h.ctx.db
          .prepare("UPDATE files SET status = 'DELETED' WHERE uid = ?")
          .run((h.ctx.db.prepare("SELECT uid FROM files LIMIT 1").get() as { uid: string }).uid)
      ).toThrow()
    }))

    it.effect("R-REST-FILES-05: shared is a boolean", () => Effect.promise(async () => {
      insertFile(h.ctx, {
        name: "shared.txt",
        size: 0,
        type: "text/plain",
        extension: "txt",
        orgId: h.org,
        workspaceId: ws,
        status: "CONFIRMED",
        shared: true,
        userId: h.ownerUserId
      })
      const items = await allFiles(ws)
      expect(items.every((f) => typeof f.shared === "boolean")).toBe(true)
      expect(items.find((f) => f.name === "shared.txt")?.shared).toBe(true)
      expect(items.find((f) => f.name === "empty.txt")?.shared).toBe(false)
    }))

    it.effect("R-REST-FILES-06: folder may be null (and is {id, name} for a file in a folder)", () => Effect.promise(async () => {
      const items = await allFiles(ws)
      expect(items.some((f) => f.folder === null)).toBe(true)
      const inFolder = items.find((f) => f.name === "quarterly report 2024.pdf")!
      expect(inFolder.folder).toEqual({ id: expect.any(String), name: "Reports" })
    }))

    it.effect("R-REST-FILES-07: todo may be null (and is {id, title} for a file on a record)", () => Effect.promise(async () => {
      const items = await allFiles(ws)
      expect(items.some((f) => f.todo === null)).toBe(true)
      const onRecord = items.find((f) => f.todo !== null)!
      const title = (h.ctx.db.prepare("SELECT title FROM records WHERE id = ?").get(onRecord.todo!.id) as { title: string }).title
      expect(onRecord.todo).toEqual({ id: onRecord.todo!.id, title })
    }))

    it.effect("R-REST-FILES-08: user is {id, fullName, email}", () => Effect.promise(async () => {
      for (const item of await allFiles(ws)) {
        expect(Object.keys(item.user!).sort()).toEqual(["email", "fullName", "id"])
        expect(item.user!.fullName.length).toBeGreaterThan(0)
        expect(item.user!.email).toContain("@")
      }
    }))

    it.effect("R-REST-PAGE-08: list-files pageInfo carries totalItems and hasNextPage", () => Effect.promise(async () => {
      const total = (await allFiles(ws)).length
      const first = await listPage({ workspaceId: ws, limit: 2 })
      expect(first.pageInfo).toEqual({ totalItems: total, hasNextPage: true })
      const last = await listPage({ workspaceId: ws, skip: total - 1, limit: 2 })
      expect(last.pageInfo).toEqual({ totalItems: total, hasNextPage: false })
      expect(last.items).toHaveLength(1)
    }))

    let big: string
    // A workspace of 130 files (every tenth PENDING, every other in a folder), made once the emulator is up.
    const bigLayer = Layer.effectDiscard(
      Effect.sync(() => {
        big = h.admin.createWorkspace({ name: "Many files" }).id
        const folder = insertFolder(h.ctx, { workspaceId: big, name: "Bulk" })
        for (let i = 0; i < 130; i++) {
          insertFile(h.ctx, {
            name: `bulk-${i}.txt`,
            size: i,
            type: "text/plain",
            extension: "txt",
            orgId: h.org,
            workspaceId: big,
            status: i % 10 === 0 ? "PENDING" : "CONFIRMED",
            folderId: i % 2 === 0 ? folder.id : null,
            userId: h.ownerUserId
          })
        }
      })
    )

    it.layer(bigLayer)("with more than 100 files", (it) => {
      it.effect("R-REST-PAGE-02: without limit a page holds 50 files", () => Effect.promise(async () => {
        const page = await listPage({ workspaceId: big })
        expect(page.items).toHaveLength(50)
        expect(page.pageInfo).toEqual({ totalItems: 130, hasNextPage: true })
      }))

      it.effect("R-REST-PAGE-03: a limit above 100 is capped silently to 100", () => Effect.promise(async () => {
        const page = await listPage({ workspaceId: big, limit: 1000 })
        expect(page.items).toHaveLength(100)
      }))

      it.effect("R-REST-PAGE-04: paging by skip visits every file once, in createdAt/id order", () => Effect.promise(async () => {
        const seen: Array<Item> = []
        for (let skip = 0; ; skip += 40) {
          const page = await listPage({ workspaceId: big, skip, limit: 40 })
          seen.push(...page.items)
          if (!page.pageInfo.hasNextPage) break
        }
        expect(seen).toHaveLength(130)
        expect(new Set(seen.map((f) => f.id)).size).toBe(130)
        const keys = seen.map((f) => `${f.createdAt}|${f.id}`)
        expect(keys).toEqual([...keys].sort())
      }))
    })

    it.effect("R-REST-ERR-02: an invalid skip or limit is a 400 with issues", () => Effect.promise(async () => {
      for (const body of [{ workspaceId: ws, limit: -1 }, { workspaceId: ws, skip: "x" }, { workspaceId: 5 }]) {
        const res = await listFiles(body)
        expect(res.status).toBe(400)
        const err = ((await res.json()) as { error: { issues: Array<unknown> } }).error
        expect(err.issues.length).toBeGreaterThan(0)
      }
    }))

    it.effect("R-REST-ERR-03: list-files of a workspace the caller cannot see is a 403; an unknown token a 401", () => Effect.promise(async () => {
      const outsider = h.admin.createUser({ email: "outsider-files@acme.test", firstName: "Out", lastName: "Sider" })
      expect((await listFiles({ workspaceId: ws }, outsider.token)).status).toBe(403)
      expect((await listFiles({ workspaceId: ws }, "not-a-token")).status).toBe(401)
    }))

    it.effect("R-REST-FILES-01: without workspaceId the caller's visible workspaces are listed", () => Effect.promise(async () => {
      const page = await listPage({ limit: 100 })
      const w0 = await allFiles(ws)
      expect(page.pageInfo.totalItems).toBeGreaterThan(w0.length)
    }))
  })

  describe("seeded files", () => {
    // Only the rows the seed made (earlier tests add and confirm files).
    const rows = (workspaceId: string): Array<FileRow> =>
      seededAtStart
        .map((line) => getFileByUid(h.ctx.db, line.split(" ")[0]!))
        .filter((f): f is FileRow => f !== null && f.workspaceId === workspaceId)

    it.effect("each workspace has 0-byte, 1-byte, KB-sized, PNG, URL-encoding-needing, duplicate-named and PENDING files", () => Effect.sync(() => {
      for (const workspaceId of h.workspaces) {
        const files = rows(workspaceId)
        const confirmed = files.filter((f) => f.status === "CONFIRMED")
        expect(confirmed.some((f) => f.size === 0)).toBe(true)
        expect(confirmed.some((f) => f.size === 1)).toBe(true)
        expect(confirmed.some((f) => f.size > 2048)).toBe(true)
        expect(confirmed.some((f) => f.type === "image/png")).toBe(true)
        expect(confirmed.some((f) => /[ %#?]/.test(f.name))).toBe(true)
        expect(confirmed.some((f) => /[^\x00-\x7f]/.test(f.name))).toBe(true)
        const names = confirmed.map((f) => f.name)
        expect(new Set(names).size).toBeLessThan(names.length)
        expect(seededAtStart.filter((line) => line.includes(" PENDING ")).length).toBeGreaterThanOrEqual(h.workspaces.length)
        // Every CONFIRMED row has its bytes, of its size.
        for (const f of confirmed) expect(h.ctx.objects.stat(f.storageKey)).toEqual({ size: f.size })
      }
    }))

    it.effect("the seeded PNG is a real image", () => Effect.promise(async () => {
      const png = rows(ws).find((f) => f.type === "image/png" && f.status === "CONFIRMED")!
      expect(pngSize(await storedBytes(png.storageKey))).toEqual({ width: 16, height: 16 })
    }))

    it.effect("seeded contents are deterministic: the same seed gives the same files and bytes", () => Effect.promise(async () => {
      const other = await startEmulator({ variant: "reference", seed: "demo" })
      try {
        expect(await seedDigest(other)).toEqual(seededAtStart)
      } finally {
        await other.close()
      }
    }))

    it.effect("sized seeds get a handful of files per workspace", () => Effect.promise(async () => {
      const sized = await startEmulator({ variant: "reference", seed: "3x2" })
      try {
        for (const workspaceId of sized.workspaces) {
          const n = (sized.ctx.db.prepare("SELECT count(*) AS n FROM files WHERE workspace_id = ?").get(workspaceId) as { n: number }).n
          expect(n).toBeGreaterThanOrEqual(3)
          expect(n).toBeLessThanOrEqual(8)
        }
      } finally {
        await sized.close()
      }
    }))
  })
})
