/**
 * Fault injection: rate limit (429 + Retry-After in seconds or as an HTTP-date), 500s,
 * dropped connections, ambiguous writes (committed, answer lost), writes answered and not
 * applied, churn under offset
 * paging, scripted one-shot faults; and request statistics.
 */
import { afterEach, describe, expect, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import type { EmulatorHandle } from "../../src/emulator/index.ts"
import { Emulator, emulatorLayer } from "../support/effect.ts"
import { ok, rpc } from "./rest-support.ts"

let h: EmulatorHandle
let ws: string

// The helpers below read the file's emulator, and what the set-up derives from it, from these
// bindings: the layer fills them once the emulator is up and closes it after the last test.
const fileLayer = Layer.effectDiscard(
  Effect.gen(function* () {
    h = yield* Emulator
    ws = h.workspaces[0]!
  })
).pipe(Layer.provideMerge(emulatorLayer({ variant: "reference", seed: { workspaces: 1, recordsPerWorkspace: 60 } })))
afterEach(() => h.faults.reset())

const count = () => h.admin.countRecords(ws)

// Real HTTP and real waits: the live clock (no TestClock), so timers and time scales run.
layer(fileLayer, { timeout: 30_000, excludeTestServices: true })((it) => {
  describe("rate limit", () => {
    it.effect("R-REST-ERR-05: beyond the per-token rate a request gets 429 with Retry-After in whole seconds", () => Effect.promise(async () => {
      h.faults.configure({ rateLimit: 2 })
      const statuses: Array<number> = []
      let retryAfter: string | null = null
      for (let i = 0; i < 5; i++) {
        const a = await rpc(h, "list-workspaces", {})
        statuses.push(a.status)
        if (a.status === 429) {
          retryAfter = a.headers.get("retry-after")
          expect(a.body.error.code).toBe("RATE_LIMITED")
        }
      }
      expect(statuses.slice(0, 2)).toEqual([200, 200])
      expect(statuses).toContain(429)
      expect(retryAfter).toMatch(/^[1-9]\d*$/)
      // The bucket is per token: another user's token is not limited by the first one's use.
      const other = h.admin.createUser({ email: "other@load.test", firstName: "O", lastName: "T", orgLevel: "ADMIN" })
      expect((await rpc(h, "list-workspaces", {}, { token: other.token })).status).toBe(200)
    }))

    it.effect("429 Retry-After can be an HTTP-date", () => Effect.promise(async () => {
      h.faults.configure({ rateLimit: 1, retryAfterForm: "http-date" })
      let limited = null
      for (let i = 0; i < 4 && limited === null; i++) {
        const a = await rpc(h, "list-workspaces", {})
        if (a.status === 429) limited = a
      }
      expect(limited).not.toBeNull()
      const value = limited!.headers.get("retry-after")!
      expect(value).toMatch(/^[A-Z][a-z]{2}, \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} GMT$/)
      expect(Date.parse(value)).toBeGreaterThan(Date.now() - 1000)
    }))

    it.effect("a scripted 429 carries the given Retry-After (number or raw string)", () => Effect.promise(async () => {
      h.faults.inject({ route: "count-records", kind: "429", retryAfter: 7 })
      h.faults.inject({ route: "count-records", kind: "429", retryAfter: "Wed, 21 Oct 2015 07:28:00 GMT" })
      expect((await rpc(h, "count-records", {})).headers.get("retry-after")).toBe("7")
      expect((await rpc(h, "count-records", {})).headers.get("retry-after")).toBe("Wed, 21 Oct 2015 07:28:00 GMT")
      expect((await rpc(h, "count-records", {})).status).toBe(200)
    }))
  })

  describe("long waits asked for", () => {
    it.effect("R-REST-ERR-05: retryAfter sets the rate limit's Retry-After: hours in seconds, a far-future HTTP date, or a raw value", () => Effect.promise(async () => {
      const limitedOnce = async (): Promise<string | null> => {
        for (let i = 0; i < 4; i++) {
          const a = await rpc(h, "list-workspaces", {})
          if (a.status === 429) return a.headers.get("retry-after")
        }
        return null
      }
      h.faults.configure({ rateLimit: 1, retryAfter: 3 * 3600 })
      expect(await limitedOnce()).toBe("10800")
      h.faults.configure({ rateLimit: 1, retryAfter: 3 * 3600, retryAfterForm: "http-date" })
      const date = Date.parse((await limitedOnce())!)
      expect(date).toBeGreaterThan(Date.now() + 3 * 3600_000 - 60_000)
      h.faults.configure({ rateLimit: 1, retryAfter: "Fri, 01 Jan 2100 00:00:00 GMT" })
      expect(await limitedOnce()).toBe("Fri, 01 Jan 2100 00:00:00 GMT")
    }))
  })

  /** Reads a fetch answer's body until `want` bytes came; hangs (the test times out) if fewer ever come. */
  const readAtLeast = async (res: Response, want: number): Promise<number> => {
    const reader = res.body!.getReader()
    let got = 0
    while (got < want) {
      const { done, value } = await reader.read()
      if (done) break
      got += value.length
    }
    return got
  }

  describe("stalled bodies", () => {
    it("stall-body: the headers and half the body go out, then nothing; writes pass untouched; one-shot", { timeout: 10_000 }, async () => {
      h.faults.inject({ route: "create-record", kind: "stall-body" })
      expect((await rpc(h, "create-record", { workspaceId: ws, title: "not stalled" })).status).toBe(200)
      expect(h.faults.pending()).toBe(1)
      h.faults.inject({ route: "list-records", kind: "stall-body" })
      const controller = new AbortController()
      const stalled = await fetch(`${h.restUrl}/v1/list-records`, {
        method: "POST",
        headers: { authorization: `Bearer ${h.token}`, "content-type": "application/json" },
        body: JSON.stringify({ workspaceId: ws, limit: 20 }),
        signal: controller.signal
      })
      expect(stalled.status).toBe(200)
      const length = Number(stalled.headers.get("content-length"))
      expect(length).toBeGreaterThan(100)
      expect(await readAtLeast(stalled, Math.floor(length / 2))).toBe(Math.floor(length / 2))
      controller.abort()
      // Spent; the one scripted on the write is still waiting for a read that never comes.
      expect(h.faults.pending()).toBe(1)
      expect((await rpc(h, "list-records", { workspaceId: ws, limit: 20 })).status).toBe(200)
    })

    it("stallRate stalls reads (here every one) and answers writes", { timeout: 10_000 }, async () => {
      h.faults.configure({ stallRate: 1 })
      expect((await rpc(h, "create-record", { workspaceId: ws, title: "answered" })).status).toBe(200)
      const controller = new AbortController()
      const stalled = await fetch(`${h.restUrl}/v1/records?workspaceId=${ws}&limit=20`, {
        headers: { authorization: `Bearer ${h.token}` },
        signal: controller.signal
      })
      const length = Number(stalled.headers.get("content-length"))
      expect(await readAtLeast(stalled, Math.floor(length / 2))).toBe(Math.floor(length / 2))
      controller.abort()
    })
  })

  describe("server errors and lost answers", () => {
    it.effect("R-REST-ERR-06: failRate answers 500s; times limits a scripted fault", () => Effect.promise(async () => {
      h.faults.configure({ failRate: 1 })
      expect((await rpc(h, "list-workspaces", {})).status).toBe(500)
      h.faults.reset()
      h.faults.inject({ route: "list-workspaces", kind: "500", times: 2 })
      expect((await rpc(h, "list-workspaces", {})).status).toBe(500)
      expect((await rpc(h, "list-workspaces", {})).status).toBe(500)
      expect((await rpc(h, "list-workspaces", {})).status).toBe(200)
      expect(h.faults.pending()).toBe(0)
    }))

    it.effect("a dropped connection gets no answer at all, and the request did not run", () => Effect.promise(async () => {
      const before = count()
      h.faults.inject({ route: "create-record", kind: "drop" })
      await expect(rpc(h, "create-record", { workspaceId: ws, title: "dropped" })).rejects.toThrow()
      expect(count()).toBe(before)
      h.faults.configure({ dropRate: 1 })
      await expect(rpc(h, "list-workspaces", {})).rejects.toThrow()
    }))

    it.effect("an ambiguous write commits, then the socket closes without an answer", () => Effect.promise(async () => {
      const before = count()
      h.faults.inject({ route: "create-record", kind: "ambiguous" })
      await expect(rpc(h, "create-record", { workspaceId: ws, title: "committed but unanswered" })).rejects.toThrow()
      expect(count()).toBe(before + 1)
      const found = await ok(rpc(h, "search-records", { workspaceId: ws, query: "committed but unanswered" }))
      expect(found).toHaveLength(1)
    }))

    it.effect("a not-applied write is answered 2xx with its usual body, and nothing of it stays; reads pass untouched; one-shot", () => Effect.promise(async () => {
      const before = count()
      h.faults.inject({ route: "create-record", kind: "not-applied" })
      const answered = await rpc(h, "create-record", { workspaceId: ws, title: "acknowledged, never kept" })
      expect(answered.status).toBe(200)
      expect(answered.body.title).toBe("acknowledged, never kept")
      expect(count()).toBe(before)
      expect(await ok(rpc(h, "search-records", { workspaceId: ws, query: "acknowledged, never kept" }))).toHaveLength(0)
      // Deleting a comment: answered success, the comment still shows.
      const recordId = (await ok(rpc(h, "create-record", { workspaceId: ws, title: "commented" }))).id
      const comment = await ok(rpc(h, "create-comment", { workspaceId: ws, recordId, text: "stays" }))
      h.faults.inject({ route: "list-record-activity", kind: "not-applied" })
      h.faults.inject({ route: "delete-comment", kind: "not-applied" })
      expect((await rpc(h, "delete-comment", { workspaceId: ws, commentId: comment.id })).status).toBe(200)
      const comments = async () => (await ok(rpc(h, "list-record-activity", { workspaceId: ws, recordId, type: "comments" }))).items
      expect((await comments()).map((c: { id: string; deletedAt: unknown }) => [c.id, c.deletedAt])).toEqual([[comment.id, null]])
      // A read is not a write: the scripted fault on it is still waiting, and the next delete applies.
      expect(h.faults.pending()).toBe(1)
      h.faults.reset()
      await ok(rpc(h, "delete-comment", { workspaceId: ws, commentId: comment.id }))
      expect((await comments()).every((c: { deletedAt: unknown }) => c.deletedAt !== null)).toBe(true)
    }))

    it.effect("ambiguousWriteRate applies to writes only; resource-style writes map to the operation name", () => Effect.promise(async () => {
      h.faults.configure({ ambiguousWriteRate: 1 })
      expect((await rpc(h, "list-records", { workspaceId: ws, limit: 1 })).status).toBe(200)
      const before = count()
      await expect(
        fetch(`${h.restUrl}/v1/records`, {
          method: "POST",
          headers: { authorization: `Bearer ${h.token}`, "content-type": "application/json" },
          body: JSON.stringify({ workspaceId: ws, title: "resource ambiguous" })
        })
      ).rejects.toThrow()
      expect(count()).toBe(before + 1)
      h.faults.reset()
      // A scripted ambiguous fault on a read passes the read through untouched.
      h.faults.inject({ route: "list-records", kind: "ambiguous" })
      expect((await rpc(h, "list-records", { workspaceId: ws, limit: 1 })).status).toBe(200)
    }))

    it.effect("a scripted fault matches raw routes by path (RegExp); latency still answers", () => Effect.promise(async () => {
      h.faults.inject({ route: /^\/graphql$/, kind: "500" })
      const res = await fetch(`${h.baseUrl}/graphql`, {
        method: "POST",
        headers: { "content-type": "application/json", "svc-token-id": h.tokenId, "svc-token-secret": h.tokenSecret },
        body: JSON.stringify({ query: "{ currentUser { id } }" })
      })
      expect(res.status).toBe(500)
      h.faults.inject({ route: "count-records", kind: "latency", latencyMs: 20 })
      expect((await rpc(h, "count-records", {})).status).toBe(200)
      expect(h.faults.pending()).toBe(0)
    }))
  })

  describe("churn", () => {
    it.effect("each list-records call inserts records before the first and deletes front ones, so offsets drift", () => Effect.promise(async () => {
      const first = await ok(rpc(h, "list-records", { workspaceId: ws, limit: 10 }))
      h.faults.configure({ churn: { insertsPerPage: 3, deletesPerPage: 1 } })
      const before = count()
      const page1 = await ok(rpc(h, "list-records", { workspaceId: ws, limit: 10 }))
      expect(page1.items.map((r: any) => r.id)).toEqual(first.items.map((r: any) => r.id))
      // Three new records now sit before the old front, which was deleted.
      expect(count()).toBe(before + 3 - 1)
      h.faults.reset()
      const front = await ok(rpc(h, "list-records", { workspaceId: ws, limit: 10 }))
      expect(front.items.slice(0, 3).every((r: any) => r.title.startsWith("Churn record"))).toBe(true)
      expect(front.items.map((r: any) => r.id)).not.toContain(first.items[0].id)
      // Page 2 by offset now repeats items page 1 already returned.
      const page2 = await ok(rpc(h, "list-records", { workspaceId: ws, limit: 10, skip: 10 }))
      const seen = new Set(page1.items.map((r: any) => r.id))
      expect(page2.items.some((r: any) => seen.has(r.id))).toBe(true)
    }))
  })

  describe("statistics", () => {
    it.effect("counts requests by route and status; resetStats clears them", () => Effect.promise(async () => {
      h.resetStats()
      await rpc(h, "list-records", { workspaceId: ws, limit: 1 })
      await fetch(`${h.restUrl}/v1/records?workspaceId=${ws}&limit=1`, { headers: { authorization: `Bearer ${h.token}` } })
      await rpc(h, "get-record", { workspaceId: ws, recordId: "missing" })
      const stats = h.stats()
      expect(stats.total).toBe(3)
      expect(stats.byRoute["list-records"]).toBe(2)
      expect(stats.byStatus["200"]).toBe(2)
      expect(stats.byStatus["422"]).toBe(1)
      expect(stats.byRouteStatus["get-record 422"]).toBe(1)
      h.resetStats()
      expect(h.stats().total).toBe(0)
    }))
  })
})
