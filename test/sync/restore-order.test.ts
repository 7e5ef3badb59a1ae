/**
 * Restore keeps the order of records within each list (the contract's restore: "position
 * order within a list"): the run is read a list at a time by position and each list's
 * records are created one at a time in that order, so the target holds them in the run's
 * order wherever the service appends. Under the alt reading the service makes no list
 * (CREATE_LIST_READING): the records land in the first list, each source list's records
 * still in their order among themselves. verify --rehearse compares the order and it holds.
 */
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as path from "node:path"
import { RestClient } from "../../src/client/rest-client.ts"
import { insertList } from "../../src/emulator/core/lists.ts"
import type { EmulatorHandle } from "../../src/emulator/index.ts"
import { Journal } from "../../src/store/journal.ts"
import { resolveRun, SnapshotStore } from "../../src/store/snapshot.ts"
import { backup } from "../../src/sync/backup.ts"
import { restore } from "../../src/sync/restore.ts"
import { rehearse } from "../../src/sync/verify-rehearse.ts"
import { Emulator, emulatorLayer, tempDir } from "../support/effect.ts"
import { testClient } from "./replay-helpers.ts"

/** Each list's order at the source: neither the order its records were made in nor their ids'. */
const ORDER: Record<string, ReadonlyArray<string>> = {
  "To do": ["Kilo", "India", "Juliett"],
  Backlog: ["Charlie", "Golf", "Alpha", "Foxtrot", "Bravo"],
  Doing: ["Echo", "Delta", "Hotel"]
}

/** Records made in alphabetical order in each list, then put in ORDER by position (no documented write sets one). */
const seedSource = (handle: EmulatorHandle) =>
  Effect.gen(function*() {
    const ws = handle.admin.createWorkspace({ name: `order source ${Math.random()}` }).id
    const firstList = handle.ctx.db.prepare("SELECT id FROM lists WHERE workspace_id = ? AND title = 'To do'").get(ws) as { id: string }
    const lists: Record<string, string> = {
      "To do": firstList.id,
      Backlog: insertList(handle.ctx, ws, "Backlog").id,
      Doing: insertList(handle.ctx, ws, "Doing").id
    }
    const rest = yield* RestClient
    for (const [list, titles] of Object.entries(ORDER)) {
      for (const title of [...titles].sort()) yield* rest.createRecord({ workspaceId: ws, title, listId: lists[list]! })
      titles.forEach((title, i) => handle.ctx.db.prepare("UPDATE records SET position = ? WHERE workspace_id = ? AND title = ?").run(i + 1, ws, title))
    }
    return ws
  }).pipe(Effect.provide(testClient(handle)))

/** A workspace's records, list by list, in the order of their documented `position` (then id). */
const ordered = (handle: EmulatorHandle, ws: string) =>
  handle.ctx.db.prepare(
    `SELECT r.title AS title, l.title AS list FROM records r JOIN lists l ON l.id = r.list_id
     WHERE r.workspace_id = ? AND r.deleted_at IS NULL ORDER BY l.position, r.position, r.id`
  ).all(ws) as Array<{ title: string; list: string }>

/** Per source list, its records' titles in the order the target holds them (whatever list they landed in). */
const orderOnTarget = (handle: EmulatorHandle, ws: string) => {
  const rows = ordered(handle, ws)
  return Object.fromEntries(Object.entries(ORDER).map(([list, titles]) => [list, rows.map((r) => r.title).filter((t) => titles.includes(t))]))
}

// No TestClock: the client's retries and timeouts run on real time against a real server.
layer(emulatorLayer({ seed: "empty" }), { timeout: 60_000, excludeTestServices: true })("restore keeps the order of records within each list", (it) => {
  it.effect("R-REST-RECORD-29: restored into an empty workspace, each list holds its records in the run's order; a rehearsal compares it and it holds", () =>
    Effect.gen(function*() {
      const handle = yield* Emulator
      const dir = yield* tempDir("ws-restore-order-")
      const source = yield* seedSource(handle)
      const target = handle.admin.createWorkspace({ name: `order target ${Math.random()}` }).id
      const layer = Layer.mergeAll(
        testClient(handle),
        SnapshotStore.layer(path.join(dir, "snap.sqlite")),
        Journal.layer(path.join(dir, "journal.sqlite"))
      )
      expect(orderOnTarget(handle, source)).toEqual(ORDER)

      const { rehearsal, result } = yield* Effect.gen(function*() {
        yield* backup({ workspaces: [source] })
        const store = yield* SnapshotStore
        const run = (yield* resolveRun(store, undefined))!
        // The first create held by the service: a create sent beside it would land first.
        handle.faults.inject({ route: "create-record", kind: "latency", latencyMs: 300 })
        const result = yield* restore(store, yield* RestClient, yield* Journal, { run, sourceWorkspaceId: source, targetWorkspaceId: target })
          .pipe(Effect.ensuring(Effect.sync(() => handle.faults.reset())))
        const rehearsal = yield* rehearse(store, { run })
        return { rehearsal, result }
      }).pipe(Effect.provide(layer))

      expect(result.failed + result.unknown).toBe(0)
      expect(result.created).toBe(11)
      expect(orderOnTarget(handle, target)).toEqual(ORDER)
      if (handle.variant === "alt") {
        // No list made: every record is in the first list, each source list still in its order.
        expect(new Set(ordered(handle, target).map((r) => r.list))).toEqual(new Set(["To do"]))
      } else {
        expect(ordered(handle, target)).toEqual(ordered(handle, source))
      }

      const order = rehearsal.checks.find((c) => c.name === "rehearse.order")
      expect(order).toMatchObject({ ok: true, checked: 3, failed: 0, first: null })
      expect(rehearsal.notCarried.map((n) => n.what)).not.toContain("record order within lists")
    }))
})
