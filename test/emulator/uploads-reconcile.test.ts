/**
 * Background reconciliation and URL expiry, with a tiny time scale so the 15-minute
 * signing window lasts under a second.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startEmulator, type EmulatorHandle } from "../../src/emulator/index.ts"
import { getFileByUid } from "../../src/emulator/uploads/files.ts"
import { presignTtlMs } from "../../src/emulator/uploads/presign.ts"

let h: EmulatorHandle
let ws: string
let seededPending: Array<string>

beforeAll(async () => {
  // 15 min x 0.001 = 0.9 s signing window.
  h = await startEmulator({ variant: "reference", seed: "demo", timeScale: 0.001 })
  ws = h.workspaces[0]!
  seededPending = (h.ctx.db.prepare("SELECT uid FROM files WHERE status = 'PENDING'").all() as Array<{ uid: string }>).map(
    (r) => r.uid
  )
})
afterAll(async () => {
  await h?.close()
})

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/** Polls until `check` holds (eventual state, not a timing assertion). */
const eventually = async (check: () => boolean, within = 10_000): Promise<void> => {
  const end = Date.now() + within
  while (!check()) {
    if (Date.now() > end) throw new Error("condition not reached")
    await sleep(20)
  }
}

interface Answer {
  url: string
  headers: Record<string, string>
  fields: Record<string, string>
}

const presign = async (params: Record<string, string>): Promise<Answer> => {
  const res = await fetch(`${h.baseUrl}/uploads?${new URLSearchParams(params).toString()}`, {
    headers: { "svc-token-id": h.tokenId, "svc-token-secret": h.tokenSecret, "svc-org-id": h.org, "svc-workspace-id": ws }
  })
  expect(res.status).toBe(200)
  return (await res.json()) as Answer
}

const put = (answer: Answer, n: number) =>
  fetch(answer.url, { method: "PUT", headers: answer.headers, body: Buffer.alloc(n, 7) })

const status = (uid: string) => getFileByUid(h.ctx.db, uid)?.status ?? "GONE"

describe.concurrent("background reconciliation", () => {
  it("R-FILE-STATUS-06: an uploaded but never confirmed file becomes CONFIRMED after the signing window", async () => {
    const answer = await presign({ filename: "unconfirmed.bin", size: "64" })
    expect((await put(answer, 64)).status).toBe(200)
    const uid = answer.fields["X-Key"]!
    expect(status(uid)).toBe("PENDING")
    await eventually(() => status(uid) !== "PENDING")
    expect(getFileByUid(h.ctx.db, uid)).toMatchObject({ status: "CONFIRMED", size: 64 })
  })

  it("R-FILE-STATUS-06: a PENDING file whose bytes never came is removed after the window (RECONCILE_MISSING_OBJECT)", async () => {
    const answer = await presign({ filename: "never.bin", size: "64" })
    const uid = answer.fields["X-Key"]!
    expect(status(uid)).toBe("PENDING")
    await eventually(() => status(uid) !== "PENDING")
    expect(status(uid)).toBe("GONE")
  })

  it("R-FILE-STATUS-06: an object of the wrong size is not confirmed; row and object are removed", async () => {
    const answer = await presign({ filename: "wrong-size.bin", size: "64" })
    expect((await put(answer, 63)).status).toBe(200)
    const uid = answer.fields["X-Key"]!
    await eventually(() => status(uid) !== "PENDING")
    expect(status(uid)).toBe("GONE")
    expect(h.ctx.objects.stat(answer.fields.Key!)).toBeNull()
  })

  it("R-FILE-STATUS-06: without a declared size the stored object confirms whatever its size", async () => {
    const answer = await presign({ filename: "no-size.bin" })
    expect((await put(answer, 12)).status).toBe(200)
    const uid = answer.fields["X-Key"]!
    await eventually(() => status(uid) !== "PENDING")
    expect(getFileByUid(h.ctx.db, uid)).toMatchObject({ status: "CONFIRMED", size: 12 })
  })

  it("R-FILE-STATUS-06: no row stays PENDING permanently (the seeded PENDING files are resolved too)", async () => {
    expect(seededPending.length).toBeGreaterThan(0)
    await eventually(() => seededPending.every((uid) => status(uid) !== "PENDING"))
  })
})

describe.concurrent("time-limited storage URLs", () => {
  it("R-UPLOAD-PRESIGN-07: a presigned PUT after its expiry is a 403", async () => {
    const answer = await presign({ filename: "late.bin", size: "5" })
    const exp = Number(new URL(answer.url).searchParams.get("exp"))
    expect(exp - Date.now()).toBeLessThanOrEqual(presignTtlMs(h.ctx))
    await eventually(() => Date.now() > exp + 5)
    const res = await put(answer, 5)
    expect(res.status).toBe(403)
    expect(h.ctx.objects.stat(answer.fields.Key!)).toBeNull()
  })
})
