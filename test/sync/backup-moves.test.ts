import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as path from "node:path"
import type { EmulatorHandle } from "../../src/emulator/index.ts"
import type { ScanReport } from "../../src/streams/stable-scan.ts"
import { SnapshotStore } from "../../src/store/snapshot.ts"
import { backup } from "../../src/sync/backup.ts"
import { diff } from "../../src/sync/diff.ts"
import { clientFor, emulatorWithFaultReset, liveIds } from "../streams/helpers.ts"
import { emulatorLayer, tempDir } from "../support/effect.ts"
import { sqliteOf } from "../support/sqlite-store.ts"

const tempFile = Effect.map(tempDir("ws-backup-moves-"), (dir) => path.join(dir, "snap.sqlite"))
const runBackup = (emu: EmulatorHandle, file: string) =>
  Effect.provide(backup({}), Layer.merge(clientFor(emu), SnapshotStore.layer(file)))
/** Opens the snapshot for `f` alone and closes it after, as each run of the jobs does. */
const useStore = <A, E>(file: string, f: (s: typeof SnapshotStore.Service) => Effect.Effect<A, E>) =>
  Effect.provide(Effect.flatMap(SnapshotStore, f), SnapshotStore.layer(file))
const runIds = (file: string, runId: string) =>
  useStore(file, (s) => Effect.sync(() => sqliteOf(s).prepare("SELECT id FROM run_records WHERE run_id = ? ORDER BY id").pluck().all(Number(runId)) as Array<string>))
const allLive = (emu: EmulatorHandle) => emu.workspaces.flatMap((ws) => liveIds(emu, ws)).sort()

// No TestClock: the client's retries and timeouts run on real time against a real server.
// Each test reads two workspaces through several verification passes under churn: they
// are given 120 s, so a loaded machine is slow rather than failed; a hang still fails.
layer(emulatorLayer({ seed: { workspaces: 2, recordsPerWorkspace: 300 } }), { timeout: 30_000, excludeTestServices: true })("backup under moves", (it) => {
  it.effect("R-REST-PAGE-01 R-REST-PAGE-04: records moved into other lists behind the scan while others are created and deleted: each record that existed throughout is in the run once, and the diff calls none deleted", () =>
    Effect.gen(function*() {
      const emu = yield* emulatorWithFaultReset
      const file = yield* tempFile
      yield* runBackup(emu, file)
      const before = allLive(emu)
      // After each of the first 6 list-records pages: a first pass (4 pages) and the start
      // of the verification pass that follows it (moves that never stop leave no pass that
      // can vouch for the listing: the test below).
      emu.faults.configure({ churn: { insertsPerPage: 1, deletesPerPage: 2, movesPerPage: 2, pages: 6 } })
      const result = yield* runBackup(emu, file)
      emu.faults.reset()
      const after = new Set(allLive(emu))
      const stayed = before.filter((id) => after.has(id))
      const ids = yield* runIds(file, result.runId)
      expect(new Set(ids).size).toBe(ids.length)
      const inRun = new Set(ids)
      expect(stayed.filter((id) => !inRun.has(id)).slice(0, 5)).toEqual([])
      const { result: changes } = yield* Effect.provide(diff(), SnapshotStore.layer(file))
      const stayedSet = new Set(stayed)
      expect(changes.records.deleted.filter((id) => stayedSet.has(id)).slice(0, 5)).toEqual([])
      // The scan reports, noted in the run: what the scans saw and repaired.
      const notes = yield* useStore(file, (s) => s.notes(Number(result.runId)))
      const scans = notes.filter((n) => n.kind === "scan" && (n.detail as { operation: string }).operation === "list-records").map((n) => n.detail as ScanReport)
      expect(scans).toHaveLength(2 * emu.workspaces.length)
      if (emu.variant === "reference") {
        expect(scans.some((s) => s.foundByRepair > 0 && s.verificationPasses > 0)).toBe(true)
      }
      if (process.env["SCAN_REPORT"] !== undefined) console.log(JSON.stringify(scans[0]))
    }), 120_000)

  it.effect("R-REST-PAGE-04: records created under old timestamps through every pass (a listing no pass can vouch for): the backup fails naming the listing, its run marks nothing deleted, and the rerun completes", () =>
    Effect.gen(function*() {
      const emu = yield* emulatorWithFaultReset
      const file = yield* tempFile
      yield* runBackup(emu, file)
      // Each list-records page is followed by two records created with timestamps older
      // than every other: each verification pass finds records older than the pass before
      // it, so none can show that nothing moved behind the reading.
      emu.faults.configure({ churn: { insertsPerPage: 2, deletesPerPage: 0, backdated: true } })
      const failed = yield* Effect.flip(runBackup(emu, file))
      emu.faults.reset()
      expect(failed._tag).toBe("ScanUnstable")
      expect(failed.message).toMatch(/^list-records \(workspace \S+\): verification budget exceeded: /)
      expect(failed.message.split("\n")).toHaveLength(1)
      const runs = yield* useStore(file, (s) => s.listRuns)
      expect(runs.map((r) => r.status)).toEqual(["complete", "failed"])
      // A diff only compares complete runs: the failed run's listing deletes nothing.
      const refused = yield* Effect.flip(Effect.provide(diff({ to: String(runs[1]!.id) }), SnapshotStore.layer(file)))
      expect(refused._tag).toBe("RunNotFound")
      const before = allLive(emu)
      const rerun = yield* runBackup(emu, file)
      expect(rerun.changes.deleted).toBe(0)
      const { result: changes } = yield* Effect.provide(diff(), SnapshotStore.layer(file))
      expect(changes.records.deleted).toEqual([])
      const inRun = new Set(yield* runIds(file, rerun.runId))
      expect(before.filter((id) => !inRun.has(id)).slice(0, 5)).toEqual([])
    }), 120_000)
})
