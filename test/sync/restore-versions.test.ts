/**
 * Successive versions of one record restored by successive restores: the newest always
 * ends on the target, whatever order the service applies concurrent updates in.
 */
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as path from "node:path"
import { RestClient } from "../../src/client/rest-client.ts"
import type { EmulatorHandle } from "../../src/emulator/index.ts"
import { Journal } from "../../src/store/journal.ts"
import { resolveRun, SnapshotStore } from "../../src/store/snapshot.ts"
import { backup } from "../../src/sync/backup.ts"
import { restore } from "../../src/sync/restore.ts"
import { Emulator, emulatorLayer, tempDir } from "../support/effect.ts"
import { testClient } from "./replay-helpers.ts"

const withRest = <A, E>(handle: EmulatorHandle, f: (c: typeof RestClient.Service) => Effect.Effect<A, E>) =>
  Effect.flatMap(RestClient, f).pipe(Effect.provide(testClient(handle)))

const setup = (handle: EmulatorHandle, name: string) =>
  Effect.gen(function*() {
    const dir = yield* tempDir("ws-restore-versions-")
    const source = handle.admin.createWorkspace({ name: `${name}-source` }).id
    const target = handle.admin.createWorkspace({ name: `${name}-target` }).id
    const record = yield* withRest(handle, (c) => c.createRecord({ workspaceId: source, title: "v1" }))
    const layer = Layer.mergeAll(
      testClient(handle, { maxRetries: 2 }),
      SnapshotStore.layer(path.join(dir, "snap.sqlite")),
      Journal.layer(path.join(dir, "journal.sqlite"))
    )
    /** Backs the source up, then restores that run into the target. */
    const backupAndRestore = () =>
      Effect.gen(function*() {
        yield* backup({ workspaces: [source] })
        const store = yield* SnapshotStore
        const run = (yield* resolveRun(store, undefined))!
        return yield* restore(store, yield* RestClient, yield* Journal, { run, sourceWorkspaceId: source, targetWorkspaceId: target })
      }).pipe(Effect.provide(layer))
    const rename = (title: string) => withRest(handle, (c) => c.updateRecord({ workspaceId: source, recordId: record.id, title }))
    const targetTitles = () =>
      (handle.ctx.db.prepare("SELECT title FROM records WHERE workspace_id = ? AND deleted_at IS NULL").all(target) as Array<{
        title: string
      }>).map((r) => r.title)
    return { backupAndRestore, rename, targetTitles }
  })

// No TestClock: the client's retries and timeouts run on real time against a real server.
layer(emulatorLayer({ seed: "empty" }), { timeout: 30_000, excludeTestServices: true })("restore: versions of one record apply in order", (it) => {
  it.effect("R-REST-RECORD-29: an older version's failed update, retried beside a newer one that it would overtake, never lands last", () =>
    Effect.gen(function*() {
      const handle = yield* Emulator
      const t = yield* setup(handle, "order")
      expect((yield* t.backupAndRestore()).created).toBe(1)

      yield* t.rename("v2")
      handle.faults.inject({ route: "update-record", kind: "500", times: 100 })
      yield* Effect.gen(function*() {
        const second = yield* t.backupAndRestore()
        expect(second.failed).toBeGreaterThan(0)
      }).pipe(Effect.ensuring(Effect.sync(() => handle.faults.reset())))
      expect(t.targetTitles()).toEqual(["v1"])

      yield* t.rename("v3")
      // The first update-record the service gets is held back: were v2's update sent beside
      // v3's, it would be applied last.
      handle.faults.inject({ route: "update-record", kind: "latency", latencyMs: 400 })
      yield* Effect.gen(function*() {
        const third = yield* t.backupAndRestore()
        expect(third.failed + third.unknown).toBe(0)
      }).pipe(Effect.ensuring(Effect.sync(() => handle.faults.reset())))
      expect(t.targetTitles()).toEqual(["v3"])
    }))

  it.effect("R-REST-RECORD-29: a source that went back to an earlier content is restored to it", () =>
    Effect.gen(function*() {
      const handle = yield* Emulator
      const t = yield* setup(handle, "revert")
      yield* t.backupAndRestore()
      yield* t.rename("v2")
      yield* t.backupAndRestore()
      expect(t.targetTitles()).toEqual(["v2"])
      yield* t.rename("v1")
      const back = yield* t.backupAndRestore()
      expect(back.updated).toBe(1)
      expect(t.targetTitles()).toEqual(["v1"])
      // And once restored, that content is unchanged for the next restore.
      const again = yield* t.backupAndRestore()
      expect(again.unchanged).toBe(1)
      expect(again.updated).toBe(0)
    }))
})
