/**
 * Successive versions of one record restored by successive restores: the newest always
 * ends on the target, whatever order the service applies concurrent updates in.
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { RestClient } from "../../src/client/rest-client.ts"
import { type EmulatorHandle, startEmulator } from "../../src/emulator/index.ts"
import { Journal, journalLayer } from "../../src/store/journal.ts"
import { resolveRun, SnapshotStore } from "../../src/store/snapshot.ts"
import { backup } from "../../src/sync/backup.ts"
import { restore } from "../../src/sync/restore.ts"
import { testClient, tmpDir } from "./replay-helpers.ts"

let handle: EmulatorHandle
beforeAll(async () => {
  handle = await startEmulator({ seed: "empty" })
})
afterAll(() => handle.close())

const withRest = <A, E>(f: (c: typeof RestClient.Service) => Effect.Effect<A, E>) =>
  Effect.runPromise(Effect.flatMap(RestClient, f).pipe(Effect.provide(testClient(handle))) as Effect.Effect<A, never>)

const setup = async (name: string) => {
  const dir = tmpDir("ws-restore-versions-")
  const source = handle.admin.createWorkspace({ name: `${name}-source` }).id
  const target = handle.admin.createWorkspace({ name: `${name}-target` }).id
  const record = await withRest((c) => c.createRecord({ workspaceId: source, title: "v1" }))
  const layer = Layer.mergeAll(
    testClient(handle, { maxRetries: 2 }),
    SnapshotStore.layer(path.join(dir, "snap.sqlite")),
    journalLayer(path.join(dir, "journal.sqlite"))
  )
  /** Backs the source up, then restores that run into the target. */
  const backupAndRestore = () =>
    Effect.runPromise(
      Effect.gen(function*() {
        yield* backup({ workspaces: [source] })
        const store = yield* SnapshotStore
        const run = (yield* resolveRun(store, undefined))!
        return yield* restore(store, yield* RestClient, yield* Journal, { run, sourceWorkspaceId: source, targetWorkspaceId: target })
      }).pipe(Effect.provide(layer))
    )
  const rename = (title: string) => withRest((c) => c.updateRecord({ workspaceId: source, recordId: record.id, title }))
  const targetTitles = () =>
    (handle.ctx.db.prepare("SELECT title FROM records WHERE workspace_id = ? AND deleted_at IS NULL").all(target) as Array<{
      title: string
    }>).map((r) => r.title)
  return { backupAndRestore, rename, targetTitles }
}

describe("restore: versions of one record apply in order", () => {
  it("R-REST-RECORD-29: an older version's failed update, retried beside a newer one that it would overtake, never lands last", async () => {
    const t = await setup("order")
    expect((await t.backupAndRestore()).created).toBe(1)

    await t.rename("v2")
    handle.faults.inject({ route: "update-record", kind: "500", times: 100 })
    try {
      const second = await t.backupAndRestore()
      expect(second.failed).toBeGreaterThan(0)
    } finally {
      handle.faults.reset()
    }
    expect(t.targetTitles()).toEqual(["v1"])

    await t.rename("v3")
    // The first update-record the service gets is held back: were v2's update sent beside
    // v3's, it would be applied last.
    handle.faults.inject({ route: "update-record", kind: "latency", latencyMs: 400 })
    try {
      const third = await t.backupAndRestore()
      expect(third.failed + third.unknown).toBe(0)
    } finally {
      handle.faults.reset()
    }
    expect(t.targetTitles()).toEqual(["v3"])
  })

  it("R-REST-RECORD-29: a source that went back to an earlier content is restored to it", async () => {
    const t = await setup("revert")
    await t.backupAndRestore()
    await t.rename("v2")
    await t.backupAndRestore()
    expect(t.targetTitles()).toEqual(["v2"])
    await t.rename("v1")
    const back = await t.backupAndRestore()
    expect(back.updated).toBe(1)
    expect(t.targetTitles()).toEqual(["v1"])
    // And once restored, that content is unchanged for the next restore.
    const again = await t.backupAndRestore()
    expect(again.unchanged).toBe(1)
    expect(again.updated).toBe(0)
  })
})
