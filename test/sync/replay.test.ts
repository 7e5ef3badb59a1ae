import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as fs from "node:fs"
import * as path from "node:path"
import type { ClientServices } from "../../src/client/layer.ts"
import { RestClient } from "../../src/client/rest-client.ts"
import { importCsv } from "../../src/connectors/csv/import.ts"
import type { ImportOptions } from "../../src/connectors/csv/options.ts"
import type { EmulatorHandle } from "../../src/emulator/index.ts"
import { Journal, JournalDb } from "../../src/store/journal.ts"
import { OP_KINDS, recordNamespace } from "../../src/sync/plan.ts"
import { replay } from "../../src/sync/replay.ts"
import { makeRecordExecutors } from "../../src/sync/replay-records.ts"
import { Emulator, emulatorLayer, tempDir } from "../support/effect.ts"
import { recordCount, testClient, titleCounts } from "./replay-helpers.ts"

/** A fresh workspace per test, so counts are per test. */
const workspace = (handle: EmulatorHandle, name: string): string => handle.admin.createWorkspace({ name }).id

const runImport = (handle: EmulatorHandle, journalFile: string, options: ImportOptions, client: Layer.Layer<ClientServices> = testClient(handle)) =>
  Effect.gen(function*() {
    const journal = yield* Journal
    const rest = yield* RestClient
    return yield* importCsv(rest, journal, options)
  }).pipe(Effect.provide(Layer.merge(Journal.layer(journalFile), client)))

const csvOf = (dir: string, rows: ReadonlyArray<string>) => {
  const file = path.join(dir, "in.csv")
  fs.writeFileSync(file, ["title,list,done,tags", ...rows].join("\n") + "\n")
  return file
}

// No TestClock: the client's retries, timeouts and settle windows run on real time against a real server.
layer(emulatorLayer({ seed: "empty" }), { timeout: 30_000, excludeTestServices: true })("replay (against the emulator, faults on)", (it) => {
  it.effect("R-REST-ERR-05 R-REST-ERR-06: ambiguous writes, 500s, drops and 429s: every row exists exactly once", () =>
    Effect.gen(function*() {
      const handle = yield* Emulator
      const ws = workspace(handle, "faults")
      const dir = yield* tempDir("ws-replay-")
      // Repeated titles on purpose: reconciliation must not confuse them.
      const rows = Array.from({ length: 60 }, (_, i) => `Task ${i % 20},${i % 3 === 0 ? "Doing" : "Backlog"},${i % 4 === 0 ? "yes" : "no"},t${i % 2}`)
      const file = csvOf(dir, rows)
      handle.faults.configure({ ambiguousWriteRate: 0.25, failRate: 0.1, dropRate: 0.1, seed: 11 })
      handle.faults.inject({ route: "create-record", kind: "429", times: 3, retryAfter: 0 })
      yield* Effect.gen(function*() {
        const journalFile = path.join(dir, "j.sqlite")
        // Injected 500s and drops happen before the service commits: a short settle window
        // keeps the test quick (the emulator commits nothing late here).
        const options: ImportOptions = { workspaceId: ws, csv: { file }, mapping: { preset: "generic" }, settleWindowMs: 500 }
        let result = yield* runImport(handle, journalFile, options)
        // An op whose outcome stayed unknown after its rounds is settled by the rerun.
        for (let i = 0; i < 5 && (result.failed > 0 || result.unknown > 0); i++) {
          result = yield* runImport(handle, journalFile, options)
        }
        expect(result.failed + result.unknown).toBe(0)
        // The alt reading's list create makes no list (CREATE_LIST_READING): rows go to the first list, named.
        expect(result.listsNotMade).toEqual(handle.variant === "alt" ? ["Backlog", "Doing"] : undefined)
      }).pipe(Effect.ensuring(Effect.sync(() => handle.faults.reset())))
      expect(recordCount(handle, ws)).toBe(60)
      const counts = titleCounts(handle, ws)
      for (let t = 0; t < 20; t++) expect(counts.get(`Task ${t}`)).toBe(3)
      const done = handle.ctx.db.prepare("SELECT COUNT(*) AS n FROM records WHERE workspace_id = ? AND done = 1").get(ws) as { n: number }
      expect(done.n).toBe(15)
      const lists = handle.ctx.db.prepare("SELECT title FROM lists WHERE workspace_id = ? AND deleted_at IS NULL").all(ws) as Array<{ title: string }>
      const made = handle.variant === "alt" ? 0 : 1
      expect(lists.filter((l) => l.title === "Doing")).toHaveLength(made)
      expect(lists.filter((l) => l.title === "Backlog")).toHaveLength(made)
    }))

  it.effect("R-REST-SEARCH-03: an in-flight create left by a dead run is found on the service, not sent again", () =>
    Effect.gen(function*() {
      const handle = yield* Emulator
      const ws = workspace(handle, "resume")
      const dir = yield* tempDir("ws-replay-")
      const file = csvOf(dir, ["Only once,,no,", "Second,,no,"])
      const journalFile = path.join(dir, "j.sqlite")
      // Plan with a dry-run-free import whose replay fails fast (every create dropped before
      // any answer), leaving ops uncertain; then create one of them "behind our back" as if
      // the dropped request had landed.
      const first = yield* runImport(handle, journalFile, { workspaceId: ws, csv: { file }, mapping: { preset: "generic" }, dryRun: false })
      expect(first.created).toBe(2)
      // Simulate a crash after sending: put the first op back in flight, its record existing.
      const j = new JournalDb(journalFile)
      const key = (j.db.prepare("SELECT key FROM ops WHERE kind = ? ORDER BY seq LIMIT 1").get(OP_KINDS.recordCreate) as { key: string }).key
      j.db.prepare("UPDATE ops SET state = 'in_flight' WHERE key = ?").run(key)
      j.db.prepare("DELETE FROM id_map WHERE op_key = ?").run(key)
      j.close()
      handle.resetStats()
      const second = yield* runImport(handle, journalFile, { workspaceId: ws, csv: { file }, mapping: { preset: "generic" } })
      expect(second.created).toBe(1)
      expect(second.skipped).toBe(1)
      expect(handle.stats().byRoute["create-record"] ?? 0).toBe(0)
      expect(recordCount(handle, ws)).toBe(2)
      const j2 = new JournalDb(journalFile)
      expect(j2.lookup(recordNamespace(ws), key)).toBeDefined()
      j2.close()
    }))

  it.effect("re-running a finished journal sends nothing", () =>
    Effect.gen(function*() {
      const handle = yield* Emulator
      const ws = workspace(handle, "rerun")
      const dir = yield* tempDir("ws-replay-")
      const file = csvOf(dir, ["A,,yes,", "B,,no,"])
      const journalFile = path.join(dir, "j.sqlite")
      yield* runImport(handle, journalFile, { workspaceId: ws, csv: { file }, mapping: { preset: "generic" } })
      handle.resetStats()
      const again = yield* runImport(handle, journalFile, { workspaceId: ws, csv: { file }, mapping: { preset: "generic" } })
      expect(again).toMatchObject({ rows: 2, created: 0, skipped: 2, rejected: 0 })
      const byRoute = handle.stats().byRoute
      expect(byRoute["create-record"] ?? 0).toBe(0)
      expect(byRoute["update-record"] ?? 0).toBe(0)
      expect(recordCount(handle, ws)).toBe(2)
    }))

  it.effect("rows identified by content: appended rows, and repeated identical rows, are created once each", () =>
    Effect.gen(function*() {
      const handle = yield* Emulator
      const ws = workspace(handle, "append")
      const dir = yield* tempDir("ws-replay-")
      const journalFile = path.join(dir, "j.sqlite")
      const file = csvOf(dir, ["Same,,no,", "Same,,no,", "Other,,no,"])
      const first = yield* runImport(handle, journalFile, { workspaceId: ws, csv: { file }, mapping: { preset: "generic" } })
      expect(first).toMatchObject({ rows: 3, created: 3, skipped: 0 })
      // Two more rows appended, one identical to the existing ones.
      fs.appendFileSync(file, "Same,,no,\nNew,,yes,\n")
      const second = yield* runImport(handle, journalFile, { workspaceId: ws, csv: { file }, mapping: { preset: "generic" } })
      expect(second).toMatchObject({ rows: 5, created: 2, skipped: 3, rejected: 0 })
      const counts = titleCounts(handle, ws)
      expect(counts.get("Same")).toBe(3)
      expect(counts.get("Other")).toBe(1)
      expect(counts.get("New")).toBe(1)
    }))

  it.effect("replay keeps dependencies: an update waits for the create it refers to", () =>
    Effect.gen(function*() {
      const handle = yield* Emulator
      const ws = workspace(handle, "deps")
      const dir = yield* tempDir("ws-replay-")
      const journalFile = path.join(dir, "j.sqlite")
      yield* Effect.gen(function*() {
        const j = yield* Journal
        const rest = yield* RestClient
        // Planned in reverse order on purpose: the update has the lower seq.
        yield* j.addOps([
          { key: "u", kind: OP_KINDS.recordUpdate, payload: { workspaceId: ws, recordRef: "c", fields: { done: true } }, dependsOn: "c" },
          { key: "c", kind: OP_KINDS.recordCreate, payload: { workspaceId: ws, title: "dep" } }
        ])
        const report = yield* replay(j, makeRecordExecutors(rest))
        expect(report.sent).toBe(2)
      }).pipe(Effect.provide(Layer.merge(Journal.layer(journalFile), testClient(handle))))
      const row = handle.ctx.db.prepare("SELECT done FROM records WHERE workspace_id = ? AND title = 'dep'").get(ws) as { done: number }
      expect(row.done).toBe(1)
    }))

  it.effect("R-REST-SEARCH-01: while an op's outcome cannot be settled, later creates with the same title wait for the next run", () =>
    Effect.gen(function*() {
      const handle = yield* Emulator
      const ws = workspace(handle, "deferred")
      const journalFile = path.join(yield* tempDir("ws-replay-"), "j.sqlite")
      const ops = [
        { key: "a", kind: OP_KINDS.recordCreate, payload: { workspaceId: ws, title: "Twin" } },
        { key: "b", kind: OP_KINDS.recordCreate, payload: { workspaceId: ws, title: "Twin" } },
        { key: "c", kind: OP_KINDS.recordCreate, payload: { workspaceId: ws, title: "Other" } }
      ]
      const runReplay = () =>
        Effect.gen(function*() {
          const j = yield* Journal
          yield* j.addOps(ops)
          yield* j.retryFailed()
          return yield* replay(j, makeRecordExecutors(yield* RestClient), { settleMs: 1, concurrency: 1 })
        }).pipe(Effect.provide(Layer.merge(Journal.layer(journalFile), testClient(handle, { maxRetries: 1 }))))
      // The first create lands but loses its answer, and the search that would find it fails.
      handle.faults.inject({ route: "create-record", kind: "ambiguous", times: 1 })
      handle.faults.inject({ route: "search-records", kind: "500", times: 100 })
      handle.resetStats()
      yield* Effect.gen(function*() {
        const first = yield* runReplay()
        expect(first).toMatchObject({ unknown: 1, deferred: 1, sent: 1 })
      }).pipe(Effect.ensuring(Effect.sync(() => handle.faults.reset())))
      // "b" was never sent: only the lost create and "c" reached the service.
      expect(handle.stats().byRoute["create-record"]).toBe(2)
      const second = yield* runReplay()
      expect(second).toMatchObject({ reconciled: 1, sent: 1, unknown: 0, deferred: 0 })
      expect(titleCounts(handle, ws).get("Twin")).toBe(2)
      expect(titleCounts(handle, ws).get("Other")).toBe(1)
    }))
})
