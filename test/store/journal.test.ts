import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as fc from "fast-check"
import * as Option from "effect/Option"
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import Database from "better-sqlite3"
import { Journal, JournalDb, JOURNAL_FORMAT, openJournal } from "../../src/store/journal.ts"
import { batchedTransitions } from "../../src/store/journal/batch.ts"

const tmpFile = (name = "journal.sqlite") => path.join(fs.mkdtempSync(path.join(os.tmpdir(), "ws-journal-")), name)

const ops = (n: number, kind = "record.create") =>
  Array.from({ length: n }, (_, i) => ({ key: `k${i}`, kind, payload: { title: `t${i}` } }))

describe("journal", () => {
  it.effect("addOps inserts new keys only, in one transaction", () =>
    Effect.gen(function*() {
      const j = yield* Journal
      expect(yield* j.addOps(ops(3))).toBe(3)
      expect(yield* j.addOps(ops(5))).toBe(2)
      const c = yield* j.counts()
      expect(c.total).toBe(5)
      expect(c.pending).toBe(5)
      expect(c.byKind["record.create"]?.pending).toBe(5)
    }).pipe(Effect.provide(Journal.layer(tmpFile()))))

  it.effect("claim marks in_flight with attempted_at before sending; complete records the mapping", () =>
    Effect.gen(function*() {
      const j = yield* Journal
      yield* j.addOps(ops(1))
      const claimed = yield* j.claim("k0")
      expect(claimed.state).toBe("in_flight")
      expect(claimed.attempts).toBe(1)
      expect(claimed.attemptedAt).not.toBeNull()
      // A second claim of the same op is refused: no double send.
      const again = yield* Effect.exit(j.claim("k0"))
      expect(Exit.isFailure(again)).toBe(true)
      yield* j.complete("k0", { id: "r1" }, [{ namespace: "record", sourceKey: "k0", targetId: "r1" }])
      const done = Option.getOrThrow(yield* j.get("k0"))
      expect(done.state).toBe("done")
      expect(done.result).toEqual({ id: "r1" })
      expect(Option.getOrThrow(yield* j.lookup("record", "k0"))).toBe("r1")
      expect([...(yield* j.mappedTargets("record", ["r1", "r2"]))]).toEqual(["r1"])
    }).pipe(Effect.provide(Journal.layer(tmpFile()))))

  it.effect("resetInFlight turns a dead run's in-flight ops into pending + uncertain", () =>
    Effect.gen(function*() {
      const j = yield* Journal
      yield* j.addOps(ops(3))
      yield* j.claimMany(["k0", "k1"])
      expect(yield* j.resetInFlight()).toBe(2)
      const k0 = Option.getOrThrow(yield* j.get("k0"))
      expect(k0.state).toBe("pending")
      expect(k0.uncertain).toBe(true)
      expect(Option.getOrThrow(yield* j.get("k2")).uncertain).toBe(false)
      expect((yield* j.counts()).uncertain).toBe(2)
      yield* j.markResolved("k0")
      expect(Option.getOrThrow(yield* j.get("k0")).uncertain).toBe(false)
    }).pipe(Effect.provide(Journal.layer(tmpFile()))))

  it.effect("fail with outcomeUnknown stays uncertain; retryFailed brings failed ops back", () =>
    Effect.gen(function*() {
      const j = yield* Journal
      yield* j.addOps(ops(2))
      yield* j.claim("k0")
      yield* j.fail("k0", "create-record: outcome unknown", { outcomeUnknown: true })
      yield* j.claim("k1")
      yield* j.fail("k1", "HTTP 422")
      expect((yield* j.counts()).failed).toBe(2)
      expect(yield* j.retryFailed()).toBe(2)
      const k0 = Option.getOrThrow(yield* j.get("k0"))
      expect(k0.state).toBe("pending")
      expect(k0.uncertain).toBe(true)
      expect(Option.getOrThrow(yield* j.get("k1")).uncertain).toBe(false)
    }).pipe(Effect.provide(Journal.layer(tmpFile()))))

  it.effect("pending keeps plan order and holds back ops whose dependency is not done", () =>
    Effect.gen(function*() {
      const j = yield* Journal
      yield* j.addOps([
        { key: "list", kind: "list.ensure", payload: {} },
        { key: "a", kind: "record.create", payload: {}, dependsOn: "list" },
        { key: "b", kind: "record.create", payload: {} }
      ])
      expect((yield* j.pending({ limit: 10 })).map((o) => o.key)).toEqual(["list", "b"])
      expect((yield* j.pending({ limit: 10, kinds: ["record.create"] })).map((o) => o.key)).toEqual(["b"])
      yield* j.claim("list")
      yield* j.fail("list", "403")
      expect((yield* j.blocked()).map((o) => o.key)).toEqual(["a"])
      yield* j.retryFailed()
      yield* j.claim("list")
      yield* j.complete("list", { id: "L" })
      expect((yield* j.pending({ limit: 10 })).map((o) => o.key)).toEqual(["a", "b"])
    }).pipe(Effect.provide(Journal.layer(tmpFile()))))

  it("planOps gives identical items distinct occurrence keys, stable across plan runs", () => {
    const file = tmpFile()
    const j = new JournalDb(file)
    const row = (key: string) => ({ key, kind: "record.create", payload: {}, occurrence: true })
    const run1 = j.beginPlanRun()
    const first = j.planOps(run1, [row("h1"), row("h2"), row("h1")])
    expect(first.map((p) => [p.key, p.isNew])).toEqual([["h1", true], ["h2", true], ["h1#1", true]])
    const run2 = j.beginPlanRun()
    // Same file with one more duplicate appended: only the new one is new.
    const second = j.planOps(run2, [row("h1"), row("h2"), row("h1"), row("h1")])
    expect(second.map((p) => [p.key, p.isNew])).toEqual([["h1", false], ["h2", false], ["h1#1", false], ["h1#2", true]])
    j.close()
  })

  it("planOps in multi-row chunks gives what one insert per op gives (property: repeats, keys planned before, '#' keys)", () => {
    // The reference: the documented per-op rule over an in-memory map.
    type Row = { key: string; occurrence: boolean }
    const reference = () => {
      const planned = new Map<string, number>()
      return (run: number, rows: ReadonlyArray<Row>) =>
        rows.map((op) => {
          for (let n = 0;; n++) {
            const key = n === 0 ? op.key : `${op.key}#${n}`
            const at = planned.get(key)
            if (at === undefined) {
              planned.set(key, run)
              return { key, isNew: true, duplicate: false }
            }
            if (at === run && op.occurrence) continue
            if (at === run) return { key, isNew: false, duplicate: true }
            planned.set(key, run)
            return { key, isNew: false, duplicate: false }
          }
        })
    }
    // Chunks are 256 ops: segments of 256 distinct keys (the fast path) drawn from few
    // keys, so later segments repeat earlier ones and meet `h1#1`-like keys, plus a tail.
    const key = fc.oneof(fc.integer({ min: 0, max: 299 }).map((i) => `h${i}`), fc.constantFrom("h1#1", "h2#1", "h3#2"))
    const segment = fc.uniqueArray(key, { minLength: 256, maxLength: 256 })
    const tail = fc.array(key, { maxLength: 40 })
    const runOf = fc.tuple(fc.array(segment, { maxLength: 3 }), tail, fc.boolean()).map(([segs, t, occurrence]) =>
      [...segs.flat(), ...t].map((k, i): Row => ({ key: k, occurrence: occurrence || i % 3 === 0 }))
    )
    fc.assert(
      fc.property(fc.array(runOf, { minLength: 1, maxLength: 3 }), (runs) => {
        const j = new JournalDb(tmpFile())
        const model = reference()
        try {
          for (const rows of runs) {
            const run = j.beginPlanRun()
            const got = j.planOps(run, rows.map((r) => ({ ...r, kind: "record.create", payload: { k: r.key } })))
            expect(got.map(({ duplicate, isNew, key }) => ({ key, isNew, duplicate }))).toEqual(model(run, rows))
            j.endPlanRun(run)
          }
        } finally {
          j.close()
        }
      }),
      { numRuns: 25 }
    )
  })

  it("planOps names the op it could not store (an op without a kind is ignored by INSERT OR IGNORE, not inserted)", () => {
    const j = new JournalDb(tmpFile())
    const run = j.beginPlanRun()
    expect(() => j.planOps(run, [{ key: "x", kind: undefined as unknown as string, payload: {} }])).toThrow("journal op x: not stored")
    expect(j.counts().total).toBe(0)
    j.close()
  })

  it("planOps: an op whose key looks like an occurrence key cannot take the one an earlier op of its chunk is due", () => {
    const j = new JournalDb(tmpFile())
    const run = j.beginPlanRun()
    const first = Array.from({ length: 256 }, (_, i) => `h${i}`)
    const second = ["h1", "h1#1", ...Array.from({ length: 254 }, (_, i) => `x${i}`)]
    const got = j.planOps(run, [...first, ...second].map((key) => ({ key, kind: "record.create", payload: {}, occurrence: true })))
    // In op order: the repeated h1 is h1#1, so the op keyed h1#1 is itself a repeat.
    expect(got.slice(256, 258).map((p) => p.key)).toEqual(["h1#1", "h1#1#1"])
    j.close()
  })

  it("planOps keeps plan order across its multi-row chunks, and addOps counts only new keys", () => {
    const j = new JournalDb(tmpFile())
    const run = j.beginPlanRun()
    const keys = Array.from({ length: 1000 }, (_, i) => `k${(i * 7919) % 1000}`)
    j.planOps(run, keys.map((key) => ({ key, kind: "record.create", payload: { key } })))
    j.endPlanRun(run)
    expect(j.pending({ limit: 2000 }).map((o) => o.key)).toEqual(keys)
    expect(j.get("k7")?.payload).toEqual({ key: "k7" })
    expect(j.addOps(Array.from({ length: 600 }, (_, i) => ({ key: `k${i + 500}`, kind: "record.create", payload: {} })))).toBe(100)
    j.close()
  })

  it("a plan run keeps a small page cache (8 MB) and gives the store's back when it ends, also when a claim ends it", () => {
    const j = new JournalDb(tmpFile())
    const store = j.db.pragma("cache_size", { simple: true })
    expect(store).toBe(-16384)
    const run = j.beginPlanRun()
    expect(j.db.pragma("cache_size", { simple: true })).toBe(-8192)
    j.endPlanRun(run)
    expect(j.db.pragma("cache_size", { simple: true })).toBe(store)
    j.addOps(ops(1))
    j.beginPlanRun()
    j.claim("k0")
    expect(j.db.pragma("cache_size", { simple: true })).toBe(store)
    // A planning thread's connection, joining the run, plans with the small cache too.
    const thread = new JournalDb(j.file)
    thread.joinPlanRun()
    expect(thread.db.pragma("cache_size", { simple: true })).toBe(-8192)
    thread.close()
    j.close()
  })

  it("a claim ends planning's fsync-free commits: claims are durable (synchronous=FULL) even without endPlanRun", () => {
    const j = new JournalDb(tmpFile())
    j.addOps(ops(2))
    j.beginPlanRun()
    expect(j.db.pragma("synchronous", { simple: true })).toBe(1)
    j.claim("k0")
    expect(j.db.pragma("synchronous", { simple: true })).toBe(2)
    j.close()
  })

  it("a journal of a newer format is refused at open with a clear error; an older one is read and marked", () => {
    const newer = tmpFile()
    new JournalDb(newer).close()
    const raw = new Database(newer)
    raw.pragma(`user_version = ${JOURNAL_FORMAT + 1}`)
    raw.close()
    expect(() => new JournalDb(newer)).toThrow(
      new RegExp(`newer worksync \\(journal format ${JOURNAL_FORMAT + 1}; this version reads formats up to ${JOURNAL_FORMAT}\\)`)
    )

    const older = tmpFile()
    const j1 = new JournalDb(older)
    j1.addOps([{ key: "a", kind: "record.create", payload: { workspaceId: "w", title: "x" } }])
    j1.db.pragma("user_version = 0")
    j1.close()
    const j2 = new JournalDb(older)
    expect(j2.get("a")?.payload).toEqual({ workspaceId: "w", title: "x" })
    expect(j2.db.pragma("user_version", { simple: true })).toBe(JOURNAL_FORMAT)
    j2.close()
  })

  it("a journal of format 2 gains sent_at: its uncertain ops are dated at their last change, the window runs from there", () => {
    const file = tmpFile()
    const j0 = new JournalDb(file, { now: () => "2030-01-01T00:00:05.000Z" })
    j0.addOps([
      { key: "a", kind: "record.create", payload: { workspaceId: "w", title: "x" } },
      { key: "b", kind: "record.create", payload: { workspaceId: "w", title: "y" } }
    ])
    j0.claim("a")
    j0.markUncertain("a", "HTTP 500")
    // As format 2 left it: no column for the send.
    j0.db.exec("ALTER TABLE ops DROP COLUMN sent_at")
    j0.db.pragma("user_version = 2")
    j0.close()
    const j = new JournalDb(file)
    expect(j.db.pragma("user_version", { simple: true })).toBe(JOURNAL_FORMAT)
    expect(j.get("a")).toMatchObject({ uncertain: true, sentAt: "2030-01-01T00:00:05.000Z" })
    expect(j.get("b")?.sentAt).toBeNull()
    j.close()
  })

  it("the journal file is owner-only and holds no more than what was planned", () => {
    const file = tmpFile()
    const j = new JournalDb(file)
    j.addOps(ops(1))
    j.close()
    expect(fs.statSync(file).mode & 0o777).toBe(0o600)
  })

  it.effect("group commit: concurrent claims share a transaction, each durable before it returns; one bad key fails alone", () =>
    Effect.gen(function*() {
      const file = tmpFile()
      const j = yield* Effect.acquireRelease(Effect.sync(() => new JournalDb(file)), (c) => Effect.sync(() => c.close()))
      j.addOps(ops(20))
      const tx = batchedTransitions(j)
      const claims = yield* Effect.forEach(
        [...Array.from({ length: 20 }, (_, i) => `k${i}`), "missing"],
        (key) => Effect.result(tx.claim(key)),
        { concurrency: "unbounded" }
      )
      expect(claims.filter((c) => c._tag === "Success")).toHaveLength(20)
      expect(claims[20]!._tag).toBe("Failure")
      // Another connection sees every claim committed.
      const other = new JournalDb(file)
      expect(other.counts().in_flight).toBe(20)
      yield* Effect.forEach(Array.from({ length: 20 }, (_, i) => `k${i}`), (key) => tx.complete(key, { ok: true }), {
        concurrency: "unbounded"
      })
      expect(other.counts().done).toBe(20)
      other.close()
    }).pipe(Effect.scoped))
})
