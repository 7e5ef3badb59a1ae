/**
 * Export on threads (export-threads.ts, export.worker.ts): the same bytes, progress and
 * failures as an export on one thread, for files of several ranges.
 */
import { createHook } from "node:async_hooks"
import * as Effect from "effect/Effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { exportRun, type ExportOptions } from "../../src/connectors/export.ts"
import { openSnapshot, type SnapshotStoreService } from "../../src/store/snapshot.ts"
import { activityOf, detailOf, fileOf, summaryOf } from "../store/snapshot-fixtures.ts"
import { tempDir } from "../support/effect.ts"
import { sqliteOf } from "../support/sqlite-store.ts"

const withStore = <A>(file: string, f: (store: SnapshotStoreService) => Effect.Effect<A, unknown>) =>
  Effect.scoped(Effect.flatMap(openSnapshot(file), f))

/** Records: more than two ranges of 2,000, ids whose order is not the order stored, and cells that need quoting. */
const RECORDS = 4500
const tricky: ReadonlyArray<Record<string, unknown>> = [
  { title: "Plan, then act", text: "line one\nline two" },
  { title: "\"Quoted\" at the start", html: "<p>windows\r\nbreak</p>" },
  { title: "Ünïcødé — 日本語 🎉", color: "@red" },
  { title: "=SUM(\"a\",1)", tags: [{ id: "t,1", title: "a,b" }] },
  { customFields: [{ id: "cf1", value: "x,\"y\"\n" }], checklists: [{ title: "é,\"" }] }
]

const fill = (store: SnapshotStoreService, n = RECORDS) =>
  Effect.gen(function*() {
    const run = yield* store.beginRun("*", false)
    const workspaces = [{ id: "w1", slug: "main", name: "Main, \"the\" one" }, { id: "w0", slug: "old", name: "Old" }]
    yield* store.putWorkspaces(run, workspaces)
    const records = Array.from({ length: n }, (_, i) => {
      const detail = detailOf(`r${(i * 7919) % n}`, i % 3, tricky[i % 97] ?? {})
      return { kind: "version" as const, workspaceId: "w1", summary: summaryOf(detail), detail, activity: activityOf(detail.id, i % 3) }
    })
    for (let i = 0; i < records.length; i += 500) yield* store.putRecords(run, records.slice(i, i + 500))
    yield* store.putFiles(run, "w1", [fileOf("f2"), { ...fileOf("f1"), name: "a,b\n\"c\".txt" }])
    yield* store.completeRun(run, {})
    return run
  })

/** Whether `f` started a worker thread. */
const startsThreads = <A, E>(f: Effect.Effect<A, E>) =>
  Effect.gen(function*() {
    let started = false
    const hook = createHook({
      init(_id, type) {
        if (type === "WORKER") started = true
      }
    }).enable()
    const result = yield* Effect.ensuring(f, Effect.sync(() => hook.disable()))
    return { result, started }
  })

const NAMES = ["records", "activity", "files", "workspaces"] as const

describe("export on threads", () => {
  it.effect("writes the bytes one thread writes, csv and ndjson, with the same progress", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir("ws-export-threads-")
      yield* withStore(path.join(dir, "s.sqlite"), (store) =>
        Effect.gen(function*() {
          yield* fill(store)
          for (const format of ["csv", "ndjson"] as const) {
            const progress: Record<string, Array<string>> = {}
            for (const threads of [false, true]) {
              const seen: Array<string> = (progress[`${threads}`] = [])
              const options: ExportOptions = {
                outDir: path.join(dir, `${format}-${threads}`),
                format,
                guardFormulas: true,
                threads,
                onProgress: (file, rows) => seen.push(`${file} ${rows}`)
              }
              const { result, started } = yield* startsThreads(exportRun(store, options))
              expect(started).toBe(threads)
              expect(result.files.map((f) => [f.name, f.rows])).toEqual([["records", RECORDS], ["activity", 4500], ["files", 2], ["workspaces", 2]])
            }
            // The same progress, file by file: on threads, the files made here are written
            // while the threads make the records, so the two files' calls may interleave.
            const byFile = (seen: ReadonlyArray<string>) => NAMES.map((name) => seen.filter((p) => p.startsWith(`${name} `)))
            expect(byFile(progress.true!)).toEqual(byFile(progress.false!))
            expect(progress.true!.filter((p) => p.startsWith("records"))).toEqual(["records 2000", "records 4000", "records 4500"])
            for (const name of NAMES) {
              const one = fs.readFileSync(path.join(dir, `${format}-false`, `${name}.${format}`))
              const two = fs.readFileSync(path.join(dir, `${format}-true`, `${name}.${format}`))
              expect(two.equals(one), `${name}.${format}`).toBe(true)
            }
          }
        })
      )
      // What one thread writes is checked cell by cell in export.test.ts; here, that the
      // ranges come in id order and whole.
      const ids = fs.readFileSync(path.join(dir, "ndjson-true", "records.ndjson"), "utf8").trimEnd().split("\n").map((l) => JSON.parse(l).id as string)
      expect(ids).toEqual(Array.from({ length: RECORDS }, (_, i) => `r${i}`).sort())
    }), 120_000)

  it.effect("a stored object that cannot be read fails the export as on one thread, and leaves no file", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir("ws-export-threads-")
      const errors = yield* withStore(path.join(dir, "s.sqlite"), (store) =>
        Effect.gen(function*() {
          yield* fill(store)
          // A record of the second range.
          sqliteOf(store).prepare("UPDATE records SET detail = '{\"id\": \"r3\", ' WHERE id = 'r3'").run()
          const out = (threads: boolean) => path.join(dir, `out-${threads}`)
          const one = yield* Effect.flip(exportRun(store, { outDir: out(false), format: "csv", threads: false }))
          const two = yield* Effect.flip(exportRun(store, { outDir: out(true), format: "csv", threads: true }))
          return { one, two, left: [fs.readdirSync(out(false)), fs.readdirSync(out(true))] }
        })
      )
      expect(errors.two._tag).toBe("ExportError")
      expect(errors.two.message).toBe(errors.one.message.replace("out-false", "out-true"))
      expect(errors.two.message).toMatch(/^export: cannot write .*records\.csv: .*JSON/)
      // Neither a complete-looking file nor the partial one is left.
      expect(errors.left).toEqual([[], []])
    }), 120_000)

  it.effect("reads one state of the run, whatever is written to the store meanwhile (a mirror changes the run it shows)", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir("ws-export-threads-")
      const changed = yield* withStore(path.join(dir, "s.sqlite"), (store) =>
        Effect.gen(function*() {
          // More ranges than are read ahead of the first one written.
          const n = 12_500
          const run = yield* fill(store, n)
          yield* exportRun(store, { outDir: path.join(dir, "before"), format: "csv", threads: false })
          const db = sqliteOf(store)
          const [last, beforeLast] = Array.from({ length: n }, (_, i) => `r${i}`).sort().reverse()
          let changed = false
          // Once the first batch is written, a record of the last range is changed and
          // another one removed from the run, committed on the store's own connection.
          const onProgress = (file: string, rows: number) => {
            if (file !== "records" || rows !== 2000 || changed) return
            db.prepare("UPDATE records SET detail = json_set(detail, '$.title', 'changed') WHERE id = ?").run(last)
            db.prepare("DELETE FROM run_records WHERE run_id = ? AND id = ?").run(run, beforeLast)
            changed = true
          }
          yield* exportRun(store, { outDir: path.join(dir, "during"), format: "csv", threads: true, onProgress })
          return changed
        })
      )
      expect(changed).toBe(true)
      expect(fs.readFileSync(path.join(dir, "during", "records.csv")).equals(fs.readFileSync(path.join(dir, "before", "records.csv")))).toBe(true)
    }), 120_000)
})
