import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type EmulatorHandle, startEmulator } from "../../src/emulator/index.ts"
import { SnapshotStore } from "../../src/store/snapshot.ts"
import { backup, type BackupOptions } from "../../src/sync/backup.ts"
import { ok, rpc } from "../emulator/rest-support.ts"
import { clientFor, liveIds } from "../streams/helpers.ts"

let emu: EmulatorHandle
beforeAll(async () => {
  emu = await startEmulator({ seed: { workspaces: 1, recordsPerWorkspace: 40 } })
})
afterAll(async () => {
  await emu?.close()
})

const tempFile = () => path.join(fs.mkdtempSync(path.join(os.tmpdir(), "ws-backup-refresh-")), "snap.sqlite")
const runBackup = (file: string, options: BackupOptions = {}) =>
  Effect.runPromise(Effect.provide(backup(options), Layer.merge(clientFor(emu), SnapshotStore.layer(file))))
const withStore = <A>(file: string, f: (s: typeof SnapshotStore.Service) => A) =>
  Effect.runPromise(Effect.provide(Effect.map(SnapshotStore, f), SnapshotStore.layer(file)))
const getRecordCalls = () => emu.stats().byRoute["get-record"] ?? 0
/** The comment count of the version of `id` a run holds. */
const storedComments = (file: string, runId: string, id: string) =>
  withStore(file, (s) =>
    s.db.prepare("SELECT r.comment_count FROM run_records m JOIN records r ON r.vid = m.vid WHERE m.run_id = ? AND m.id = ?")
      .pluck().get(Number(runId), id) as number)

describe("backup refresh", () => {
  it("R-REST-RECORD-43: rolling refresh: N runs without changes read each record's detail exactly once, and a comment that leaves updatedAt alone is caught within N runs", async () => {
    const file = tempFile()
    const every = 3
    const ws = emu.workspaces[0]!
    const records = liveIds(emu, ws).length
    await runBackup(file, { refreshEvery: every })
    emu.resetStats()
    const perRun: Array<number> = []
    for (let i = 0; i < every; i++) {
      const before = getRecordCalls()
      await runBackup(file, { refreshEvery: every })
      perRun.push(getRecordCalls() - before)
    }
    // Each record once in the cycle, about 1/N of them a run.
    expect(perRun.reduce((a, b) => a + b, 0)).toBe(records)
    expect(Math.max(...perRun)).toBeLessThan(records)

    // A comment; in the alt reading it does not move updatedAt (UPDATED_AT_ON_EVERY_CHANGE).
    const target = liveIds(emu, ws)[5]!
    const before = await storedComments(file, String((await runBackup(file, { refreshEvery: every })).runId), target)
    await ok(rpc(emu, "create-comment", { workspaceId: ws, recordId: target, text: "caught within N runs" }))
    const seen: Array<number> = []
    for (let i = 0; i < every; i++) {
      const run = await runBackup(file, { refreshEvery: every })
      seen.push(await storedComments(file, run.runId, target))
    }
    expect(seen[seen.length - 1]).toBe(before + 1)
  })

  it("a version whose content matches an older one stores the new updatedAt: the run after is not refetched", async () => {
    const file = tempFile()
    await runBackup(file, { refreshEvery: 0 })
    // As when a record changed between list-records and get-record: the stored stamp is not the summary's.
    await withStore(file, (s) => s.db.prepare("UPDATE records SET updated_at = '2001-01-01T00:00:00.000Z'").run())
    emu.resetStats()
    await runBackup(file, { refreshEvery: 0 })
    expect(getRecordCalls()).toBe(liveIds(emu, emu.workspaces[0]!).length)
    emu.resetStats()
    await runBackup(file, { refreshEvery: 0 })
    expect(getRecordCalls()).toBe(0)
  })
})
