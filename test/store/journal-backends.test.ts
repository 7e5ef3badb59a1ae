/**
 * One suite, every backend: the journal's contract (JournalApi) checked the same way on a
 * SQLite file and on a PostgreSQL schema. Backend-specific checks (pragmas, the planning
 * thread, file modes, SIGKILL of a child process) stay in journal.test.ts and
 * plan-writer.test.ts; everything here goes through the service, and through a second
 * connection only to see what another process would see (`peek`).
 */
import { describe, expect, it } from "@effect/vitest"
import Database from "better-sqlite3"
import * as Effect from "effect/Effect"
import * as fc from "fast-check"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import * as fs from "node:fs"
import * as path from "node:path"
import { isApplied, type JournalApi, openJournal, type PlanOp } from "../../src/store/journal.ts"
import { openJournalView } from "../../src/store/journal/read-only.ts"
import { JOURNAL_PG_MIGRATIONS } from "../../src/store/journal/schema-postgres.ts"
import { openPostgres, parsePostgresUrl } from "../../src/store/postgres.ts"
import { openSnapshot } from "../../src/store/snapshot.ts"
import { tempDir } from "../support/effect.ts"
import { freshSchema, pgClient, query } from "../support/postgres.ts"

interface Backend {
  readonly name: string
  /** A new, empty journal location for one test, removed with the test's scope. */
  readonly location: Effect.Effect<string, never, Scope.Scope>
  /** The ops' `key, state` in seq order, read on a connection of its own (what another process sees). */
  readonly peek: (location: string) => Effect.Effect<Array<{ key: string; state: string }>, Error, Scope.Scope>
}

const BACKENDS: ReadonlyArray<Backend> = [
  {
    name: "sqlite",
    location: Effect.map(tempDir("ws-journal-"), (dir) => path.join(dir, "journal.sqlite")),
    peek: (file) =>
      Effect.sync(() => {
        const db = new Database(file, { readonly: true })
        try {
          return db.prepare<[], { key: string; state: string }>("SELECT key, state FROM ops ORDER BY seq").all()
        } finally {
          db.close()
        }
      })
  },
  {
    name: "postgres",
    location: freshSchema,
    peek: (location) => {
      const { schema, url } = parsePostgresUrl(location)
      return Effect.flatMap(pgClient(url), (client) =>
        query<{ key: string; state: string }>(client, `SELECT key, state FROM ${schema}.ops ORDER BY seq`))
    }
  }
]

const ops = (n: number, kind = "record.create") =>
  Array.from({ length: n }, (_, i) => ({ key: `k${i}`, kind, payload: { title: `t${i}` } }))

const keys = (list: ReadonlyArray<{ readonly key: string }>) => list.map((o) => o.key)

const op = (j: JournalApi, key: string) => Effect.map(j.get(key), Option.getOrThrow)

for (const backend of BACKENDS) {
  describe(`journal on ${backend.name}`, () => {
    const open = Effect.flatMap(backend.location, (location) => Effect.map(openJournal(location), (journal) => ({ journal, location })))

    it.live("addOps inserts new keys only (the first of a repeated key); counts by state and kind", () =>
      Effect.gen(function*() {
        const { journal: j } = yield* open
        expect(yield* j.addOps(ops(3))).toBe(3)
        expect(yield* j.addOps([...ops(5), { key: "k4", kind: "list.ensure", payload: {} }])).toBe(2)
        expect((yield* op(j, "k4")).kind).toBe("record.create")
        expect((yield* op(j, "k2")).payload).toEqual({ title: "t2" })
        expect(Option.isNone(yield* j.get("nope"))).toBe(true)
        const c = yield* j.counts()
        expect(c).toMatchObject({ total: 5, pending: 5, in_flight: 0, done: 0, failed: 0, uncertain: 0 })
        expect(c.byKind["record.create"]).toEqual({ pending: 5, in_flight: 0, done: 0, failed: 0 })
      }))

    it.live("claim: pending -> in_flight, committed before it returns; a claim of an op not pending is refused", () =>
      Effect.gen(function*() {
        const { journal: j, location } = yield* open
        yield* j.addOps(ops(2))
        const claimed = yield* j.claim("k0")
        expect(claimed).toMatchObject({ key: "k0", state: "in_flight", attempts: 1, uncertain: false })
        expect(claimed.attemptedAt).not.toBeNull()
        expect(typeof claimed.seq).toBe("number")
        // Another connection sees the claim: it is durable before the request is sent.
        expect(yield* backend.peek(location)).toEqual([{ key: "k0", state: "in_flight" }, { key: "k1", state: "pending" }])
        const again = yield* Effect.flip(j.claim("k0"))
        expect(again).toMatchObject({ _tag: "JournalStateError", key: "k0", expected: "pending", actual: "in_flight" })
        const missing = yield* Effect.flip(j.claim("nope"))
        expect(missing).toMatchObject({ _tag: "JournalStateError", actual: "missing" })
        // claimMany takes the pending ones among its keys, in one transaction.
        expect(keys(yield* j.claimMany(["k0", "k1", "nope"]))).toEqual(["k1"])
        expect((yield* j.counts()).in_flight).toBe(2)
      }))

    it.live("recordBefore: kept on an in-flight op and durable at once; the first value stays; list reads every state in plan order", () =>
      Effect.gen(function*() {
        const { journal: j } = yield* open
        yield* j.addOps(ops(3, "record.update"))
        expect((yield* op(j, "k0")).before ?? null).toBeNull()
        const refused = yield* Effect.flip(j.recordBefore("k0", { fields: { title: "a" } }))
        expect(refused).toMatchObject({ _tag: "JournalStateError", expected: "in_flight", actual: "pending" })
        yield* j.claim("k0")
        yield* j.recordBefore("k0", { fields: { title: "a" } })
        // A later attempt may read what an earlier one's request set: it does not replace it.
        yield* j.recordBefore("k0", { fields: { title: "b" } })
        yield* j.complete("k0", { id: "r0" })
        expect((yield* op(j, "k0")).before).toEqual({ fields: { title: "a" } })
        yield* j.claim("k1")
        yield* j.fail("k1", "refused")
        expect((yield* j.list({ limit: 10 })).map((o) => [o.key, o.state])).toEqual([["k0", "done"], ["k1", "failed"], ["k2", "pending"]])
        expect(keys(yield* j.list({ limit: 10, states: ["done", "pending"] }))).toEqual(["k0", "k2"])
        const first = yield* j.list({ limit: 1 })
        expect(keys(yield* j.list({ limit: 10, afterSeq: first[0]!.seq, kinds: ["record.update"] }))).toEqual(["k1", "k2"])
        expect(yield* j.list({ limit: 10, kinds: ["record.create"] })).toEqual([])
      }))

    it.live("list pages backwards: newest first, each page before the last one's seq, with the same filters", () =>
      Effect.gen(function*() {
        const { journal: j } = yield* open
        yield* j.addOps([...ops(5, "record.update"), { key: "l", kind: "list.ensure", payload: {} }])
        const first = yield* j.list({ limit: 2, descending: true })
        expect(keys(first)).toEqual(["l", "k4"])
        const next = yield* j.list({ limit: 2, descending: true, beforeSeq: first[1]!.seq })
        expect(keys(next)).toEqual(["k3", "k2"])
        expect(keys(yield* j.list({ limit: 10, descending: true, beforeSeq: next[1]!.seq }))).toEqual(["k1", "k0"])
        expect(keys(yield* j.list({ limit: 10, descending: true, kinds: ["record.update"], beforeSeq: first[0]!.seq, afterSeq: next[0]!.seq })))
          .toEqual(["k4"])
        expect(keys(yield* j.list({ limit: 10, beforeSeq: next[0]!.seq }))).toEqual(["k0", "k1", "k2"])
      }))

    it.live("complete: done with its result, mappings and follow-up ops in one transaction; twice is refused", () =>
      Effect.gen(function*() {
        const { journal: j } = yield* open
        yield* j.addOps(ops(1))
        yield* j.claim("k0")
        yield* j.complete("k0", { id: "r1" }, [{ namespace: "record", sourceKey: "k0", targetId: "r1" }], [
          { key: "k0.done", kind: "record.update", payload: { done: true }, dependsOn: "k0" },
          { key: "k0", kind: "record.create", payload: { ignored: true } }
        ])
        const done = yield* op(j, "k0")
        expect(done).toMatchObject({ state: "done", result: { id: "r1" }, error: null, uncertain: false })
        expect(yield* op(j, "k0.done")).toMatchObject({ state: "pending", dependsOn: "k0", payload: { done: true } })
        expect(Option.getOrThrow(yield* j.lookup("record", "k0"))).toBe("r1")
        const twice = yield* Effect.flip(j.complete("k0", { id: "r2" }, [{ namespace: "record", sourceKey: "k0", targetId: "r2" }]))
        expect(twice).toMatchObject({ _tag: "JournalStateError", expected: "in_flight or pending", actual: "done" })
        // Refused as a whole: the mapping of the refused completion was not written.
        expect(Option.getOrThrow(yield* j.lookup("record", "k0"))).toBe("r1")
        // A pending op may be completed (a reconciliation found it applied).
        yield* j.complete("k0.done", null)
        expect((yield* op(j, "k0.done")).result).toBeNull()
      }))

    it.live("fail, markUncertain and release: each from the states it applies to, refused from others", () =>
      Effect.gen(function*() {
        const { journal: j } = yield* open
        yield* j.addOps(ops(5))
        yield* j.claim("k0")
        yield* j.fail("k0", "create-record: outcome unknown", { outcomeUnknown: true })
        expect(yield* op(j, "k0")).toMatchObject({ state: "failed", error: "create-record: outcome unknown", uncertain: true })
        yield* j.claim("k1")
        yield* j.fail("k1", "HTTP 422")
        expect(yield* op(j, "k1")).toMatchObject({ state: "failed", uncertain: false })
        expect(yield* Effect.flip(j.fail("k1", "again"))).toMatchObject({ _tag: "JournalStateError", actual: "failed" })
        // A pending op may fail (refused before it was sent).
        yield* j.fail("k4", "bad payload")
        expect((yield* op(j, "k4")).state).toBe("failed")

        yield* j.claim("k2")
        yield* j.markUncertain("k2", "timeout")
        const k2 = yield* op(j, "k2")
        expect(k2).toMatchObject({ state: "pending", uncertain: true, error: "timeout", result: null })
        expect(isApplied(k2)).toBe(false)
        expect(yield* Effect.flip(j.markUncertain("k2", "again"))).toMatchObject({ expected: "in_flight", actual: "pending" })
        yield* j.claim("k2")
        yield* j.markUncertain("k2", "unreadable answer", { applied: true })
        expect(isApplied(yield* op(j, "k2"))).toBe(true)

        yield* j.claim("k3")
        yield* j.release("k3", "rate limited before sending")
        expect(yield* op(j, "k3")).toMatchObject({ state: "pending", uncertain: false, error: "rate limited before sending", attempts: 1 })
        expect(yield* Effect.flip(j.release("k3"))).toMatchObject({ _tag: "JournalStateError", expected: "in_flight", actual: "pending" })
        expect(yield* Effect.flip(j.release("nope"))).toMatchObject({ actual: "missing" })

        const c = yield* j.counts()
        expect(c).toMatchObject({ total: 5, pending: 2, failed: 3, uncertain: 2 })
        expect((yield* j.failed()).map((o) => o.key)).toEqual(["k0", "k1", "k4"])
        expect((yield* j.failed(1)).map((o) => o.key)).toEqual(["k0"])
      }))

    it.live("the send of unknown outcome is dated: markUncertain and fail record it, a claim or a rerun keeps it, a dead run's in-flight op is dated at the reset", () =>
      Effect.gen(function*() {
        const location = yield* backend.location
        // The journal's own clock, moved by hand: what it stamps is told apart from a send's date.
        let clock = Date.parse("2030-01-01T00:00:10.000Z")
        const now = () => new Date(clock).toISOString()
        const sent = "2030-01-01T00:00:03.000Z"
        yield* Effect.scoped(Effect.gen(function*() {
          const j = yield* openJournal(location, { now })
          yield* j.addOps(ops(4))
          expect((yield* op(j, "k0")).sentAt).toBeNull()
          yield* j.claim("k0")
          yield* j.markUncertain("k0", "HTTP 500", { sentAt: sent })
          expect(yield* op(j, "k0")).toMatchObject({ state: "pending", uncertain: true, sentAt: sent })
          // Claimed again (sent again later): the date stays until that send is known.
          clock += 1000
          yield* j.claim("k0")
          expect((yield* op(j, "k0")).sentAt).toBe(sent)
          yield* j.fail("k0", "outcome unknown", { outcomeUnknown: true, sentAt: "2030-01-01T00:00:10.500Z" })
          expect(yield* op(j, "k0")).toMatchObject({ state: "failed", uncertain: true, sentAt: "2030-01-01T00:00:10.500Z" })
          yield* j.retryFailed()
          expect((yield* op(j, "k0")).sentAt).toBe("2030-01-01T00:00:10.500Z")
          // Without a date: the send cannot have been later than now.
          yield* j.claim("k1")
          yield* j.markUncertain("k1", "unreadable answer", { applied: true })
          expect((yield* op(j, "k1")).sentAt).toBe(now())
          // A failure that says nothing of a send leaves the recorded one.
          yield* j.claim("k1")
          yield* j.fail("k1", "could not check", { outcomeUnknown: true })
          expect((yield* op(j, "k1")).sentAt).toBe(now())
          // This "process" dies with k2 in flight.
          yield* j.claim("k2")
        }))
        clock += 60_000
        const j = yield* openJournal(location, { now })
        expect(yield* j.resetInFlight()).toBe(1)
        // Its request, if it left, left before this restart: the window runs from here.
        expect(yield* op(j, "k2")).toMatchObject({ state: "pending", uncertain: true, sentAt: now() })
        expect((yield* op(j, "k3")).sentAt).toBeNull()
      }))

    it.live("retryFailed brings failed ops back (uncertain kept), all or by kind", () =>
      Effect.gen(function*() {
        const { journal: j } = yield* open
        yield* j.addOps([...ops(2), { key: "l", kind: "list.ensure", payload: {} }])
        for (const key of ["k0", "k1", "l"]) yield* j.claim(key)
        yield* j.fail("k0", "outcome unknown", { outcomeUnknown: true })
        yield* j.fail("k1", "HTTP 422")
        yield* j.fail("l", "HTTP 403")
        expect(yield* j.retryFailed(["list.ensure"])).toBe(1)
        expect((yield* op(j, "l")).state).toBe("pending")
        expect(yield* j.retryFailed([])).toBe(0)
        expect(yield* j.retryFailed()).toBe(2)
        expect(yield* op(j, "k0")).toMatchObject({ state: "pending", uncertain: true })
        expect(yield* op(j, "k1")).toMatchObject({ state: "pending", uncertain: false })
        expect(yield* j.retryFailed()).toBe(0)
      }))

    it.live("a process that died with ops in flight: the next opener finds them and marks them uncertain", () =>
      Effect.gen(function*() {
        const location = yield* backend.location
        // The first "process": claims two ops and ends without finishing them.
        yield* Effect.scoped(Effect.gen(function*() {
          const j = yield* openJournal(location)
          yield* j.addOps(ops(3))
          yield* j.claim("k0")
          yield* j.claimMany(["k1"])
        }))
        const j = yield* openJournal(location)
        expect((yield* j.counts()).in_flight).toBe(2)
        expect(yield* j.resetInFlight()).toBe(2)
        expect(yield* op(j, "k0")).toMatchObject({ state: "pending", uncertain: true, attempts: 1 })
        expect((yield* op(j, "k2")).uncertain).toBe(false)
        expect((yield* j.counts()).uncertain).toBe(2)
        expect(yield* j.resetInFlight()).toBe(0)
        // Reconciliation found nothing: it may be sent plainly.
        yield* j.markResolved("k0")
        expect((yield* op(j, "k0")).uncertain).toBe(false)
      }))

    it.live("pending pages in plan order, by kind, holding back ops whose dependency is not done (pendingPage: with what they wait for); blocked lists them", () =>
      Effect.gen(function*() {
        const { journal: j } = yield* open
        yield* j.addOps([
          { key: "list", kind: "list.ensure", payload: {} },
          { key: "a", kind: "record.create", payload: {}, dependsOn: "list" },
          { key: "b", kind: "record.create", payload: {} },
          { key: "orphan", kind: "record.create", payload: {}, dependsOn: "never-planned" },
          ...Array.from({ length: 7 }, (_, i) => ({ key: `z${9 - i}`, kind: "record.create", payload: {} }))
        ])
        const first = yield* j.pending({ limit: 3 })
        expect(keys(first)).toEqual(["list", "b", "z9"])
        const next = yield* j.pending({ limit: 3, afterSeq: first[2]!.seq })
        expect(keys(next)).toEqual(["z8", "z7", "z6"])
        expect(keys(yield* j.pending({ limit: 100, kinds: ["list.ensure"] }))).toEqual(["list"])
        expect(keys(yield* j.pending({ limit: 2, kinds: ["record.create", "tag.ensure"] }))).toEqual(["b", "z9"])
        // The page replay reads: every pending op, with the key it still waits for.
        const page = yield* j.pendingPage({ limit: 4, kinds: ["record.create", "list.ensure"] })
        expect(page.map((p) => [p.op.key, p.waitsFor])).toEqual([["list", null], ["a", "list"], ["b", null], ["orphan", "never-planned"]])
        expect((yield* j.pendingPage({ limit: 2, afterSeq: page[3]!.op.seq })).map((p) => p.op.key)).toEqual(["z9", "z8"])
        yield* j.claim("list")
        yield* j.fail("list", "403")
        expect(keys(yield* j.blocked())).toEqual(["a", "orphan"])
        expect(keys(yield* j.blocked(1))).toEqual(["a"])
        yield* j.retryFailed()
        yield* j.claim("list")
        yield* j.complete("list", { id: "L" })
        expect(keys(yield* j.pending({ limit: 3 }))).toEqual(["a", "b", "z9"])
        expect((yield* j.pendingPage({ limit: 1 })).map((p) => [p.op.key, p.waitsFor])).toEqual([["a", null]])
        expect(keys(yield* j.blocked())).toEqual(["orphan"])
      }))

    it.live("claimNext claims the first (or last) runnable pending op of the kinds under a key prefix; getMany reads ops by key", () =>
      Effect.gen(function*() {
        const { journal: j, location } = yield* open
        const copy = (key: string, dependsOn?: string) => ({ key, kind: "file.copy", payload: { key }, dependsOn })
        yield* j.addOps([
          { key: "dep", kind: "list.ensure", payload: {} },
          copy("f:1", "dep"),
          copy("f:2"),
          copy("g:3"),
          { key: "f:4", kind: "record.create", payload: {} },
          copy("f:5"),
          copy("f:6"),
          copy("f:7", "never-planned"),
          copy("F:8"),
          // LIKE's wildcards and escape in a prefix are plain characters.
          copy("p_x:1"),
          copy("pax:2"),
          copy("p%x:3"),
          copy("pbbx:4"),
          copy("p\\q:5")
        ])
        const next = (keyPrefix: string, options: { kinds?: ReadonlyArray<string>; descending?: boolean } = {}) =>
          Effect.map(
            j.claimNext({ kinds: options.kinds ?? ["file.copy"], keyPrefix, descending: options.descending ?? false }),
            Option.getOrUndefined
          )
        yield* j.fail("f:5", "not pending")

        const last = yield* next("f:", { descending: true })
        expect(last).toMatchObject({ key: "f:6", state: "in_flight", attempts: 1, payload: { key: "f:6" } })
        expect(last!.attemptedAt).not.toBeNull()
        const first = yield* next("f:")
        expect(first).toMatchObject({ key: "f:2", state: "in_flight", attempts: 1 })
        // Committed before it returns: another connection sees the claims.
        const seen = new Map((yield* backend.peek(location)).map((r) => [r.key, r.state]))
        expect([seen.get("f:2"), seen.get("f:6")]).toEqual(["in_flight", "in_flight"])
        // f:1 waits for dep, f:5 failed, f:7's dependency is missing; g:3 and f:4 are not asked for.
        expect(yield* next("f:")).toBeUndefined()
        expect(yield* next("f:", { kinds: [] })).toBeUndefined()
        expect((yield* next("f:", { kinds: ["record.create", "tag.ensure"] }))?.key).toBe("f:4")
        yield* j.claim("dep")
        yield* j.complete("dep", null)
        expect((yield* next("f:", { descending: true }))?.key).toBe("f:1")
        expect((yield* next(""))?.key).toBe("g:3")

        expect((yield* next("p\\"))?.key).toBe("p\\q:5")
        expect((yield* next("p_x"))?.key).toBe("p_x:1")
        expect(yield* next("p_x")).toBeUndefined()
        expect((yield* next("p%x"))?.key).toBe("p%x:3")
        expect(yield* next("p%x")).toBeUndefined()
        expect(keys(yield* j.pending({ limit: 10, kinds: ["file.copy"] }))).toEqual(["F:8", "pax:2", "pbbx:4"])
        // A released op is claimed again, its attempts counted; `untried` passes it by.
        yield* j.release("f:2")
        expect(Option.getOrUndefined(yield* j.claimNext({ kinds: ["file.copy"], keyPrefix: "f:", untried: true }))).toBeUndefined()
        expect(yield* next("f:")).toMatchObject({ key: "f:2", attempts: 2 })

        const got = yield* j.getMany(["f:6", "nope", "dep", "f:6"])
        expect(got.map((o) => [o.key, o.state]).sort()).toEqual([["dep", "done"], ["f:6", "in_flight"]])
        expect(yield* j.getMany([])).toEqual([])
        // More keys than one statement takes on SQLite.
        yield* j.addOps(ops(1200))
        const many = yield* j.getMany([...Array.from({ length: 1200 }, (_, i) => `k${i}`), "nope"])
        expect(new Set(keys(many)).size).toBe(1200)
        expect(many.every((o) => o.state === "pending")).toBe(true)

        // As with claim, nothing is sent before a plan run in progress is durable.
        const run = yield* j.beginPlanRun()
        yield* j.planOps(run, [copy("q:1")])
        expect((yield* next("q:"))?.key).toBe("q:1")
        expect(Option.getOrThrow(yield* j.getMeta("plan_run_complete"))).toBe(String(run))
      }))

    it.live("id map: set, overwrite, look up, list in byte order of source keys (whole or a page at a time), find mapped targets", () =>
      Effect.gen(function*() {
        const { journal: j } = yield* open
        for (const sourceKey of ["b", "B", "a", "é", "_", "Z"]) {
          yield* j.setMapping({ namespace: "list", sourceKey, targetId: `t-${sourceKey}` })
        }
        yield* j.setMapping({ namespace: "list", sourceKey: "a", targetId: "t-a2" })
        yield* j.setMapping({ namespace: "tag", sourceKey: "a", targetId: "t-tag" })
        expect((yield* j.mappings("list")).map((m) => m.sourceKey)).toEqual(["B", "Z", "_", "a", "b", "é"])
        expect((yield* j.mappings("list"))[3]).toEqual({ namespace: "list", sourceKey: "a", targetId: "t-a2" })
        expect(yield* j.mappings("none")).toEqual([])
        // A page at a time, each after the last key of the one before: the same, in order.
        const paged: Array<string> = []
        for (let page = yield* j.mappings("list", { limit: 4 }); page.length > 0;) {
          expect(page.length).toBeLessThanOrEqual(4)
          paged.push(...page.map((m) => m.sourceKey))
          page = yield* j.mappings("list", { after: page[page.length - 1]!.sourceKey, limit: 4 })
        }
        expect(paged).toEqual(["B", "Z", "_", "a", "b", "é"])
        expect(yield* j.mappings("list", { after: "a", limit: 1 })).toEqual([{ namespace: "list", sourceKey: "b", targetId: "t-b" }])
        expect(Option.getOrThrow(yield* j.lookup("list", "a"))).toBe("t-a2")
        expect(Option.getOrThrow(yield* j.lookup("tag", "a"))).toBe("t-tag")
        expect(Option.isNone(yield* j.lookup("list", "A"))).toBe(true)
        expect([...(yield* j.mappedTargets("list", ["t-b", "t-a", "t-a2", "t-tag"]))].sort()).toEqual(["t-a2", "t-b"])
        expect((yield* j.mappedTargets("list", [])).size).toBe(0)
      }))

    it.live("the read-only view reads what the journal wrote: ops by key (repeats, missing, more than a statement's parameters), the id map whole and a page at a time, meta", () =>
      Effect.gen(function*() {
        const { journal: j, location } = yield* open
        yield* j.addOps(ops(1200))
        for (const sourceKey of ["b", "a", "c"]) yield* j.setMapping({ namespace: "list", sourceKey, targetId: `t-${sourceKey}` })
        yield* j.setMeta("import.passes", "2")
        const view = yield* openJournalView(location)
        const asked = [...Array.from({ length: 1200 }, (_, i) => `k${i}`), "k7", "nope"]
        const read = yield* view.getMany(asked)
        expect(keys(read).sort()).toEqual(keys(yield* j.getMany(asked)).sort())
        expect(new Set(keys(read)).size).toBe(1200)
        expect(read.find((o) => o.key === "k7")).toMatchObject({ kind: "record.create", state: "pending", payload: { title: "t7" } })
        expect(yield* view.getMany([])).toEqual([])
        expect((yield* view.mappings("list")).map((m) => m.sourceKey)).toEqual(["a", "b", "c"])
        expect(yield* view.mappings("list", { after: "a", limit: 1 })).toEqual([{ namespace: "list", sourceKey: "b", targetId: "t-b" }])
        expect(Option.getOrThrow(yield* view.getMeta("import.passes"))).toBe("2")
      }))

    it.live("meta and adoptions", () =>
      Effect.gen(function*() {
        const { journal: j } = yield* open
        expect(Option.isNone(yield* j.getMeta("target.workspace"))).toBe(true)
        yield* j.setMeta("target.workspace", "w1")
        yield* j.setMeta("target.workspace", "w2")
        expect(Option.getOrThrow(yield* j.getMeta("target.workspace"))).toBe("w2")

        expect(yield* j.lastAdoptionId()).toBe(0)
        expect(yield* j.adoptions()).toEqual([])
        const adoption = { opKey: "k0", namespace: "record", sourceKey: "k0", targetId: "r1", detail: "title \"X\" in list L" }
        yield* j.recordAdoption(adoption)
        const mark = yield* j.lastAdoptionId()
        expect(mark).toBeGreaterThan(0)
        yield* j.recordAdoption({ ...adoption, opKey: "k1", sourceKey: "k1", targetId: "r2" })
        const all = yield* j.adoptions()
        expect(all.map((a) => a.opKey)).toEqual(["k0", "k1"])
        expect(all[0]).toMatchObject({ ...adoption, id: mark })
        expect(typeof all[0]!.adoptedAt).toBe("string")
        expect((yield* j.adoptions(mark)).map((a) => a.targetId)).toEqual(["r2"])
      }))

    it.live("addPlan: ops, superseded older versions and mappings in one transaction", () =>
      Effect.gen(function*() {
        const { journal: j } = yield* open
        yield* j.addOps(ops(3, "record.update"))
        yield* j.claim("k1")
        yield* j.complete("k1", { ok: true })
        const added = yield* j.addPlan({
          ops: [{ key: "v2", kind: "record.update", payload: {} }],
          supersede: [{ keys: ["k0", "k1", "missing"], by: "v2" }, { keys: [], by: "x" }],
          mappings: [{ namespace: "record", sourceKey: "s", targetId: "t" }]
        })
        expect(added).toBe(1)
        expect(yield* op(j, "k0")).toMatchObject({ state: "done", result: { superseded: "v2" } })
        // Already done: kept as it was.
        expect((yield* op(j, "k1")).result).toEqual({ ok: true })
        expect((yield* op(j, "k2")).state).toBe("pending")
        expect(Option.getOrThrow(yield* j.lookup("record", "s"))).toBe("t")
      }))

    it.live("planner: two plan runs, repeated keys, occurrence keys (#n) stable across runs, in the order called", () =>
      Effect.gen(function*() {
        const { journal: j } = yield* open
        const row = (key: string, occurrence = true): PlanOp => ({ key, kind: "record.create", payload: { key }, occurrence })
        // More than one multi-row chunk (256 ops), with repeats inside and across chunks.
        const many = Array.from({ length: 600 }, (_, i) => row(`m${i % 400}`))
        const first = yield* j.planner()
        const [a, b, c] = yield* Effect.promise(() =>
          // Sent without waiting, as the importer does: answered in the order sent.
          Promise.all([
            first.planOps([row("h1"), row("h2"), row("h1"), row("x", false), row("x", false)]),
            first.planOps([row("h1"), row("x", false)]),
            first.planOps(many)
          ])
        )
        expect(a!.map((p) => [p.key, p.isNew, p.duplicate])).toEqual([
          ["h1", true, false],
          ["h2", true, false],
          ["h1#1", true, false],
          ["x", true, false],
          ["x", false, true]
        ])
        expect(b!.map((p) => [p.key, p.isNew, p.duplicate])).toEqual([["h1#2", true, false], ["x", false, true]])
        expect(c!.filter((p) => p.isNew)).toHaveLength(600)
        expect(c![450]!.key).toBe("m50#1")
        yield* Effect.promise(() => first.end())
        expect(Option.getOrThrow(yield* j.getMeta("plan_run_complete"))).toBe(String(first.run))
        // One op done in between: the next run reports its state.
        yield* j.claim("h2")
        yield* j.complete("h2", { id: "r" })

        const second = yield* j.planner()
        expect(second.run).toBe(first.run + 1)
        const again = yield* Effect.promise(() =>
          second.planOps([row("h1"), row("h2"), row("h1"), row("h1"), row("h1"), row("new"), row("x", false)])
        )
        expect(again.map((p) => [p.key, p.isNew, p.duplicate, p.state])).toEqual([
          ["h1", false, false, "pending"],
          ["h2", false, false, "done"],
          ["h1#1", false, false, "pending"],
          ["h1#2", false, false, "pending"],
          ["h1#3", true, false, "pending"],
          ["new", true, false, "pending"],
          ["x", false, false, "pending"]
        ])
        const rerun = yield* Effect.promise(() => second.planOps(many))
        expect(rerun.filter((p) => p.isNew)).toHaveLength(0)
        expect(rerun.every((p) => !p.duplicate)).toBe(true)
        expect(rerun[599]!.key).toBe("m199#1")
        yield* Effect.promise(() => second.end())
        // Plan order: ops were given their seq in the order planned.
        const pending = yield* j.pending({ limit: 1000 })
        expect(keys(pending).slice(0, 6)).toEqual(["h1", "h1#1", "x", "h1#2", "m0", "m1"])
        expect((yield* j.counts()).total).toBe(5 + 600 + 2)
      }))

    it.live("planOps in multi-row chunks gives what one insert per op gives (property: repeats, keys planned before, '#' keys)", () =>
      Effect.gen(function*() {
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
        // Segments of 256 distinct keys (the fast path) drawn from few keys, so later
        // segments repeat earlier ones and meet `h1#1`-like keys, plus a tail.
        const key = fc.oneof(fc.integer({ min: 0, max: 299 }).map((i) => `h${i}`), fc.constantFrom("h1#1", "h2#1", "h3#2"))
        const segment = fc.uniqueArray(key, { minLength: 256, maxLength: 256 })
        const tail = fc.array(key, { maxLength: 40 })
        const runOf = fc.tuple(fc.array(segment, { maxLength: 2 }), tail, fc.boolean()).map(([segs, t, occurrence]) =>
          [...segs.flat(), ...t].map((k, i): Row => ({ key: k, occurrence: occurrence || i % 3 === 0 }))
        )
        const services = yield* Effect.context<never>()
        yield* Effect.promise(() =>
          fc.assert(
            fc.asyncProperty(fc.array(runOf, { minLength: 1, maxLength: 3 }), (runs) =>
              Effect.runPromiseWith(services)(Effect.scoped(Effect.gen(function*() {
                const { journal: j } = yield* open
                const model = reference()
                for (const rows of runs) {
                  const planner = yield* j.planner()
                  const got = yield* Effect.promise(() =>
                    planner.planOps(rows.map((r) => ({ ...r, kind: "record.create", payload: { k: r.key } })))
                  )
                  expect(got.map(({ duplicate, isNew, key }) => ({ key, isNew, duplicate }))).toEqual(model(planner.run, rows))
                  yield* Effect.promise(() => planner.end())
                }
              })))),
            { numRuns: 10 }
          )
        )
      }), 60_000)

    it.live("planOps names an op it could not store, and stores nothing of the batch", () =>
      Effect.gen(function*() {
        const { journal: j } = yield* open
        const run = yield* j.beginPlanRun()
        const error = yield* Effect.flip(j.planOps(run, [
          { key: "ok", kind: "record.create", payload: {} },
          { key: "x", kind: undefined as unknown as string, payload: {} }
        ]))
        expect(error.message).toContain("journal op x: not stored")
        expect((yield* j.counts()).total).toBe(0)
        const planned = yield* j.planOps(run, [{ key: "ok", kind: "record.create", payload: {} }])
        expect(planned).toEqual([{ key: "ok", isNew: true, duplicate: false, state: "pending" }])
        yield* j.endPlanRun(run)
      }))

    it.live("transitions: concurrent claims each committed before they return; one bad key fails alone", () =>
      Effect.gen(function*() {
        const { journal: j, location } = yield* open
        yield* j.addOps(ops(12))
        const claims = yield* Effect.forEach(
          [...Array.from({ length: 12 }, (_, i) => `k${i}`), "missing"],
          (key) => Effect.result(j.transitions.claim(key)),
          { concurrency: "unbounded" }
        )
        expect(claims.filter((c) => c._tag === "Success")).toHaveLength(12)
        expect(claims[12]!._tag).toBe("Failure")
        expect((yield* backend.peek(location)).every((r) => r.state === "in_flight")).toBe(true)
        yield* Effect.forEach(Array.from({ length: 12 }, (_, i) => `k${i}`), (key) =>
          key === "k0"
            ? j.transitions.markUncertain(key, "lost")
            : key === "k1"
            ? j.transitions.release(key)
            : key === "k2"
            ? j.transitions.fail(key, "422")
            : j.transitions.complete(key, { ok: true }, [{ namespace: "record", sourceKey: key, targetId: `t${key}` }]), {
          concurrency: "unbounded"
        })
        yield* j.transitions.setMapping({ namespace: "list", sourceKey: "L", targetId: "t" })
        yield* j.transitions.recordAdoption({ opKey: "k0", namespace: "record", sourceKey: "k0", targetId: "r", detail: "d" })
        yield* j.transitions.markResolved("k0")
        expect(yield* j.counts()).toMatchObject({ done: 9, pending: 2, failed: 1, uncertain: 0 })
        expect(Option.getOrThrow(yield* j.lookup("record", "k5"))).toBe("tk5")
        expect((yield* j.adoptions()).length).toBe(1)
      }))

    it.live("one writer per journal: a second opener of the same location gets StoreBusy", () =>
      Effect.gen(function*() {
        const { location } = yield* open
        const busy = yield* Effect.flip(openJournal(location))
        expect(busy._tag).toBe("StoreBusy")
        expect(busy.message).toContain("journal")
        // Anywhere else is free.
        const other = yield* backend.location
        const j = yield* openJournal(other)
        expect((yield* j.counts()).total).toBe(0)
      }), 20_000)
  })
}

describe("journal helper sessions", () => {
  it.live("a helper is refused on a file at once: a journal shared by processes must be on PostgreSQL", () =>
    Effect.gen(function*() {
      const file = path.join(yield* tempDir("ws-journal-"), "journal.sqlite")
      const error = yield* Effect.flip(openJournal(file, { helper: true }))
      expect(error._tag).toBe("JournalError")
      expect(error.message).toContain("must be on PostgreSQL")
      expect(fs.existsSync(file)).toBe(false)
    }))
})

describe("journal on postgres only", () => {
  const copies = (n: number) => Array.from({ length: n }, (_, i) => ({ key: `c:${i}`, kind: "file.copy", payload: {} }))

  it.live("a main and a helper session share a journal: the helper opens beside the writer, concurrent claimNext never takes an op twice", () =>
    Effect.gen(function*() {
      const location = yield* freshSchema
      const main = yield* openJournal(location)
      yield* main.addOps(copies(200))
      const helper = yield* openJournal(location, { helper: true })
      // The writer lock is still the main session's.
      expect((yield* Effect.flip(openJournal(location)))._tag).toBe("StoreBusy")
      const taken: Array<{ key: string; by: string }> = []
      const lane = (j: JournalApi, by: string, descending: boolean) =>
        Effect.gen(function*() {
          while (true) {
            const next = yield* j.claimNext({ kinds: ["file.copy"], keyPrefix: "c:", descending })
            if (Option.isNone(next)) return
            taken.push({ key: next.value.key, by })
            yield* j.complete(next.value.key, { by })
          }
        })
      yield* Effect.all([
        ...Array.from({ length: 4 }, () => lane(main, "main", false)),
        ...Array.from({ length: 3 }, () => lane(helper, "helper", false)),
        ...Array.from({ length: 3 }, () => lane(helper, "helper", true))
      ], { concurrency: "unbounded", discard: true })
      expect(taken).toHaveLength(200)
      expect(new Set(taken.map((t) => t.key)).size).toBe(200)
      expect(taken.some((t) => t.by === "main") && taken.some((t) => t.by === "helper")).toBe(true)
      expect(yield* main.counts()).toMatchObject({ total: 200, done: 200 })
      expect((yield* helper.getMany(["c:0", "c:199"])).map((o) => o.attempts)).toEqual([1, 1])
    }), 30_000)

  it.live("a helper never creates a journal: opened where there is none it fails naming the location", () =>
    Effect.gen(function*() {
      const location = yield* freshSchema
      const error = yield* Effect.flip(openJournal(location, { helper: true }))
      expect(error._tag).toBe("JournalError")
      expect(error.message).toContain(new URL(location).host)
      expect(error.message).toContain("schema=worksync")
      const { schema, url } = parsePostgresUrl(location)
      const client = yield* pgClient(url)
      expect(yield* query(client, "SELECT 1 FROM information_schema.schemata WHERE schema_name = $1", [schema])).toEqual([])
    }))

  it.live("resetInFlight resets a dead session's claims and ownerless ones, never a live session's", () =>
    Effect.gen(function*() {
      const location = yield* freshSchema
      const { schema, url } = parsePostgresUrl(location)
      const client = yield* pgClient(url)
      const main = yield* openJournal(location)
      yield* main.addOps(ops(6))
      const live = yield* openJournal(location, { helper: true })
      yield* live.claim("k0")
      yield* live.claimMany(["k1"])
      expect(Option.getOrThrow(yield* live.claimNext({ kinds: ["record.create"], keyPrefix: "k" })).key).toBe("k2")
      yield* Effect.scoped(Effect.gen(function*() {
        const dead = yield* openJournal(location, { helper: true })
        expect(Option.getOrThrow(yield* dead.claimNext({ kinds: ["record.create"], keyPrefix: "k" })).key).toBe("k3")
      }))
      // Claimed by a worksync from before owners.
      yield* query(client, `UPDATE ${schema}.ops SET state = 'in_flight', attempts = 1 WHERE key = 'k4'`)
      yield* main.claim("k5")
      const owners = yield* query<{ key: string; owner: number | null }>(client, `SELECT key, owner FROM ${schema}.ops ORDER BY seq`)
      expect(new Set(owners.slice(0, 3).map((r) => r.owner)).size).toBe(1)
      expect(owners[4]!.owner).toBeNull()
      expect(new Set([owners[0]!.owner, owners[3]!.owner, owners[5]!.owner]).size).toBe(3)

      expect(yield* main.resetInFlight()).toBe(2)
      const states = new Map((yield* main.getMany(keys(ops(6)))).map((o) => [o.key, [o.state, o.uncertain]]))
      expect(Object.fromEntries(states)).toEqual({
        k0: ["in_flight", false],
        k1: ["in_flight", false],
        k2: ["in_flight", false],
        k3: ["pending", true],
        k4: ["pending", true],
        k5: ["in_flight", false]
      })
      // The live helper ends its ops as it would have.
      yield* live.complete("k0", null)
      expect(yield* live.resetInFlight()).toBe(0)
    }))

  it.live("a journal of an earlier version (no owners, no sent_at) opens, migrates, and its in-flight ops are reset", () =>
    Effect.gen(function*() {
      const location = yield* freshSchema
      const { schema, url } = parsePostgresUrl(location)
      const client = yield* pgClient(url)
      // As the previous worksync made and left it.
      yield* Effect.scoped(Effect.orDie(openPostgres(location, "journal", JOURNAL_PG_MIGRATIONS.filter((m) => m.version <= 2))))
      yield* query(
        client,
        `INSERT INTO ${schema}.ops (key, kind, payload, state, attempts, updated_at) VALUES ('a', 'record.create', '{}', 'in_flight', 1, 'x')`
      )
      // An op whose answer was lost: dated at its last change by the migration.
      yield* query(
        client,
        `INSERT INTO ${schema}.ops (key, kind, payload, state, attempts, uncertain, updated_at)
         VALUES ('b', 'record.create', '{}', 'pending', 1, 1, '2030-01-01T00:00:05.000Z')`
      )
      const j = yield* openJournal(location)
      expect(yield* query(client, `SELECT version FROM ${schema}.worksync_schema WHERE store = 'journal'`)).toEqual([{
        version: Math.max(...JOURNAL_PG_MIGRATIONS.map((m) => m.version))
      }])
      expect(yield* op(j, "b")).toMatchObject({ state: "pending", uncertain: true, sentAt: "2030-01-01T00:00:05.000Z" })
      expect(yield* j.resetInFlight()).toBe(1)
      expect(yield* op(j, "a")).toMatchObject({ state: "pending", uncertain: true })
      expect((yield* j.claimNext({ kinds: ["record.create"], keyPrefix: "" })).pipe(Option.map((o) => o.attempts))).toEqual(Option.some(2))
    }))

  it.live("the location shown is the URL without its password; a journal of a newer format is refused", () =>
    Effect.gen(function*() {
      const location = yield* freshSchema
      const url = new URL(location)
      url.password = "secret"
      // Trust authentication: the server accepts the password it does not ask for.
      const withPassword = url.href
      yield* Effect.scoped(Effect.gen(function*() {
        const j = yield* openJournal(withPassword)
        expect(j.file).not.toContain("secret")
        expect(j.file).toContain("***")
      }))
      const { schema, url: server } = parsePostgresUrl(location)
      const client = yield* pgClient(server)
      yield* query(client, `UPDATE ${schema}.worksync_schema SET version = 99 WHERE store = 'journal'`)
      const error = yield* Effect.flip(openJournal(location))
      const newest = Math.max(...JOURNAL_PG_MIGRATIONS.map((m) => m.version))
      expect(error.message).toMatch(new RegExp(`newer worksync \\(journal format 99; this version reads formats up to ${newest}\\)`))
    }))

  it.live("shares a schema with the snapshot store: no table of one is the other's", () =>
    Effect.gen(function*() {
      const location = yield* freshSchema
      const snapshot = yield* openSnapshot(location)
      const j = yield* openJournal(location)
      yield* j.addOps(ops(2))
      const run = yield* snapshot.beginRun("*", true)
      yield* snapshot.completeRun(run, {})
      expect((yield* j.counts()).total).toBe(2)
      expect((yield* snapshot.listRuns).length).toBe(1)
    }))
})
