/** The emulator itself: start-up, seeds, persistence, close, the Effect wrapper, admin helpers. */
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import {
  describe as describeHandle,
  Emulator,
  EmulatorLive,
  type EmulatorOptions,
  emulatorScoped,
  parseSeed,
  startEmulator
} from "../../src/emulator/index.ts"
import { Emulator as TestEmulator, emulatorLayer, tempDir } from "../support/effect.ts"
import { END_OF_LIST } from "../../src/emulator/core/writes.ts"
import { ok, rpc } from "./rest-support.ts"

/** An emulator of one test alone, closed when that test's scope closes (also when it fails). */
const ownEmulator = (options: EmulatorOptions) => Effect.map(Layer.build(emulatorLayer(options)), Context.get(TestEmulator))

describe("startEmulator", () => {
  // Real HTTP: the live clock (no TestClock), and each test's emulator lives in the test's scope.
  it.live("the default seed is one organization, one OWNER with tokens, one workspace with one list", () =>
    Effect.gen(function* () {
      const h = yield* ownEmulator({ variant: "reference" })
      yield* Effect.promise(async () => {
        expect(h.restUrl).toBe(`${h.baseUrl}/rest`)
        expect(h.baseUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/)
        expect(h.storageUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/)
        expect(h.storageUrl).not.toBe(h.baseUrl)
        expect(h.workspaces).toHaveLength(1)
        const users = await ok(rpc(h, "list-users", {}))
        expect(users.users).toEqual([expect.objectContaining({ id: h.ownerUserId, accessLevel: "OWNER" })])
        expect((await ok(rpc(h, "list-lists", { workspaceId: h.workspaces[0] }))).items).toHaveLength(1)
        expect(await ok(rpc(h, "count-records", {}))).toEqual({ count: 0 })
      })
    }))

  it.live("describe() gives exactly the CLI contract's JSON line", () =>
    Effect.gen(function* () {
      const h = yield* ownEmulator({ variant: "reference" })
      const line = describeHandle(h)
      expect(Object.keys(line)).toEqual(["restUrl", "baseUrl", "token", "tokenId", "tokenSecret", "org", "workspaces"])
      expect(line).toMatchObject({ restUrl: h.restUrl, baseUrl: h.baseUrl, org: h.org, workspaces: [...h.workspaces] })
      expect(JSON.parse(JSON.stringify(line))).toEqual(line)
    }))

  it.live("seeds are deterministic: the same options give the same ids and content", () =>
    Effect.gen(function* () {
      const a = yield* ownEmulator({ variant: "reference", seed: "demo", clockStart: Date.UTC(2025, 0, 1) })
      const b = yield* ownEmulator({ variant: "reference", seed: "demo", clockStart: Date.UTC(2025, 0, 1) })
      yield* Effect.promise(async () => {
        expect(b.org).toBe(a.org)
        expect(b.token).toBe(a.token)
        const pa = await ok(rpc(a, "list-records", { limit: 100 }))
        const pb = await ok(rpc(b, "list-records", { limit: 100 }))
        const key = (p: any) => p.items.map((r: any) => [r.id, r.uid, r.title, r.users.map((u: any) => u.id), r.tags.map((t: any) => t.id)])
        expect(key(pb)).toEqual(key(pa))
        expect(pa.items.length).toBe(60)
        expect(pa.items.some((r: any) => /[^\x00-\x7f]/.test(r.title))).toBe(true)
        expect(pa.items.some((r: any) => r.title.length > 150)).toBe(true)
      })
    }))

  it.live("sized seeds: N is 3 workspaces of N records, WxN is W workspaces of N", () =>
    Effect.gen(function* () {
      expect(parseSeed(40)).toEqual({ kind: "sized", workspaces: 3, recordsPerWorkspace: 40 })
      expect(parseSeed("2x7")).toEqual({ kind: "sized", workspaces: 2, recordsPerWorkspace: 7 })
      expect(() => parseSeed("lots")).toThrow()
      const h = yield* ownEmulator({ variant: "reference", seed: "2x150" })
      yield* Effect.promise(async () => {
        expect(h.workspaces).toHaveLength(2)
        expect(await ok(rpc(h, "count-records", {}))).toEqual({ count: 300 })
        expect(await ok(rpc(h, "count-records", { workspaceId: h.workspaces[1] }))).toEqual({ count: 150 })
      })
    }))

  it.live("a database file keeps its data and tokens across restarts", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir("emulator-db-")
      const dbFile = path.join(dir, "state.sqlite")
      // The restart is what is checked: the first emulator is closed in the middle of the test.
      yield* Effect.promise(async () => {
        const first = await startEmulator({ variant: "reference", dbFile, seed: "demo" })
        const created = await ok(rpc(first, "create-record", { workspaceId: first.workspaces[0], title: "survives restart" }))
        const token = first.token
        await first.close()
        const second = await startEmulator({ variant: "reference", dbFile, seed: "demo" })
        try {
          expect(second.token).toBe(token)
          const d = await ok(rpc(second, "get-record", { workspaceId: second.workspaces[0], recordId: created.id }))
          expect(d.title).toBe("survives restart")
          // New ids do not collide with the stored ones.
          const again = await ok(rpc(second, "create-record", { workspaceId: second.workspaces[0], title: "after restart" }))
          expect(again.id).not.toBe(created.id)
        } finally {
          await second.close()
        }
      })
    }))

  // What is checked is close() itself, so the test closes the emulator by hand.
  it.live("close() stops both servers and is idempotent", () =>
    Effect.promise(async () => {
      const h = await startEmulator({ variant: "reference" })
      await Promise.all([h.close(), h.close()])
      await expect(fetch(`${h.restUrl}/v1/openapi.json`)).rejects.toThrow()
      await expect(fetch(`${h.storageUrl}/`)).rejects.toThrow()
    }))

  it.live("emulatorScoped and EmulatorLive start and stop an emulator with a scope", () =>
    Effect.gen(function* () {
      const url = yield* Effect.scoped(
        Effect.gen(function* () {
          const h = yield* emulatorScoped({})
          const res = yield* Effect.promise(() => fetch(`${h.restUrl}/v1/openapi.json`))
          expect(res.status).toBe(200)
          return h.restUrl
        })
      )
      yield* Effect.promise(() => expect(fetch(`${url}/v1/openapi.json`)).rejects.toThrow())
      const org = yield* Effect.provide(Effect.map(Emulator, (h) => h.org), EmulatorLive({}))
      expect(typeof org).toBe("string")
    }))
})

describe("admin helpers", () => {
  it.live("createUser, setWorkspaceLevel, touchRecords, deleteRecords, banOrganization, setSeatLimit", () =>
    Effect.gen(function* () {
      const h = yield* ownEmulator({ variant: "reference", seed: { workspaces: 1, recordsPerWorkspace: 10 } })
      yield* Effect.promise(async () => {
        const ws = h.workspaces[0]!
        const user = h.admin.createUser({ email: "new@load.test", firstName: "New", lastName: "User", workspaces: { [ws]: "VIEW_ONLY" } })
        expect((await rpc(h, "create-record", { workspaceId: ws, title: "x" }, { token: user.token })).status).toBe(403)
        h.admin.setWorkspaceLevel(ws, user.userId, "MEMBER")
        expect((await rpc(h, "create-record", { workspaceId: ws, title: "x" }, { token: user.token })).status).toBe(200)

        const before = await ok(rpc(h, "list-records", { workspaceId: ws, limit: 100 }))
        const touched = h.admin.touchRecords(2, ws)
        const after = await ok(rpc(h, "list-records", { workspaceId: ws, limit: 100 }))
        for (const id of touched) {
          const b = before.items.find((r: any) => r.id === id)
          const a = after.items.find((r: any) => r.id === id)
          expect(a.updatedAt > b.updatedAt).toBe(true)
        }
        const deleted = h.admin.deleteRecords(3, ws)
        expect(h.admin.countRecords(ws)).toBe(11 - 3)
        expect((await rpc(h, "get-record", { workspaceId: ws, recordId: deleted[0] })).status).toBe(422)

        h.admin.setSeatLimit(5)
        expect(h.ctx.limits.seats).toBe(5)
        h.admin.banOrganization()
        const banned = await rpc(h, "list-records", { workspaceId: ws })
        expect(banned.status).toBe(403)
        expect(banned.body.error.code).toBe("COMPANY_BANNED")
        h.admin.banOrganization(undefined, false)
        expect((await rpc(h, "list-records", { workspaceId: ws })).status).toBe(200)
      })
    }))
})

describe("cost of a write", () => {
  // A record created goes to the end of its list, trash included: read through an index of
  // the list's positions, not a scan of every record of every workspace (which made each
  // create cost in proportion to all the records the emulator holds).
  it.live("the end of a list is read through an index of its positions", () =>
    Effect.gen(function* () {
      const h = yield* ownEmulator({ variant: "reference" })
      const plan = (h.ctx.db.prepare(`EXPLAIN QUERY PLAN ${END_OF_LIST}`).all("list") as Array<{ detail: string }>).map((r) => r.detail).join(" | ")
      expect(plan).toMatch(/USING (COVERING )?INDEX records_list_position/)
    }))
})
