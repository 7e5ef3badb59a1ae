import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { Journal, JournalDb, journalLayer, openJournal } from "../../src/store/journal.ts"
import { batchedTransitions } from "../../src/store/journal-batch.ts"

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
    }).pipe(Effect.provide(journalLayer(tmpFile()))))

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
    }).pipe(Effect.provide(journalLayer(tmpFile()))))

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
    }).pipe(Effect.provide(journalLayer(tmpFile()))))

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
    }).pipe(Effect.provide(journalLayer(tmpFile()))))

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
    }).pipe(Effect.provide(journalLayer(tmpFile()))))

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

  it("the journal file is owner-only and holds no more than what was planned", () => {
    const file = tmpFile()
    const j = new JournalDb(file)
    j.addOps(ops(1))
    j.close()
    expect(fs.statSync(file).mode & 0o777).toBe(0o600)
  })

  it.effect("a second live opener is refused; a lock left by a dead process is taken over", () =>
    Effect.gen(function*() {
      const file = tmpFile()
      // A lock file naming a process that no longer exists (SIGKILLed run).
      const dead = spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"]).stdout.toString()
      fs.writeFileSync(`${file}.lock`, dead)
      yield* Effect.scoped(
        Effect.gen(function*() {
          const j = yield* openJournal(file)
          yield* j.addOps(ops(1))
          // Held by us now; a lock naming a live other process is refused.
          fs.writeFileSync(`${file}.lock`, String(process.ppid))
          const second = yield* Effect.exit(Effect.scoped(openJournal(file)))
          expect(Exit.isFailure(second)).toBe(true)
          fs.writeFileSync(`${file}.lock`, String(process.pid))
        })
      )
      expect(fs.existsSync(`${file}.lock`)).toBe(false)
    }))

  it.effect("group commit: concurrent claims share a transaction, each durable before it returns; one bad key fails alone", () =>
    Effect.gen(function*() {
      const file = tmpFile()
      const j = yield* Effect.acquireRelease(Effect.sync(() => new JournalDb(file)), (c) => Effect.sync(() => c.close()))
      j.addOps(ops(20))
      const tx = batchedTransitions(j)
      const claims = yield* Effect.forEach(
        [...Array.from({ length: 20 }, (_, i) => `k${i}`), "missing"],
        (key) => Effect.either(tx.claim(key)),
        { concurrency: "unbounded" }
      )
      expect(claims.filter((c) => c._tag === "Right")).toHaveLength(20)
      expect(claims[20]!._tag).toBe("Left")
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
