/**
 * The settle window of a create whose outcome is unknown: it runs from the request's
 * send (not from the op's claim, which limiter waits and 429 retries may precede by more
 * than the window), the send is dated in the journal for a later run, and the op waits
 * it out parked, holding no concurrency slot, while other ops go on. Every record
 * exactly once, on either journal backend.
 *
 * The emulator's "late-commit" answers a create 504 and commits it on a later request
 * (the n-th look, or the n-th other create), so each test places the commit by progress,
 * never by the clock.
 */
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import * as path from "node:path"
import { RestClient } from "../../src/client/rest-client.ts"
import type { EmulatorHandle } from "../../src/emulator/index.ts"
import { Journal, type NewOp } from "../../src/store/journal.ts"
import { OP_KINDS } from "../../src/sync/plan.ts"
import { replay, type ReplayOptions } from "../../src/sync/replay.ts"
import { makeRecordExecutors } from "../../src/sync/replay-records.ts"
import { Emulator, emulatorLayer, tempDir } from "../support/effect.ts"
import { freshSchema } from "../support/postgres.ts"
import { testClient, titleCounts } from "./replay-helpers.ts"

interface Backend {
  readonly name: string
  /** A new, empty journal location, removed with the test's scope. */
  readonly location: Effect.Effect<string, never, Scope.Scope>
}

const BACKENDS: ReadonlyArray<Backend> = [
  { name: "SQLite", location: Effect.map(tempDir("ws-settle-"), (dir) => path.join(dir, "j.sqlite")) },
  { name: "PostgreSQL", location: freshSchema }
]

const creates = (ws: string, titles: ReadonlyArray<string>): Array<NewOp> =>
  titles.map((title, i) => ({ key: `k${i}`, kind: OP_KINDS.recordCreate, payload: { workspaceId: ws, title } }))

/** One run: the ops planned (once), failed ones retried, then replayed; its own journal session. */
const runReplay = (handle: EmulatorHandle, location: string, ops: ReadonlyArray<NewOp>, options: ReplayOptions) =>
  Effect.gen(function*() {
    const j = yield* Journal
    yield* j.addOps(ops)
    yield* j.retryFailed()
    return yield* replay(j, makeRecordExecutors(yield* RestClient), options)
  }).pipe(Effect.provide(Layer.merge(Journal.layer(location), testClient(handle))))

/** Whatever is still held commits now, as the service eventually would; then faults off. */
const settleEmulator = (handle: EmulatorHandle) =>
  Effect.andThen(Effect.promise(() => handle.faults.lateCommits.releaseAll()), Effect.sync(() => handle.faults.reset()))

// No TestClock: the client's retries and the settle windows run on real time against a real server.
layer(emulatorLayer({ seed: "empty" }), { timeout: 60_000, excludeTestServices: true })("settle window", (it) => {
  for (const backend of BACKENDS) {
    it.effect(`R-REST-ERR-06: a 429 wait longer than the window between claim and send: the create is looked for over the window after its send, not sent twice (${backend.name})`, () =>
      Effect.gen(function*() {
        const handle = yield* Emulator
        const ws = handle.admin.createWorkspace({ name: "after 429" }).id
        const location = yield* backend.location
        // Refused with a 429 asking for 3.5 s (more than the 3 s window) after the claim;
        // then sent, answered 504, and committed when the second look arrives.
        handle.faults.inject({ route: "create-record", kind: "429", retryAfter: "3.5" })
        handle.faults.inject({ route: "create-record", kind: "late-commit", releaseOn: { route: "search-records", count: 2 } })
        handle.resetStats()
        const report = yield* runReplay(handle, location, creates(ws, ["Sent late"]), { settleMs: 10, settleWindowMs: 3_000 }).pipe(
          Effect.ensuring(settleEmulator(handle))
        )
        expect(report).toMatchObject({ reconciled: 1, sent: 0, unknown: 0, failed: 0 })
        expect(titleCounts(handle, ws).get("Sent late")).toBe(1)
        expect(handle.stats().byRouteStatus).toMatchObject({ "create-record 429": 1, "create-record 504": 1 })
        expect(handle.stats().byRouteStatus["create-record 200"] ?? 0).toBe(0)
      }))

    it.effect(`R-REST-ERR-06: a later run waits out the window after the send the journal dated, not after the claim (${backend.name})`, () =>
      Effect.gen(function*() {
        const handle = yield* Emulator
        const ws = handle.admin.createWorkspace({ name: "rerun" }).id
        const location = yield* backend.location
        const ops = creates(ws, ["Dated send"])
        handle.faults.inject({ route: "create-record", kind: "429", retryAfter: "3.5" })
        handle.faults.inject({ route: "create-record", kind: "late-commit", releaseOn: { route: "search-records", count: 2 } })
        handle.resetStats()
        yield* Effect.gen(function*() {
          // The first run gives up at once (one round): the op fails, outcome unknown, its
          // send dated in the journal. The next run, a new session, reads that date.
          const first = yield* runReplay(handle, location, ops, { settleMs: 10, settleWindowMs: 3_000, maxUnknownRounds: 1 })
          expect(first).toMatchObject({ unknown: 1, sent: 0 })
          const second = yield* runReplay(handle, location, ops, { settleMs: 10, settleWindowMs: 3_000 })
          expect(second).toMatchObject({ reconciled: 1, sent: 0, unknown: 0 })
        }).pipe(Effect.ensuring(settleEmulator(handle)))
        expect(titleCounts(handle, ws).get("Dated send")).toBe(1)
        expect(handle.stats().byRouteStatus["create-record 200"] ?? 0).toBe(0)
      }))

    it.effect(`R-REST-ERR-06: a parked create holds no slot: with one at a time, the creates behind it are made while it waits, its own title waits for it (${backend.name})`, () =>
      Effect.gen(function*() {
        const handle = yield* Emulator
        const ws = handle.admin.createWorkspace({ name: "parked" }).id
        const location = yield* backend.location
        const titles = ["Parked", "B", "C", "D", "E", "Parked"]
        // The first create is answered 504 and commits only when the fourth create after it
        // arrives: one op at a time, that happens only if B to E run while it waits.
        handle.faults.inject({ route: "create-record", kind: "late-commit", releaseOn: { route: "create-record", count: 4 } })
        const ends: Array<string> = []
        const report = yield* runReplay(handle, location, creates(ws, titles), {
          concurrency: 1,
          // Read one op at a time: the parked one must not keep the next from being read.
          batchSize: 1,
          settleMs: 10,
          settleWindowMs: 10_000,
          onOpEnd: (op, end) => Effect.sync(() => void ends.push(`${op.key} ${end}`))
        }).pipe(Effect.ensuring(settleEmulator(handle)))
        expect(report).toMatchObject({ reconciled: 1, sent: 5, unknown: 0, failed: 0 })
        // Found once E's create had arrived; the second "Parked" ran only after the first ended.
        expect(ends).toEqual(["k1 sent", "k2 sent", "k3 sent", "k4 sent", "k0 reconciled", "k5 sent"])
        const counts = titleCounts(handle, ws)
        expect(counts.get("Parked")).toBe(2)
        for (const t of ["B", "C", "D", "E"]) expect(counts.get(t)).toBe(1)
      }))
  }
})
