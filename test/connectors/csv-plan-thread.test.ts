import Database from "better-sqlite3"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { createHook } from "node:async_hooks"
import * as fs from "node:fs"
import * as path from "node:path"
import { expect, layer } from "@effect/vitest"
import { RestClient } from "../../src/client/rest-client.ts"
import type { ImportOptions } from "../../src/connectors/csv/options.ts"
import { planCsvImport } from "../../src/connectors/csv/plan.ts"
import { Journal, JournalDb } from "../../src/store/journal.ts"
import { Emulator, emulatorLayer, tempDir } from "../support/effect.ts"
import { testClient } from "../sync/replay-helpers.ts"
import { journalOps } from "../store/journal-ops.ts"
import { planInto } from "./csv-plan-helpers.ts"


/** Whether `f` started a worker thread (async_hooks sees every Worker created). */
const startsWorker = <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<{ value: A; worker: boolean }, E, R> =>
  Effect.acquireUseRelease(
    Effect.sync(() => {
      const seen = { worker: false }
      const hook = createHook({
        init(_id, type) {
          if (type === "WORKER") seen.worker = true
        }
      }).enable()
      return { seen, hook }
    }),
    ({ seen }) => Effect.map(self, (value) => ({ value, worker: seen.worker })),
    ({ hook }) => Effect.sync(() => hook.disable())
  )

/**
 * 1,800 rows over four batches: keyless rows (content-hash keys, identical rows as
 * occurrences), rows missing a title or with a bad date (rejected), lists to ensure.
 */
const rowsOf = (from: number, to: number) =>
  Array.from({ length: to - from }, (_, k) => {
    const i = from + k
    if (i % 97 === 5) return `,no title ${i},Backlog,2024-01-01`
    if (i % 101 === 7) return `Bad date ${i},,Doing,2024-13-45`
    if (i % 50 === 3) return "Same row,,Backlog,2024-02-02"
    return `Task ${i},line ${i},${i % 3 === 0 ? "Doing" : "Backlog"},2024-03-${String(1 + (i % 28)).padStart(2, "0")}`
  })

const writeCsv = (file: string, rows: ReadonlyArray<string>) =>
  fs.writeFileSync(file, ["title,description,list,duedAt", ...rows].join("\n") + "\n")

// Planning threads and HTTP to the emulator run in real time: the layer's tests run on
// the live clock (`excludeTestServices`).
layer(emulatorLayer({ seed: "empty" }), { timeout: 30_000, excludeTestServices: true })("import-csv planning on a second thread", (it) => {
  it.effect("R-REST-RECORD-27: plans the same journal, rejects and counts as one thread, also when a rerun appends rows", () =>
    Effect.gen(function*() {
      const handle = yield* Emulator
      const ws = handle.admin.createWorkspace({ name: "plan-thread" }).id
      const outcome = (thread: boolean) => Effect.gen(function*() {
        const dir = yield* tempDir("ws-plan-thread-")
        const csv = path.join(dir, "in.csv")
        const journal = path.join(dir, "journal.sqlite")
        const options = (rejectsFile: string): ImportOptions => ({
          workspaceId: ws,
          csv: { file: csv },
          mapping: { preset: "generic" },
          rejectsFile,
          planThread: thread
        })
        writeCsv(csv, rowsOf(0, 1800))
        const first = yield* startsWorker(planInto(handle, journal, options(path.join(dir, "rejects-1.csv"))))
        // The same file with rows appended: only those are new.
        writeCsv(csv, rowsOf(0, 2300))
        const second = yield* startsWorker(planInto(handle, journal, options(path.join(dir, "rejects-2.csv"))))
        return {
          workers: [first.worker, second.worker],
          // Everything but where the rejects went (each run has its own directory).
          results: [first.value, second.value].map(({ rejectsFile: _, ...rest }) => rest),
          ops: journalOps(journal, { withPlanRun: true }),
          rejects: [fs.readFileSync(path.join(dir, "rejects-1.csv"), "utf8"), fs.readFileSync(path.join(dir, "rejects-2.csv"), "utf8")]
        }
      })
      const threaded = yield* outcome(true)
      const single = yield* outcome(false)
      expect(threaded.workers).toEqual([true, true])
      expect(single.workers).toEqual([false, false])
      expect(threaded.results).toEqual(single.results)
      expect(threaded.ops).toEqual(single.ops)
      expect(threaded.rejects).toEqual(single.rejects)
      // The figures themselves: 2 ensure ops, the appended rows alone new on the rerun.
      const [first, second] = single.results
      expect(first!.plan?.ops["list.ensure"]).toBe(2)
      expect(first!.rejected).toBeGreaterThan(30)
      expect(second!.rows).toBe(2300)
      expect(second!.skipped).toBe(0)
      expect(second!.plan?.ops["record.create"]).toBe(2300 - 1800 - (second!.rejected - first!.rejected))
    }), 60_000)

  it.effect("a journal the planning thread cannot write fails the import as a journal error, and a rerun plans it all", () =>
    Effect.gen(function*() {
      const handle = yield* Emulator
      const ws = handle.admin.createWorkspace({ name: "plan-thread-locked" }).id
      const dir = yield* tempDir("ws-plan-thread-")
      const csv = path.join(dir, "in.csv")
      writeCsv(csv, rowsOf(0, 20_000))
      const journal = path.join(dir, "journal.sqlite")
      // The journal refuses one op of the file (a trigger aborts its insert), so the
      // planning thread's batch holding it fails: no clock or lock window decides this.
      new JournalDb(journal).close()
      const raw = new Database(journal)
      raw.exec(`CREATE TRIGGER refuse_one BEFORE INSERT ON ops WHEN NEW.payload LIKE '%"Task 12000"%'
        BEGIN SELECT RAISE(ABORT, 'this op is refused'); END`)
      raw.close()
      const failed = yield* (
        Effect.gen(function*() {
          return yield* planCsvImport(yield* RestClient, yield* Journal, {
            workspaceId: ws,
            csv: { file: csv },
            mapping: { preset: "generic" },
            planThread: true
          })
        }).pipe(
          // A plan that did not fail is reported by its row count, not as a 20,000-row value.
          Effect.map((plan) => ({ _tag: "planned", message: `${plan.rows} rows planned` })),
          Effect.flip,
          Effect.provide(Layer.merge(Journal.layer(journal), testClient(handle)))
        )
      )
      expect(failed._tag).toBe("JournalError")
      expect(failed.message).toBe(`journal ${journal}: planning failed: this op is refused`)
      // The ops planned before the refused batch are a prefix of the file.
      const prefix = journalOps(journal).map((r) => (r as { key: string }).key)
      const droppable = new Database(journal)
      droppable.exec("DROP TRIGGER refuse_one")
      droppable.close()
      const again = yield* planInto(handle, journal, { workspaceId: ws, csv: { file: csv }, mapping: { preset: "generic" }, planThread: true })
      const reference = path.join(dir, "reference.sqlite")
      const once = yield* planInto(handle, reference, { workspaceId: ws, csv: { file: csv }, mapping: { preset: "generic" }, planThread: false })
      expect(again.rejected).toBe(once.rejected)
      const all = journalOps(reference).map((r) => (r as { key: string }).key)
      expect(all.slice(0, prefix.length)).toEqual(prefix)
      expect(prefix.length).toBeLessThan(all.length)
      expect(journalOps(journal).map((r) => (r as { key: string }).key)).toEqual(all)
    }))

  it.effect("a small file is planned on the caller's thread unless asked", () =>
    Effect.gen(function*() {
      const handle = yield* Emulator
      const ws = handle.admin.createWorkspace({ name: "plan-thread-small" }).id
      const dir = yield* tempDir("ws-plan-thread-")
      const csv = path.join(dir, "in.csv")
      writeCsv(csv, rowsOf(0, 50))
      const run = yield* startsWorker(
        planInto(handle, path.join(dir, "journal.sqlite"), { workspaceId: ws, csv: { file: csv }, mapping: { preset: "generic" } })
      )
      expect(run.worker).toBe(false)
      expect(run.value.plan?.ops["record.create"]).toBeGreaterThan(40)
    }))
})
