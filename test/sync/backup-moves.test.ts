import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest"
import { type EmulatorHandle, startEmulator } from "../../src/emulator/index.ts"
import type { ScanReport } from "../../src/streams/stable-scan.ts"
import { SnapshotStore } from "../../src/store/snapshot.ts"
import { backup } from "../../src/sync/backup.ts"
import { diff } from "../../src/sync/diff.ts"
import { clientFor, liveIds } from "../streams/helpers.ts"

let emu: EmulatorHandle
beforeAll(async () => {
  emu = await startEmulator({ seed: { workspaces: 2, recordsPerWorkspace: 300 } })
})
afterAll(async () => {
  await emu?.close()
})
afterEach(() => {
  emu.faults.reset()
})

const tempFile = () => path.join(fs.mkdtempSync(path.join(os.tmpdir(), "ws-backup-moves-")), "snap.sqlite")
const runBackup = (file: string) =>
  Effect.runPromise(Effect.provide(backup({}), Layer.merge(clientFor(emu), SnapshotStore.layer(file))))
const withStore = <A>(file: string, f: (s: typeof SnapshotStore.Service) => A) =>
  Effect.runPromise(Effect.provide(Effect.map(SnapshotStore, f), SnapshotStore.layer(file)))
const runIds = (file: string, runId: string) =>
  withStore(file, (s) => s.db.prepare("SELECT id FROM run_records WHERE run_id = ? ORDER BY id").pluck().all(Number(runId)) as Array<string>)
const allLive = () => emu.workspaces.flatMap((ws) => liveIds(emu, ws)).sort()

describe("backup under moves", () => {
  it("R-REST-PAGE-01 R-REST-PAGE-04: records moved into other lists behind the scan while others are created and deleted: each record that existed throughout is in the run once, and the diff calls none deleted", async () => {
    const file = tempFile()
    await runBackup(file)
    const before = allLive()
    emu.faults.configure({ churn: { insertsPerPage: 1, deletesPerPage: 2, movesPerPage: 2 } })
    const result = await runBackup(file)
    emu.faults.reset()
    const after = new Set(allLive())
    const stayed = before.filter((id) => after.has(id))
    const ids = await runIds(file, result.runId)
    expect(new Set(ids).size).toBe(ids.length)
    const inRun = new Set(ids)
    expect(stayed.filter((id) => !inRun.has(id)).slice(0, 5)).toEqual([])
    const { result: changes } = await Effect.runPromise(Effect.provide(diff(), SnapshotStore.layer(file)))
    const stayedSet = new Set(stayed)
    expect(changes.records.deleted.filter((id) => stayedSet.has(id)).slice(0, 5)).toEqual([])
    // The scan reports, noted in the run: what the scans saw and repaired.
    const notes = await withStore(file, (s) => Effect.runSync(s.notes(Number(result.runId))))
    const scans = notes.filter((n) => n.kind === "scan" && (n.detail as { operation: string }).operation === "list-records").map((n) => n.detail as ScanReport)
    expect(scans).toHaveLength(2 * emu.workspaces.length)
    if (emu.variant === "reference") {
      expect(scans.some((s) => s.foundByRepair > 0 && s.verificationPasses > 0)).toBe(true)
    }
    if (process.env["SCAN_REPORT"] !== undefined) console.log(JSON.stringify(scans[0]))
  })
})
