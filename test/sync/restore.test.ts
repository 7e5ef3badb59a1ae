import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { RestClient } from "../../src/client/rest-client.ts"
import { type EmulatorHandle, startEmulator } from "../../src/emulator/index.ts"
import { Journal, journalLayer } from "../../src/store/journal.ts"
import { resolveRun, SnapshotStore } from "../../src/store/snapshot.ts"
import { backup } from "../../src/sync/backup.ts"
import { restore, restoreDate } from "../../src/sync/restore.ts"
import { testClient, tmpDir } from "./replay-helpers.ts"

let handle: EmulatorHandle
beforeAll(async () => {
  handle = await startEmulator({ seed: "demo" })
})
afterAll(() => handle.close())

const WRITES = ["create-record", "update-record", "move-record", "delete-record", "create-list", "create-tag"]
const writesSent = () => WRITES.reduce((n, r) => n + (handle.stats().byRoute[r] ?? 0), 0)

interface Row {
  title: string
  done: number
  archived: number
  list: string
}
const recordsOf = (ws: string): Array<Row> =>
  (handle.ctx.db
    .prepare(
      `SELECT r.title, r.done, r.archived, l.title AS list FROM records r JOIN lists l ON l.id = r.list_id
       WHERE r.workspace_id = ? AND r.deleted_at IS NULL ORDER BY r.title, l.title, r.done`
    )
    .all(ws) as Array<Row>)

describe("restore (snapshot run -> workspace, through the journal)", () => {
  it("R-REST-RECORD-29 R-REST-RECORD-50: creates what is missing, then only changes; a second restore sends nothing", async () => {
    const dir = tmpDir("ws-restore-")
    const snapshotFile = path.join(dir, "snap.sqlite")
    const journalFile = path.join(dir, "journal.sqlite")
    const source = handle.workspaces[0]!
    const target = handle.admin.createWorkspace({ name: "restored" }).id
    const layer = Layer.mergeAll(testClient(handle), SnapshotStore.layer(snapshotFile), journalLayer(journalFile))
    const backupAndRestore = Effect.gen(function*() {
      yield* backup({ workspaces: [source] })
      const store = yield* SnapshotStore
      const run = (yield* resolveRun(store, undefined))!
      return yield* restore(store, yield* RestClient, yield* Journal, {
        run,
        sourceWorkspaceId: source,
        targetWorkspaceId: target
      })
    })
    const go = () => Effect.runPromise(backupAndRestore.pipe(Effect.provide(layer)))

    const first = await go()
    expect(first.records).toBeGreaterThan(5)
    expect(first.created).toBe(first.records)
    expect(first.failed + first.unknown).toBe(0)
    expect(recordsOf(target)).toEqual(recordsOf(source))

    handle.resetStats()
    const second = await go()
    expect(second.unchanged).toBe(second.records)
    expect(second.created + second.updated).toBe(0)
    expect(writesSent()).toBe(0)

    // Change one source record: the next restore updates that one only.
    const changed = handle.ctx.db
      .prepare("SELECT id FROM records WHERE workspace_id = ? AND deleted_at IS NULL ORDER BY id LIMIT 1")
      .get(source) as { id: string }
    await Effect.runPromise(
      Effect.flatMap(RestClient, (c) => c.updateRecord({ workspaceId: source, recordId: changed.id, title: "Renamed at source", done: true }))
        .pipe(Effect.provide(testClient(handle)))
    )
    handle.resetStats()
    const third = await go()
    expect(third.planned).toEqual({ creates: 0, updates: 1, moves: 1 })
    expect(handle.stats().byRoute["create-record"] ?? 0).toBe(0)
    expect(handle.stats().byRoute["update-record"] ?? 0).toBe(1)
    expect(recordsOf(target)).toEqual(recordsOf(source))
  })

  it("all-day dates read back as midnight UTC are sent as bare dates; timed ones unchanged", () => {
    expect(restoreDate("2024-05-01T00:00:00.000Z")).toBe("2024-05-01")
    expect(restoreDate("2024-05-01T09:30:00.000Z")).toBe("2024-05-01T09:30:00.000Z")
    expect(restoreDate(null)).toBeUndefined()
  })
})
