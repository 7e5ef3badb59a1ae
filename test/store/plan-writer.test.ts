import Database from "better-sqlite3"
import * as fc from "fast-check"
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { pathToFileURL } from "node:url"
import { describe, expect, it } from "vitest"
import { JournalDb, type PlanOp } from "../../src/store/journal.ts"
import { openPlanWriter } from "../../src/store/plan-writer.ts"
import { journalOps } from "./journal-ops.ts"

const tmpFile = () => path.join(fs.mkdtempSync(path.join(os.tmpdir(), "ws-plan-writer-")), "journal.sqlite")

describe("planning thread", () => {
  it("plans exactly as planOps on the caller's thread does: keys, repeats, occurrences, earlier runs, dependencies, payloads", async () => {
    // Keys from a small pool so batches repeat each other and earlier runs; '#' keys and
    // occurrence flags exercise the one-by-one path; payloads of every JSON shape.
    const op = fc.record({
      key: fc.oneof(fc.integer({ min: 0, max: 40 }).map((i) => `r:${i}`), fc.constantFrom("r:1#1", "r:2#1")),
      occurrence: fc.boolean(),
      payload: fc.oneof(fc.constant(null), fc.array(fc.oneof(fc.string(), fc.boolean(), fc.constant(null)), { maxLength: 4 }), fc.dictionary(fc.string(), fc.string(), { maxKeys: 3 })),
      dependsOn: fc.option(fc.constantFrom("list:a", "list:b"), { nil: undefined })
    })
    const batch = fc.array(op, { maxLength: 300 })
    const runs = fc.array(fc.array(batch, { minLength: 1, maxLength: 3 }), { minLength: 1, maxLength: 2 })
    await fc.assert(
      fc.asyncProperty(runs, async (plans) => {
        const here = new JournalDb(tmpFile())
        const threadFile = tmpFile()
        const there = new JournalDb(threadFile)
        try {
          for (const batches of plans) {
            const hereRun = here.beginPlanRun()
            const thereRun = there.beginPlanRun()
            const writer = openPlanWriter(threadFile, thereRun)
            expect(writer).toBeDefined()
            try {
              for (const b of batches) {
                const ops: Array<PlanOp> = b.map((o) => ({ ...o, kind: "record.create" }))
                expect(await writer!.plan(ops)).toEqual(here.planOps(hereRun, ops))
              }
            } finally {
              await writer!.close()
            }
            here.endPlanRun(hereRun)
            there.endPlanRun(thereRun)
          }
          expect(journalOps(threadFile, { withPlanRun: true })).toEqual(journalOps(here.file, { withPlanRun: true }))
        } finally {
          here.close()
          there.close()
        }
      }),
      { numRuns: 8 }
    )
  }, 120_000)

  it("keeps the order of batches sent without waiting, and the run's commits are durable once the caller ends it", async () => {
    const file = tmpFile()
    const j = new JournalDb(file)
    const run = j.beginPlanRun()
    const writer = openPlanWriter(file, run)!
    // Ten batches in flight at once: answers and seqs follow the order of the calls.
    const sent = Array.from({ length: 10 }, (_, b) =>
      writer.plan(Array.from({ length: 100 }, (_, i) => ({ key: `k${b * 100 + i}`, kind: "record.create", payload: [b, i] }))))
    const answers = await Promise.all(sent)
    expect(answers.flat().map((p) => p.key)).toEqual(Array.from({ length: 1000 }, (_, i) => `k${i}`))
    expect(answers.flat().every((p) => p.isNew && p.state === "pending")).toBe(true)
    await writer.close()
    j.endPlanRun(run)
    // The caller's own connection sees every op, with the payload stored as sent.
    expect(j.counts().pending).toBe(1000)
    expect(j.get("k999")?.payload).toEqual([9, 99])
    expect(j.getMeta("plan_run_complete")).toBe(String(run))
    j.close()
  })

  it("a batch the journal refuses (another connection holds its write lock) fails with SQLite's reason, and so does every batch after it; the batches before it stay planned", async () => {
    const file = tmpFile()
    const j = new JournalDb(file)
    const run = j.beginPlanRun()
    const writer = openPlanWriter(file, run)!
    await expect(writer.plan([{ key: "a", kind: "record.create", payload: 1 }])).resolves.toEqual([
      { key: "a", isNew: true, duplicate: false, state: "pending" }
    ])
    // Another connection takes the write lock (the worker's transaction, having read first,
    // cannot wait for it: SQLite answers busy at once rather than risk a deadlock).
    const other = new Database(file)
    other.exec("BEGIN IMMEDIATE")
    const outcomes = Promise.allSettled([
      writer.plan([{ key: "b", kind: "record.create", payload: 2 }]),
      writer.plan([{ key: "c", kind: "record.create", payload: 3 }])
    ])
    const [b, c] = await outcomes
    other.exec("ROLLBACK")
    other.close()
    expect(b).toMatchObject({ status: "rejected", reason: { message: "database is locked" } })
    expect(c).toMatchObject({ status: "rejected", reason: { message: "database is locked" } })
    await expect(writer.plan([{ key: "d", kind: "record.create", payload: 4 }])).rejects.toThrow("database is locked")
    await writer.close()
    j.endPlanRun(run)
    expect(journalOps(file).map((r) => (r as { key: string }).key)).toEqual(["a"])
    j.close()
  })

  it("a thread that cannot open the journal fails every plan with the reason, and closes cleanly", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "ws-plan-writer-"))
    fs.writeFileSync(path.join(dir, "not-a-dir"), "")
    const writer = openPlanWriter(path.join(dir, "not-a-dir", "journal.sqlite"), 1)!
    await expect(writer.plan([{ key: "k", kind: "record.create", payload: {} }])).rejects.toThrow(/not-a-dir/)
    await expect(writer.plan([{ key: "k2", kind: "record.create", payload: {} }])).rejects.toThrow()
    await expect(writer.close()).resolves.toBeUndefined()
  })
})

describe("planning thread in the build", () => {
  it("the built library (dist/) finds its thread file and plans on it", () => {
    const root = path.resolve(import.meta.dirname, "../..")
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "ws-plan-writer-build-"))
    const url = (p: string) => pathToFileURL(path.join(root, p)).href
    // A separate process importing the build as a user of the package does.
    const script = `
import { createHook } from "node:async_hooks"
import * as fs from "node:fs"
const { planCsvImport, Journal, RestClient, clientLayer } = await import(${JSON.stringify(url("dist/index.js"))})
const { startEmulator } = await import(${JSON.stringify(url("dist/emulator.js"))})
const Effect = await import(${JSON.stringify(url("node_modules/effect/dist/Effect.js"))})
let worker = false
createHook({ init(_id, type) { if (type === "WORKER") worker = true } }).enable()
const csv = ${JSON.stringify(path.join(dir, "in.csv"))}
fs.writeFileSync(csv, "key,title\\n" + Array.from({ length: 1200 }, (_, i) => (i % 1100) + ",T" + i).join("\\n"))
const em = await startEmulator({ seed: "empty" })
const r = await Effect.runPromise(Effect.gen(function*() {
  return yield* planCsvImport(yield* RestClient, yield* Journal, { workspaceId: em.workspaces[0], csv: { file: csv }, mapping: { preset: "generic" }, planThread: true })
}).pipe(Effect.provide(Journal.layer(${JSON.stringify(path.join(dir, "j.sqlite"))})), Effect.provide(clientLayer({ restUrl: em.restUrl, baseUrl: em.baseUrl, token: em.token, org: em.org }))))
await em.close()
console.log(JSON.stringify({ worker, rows: r.rows, rejected: r.rejected, creates: r.plan.ops["record.create"] }))
`
    const file = path.join(dir, "check.mjs")
    fs.writeFileSync(file, script)
    const r = spawnSync(process.execPath, [file], { encoding: "utf8", timeout: 60_000 })
    fs.rmSync(dir, { recursive: true, force: true })
    expect(r.stderr).toBe("")
    expect(JSON.parse(r.stdout)).toEqual({ worker: true, rows: 1200, rejected: 100, creates: 1100 })
  }, 60_000)
})
