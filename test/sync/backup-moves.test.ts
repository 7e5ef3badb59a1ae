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
layer(emulatorLayer({ seed: { workspaces: 2, recordsPerWorkspace: 300 } }), { timeout: 30_000, excludeTestServices: true })("backup under moves", (it) => {
  it.effect("R-REST-PAGE-01 R-REST-PAGE-04: records moved into other lists behind the scan while others are created and deleted: each record that existed throughout is in the run once, and the diff calls none deleted", () =>
    Effect.gen(function*() {
      const emu = yield* emulatorWithFaultReset
      const file = yield* tempFile
      yield* runBackup(emu, file)
      const before = allLive(emu)
      emu.faults.configure({ churn: { insertsPerPage: 1, deletesPerPage: 2, movesPerPage: 2 } })
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
    }))
})
