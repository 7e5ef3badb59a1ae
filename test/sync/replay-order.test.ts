/**
 * Creates planned `inListOrder` reach the service one at a time per list, in plan order,
 * so the target's order within a list follows the plan wherever the service appends (no
 * documented write sets a position).
 */
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as path from "node:path"
import { RestClient } from "../../src/client/rest-client.ts"
import { insertList } from "../../src/emulator/core/lists.ts"
import { Journal } from "../../src/store/journal.ts"
import { OP_KINDS, PHASES } from "../../src/sync/plan.ts"
import { replay } from "../../src/sync/replay.ts"
import { makeRecordExecutors } from "../../src/sync/replay-records.ts"
import { Emulator, emulatorLayer, tempDir } from "../support/effect.ts"
import { testClient } from "./replay-helpers.ts"

// Real HTTP to the emulator: the live clock.
layer(emulatorLayer({ seed: "empty" }), { timeout: 30_000, excludeTestServices: true })("replay: creates in list order", (it) => {
  it.effect("R-REST-RECORD-38: the first create of a list held by the service, the next ones of that list wait for it", () =>
    Effect.gen(function*() {
      const handle = yield* Emulator
      const ws = handle.admin.createWorkspace({ name: `ordered ${Math.random()}` }).id
      const lists = { first: insertList(handle.ctx, ws, "First").id, second: insertList(handle.ctx, ws, "Second").id }
      const planned = [
        ["first", "One"],
        ["first", "Two"],
        ["second", "Uno"],
        ["first", "Three"],
        ["second", "Dos"]
      ] as const
      // The first create answers late: without the order, the ones after it would land first.
      handle.faults.inject({ route: "create-record", kind: "latency", latencyMs: 500 })
      const journalFile = path.join(yield* tempDir("ws-replay-order-"), "j.sqlite")
      const report = yield* Effect.gen(function*() {
        const journal = yield* Journal
        yield* journal.addOps(planned.map(([list, title], i) => ({
          key: `ordered:${i}`,
          kind: OP_KINDS.recordCreate,
          payload: { workspaceId: ws, sourceKey: `s${i}`, title, listId: lists[list], inListOrder: true }
        })))
        return yield* replay(journal, makeRecordExecutors(yield* RestClient), { phases: PHASES, concurrency: 8 })
      }).pipe(Effect.provide(Layer.merge(Journal.layer(journalFile), testClient(handle))), Effect.ensuring(Effect.sync(() => handle.faults.reset())))
      expect(report).toMatchObject({ sent: 5, failed: 0, unknown: 0 })
      const order = (listId: string) =>
        handle.ctx.db.prepare("SELECT title FROM records WHERE list_id = ? AND deleted_at IS NULL ORDER BY position, id").pluck().all(listId)
      expect(order(lists.first)).toEqual(["One", "Two", "Three"])
      expect(order(lists.second)).toEqual(["Uno", "Dos"])
    }))
})
