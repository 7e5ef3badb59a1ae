/**
 * Background reconciliation and URL expiry, with a tiny time scale so the 15-minute
 * signing window lasts under a second.
 */
import { describe, expect, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import type { EmulatorHandle } from "../../src/emulator/index.ts"
import { getFileByUid } from "../../src/emulator/uploads/files.ts"
import { presignTtlMs } from "../../src/emulator/uploads/presign.ts"
import { Emulator, emulatorLayer } from "../support/effect.ts"

let h: EmulatorHandle
let ws: string
let seededPending: Array<string>

// The helpers below read the file's emulator, and what the set-up derives from it, from these
// bindings: the layer fills them once the emulator is up and closes it after the last test.
const fileLayer = Layer.effectDiscard(
  Effect.gen(function* () {
    h = yield* Emulator
    ws = h.workspaces[0]!
    seededPending = (h.ctx.db.prepare("SELECT uid FROM files WHERE status = 'PENDING'").all() as Array<{ uid: string }>).map(
      (r) => r.uid
    )
  })
).pipe(
  // 15 min x 0.001 = 0.9 s signing window.
  Layer.provideMerge(emulatorLayer({ variant: "reference", seed: "demo", timeScale: 0.001 }))
)

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/**
 * Polls until `check` holds (eventual state, not a timing assertion). No deadline of its
 * own: a busy machine only makes the wait longer, and the test's timeout ends a wait for
 * what never comes.
 */
const eventually = async (check: () => boolean): Promise<void> => {
  while (!check()) await sleep(20)
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

// Real HTTP and real waits: the live clock (no TestClock), so timers and time scales run.
layer(fileLayer, { timeout: 30_000, excludeTestServices: true })((it) => {
  describe.concurrent("background reconciliation", () => {
    it.effect("R-FILE-STATUS-06: an uploaded but never confirmed file becomes CONFIRMED after the signing window", () => Effect.promise(async () => {
      const answer = await presign({ filename: "unconfirmed.bin", size: "64" })
      expect((await put(answer, 64)).status).toBe(200)
      const uid = answer.fields["X-Key"]!
      expect(status(uid)).toBe("PENDING")
      await eventually(() => status(uid) !== "PENDING")
      expect(getFileByUid(h.ctx.db, uid)).toMatchObject({ status: "CONFIRMED", size: 64 })
    }))

    it.effect("R-FILE-STATUS-06: a PENDING file whose bytes never came is removed after the window (RECONCILE_MISSING_OBJECT)", () => Effect.promise(async () => {
      const answer = await presign({ filename: "never.bin", size: "64" })
      const uid = answer.fields["X-Key"]!
      expect(status(uid)).toBe("PENDING")
      await eventually(() => status(uid) !== "PENDING")
      expect(status(uid)).toBe("GONE")
    }))

    it.effect("R-FILE-STATUS-06: an object of the wrong size is not confirmed; row and object are removed", () => Effect.promise(async () => {
      const answer = await presign({ filename: "wrong-size.bin", size: "64" })
      expect((await put(answer, 63)).status).toBe(200)
      const uid = answer.fields["X-Key"]!
      await eventually(() => status(uid) !== "PENDING")
      expect(status(uid)).toBe("GONE")
      expect(h.ctx.objects.stat(answer.fields.Key!)).toBeNull()
    }))

    it.effect("R-FILE-STATUS-06: without a declared size the stored object confirms whatever its size", () => Effect.promise(async () => {
      const answer = await presign({ filename: "no-size.bin" })
      expect((await put(answer, 12)).status).toBe(200)
      const uid = answer.fields["X-Key"]!
      await eventually(() => status(uid) !== "PENDING")
      expect(getFileByUid(h.ctx.db, uid)).toMatchObject({ status: "CONFIRMED", size: 12 })
    }))

    it.effect("R-FILE-STATUS-06: no row stays PENDING permanently (the seeded PENDING files are resolved too)", () => Effect.promise(async () => {
      expect(seededPending.length).toBeGreaterThan(0)
      await eventually(() => seededPending.every((uid) => status(uid) !== "PENDING"))
    }))
  })

  describe.concurrent("time-limited storage URLs", () => {
    it.effect("R-UPLOAD-PRESIGN-07: a presigned PUT after its expiry is a 403", () => Effect.promise(async () => {
      const answer = await presign({ filename: "late.bin", size: "5" })
      const exp = Number(new URL(answer.url).searchParams.get("exp"))
      expect(exp - Date.now()).toBeLessThanOrEqual(presignTtlMs(h.ctx))
      await eventually(() => Date.now() > exp + 5)
      const res = await put(answer, 5)
      expect(res.status).toBe(403)
      expect(h.ctx.objects.stat(answer.fields.Key!)).toBeNull()
    }))
  })
})
