/**
 * The deletions of a restore's `deleteMissing` (restore-plan.ts `planDeletes`), planned a
 * batch at a time from the target's scratch file: every target record no run record
 * matched, by id, handed over a batch of `batchSize` at a time, none held beyond it, and
 * none whose deletion the journal holds already. The whole restore with `deleteMissing`
 * is tested in restore.test.ts.
 */
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as path from "node:path"
import { RestClient } from "../../src/client/rest-client.ts"
import { insertList } from "../../src/emulator/core/lists.ts"
import { Journal, type PlanOp } from "../../src/store/journal.ts"
import { OP_KINDS } from "../../src/sync/plan.ts"
import { deleteKey, planDeletes } from "../../src/sync/restore-plan.ts"
import { readTarget } from "../../src/sync/restore-target.ts"
import { Emulator, emulatorLayer, tempDir } from "../support/effect.ts"
import { testClient } from "./replay-helpers.ts"

layer(emulatorLayer({ seed: "demo" }), { timeout: 30_000, excludeTestServices: true })("restore: deletions of deleteMissing", (it) => {
  it.effect("R-REST-RECORD-53: every unmatched target record, by id, a batch at a time; none matched, none the journal holds", () =>
    Effect.gen(function*() {
      const handle = yield* Emulator
      const dir = yield* tempDir("ws-restore-deletes-")
      const target = handle.admin.createWorkspace({ name: "deletes-target" }).id
      const layer = Layer.mergeAll(testClient(handle), Journal.layer(path.join(dir, "journal.sqlite")))
      const batches = yield* Effect.scoped(Effect.gen(function*() {
        const client = yield* RestClient
        const journal = yield* Journal
        const list = insertList(handle.ctx, target, "Work")
        const ids: Array<string> = []
        for (let i = 0; i < 7; i++) ids.push((yield* client.createRecord({ workspaceId: target, listId: list.id, title: `Record ${i}` })).id)
        const now = yield* readTarget(client, target)
        const sorted = [...ids].sort()
        // One matched by a run record, one whose deletion an earlier restore planned.
        now.records.match(sorted[1]!)
        yield* journal.addPlan({ ops: [{ key: deleteKey(target, sorted[4]!), kind: OP_KINDS.recordDelete, payload: { workspaceId: target, recordId: sorted[4]! } }] })
        const batches: Array<ReadonlyArray<PlanOp>> = []
        const planned = yield* planDeletes(journal, target, now, 1, (ops) => Effect.sync(() => void batches.push(ops)), 2)
        const want = sorted.filter((_, i) => i !== 1 && i !== 4)
        expect(planned).toBe(want.length)
        expect(batches.map((b) => b.length)).toEqual([2, 2, 1])
        expect(batches.flat().map((op) => (op.payload as { recordId: string }).recordId)).toEqual(want)
        expect(batches.flat().every((op) => op.key === deleteKey(target, (op.payload as { recordId: string }).recordId))).toBe(true)
        return batches
      })).pipe(Effect.provide(layer))
      expect(batches.length).toBe(3)
    }))
})
