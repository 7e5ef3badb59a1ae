import { expect, layer } from "@effect/vitest"
import Database from "better-sqlite3"
/**
 * A create whose payload says `then.done` sets `done` in the same op: create, map, then
 * update-record; done only after both, and a resumed op repeats only the update.
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as path from "node:path"
import { RestClient } from "../../src/client/rest-client.ts"
import type { EmulatorHandle } from "../../src/emulator/index.ts"
import { Journal, type NewOp } from "../../src/store/journal.ts"
import { OP_KINDS, recordNamespace } from "../../src/sync/plan.ts"
import { replay, type ReplayReport } from "../../src/sync/replay.ts"
import { makeRecordExecutors } from "../../src/sync/replay-records.ts"
import { Emulator, emulatorLayer, tempDir } from "../support/effect.ts"
import { testClient, titleCounts } from "./replay-helpers.ts"

const doneOf = (handle: EmulatorHandle, ws: string, title: string) =>
  (handle.ctx.db.prepare("SELECT done FROM records WHERE workspace_id = ? AND title = ?").get(ws, title) as { done: number }).done

const calls = (handle: EmulatorHandle, route: string) => handle.stats().byRoute[route] ?? 0

/** Adds `ops` (insert-or-ignore), retries failed ones and replays; returns the report and the journal's ops. */
const runReplay = (handle: EmulatorHandle, journalFile: string, ops: ReadonlyArray<NewOp>, maxRetries = 8) =>
  Effect.gen(function*() {
    const j = yield* Journal
    yield* j.addOps(ops)
    yield* j.retryFailed()
    const report: ReplayReport = yield* replay(j, makeRecordExecutors(yield* RestClient), { settleMs: 1, concurrency: 2 })
    const raw = new Database(journalFile, { readonly: true })
    const all = raw.prepare("SELECT key, kind, state, uncertain FROM ops ORDER BY seq").all() as Array<
      { key: string; kind: string; state: string; uncertain: number }
    >
    raw.close()
    return { report, all }
  }).pipe(Effect.provide(Layer.merge(Journal.layer(journalFile), testClient(handle, { maxRetries }))))

// No TestClock: the client's retries, timeouts and settle windows run on real time against a real server.
layer(emulatorLayer({ seed: "empty" }), { timeout: 30_000, excludeTestServices: true })("record.create with then.done", (it) => {
  it.effect("R-REST-ERR-05: create and done in one op: no follow-up op, every record done", () =>
    Effect.gen(function*() {
      const handle = yield* Emulator
      const ws = handle.admin.createWorkspace({ name: "fold" }).id
      const journalFile = path.join(yield* tempDir("ws-replay-"), "j.sqlite")
      const ops: Array<NewOp> = [
        { key: "a", kind: OP_KINDS.recordCreate, payload: { workspaceId: ws, title: "A", then: { done: true } } },
        { key: "b", kind: OP_KINDS.recordCreate, payload: { workspaceId: ws, title: "B" } }
      ]
      handle.resetStats()
      const { report, all } = yield* runReplay(handle, journalFile, ops)
      expect(report).toMatchObject({ sent: 2, failed: 0, unknown: 0 })
      expect(all.map((o) => [o.key, o.kind, o.state])).toEqual([["a", OP_KINDS.recordCreate, "done"], ["b", OP_KINDS.recordCreate, "done"]])
      expect(calls(handle, "create-record")).toBe(2)
      expect(calls(handle, "update-record")).toBe(1)
      expect(doneOf(handle, ws, "A")).toBe(1)
      expect(doneOf(handle, ws, "B")).toBe(0)
    }))

  it.effect("R-REST-ERR-05: the update refused after the create: the rerun sends only the update", () =>
    Effect.gen(function*() {
      const handle = yield* Emulator
      const ws = handle.admin.createWorkspace({ name: "fold-refused" }).id
      const journalFile = path.join(yield* tempDir("ws-replay-"), "j.sqlite")
      const ops: Array<NewOp> = [{ key: "a", kind: OP_KINDS.recordCreate, payload: { workspaceId: ws, title: "A", then: { done: true } } }]
      handle.resetStats()
      // 429 beyond the retries: a definite failure of the update.
      handle.faults.inject({ route: "update-record", kind: "429", times: 10, retryAfter: 0 })
      yield* Effect.gen(function*() {
        const first = yield* runReplay(handle, journalFile, ops, 1)
        expect(first.report).toMatchObject({ sent: 0, failed: 1 })
        expect(first.all[0]).toMatchObject({ state: "failed", uncertain: 0 })
      }).pipe(Effect.ensuring(Effect.sync(() => handle.faults.reset())))
      expect(doneOf(handle, ws, "A")).toBe(0)
      const second = yield* runReplay(handle, journalFile, ops)
      expect(second.report).toMatchObject({ sent: 1, failed: 0 })
      expect(second.all).toEqual([{ key: "a", kind: OP_KINDS.recordCreate, state: "done", uncertain: 0 }])
      expect(calls(handle, "create-record")).toBe(1)
      expect(titleCounts(handle, ws).get("A")).toBe(1)
      expect(doneOf(handle, ws, "A")).toBe(1)
    }))

  it.effect("R-REST-ERR-05 R-REST-ERR-06: the update's outcome unknown: reconciled through the mapping, never created twice", () =>
    Effect.gen(function*() {
      const handle = yield* Emulator
      const ws = handle.admin.createWorkspace({ name: "fold-unknown" }).id
      const journalFile = path.join(yield* tempDir("ws-replay-"), "j.sqlite")
      const ops: Array<NewOp> = [{ key: "a", kind: OP_KINDS.recordCreate, payload: { workspaceId: ws, title: "A", then: { done: true } } }]
      handle.resetStats()
      handle.faults.inject({ route: "update-record", kind: "500", times: 100 })
      yield* Effect.gen(function*() {
        const first = yield* runReplay(handle, journalFile, ops, 1)
        expect(first.report.sent).toBe(0)
        expect(first.all[0]!.state).not.toBe("done")
      }).pipe(Effect.ensuring(Effect.sync(() => handle.faults.reset())))
      const second = yield* runReplay(handle, journalFile, ops)
      expect(second.all[0]).toMatchObject({ state: "done" })
      expect(calls(handle, "create-record")).toBe(1)
      expect(titleCounts(handle, ws).get("A")).toBe(1)
      expect(doneOf(handle, ws, "A")).toBe(1)
    }))

  it.effect("R-REST-ERR-05: a create that landed with its answer lost is found, mapped, and only updated", () =>
    Effect.gen(function*() {
      const handle = yield* Emulator
      const ws = handle.admin.createWorkspace({ name: "fold-lost" }).id
      const journalFile = path.join(yield* tempDir("ws-replay-"), "j.sqlite")
      const ops: Array<NewOp> = [{ key: "a", kind: OP_KINDS.recordCreate, payload: { workspaceId: ws, title: "A", then: { done: true } } }]
      handle.resetStats()
      handle.faults.inject({ route: "create-record", kind: "ambiguous", times: 1 })
      yield* Effect.gen(function*() {
        const { report, all } = yield* runReplay(handle, journalFile, ops)
        expect(report).toMatchObject({ failed: 0, unknown: 0 })
        expect(all[0]).toMatchObject({ state: "done" })
      }).pipe(Effect.ensuring(Effect.sync(() => handle.faults.reset())))
      expect(calls(handle, "create-record")).toBe(1)
      expect(titleCounts(handle, ws).get("A")).toBe(1)
      expect(doneOf(handle, ws, "A")).toBe(1)
    }))

  it.effect("journals of earlier versions: a done create's separate record.update op still runs", () =>
    Effect.gen(function*() {
      const handle = yield* Emulator
      const ws = handle.admin.createWorkspace({ name: "fold-old" }).id
      const journalFile = path.join(yield* tempDir("ws-replay-"), "j.sqlite")
      const created = yield* Effect.flatMap(RestClient, (c) => c.createRecord({ workspaceId: ws, title: "Old" })).pipe(
        Effect.provide(testClient(handle))
      )
      // As an earlier version left it: the create done and mapped, its follow-up pending.
      yield* Effect.gen(function*() {
        const j = yield* Journal
        yield* j.addOps([{ key: "c", kind: OP_KINDS.recordCreate, payload: { workspaceId: ws, title: "Old", then: { done: true } } }])
        yield* j.claim("c")
        yield* j.complete("c", { id: created.id }, [{ namespace: recordNamespace(ws), sourceKey: "c", targetId: created.id }], [
          { key: "c/done", kind: OP_KINDS.recordUpdate, payload: { workspaceId: ws, recordRef: "c", fields: { done: true } }, dependsOn: "c" }
        ])
      }).pipe(Effect.provide(Journal.layer(journalFile)))
      handle.resetStats()
      const { report, all } = yield* runReplay(handle, journalFile, [])
      expect(report).toMatchObject({ sent: 1, doneByKind: { [OP_KINDS.recordUpdate]: 1 } })
      expect(all.map((o) => o.state)).toEqual(["done", "done"])
      expect(calls(handle, "create-record")).toBe(0)
      expect(doneOf(handle, ws, "Old")).toBe(1)
    }))
})
