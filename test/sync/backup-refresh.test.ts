import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as path from "node:path"
import type { EmulatorHandle } from "../../src/emulator/index.ts"
import { SnapshotStore } from "../../src/store/snapshot.ts"
import { backup, type BackupOptions } from "../../src/sync/backup.ts"
import { ok, rpc } from "../emulator/rest-support.ts"
import { clientFor, liveIds } from "../streams/helpers.ts"
import { Emulator, emulatorLayer, tempDir } from "../support/effect.ts"
import { sqliteOf } from "../support/sqlite-store.ts"

const tempFile = Effect.map(tempDir("ws-backup-refresh-"), (dir) => path.join(dir, "snap.sqlite"))
const runBackup = (emu: EmulatorHandle, file: string, options: BackupOptions = {}) =>
  Effect.provide(backup(options), Layer.merge(clientFor(emu), SnapshotStore.layer(file)))
/** Opens the snapshot for `f` alone and closes it after, as each run of the jobs does. */
const withStore = <A>(file: string, f: (s: typeof SnapshotStore.Service) => A) =>
  Effect.provide(Effect.map(SnapshotStore, f), SnapshotStore.layer(file))
const getRecordCalls = (emu: EmulatorHandle) => emu.stats().byRoute["get-record"] ?? 0
/** The comment count of the version of `id` a run holds. */
const storedComments = (file: string, runId: string, id: string) =>
  withStore(file, (s) =>
    sqliteOf(s).prepare("SELECT r.comment_count FROM run_records m JOIN records r ON r.vid = m.vid WHERE m.run_id = ? AND m.id = ?")
      .pluck().get(Number(runId), id) as number)

// No TestClock: the client's retries and timeouts run on real time against a real server.
layer(emulatorLayer({ seed: { workspaces: 1, recordsPerWorkspace: 40 } }), { timeout: 30_000, excludeTestServices: true })("backup refresh", (it) => {
  it.effect("R-REST-RECORD-43: rolling refresh: N runs without changes read each record's detail exactly once, and a comment that leaves updatedAt alone is caught within N runs", () =>
    Effect.gen(function*() {
      const emu = yield* Emulator
      const file = yield* tempFile
      const every = 3
      const ws = emu.workspaces[0]!
      const records = liveIds(emu, ws).length
      yield* runBackup(emu, file, { refreshEvery: every })
      emu.resetStats()
      const perRun: Array<number> = []
      for (let i = 0; i < every; i++) {
        const before = getRecordCalls(emu)
        yield* runBackup(emu, file, { refreshEvery: every })
        perRun.push(getRecordCalls(emu) - before)
      }
      // Each record once in the cycle, about 1/N of them a run.
      expect(perRun.reduce((a, b) => a + b, 0)).toBe(records)
      expect(Math.max(...perRun)).toBeLessThan(records)

      // A comment; in the alt reading it does not move updatedAt (UPDATED_AT_ON_EVERY_CHANGE).
      const target = liveIds(emu, ws)[5]!
      const before = yield* storedComments(file, String((yield* runBackup(emu, file, { refreshEvery: every })).runId), target)
      yield* Effect.promise(() => ok(rpc(emu, "create-comment", { workspaceId: ws, recordId: target, text: "caught within N runs" })))
      const seen: Array<number> = []
      for (let i = 0; i < every; i++) {
        const run = yield* runBackup(emu, file, { refreshEvery: every })
        seen.push(yield* storedComments(file, run.runId, target))
      }
      expect(seen[seen.length - 1]).toBe(before + 1)
    }))

  it.effect("a version whose content matches an older one stores the new updatedAt: the run after is not refetched", () =>
    Effect.gen(function*() {
      const emu = yield* Emulator
      const file = yield* tempFile
      yield* runBackup(emu, file, { refreshEvery: 0 })
      // As when a record changed between list-records and get-record: the stored stamp is not the summary's.
      yield* withStore(file, (s) => sqliteOf(s).prepare("UPDATE records SET updated_at = '2001-01-01T00:00:00.000Z'").run())
      emu.resetStats()
      yield* runBackup(emu, file, { refreshEvery: 0 })
      expect(getRecordCalls(emu)).toBe(liveIds(emu, emu.workspaces[0]!).length)
      emu.resetStats()
      yield* runBackup(emu, file, { refreshEvery: 0 })
      expect(getRecordCalls(emu)).toBe(0)
    }))
})
