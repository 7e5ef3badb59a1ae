/**
 * migrate's verification and report where the target cannot hold everything: a list the
 * service cannot make and `archived` it takes with success and ignores (the emulator's alt
 * reading: CREATE_LIST_READING, UNDOCUMENTED_INPUT_FIELDS) are reported and verified as
 * such on every run, never "different" forever; the order of records within each list is
 * compared and reported, kept or not; a member who may hold a custom role the documents
 * do not show is named.
 */
import { expect, layer } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as path from "node:path"
import { GraphqlClient } from "../../src/client/graphql-client.ts"
import type { ClientServices } from "../../src/client/layer.ts"
import { clientLayer } from "../../src/client/layer.ts"
import { RestClient } from "../../src/client/rest-client.ts"
import { workspaceFilesFromServices } from "../../src/connectors/files/workspace-files.ts"
import { insertList } from "../../src/emulator/core/lists.ts"
import type { EmulatorHandle } from "../../src/emulator/index.ts"
import { Journal } from "../../src/store/journal.ts"
import { SnapshotStore } from "../../src/store/snapshot.ts"
import { migrate, type MigrateEnd } from "../../src/sync/migrate/migrate.ts"
import { type ReadingProxy, startReadingProxy } from "../client/reading-proxy.ts"
import { Emulator, emulatorLayer, tempDir } from "../support/effect.ts"
import { testClient } from "./replay-helpers.ts"

const q = <A>(handle: EmulatorHandle, sql: string, ...args: Array<unknown>) => handle.ctx.db.prepare(sql).all(...args) as Array<A>

/** Backlog's order at the source: not the order its records were made in (nor their ids'). */
const BACKLOG_ORDER = ["Charlie", "Golf", "Alpha", "Foxtrot", "Bravo"]

/** A source workspace: lists Backlog (five records, in BACKLOG_ORDER) and Doing (two), one record archived. */
const seedSource = (handle: EmulatorHandle) =>
  Effect.gen(function*() {
    const ws = handle.admin.createWorkspace({ name: `source ${Math.random()}` }).id
    const backlog = insertList(handle.ctx, ws, "Backlog")
    const doing = insertList(handle.ctx, ws, "Doing")
    const rest = yield* RestClient
    const make = (title: string, listId: string) => Effect.map(rest.createRecord({ workspaceId: ws, title, listId }), (r) => r.id)
    for (const title of ["Alpha", "Bravo", "Charlie", "Foxtrot", "Golf"]) yield* make(title, backlog.id)
    yield* make("Delta", doing.id)
    const e = yield* make("Echo", doing.id)
    BACKLOG_ORDER.forEach((title, i) => handle.ctx.db.prepare("UPDATE records SET position = ? WHERE workspace_id = ? AND title = ?").run(i + 1, ws, title))
    // Archived at the source (directly: the alt reading has no write that archives).
    handle.ctx.db.prepare("UPDATE records SET archived = 1 WHERE id = ?").run(e)
    return ws
  }).pipe(Effect.provide(testClient(handle)))

const endOf = (client: Layer.Layer<ClientServices>, workspaceId: string) =>
  Effect.gen(function*() {
    const ctx = yield* Layer.build(client)
    return {
      rest: Context.get(ctx, RestClient),
      graphql: Context.get(ctx, GraphqlClient),
      files: yield* Effect.provide(workspaceFilesFromServices, ctx),
      workspaceId
    } satisfies MigrateEnd
  })

/** Migrates `source` into `target`, the target's REST calls through `proxy` (which records them). */
const migrateOnce = (handle: EmulatorHandle, proxy: ReadingProxy, dir: string, source: string, target: string) =>
  Effect.scoped(Effect.gen(function*() {
    const throughProxy = clientLayer({
      restUrl: `${proxy.url}/rest`,
      baseUrl: handle.baseUrl,
      token: handle.token,
      tokenId: handle.tokenId,
      tokenSecret: handle.tokenSecret,
      org: handle.org,
      retry: { maxRetries: 2, baseDelayMs: 5, capDelayMs: 20 }
    })
    const store = Context.get(yield* Layer.build(SnapshotStore.layer(path.join(dir, "source.sqlite"))), SnapshotStore)
    const journal = Context.get(yield* Layer.build(Journal.layer(path.join(dir, "journal.sqlite"))), Journal)
    return yield* migrate({
      source: yield* endOf(testClient(handle), source),
      target: yield* endOf(throughProxy, target),
      journal,
      store
    })
  }))

const recorder = (handle: EmulatorHandle) =>
  Effect.acquireRelease(
    Effect.promise(() => startReadingProxy(new URL(handle.restUrl).origin)),
    (proxy) => Effect.promise(() => proxy.close())
  )

const archivedSent = (proxy: ReadingProxy) =>
  proxy.bodies.filter((b) => b.operation === "update-record" && typeof b.body === "object" && b.body !== null && "archived" in b.body).length

// Real HTTP to the emulator: the live clock. The suite's variant decides what the target can hold.
layer(emulatorLayer({ seed: "empty" }), { timeout: 60_000, excludeTestServices: true })("migrate: what the target cannot hold is reported, and verification holds", (it) => {
  it.effect("R-REST-RECORD-43 R-REST-CALL-15: lists the target cannot make and `archived` it ignores are reported on every run; a rerun verifies and sends neither again", () =>
    Effect.gen(function*() {
      const handle = yield* Emulator
      const proxy = yield* recorder(handle)
      const dir = yield* tempDir("ws-migrate-report-")
      const source = yield* seedSource(handle)
      const target = handle.admin.createWorkspace({ name: `target ${Math.random()}` }).id
      const alt = handle.variant === "alt"

      const first = yield* migrateOnce(handle, proxy, dir, source, target)
      expect(first.mismatches).toEqual([])
      expect(first.verified).toBe(true)
      expect(first.records).toMatchObject({ source: 7, created: 7, skipped: 0, failed: 0 })
      const archivedOnTarget = q<{ n: number }>(handle, "SELECT count(*) AS n FROM records WHERE workspace_id = ? AND archived = 1", target)[0]!.n
      const listsOnTarget = q<{ title: string }>(handle, "SELECT title FROM lists WHERE workspace_id = ? ORDER BY position", target).map((l) => l.title)
      const what = (r: typeof first) => r.notCarried.map((n) => n.what)
      if (alt) {
        // Reported, with the lists named and the archived record counted.
        expect(first.lists.notMade).toEqual(["Backlog", "Doing"])
        expect(first.notCarried.find((n) => n.what === "lists")).toMatchObject({ count: 2, why: expect.stringContaining('"Backlog", "Doing"') })
        expect(first.notCarried.find((n) => n.what === "archived")).toMatchObject({ count: 1 })
        expect(archivedOnTarget).toBe(0)
        expect(listsOnTarget).toEqual(["To do"])
      } else {
        expect(first.lists.notMade).toEqual([])
        expect(what(first)).not.toContain("lists")
        expect(what(first)).not.toContain("archived")
        expect(archivedOnTarget).toBe(1)
        expect(listsOnTarget).toEqual(["To do", "Backlog", "Doing"])
      }

      proxy.operations.length = 0
      proxy.bodies.length = 0
      const again = yield* migrateOnce(handle, proxy, dir, source, target)
      expect(again.mismatches).toEqual([])
      expect(again.verified).toBe(true)
      expect(again.records).toMatchObject({ created: 0, skipped: 7, failed: 0 })
      expect(what(again).filter((w) => w === "lists" || w === "archived")).toEqual(alt ? ["lists", "archived"] : [])
      expect(archivedSent(proxy)).toBe(0)
      // Nothing is sent again: no list create, and no update or move of the records in the first list.
      expect(proxy.operations.filter((o) => /^(create|update|move)-(record|list)$|^POST \/v1\/lists$/.test(o))).toEqual([])
    }))

  it.effect("R-REST-RECORD-38: records are created in each list's source order, so the target keeps it; the order is compared and reported per list, kept or not, without failing verification", () =>
    Effect.gen(function*() {
      const handle = yield* Emulator
      const proxy = yield* recorder(handle)
      const dir = yield* tempDir("ws-migrate-order-")
      const source = yield* seedSource(handle)
      const target = handle.admin.createWorkspace({ name: `target ${Math.random()}` }).id
      // The target has the lists (the alt reading makes none): this is about the order within them.
      for (const title of ["Backlog", "Doing"]) insertList(handle.ctx, target, title)
      /** Per list, whether the target holds its records in the source's order (from the databases). */
      const truth = () => {
        const order = (ws: string, list: string) =>
          q<{ title: string }>(handle, "SELECT r.title FROM records r JOIN lists l ON l.id = r.list_id WHERE r.workspace_id = ? AND l.title = ? ORDER BY r.position, r.id", ws, list)
            .map((r) => r.title)
        const kept: Array<string> = []
        const notKept: Array<string> = []
        for (const list of ["Backlog", "Doing"]) (order(source, list).join() === order(target, list).join() ? kept : notKept).push(list)
        return { kept, notKept }
      }

      // The first create of each list held by the service: the ones after it wait for it.
      handle.faults.inject({ route: "create-record", kind: "latency", latencyMs: 300 })
      const first = yield* migrateOnce(handle, proxy, dir, source, target).pipe(Effect.ensuring(Effect.sync(() => handle.faults.reset())))
      expect(first.verified).toBe(true)
      expect(first.lists.notMade).toEqual([])
      expect(truth()).toEqual({ kept: ["Backlog", "Doing"], notKept: [] })
      expect({ kept: [...first.lists.orderKept].sort(), notKept: [...first.lists.orderNotKept].sort() }).toEqual(truth())
      expect(first.notCarried.map((n) => n.what)).not.toContain("record order")

      // The target's Backlog put in another order than the source's: reported, not a difference.
      ;["Alpha", "Bravo", "Charlie", "Foxtrot", "Golf"].forEach((title, i) =>
        handle.ctx.db.prepare("UPDATE records SET position = ? WHERE workspace_id = ? AND title = ?").run(i + 1, target, title)
      )
      proxy.operations.length = 0
      const again = yield* migrateOnce(handle, proxy, dir, source, target)
      expect(again.verified).toBe(true)
      expect(again.mismatches).toEqual([])
      expect(again.lists.orderNotKept).toContain("Backlog")
      expect({ kept: [...again.lists.orderKept].sort(), notKept: [...again.lists.orderNotKept].sort() }).toEqual(truth())
      expect(again.notCarried.find((n) => n.what === "record order")).toMatchObject({ why: expect.stringContaining('"Backlog"') })
      // Nothing is sent to change it: no write sets a position.
      expect(proxy.operations.filter((o) => /^(create|update|move)-record$/.test(o))).toEqual([])
    }))

  it.effect("R-INVITE-01 R-ROLE-04: a member who may hold a custom role at the source is named, with the roles, when invited at their level", () =>
    Effect.gen(function*() {
      const handle = yield* Emulator
      const proxy = yield* recorder(handle)
      const dir = yield* tempDir("ws-migrate-roles-")
      const source = yield* seedSource(handle)
      const target = handle.admin.createWorkspace({ name: `target ${Math.random()}` }).id
      const reviewer = handle.admin.createUser({ email: `reviewer-${source}@source.example`, firstName: "Rita", lastName: "Viewer", workspaces: { [source]: "MEMBER" } })
      const role = yield* Effect.flatMap(GraphqlClient, (g) => g.createWorkspaceUserRole({ projectId: source, name: "Reviewer", canCreateRecords: false, canDeleteRecords: false }))
        .pipe(Effect.provide(testClient(handle)))
      // The member holds the role (set directly: the documents have no read or write of it for a member).
      handle.ctx.db.prepare("UPDATE workspace_members SET role_id = ? WHERE workspace_id = ? AND user_id = ?").run(role.id, source, reviewer.userId)

      const report = yield* migrateOnce(handle, proxy, dir, source, target)
      const email = `reviewer-${source}@source.example`
      expect(report.people.customRoleUnknown).toContain(email)
      const line = report.notCarried.find((n) => n.what === "members' custom roles")
      expect(line?.why).toContain('"Reviewer"')
      expect(line?.why).toContain(email)
      expect(line?.count).toBe(report.people.customRoleUnknown.length)
    }))
})
