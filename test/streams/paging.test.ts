import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import { Limiter } from "../../src/client/limiter.ts"
import { RestClient } from "../../src/client/rest-client.ts"
import { recordActivity, recordActivityStream } from "../../src/streams/activity.ts"
import { usersStream, workspacesStream, listsStream } from "../../src/streams/directory.ts"
import { filesStream } from "../../src/streams/files.ts"
import { type PageError, sequentialPages } from "../../src/streams/paging.ts"
import { listRecordsAcrossWorkspaces, listRecordsStream, recordsFetch, searchRecordsStream } from "../../src/streams/records.ts"
import { Emulator, emulatorLayer } from "../support/effect.ts"
import { clientFor, collect, countBy, listedIds, runWith } from "./helpers.ts"

// No TestClock: the client's retries and timeouts run on real time against a real server.
layer(emulatorLayer({ seed: { workspaces: 2, recordsPerWorkspace: 250 } }), { timeout: 30_000, excludeTestServices: true })("paging streams", (it) => {
  it.effect("R-REST-PAGE-03 R-REST-PAGE-04: a page size above 100 loses nothing; skip advances by the items received", () =>
    Effect.gen(function*() {
      const emu = yield* Emulator
      const client = clientFor(emu)
      const ws = emu.workspaces[0]!
      // Ask the service itself for 500 a page: it caps silently at 100, so a skip advanced
      // by the limit asked for would jump over 400 records per page.
      const raw = yield* collect(client, Stream.unwrap(Effect.map(recordsFetch({ workspaceId: ws }), (fetch) => sequentialPages(fetch, 500))))
      expect(raw.map((r) => r.id)).toEqual(listedIds(emu, ws))
      const clamped = yield* collect(client, listRecordsStream({ workspaceId: ws }, { limit: 500, concurrency: 1 }))
      expect(clamped.map((r) => r.id)).toEqual(listedIds(emu, ws))
    }))

  it.effect("R-REST-PAGE-05 R-REST-RECORD-11: fan-out over a known total yields every record once, in order, with pages in flight together", () =>
    Effect.gen(function*() {
      const emu = yield* Emulator
      const client = clientFor(emu)
      const { ids, peak } = yield* runWith(client, Effect.gen(function*() {
        const items = yield* Stream.runCollect(listRecordsStream({}, { concurrency: 4, limit: 40 }))
        const stats = yield* (yield* Limiter).stats
        return { ids: [...items].map((r) => r.id), peak: stats.peakInFlight }
      }))
      expect(ids).toEqual(listedIds(emu))
      expect([...countBy(ids).values()].every((n) => n === 1)).toBe(true)
      expect(peak).toBeGreaterThan(1)
    }))

  it.effect("R-REST-RECORD-12: across workspaces, each workspace's records come complete and in order, tagged with their workspace", () =>
    Effect.gen(function*() {
      const emu = yield* Emulator
      const items = yield* collect(clientFor(emu), listRecordsAcrossWorkspaces(emu.workspaces, { concurrency: 3, workspaceConcurrency: 2 }))
      for (const ws of emu.workspaces) {
        expect(items.filter((r) => r.workspaceId === ws).map((r) => r.id)).toEqual(listedIds(emu, ws))
      }
      expect(items).toHaveLength(emu.workspaces.reduce((n, ws) => n + listedIds(emu, ws).length, 0))
    }))

  it.effect("R-REST-ACTIVITY-07 R-REST-ACTIVITY-09: activity above 24 items per record is complete", () =>
    Effect.gen(function*() {
      const emu = yield* Emulator
      const client = clientFor(emu)
      const ws = emu.workspaces[0]!
      const first = listedIds(emu, ws)[5]!
      // 30 title changes: 30 more action items on one record.
      yield* runWith(client, Effect.flatMap(RestClient, (c) =>
        Effect.forEach(Array.from({ length: 30 }, (_, i) => i), (i) =>
          c.updateRecord({ workspaceId: ws, recordId: first, title: `Renamed ${i}` }), { discard: true })))
      const expected = emu.ctx.db.prepare("SELECT count(*) FROM activity WHERE record_id = ?").pluck().get(first) as number
      expect(expected).toBeGreaterThan(24)
      for (const concurrency of [1, 3]) {
        const items = yield* collect(client, recordActivityStream({ workspaceId: ws, recordId: first }, { limit: 100, concurrency }))
        expect(items).toHaveLength(expected)
        expect(countBy(items.map((i) => i.id)).size).toBe(expected)
        // Collected without a stream for one page, with one past it: the same items, in the same order.
        expect(yield* runWith(client, recordActivity({ workspaceId: ws, recordId: first }, { limit: 100, concurrency }))).toEqual(items)
      }
      const other = listedIds(emu, ws)[6]!
      const one = yield* collect(client, recordActivityStream({ workspaceId: ws, recordId: other }))
      expect(one.length).toBeLessThanOrEqual(24)
      expect(yield* runWith(client, recordActivity({ workspaceId: ws, recordId: other }))).toEqual(one)
    }))

  it.effect("R-REST-PAGE-09 R-REST-PAGE-10 R-REST-PAGE-11: workspaces, users (paged by totalCount) and unpaged lists", () =>
    Effect.gen(function*() {
      const emu = yield* Emulator
      const client = clientFor(emu)
      const workspaces = yield* collect(client, workspacesStream())
      expect(workspaces.map((w) => w.id).sort()).toEqual([...emu.workspaces].sort())
      const users = yield* collect(client, usersStream({}, { limit: 1 }))
      const userCount = yield* runWith(client, Effect.map(Effect.flatMap(RestClient, (c) => c.listUsers({})), (p) => p.totalCount))
      expect(users).toHaveLength(userCount)
      const lists = yield* collect(client, listsStream(emu.workspaces[0]!))
      expect(lists.length).toBeGreaterThan(0)
    }))

  it.effect("R-REST-PAGE-08: files page by totalItems and hasNextPage", () =>
    Effect.gen(function*() {
      const emu = yield* Emulator
      const client = clientFor(emu)
      const ws = emu.workspaces[0]!
      const expected = emu.ctx.db.prepare("SELECT count(*) FROM files WHERE workspace_id = ?").pluck().get(ws) as number
      const files = yield* collect(client, filesStream(ws, { limit: 2, concurrency: 3 }))
      expect(files).toHaveLength(expected)
      expect(new Set(files.map((f) => f.id)).size).toBe(expected)
    }))

  it.effect("R-REST-SEARCH-08 R-REST-SEARCH-09: search is one request whose limit is clamped to 100", () =>
    Effect.gen(function*() {
      const emu = yield* Emulator
      const client = clientFor(emu)
      emu.resetStats()
      const results = yield* collect(client, searchRecordsStream({ workspaceId: emu.workspaces[0]!, query: "" }, { limit: 1000 }))
      expect(results.length).toBeLessThanOrEqual(100)
      expect(emu.stats().byRoute["search-records"]).toBe(1)
    }))

  it.effect("R-REST-ERR-06: a page that keeps failing fails the stream with a typed error naming the workspace and page", () =>
    Effect.gen(function*() {
      const emu = yield* Emulator
      const client = clientFor(emu, { retry: { maxRetries: 1, baseDelayMs: 1, capDelayMs: 2 } })
      const ws = emu.workspaces[1]!
      emu.faults.inject({ route: "list-records", kind: "500", times: 2 })
      const error = (yield* runWith(client, Effect.flip(Stream.runDrain(listRecordsStream({ workspaceId: ws }, { concurrency: 1 }))))) as PageError
      expect(error._tag).toBe("PageError")
      expect(error.workspaceId).toBe(ws)
      expect(error.skip).toBe(0)
      expect(error.message).toContain(`workspace ${ws}`)
      expect(error.message).toContain("page 1")
    }))
})
