/**
 * How a replay phase reads the journal: each pending op once per pass however long it
 * queues behind its group (a read past the last op read, not every pending op again each
 * time one ends), ops waiting for a dependency taken when it ends here, and what becomes
 * runnable behind the cursor without an end here (another session's work) still run in
 * the same run. On either journal backend. The executors here send nothing: what is
 * checked is the journal's reads and the order ops run in.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import * as path from "node:path"
import { type JournalApi, type NewOp, openJournal } from "../../src/store/journal.ts"
import { type Executor, replay } from "../../src/sync/replay.ts"
import { tempDir } from "../support/effect.ts"
import { freshSchema } from "../support/postgres.ts"

interface Backend {
  readonly name: string
  /** A new, empty journal location, removed with the test's scope. */
  readonly location: Effect.Effect<string, never, Scope.Scope>
}

const BACKENDS: ReadonlyArray<Backend> = [
  { name: "SQLite", location: Effect.map(tempDir("ws-replay-reads-"), (dir) => path.join(dir, "j.sqlite")) },
  { name: "PostgreSQL", location: freshSchema }
]

/** The journal, with a count of the pending ops its reads returned (each one decoded). */
const counted = (journal: JournalApi) => {
  const reads = { ops: 0 }
  const api: JournalApi = {
    ...journal,
    pending: (options) => Effect.tap(journal.pending(options), (ops) => Effect.sync(() => void (reads.ops += ops.length))),
    pendingPage: (options) => Effect.tap(journal.pendingPage(options), (ops) => Effect.sync(() => void (reads.ops += ops.length)))
  }
  return { api, reads }
}

/** An executor of `kind` that notes the op's key in `ran` and sends nothing. */
const noting = (kind: string, ran: Array<string>, group?: (key: string) => string): Executor => ({
  kind,
  ...(group !== undefined ? { group: (op) => group(op.key) } : {}),
  execute: (op) => Effect.sync(() => (ran.push(op.key), { result: null, mappings: [] }))
})

describe("replay: reading a phase", () => {
  for (const backend of BACKENDS) {
    it.live(`ops queued behind their group are read once each; ops waiting for one run once it is done (${backend.name})`, () =>
      Effect.gen(function*() {
        const journal = yield* openJournal(yield* backend.location)
        const n = 300
        // One list's creates (one group: one at a time, in plan order), each with a marker waiting for it.
        const ops: Array<NewOp> = Array.from({ length: n }, (_, i) => [
          { key: `c${String(i).padStart(3, "0")}`, kind: "t.create", payload: { i } },
          { key: `m${String(i).padStart(3, "0")}`, kind: "t.marker", payload: { i }, dependsOn: `c${String(i).padStart(3, "0")}` }
        ]).flat()
        // A chain planned newest first (as undo plans reverts): each waits for the one after it.
        for (let i = 9; i >= 0; i--) ops.push({ key: `r${i}`, kind: "t.revert", payload: {}, ...(i < 9 ? { dependsOn: `r${i + 1}` } : {}) })
        yield* journal.addOps(ops)
        const ran: Array<string> = []
        const { api, reads } = counted(journal)
        const report = yield* replay(api, [noting("t.create", ran, () => "list"), noting("t.marker", ran), noting("t.revert", ran)], {
          concurrency: 8,
          batchSize: 50
        })
        expect(report).toMatchObject({ sent: 2 * n + 10, failed: 0, unknown: 0, deferred: 0 })
        // Read once each: re-reading what the phase holds each time an op ends reads ~n²/2.
        expect(reads.ops).toBeLessThanOrEqual(2 * n + 10)
        const creates = ran.filter((k) => k.startsWith("c"))
        expect(creates).toEqual([...creates].sort())
        for (let i = 0; i < n; i++) {
          const k = String(i).padStart(3, "0")
          expect(ran.indexOf(`m${k}`)).toBeGreaterThan(ran.indexOf(`c${k}`))
        }
        expect(ran.filter((k) => k.startsWith("r"))).toEqual(["r9", "r8", "r7", "r6", "r5", "r4", "r3", "r2", "r1", "r0"])
        expect((yield* journal.counts()).pending).toBe(0)
      }).pipe(Effect.scoped))

    it.live(`a group holds at most holdPerGroup ops read ahead; the rest are read again as it runs, in order (${backend.name})`, () =>
      Effect.gen(function*() {
        const journal = yield* openJournal(yield* backend.location)
        const n = 120
        const hold = 10
        const pad = (i: number) => String(i).padStart(3, "0")
        // Two lists' creates (a group each), planned a list at a time as restore plans them, each with a marker waiting for it.
        const ops: Array<NewOp> = ["a", "b"].flatMap((list) =>
          Array.from({ length: n }, (_, i) => [
            { key: `c${list}${pad(i)}`, kind: "t.create", payload: { i } },
            { key: `m${list}${pad(i)}`, kind: "t.marker", payload: { i }, dependsOn: `c${list}${pad(i)}` }
          ]).flat()
        )
        yield* journal.addOps(ops)
        // The first create of each list waits until the phase has read to the end of the journal.
        const gate = yield* Deferred.make<void>()
        const lastRead = new Map<string, "before" | "after">()
        const api: JournalApi = {
          ...journal,
          pendingPage: (options) =>
            Effect.tap(journal.pendingPage(options), (page) =>
              Effect.gen(function*() {
                const open = yield* Deferred.isDone(gate)
                for (const p of page) lastRead.set(p.op.key, open ? "after" : "before")
                if (page.length < options.limit) yield* Deferred.succeed(gate, undefined)
              }))
        }
        const ran: Array<string> = []
        const create: Executor = {
          kind: "t.create",
          group: (op) => op.key.slice(0, 2),
          execute: (op) =>
            Effect.gen(function*() {
              if (op.key.endsWith("000")) yield* Deferred.await(gate)
              ran.push(op.key)
              return { result: null, mappings: [] }
            })
        }
        const report = yield* replay(api, [create, noting("t.marker", ran)], { concurrency: 8, batchSize: 50, holdPerGroup: hold })
        expect(report).toMatchObject({ sent: 4 * n, failed: 0, unknown: 0, deferred: 0 })
        // Held from before the gate opened to their run: a queue of `hold` creates a list and
        // the markers waiting for them, not every op read (4n).
        const heldThroughGate = ran.filter((k) => !k.endsWith("000") && lastRead.get(k) === "before")
        expect(heldThroughGate.length).toBeLessThanOrEqual(2 * 2 * (hold + 1))
        for (const list of ["a", "b"]) {
          const creates = ran.filter((k) => k.startsWith(`c${list}`))
          expect(creates).toEqual(Array.from({ length: n }, (_, i) => `c${list}${pad(i)}`))
          for (let i = 0; i < n; i++) expect(ran.indexOf(`m${list}${pad(i)}`)).toBeGreaterThan(ran.indexOf(`c${list}${pad(i)}`))
        }
        expect((yield* journal.counts()).pending).toBe(0)
      }).pipe(Effect.scoped), 120_000)

    it.live(`an op whose dependency another session completes while the phase runs is run in the same run (${backend.name})`, () =>
      Effect.gen(function*() {
        const journal = yield* openJournal(yield* backend.location)
        // "waits" waits for "theirs", an op of a kind this replay does not run (another
        // session's); "trigger", planned after "waits", completes "theirs" as that session would.
        yield* journal.addOps([
          { key: "theirs", kind: "t.theirs", payload: {} },
          { key: "waits", kind: "t.step", payload: {}, dependsOn: "theirs" },
          { key: "trigger", kind: "t.step", payload: {} }
        ])
        const ran: Array<string> = []
        const step: Executor = {
          kind: "t.step",
          execute: (op, j) =>
            Effect.gen(function*() {
              ran.push(op.key)
              if (op.key === "trigger") {
                yield* j.claim("theirs")
                yield* j.complete("theirs", null)
              }
              return { result: null, mappings: [] }
            }).pipe(Effect.mapError((e) => ({ _tag: "JournalError", message: e.message })))
        }
        const report = yield* replay(journal, [step], { concurrency: 2 })
        expect(report).toMatchObject({ sent: 2, failed: 0 })
        expect(ran).toEqual(["trigger", "waits"])
        expect((yield* journal.counts()).pending).toBe(0)
      }).pipe(Effect.scoped))
  }
})
