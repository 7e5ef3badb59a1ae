/**
 * The mirror's read of a record again (sync/mirror/read-again.ts) after a delivery that
 * carried the whole record: only the activity is read from the service, the record's
 * detail is the one the mirror's run holds.
 */
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import * as path from "node:path"
import { RestClient } from "../../src/client/rest-client.ts"
import { openSnapshot, scopeOf } from "../../src/store/snapshot.ts"
import { readAgain } from "../../src/sync/mirror/read-again.ts"
import { writeVersion } from "../../src/sync/mirror/run.ts"
import { Emulator, emulatorLayer, tempDir } from "../support/effect.ts"
import { testClient } from "./replay-helpers.ts"

// No TestClock: the client runs on real time against a real server.
layer(emulatorLayer({ seed: "empty" }), { timeout: 30_000, excludeTestServices: true })("mirror: reading a record again", (it) => {
  it.effect("activity only: the stored detail is kept, the service's activity is read", () =>
    Effect.gen(function*() {
      const handle = yield* Emulator
      yield* Effect.gen(function*() {
        const rest = yield* RestClient
        const store = yield* openSnapshot(path.join(yield* tempDir("ws-read-again-"), "snap.sqlite"))
        const workspaceId = handle.admin.createWorkspace({ name: "read-again" }).id
        const record = yield* rest.createRecord({ workspaceId, title: "v1" })
        const run = yield* store.beginRun(scopeOf([workspaceId]), true)
        yield* store.putWorkspaces(run, [{ id: workspaceId }])
        yield* writeVersion(store, run, workspaceId, yield* rest.getRecord({ workspaceId, recordId: record.id }), [])
        // The service's record moves on; an activity-only read does not take its detail.
        yield* rest.updateRecord({ workspaceId, recordId: record.id, title: "v2" })

        yield* readAgain({ store, rest, run: Effect.succeed(run), workspaces: [workspaceId] }, record.id, true)

        expect(JSON.parse((yield* store.memberDetail(run, record.id))!)).toMatchObject({ id: record.id, title: "v1" })
        const activity = Array.from(yield* Stream.runCollect(store.runActivity(run)), (a) => JSON.parse(a) as { recordId?: string })
        expect(activity.length).toBeGreaterThan(0)

        // Read again with the service's activity unchanged: the run keeps the version it holds.
        const held = yield* store.memberVersion(run, record.id)
        yield* readAgain({ store, rest, run: Effect.succeed(run), workspaces: [workspaceId] }, record.id, true)
        expect(yield* store.memberVersion(run, record.id)).toEqual(held)
        // A change that adds activity on the service is still read in, the detail still the stored one.
        yield* rest.updateRecord({ workspaceId, recordId: record.id, title: "v3" })
        yield* readAgain({ store, rest, run: Effect.succeed(run), workspaces: [workspaceId] }, record.id, true)
        expect((yield* store.memberVersion(run, record.id))?.vid).not.toBe(held?.vid)
        expect(JSON.parse((yield* store.memberDetail(run, record.id))!)).toMatchObject({ id: record.id, title: "v1" })
        expect(Array.from(yield* Stream.runCollect(store.runActivity(run))).length).toBeGreaterThan(activity.length)
      }).pipe(Effect.provide(testClient(handle)))
    }))

  it.effect("activity only, where a delivery's write saw the record: a run that holds it elsewhere or not at all by then has it read as a lookup would, its rows kept for that read", () =>
    Effect.gen(function*() {
      const handle = yield* Emulator
      yield* Effect.gen(function*() {
        const rest = yield* RestClient
        const store = yield* openSnapshot(path.join(yield* tempDir("ws-read-again-hint-"), "snap.sqlite"))
        const seen = handle.admin.createWorkspace({ name: "seen by the write" }).id
        const now = handle.admin.createWorkspace({ name: "held now" }).id
        const record = yield* rest.createRecord({ workspaceId: now, title: "v1" })
        const run = yield* store.beginRun(scopeOf([seen, now]), true)
        yield* store.putWorkspaces(run, [{ id: seen }, { id: now }])
        const ctx = { store, rest, run: Effect.succeed(run), workspaces: [seen, now] }

        // The run holds the record in another workspace than the write saw (a reconciliation
        // since): not read in the old one (where it is not found, which would remove it).
        yield* writeVersion(store, run, now, yield* rest.getRecord({ workspaceId: now, recordId: record.id }), [])
        const [seq] = yield* store.addMirrorRereads([{ recordId: record.id, event: null }])
        yield* readAgain(ctx, record.id, true, seq, seen)
        expect((yield* store.memberVersion(run, record.id))?.workspaceId).toBe(now)
        expect(Array.from(yield* Stream.runCollect(store.runActivity(run))).length).toBeGreaterThan(0)
        expect(yield* store.mirrorRereads).toEqual([])

        // The run no longer holds the record (removed since): read whole, as a lookup finding nothing would.
        yield* store.removeMembers("records", run, [record.id])
        const [again] = yield* store.addMirrorRereads([{ recordId: record.id, event: null }])
        yield* readAgain(ctx, record.id, true, again, now)
        expect((yield* store.memberVersion(run, record.id))?.workspaceId).toBe(now)
        expect(yield* store.mirrorRereads).toEqual([])
      }).pipe(Effect.provide(testClient(handle)))
    }))
})
