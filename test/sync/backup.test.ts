import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as fs from "node:fs"
import * as path from "node:path"
import type { ConnectionInput } from "../../src/client/config.ts"
import { RestClient } from "../../src/client/rest-client.ts"
import type { EmulatorHandle } from "../../src/emulator/index.ts"
import { SnapshotStore } from "../../src/store/snapshot.ts"
import { backup, type BackupOptions } from "../../src/sync/backup.ts"
import { diff } from "../../src/sync/diff.ts"
import { clientFor, emulatorWithFaultReset, liveIds } from "../streams/helpers.ts"
import { emulatorLayer, tempDir } from "../support/effect.ts"
import { sqliteOf } from "../support/sqlite-store.ts"

const tempFile = Effect.map(tempDir("ws-backup-"), (dir) => path.join(dir, "snap.sqlite"))

const layers = (emu: EmulatorHandle, file: string, overrides: Partial<ConnectionInput> = {}) =>
  Layer.merge(clientFor(emu, overrides), SnapshotStore.layer(file))

const runBackup = (emu: EmulatorHandle, file: string, options: BackupOptions = {}, overrides: Partial<ConnectionInput> = {}) =>
  Effect.provide(backup(options), layers(emu, file, overrides))

/** Opens the snapshot for `f` alone and closes it after, as each run of the jobs does. */
const useStore = <A, E>(file: string, f: (s: typeof SnapshotStore.Service) => Effect.Effect<A, E>) =>
  Effect.provide(Effect.flatMap(SnapshotStore, f), SnapshotStore.layer(file))

const withStore = <A>(file: string, f: (s: typeof SnapshotStore.Service) => A) =>
  useStore(file, (s) => Effect.sync(() => f(s)))

const rest = <A, E>(emu: EmulatorHandle, f: (c: typeof RestClient.Service) => Effect.Effect<A, E>) =>
  Effect.provide(Effect.flatMap(RestClient, f), clientFor(emu))

const allLive = (emu: EmulatorHandle) => emu.workspaces.flatMap((ws) => liveIds(emu, ws)).sort()

const runIds = (file: string, runId: string) =>
  withStore(file, (s) => sqliteOf(s).prepare("SELECT id FROM run_records WHERE run_id = ? ORDER BY id").pluck().all(Number(runId)) as Array<string>)

// No TestClock: the client's retries and timeouts run on real time against a real server.
layer(emulatorLayer({ seed: "demo" }), { timeout: 30_000, excludeTestServices: true })("backup", (it) => {
  it.effect("R-REST-RECORD-19 R-REST-ACTIVITY-07 R-REST-FILES-02: stores every workspace, record detail, complete activity and file; no token in the file", () =>
    Effect.gen(function*() {
      const emu = yield* emulatorWithFaultReset
      const file = yield* tempFile
      const result = yield* runBackup(emu, file)
      const records = allLive(emu)
      const activities = emu.ctx.db.prepare(
        "SELECT count(*) FROM activity a JOIN records r ON r.id = a.record_id WHERE r.deleted_at IS NULL"
      ).pluck().get() as number
      const files = emu.ctx.db.prepare("SELECT count(*) FROM files").pluck().get() as number
      expect(result).toMatchObject({
        workspaces: emu.workspaces.length,
        records: records.length,
        activities,
        files,
        changes: { created: records.length, updated: 0, deleted: 0 }
      })
      expect(yield* runIds(file, result.runId)).toEqual(records)
      // A stored detail is the get-record answer plus workspaceId.
      const ws = emu.workspaces[0]!
      const id = liveIds(emu, ws)[0]!
      const detail = yield* rest(emu, (c) => c.getRecord({ workspaceId: ws, recordId: id }))
      const stored = yield* withStore(file, (s) => JSON.parse(sqliteOf(s).prepare("SELECT detail FROM records WHERE id = ?").pluck().get(id) as string))
      expect(stored).toEqual({ ...detail, workspaceId: ws })
      // The record with the long history kept all of its activity (more than one page of 24).
      const longest = yield* withStore(file, (s) => sqliteOf(s).prepare("SELECT max(activity_count) FROM records").pluck().get() as number)
      expect(longest).toBeGreaterThan(24)
      const bytes = Buffer.concat(fs.readdirSync(path.dirname(file)).map((f) => fs.readFileSync(path.join(path.dirname(file), f))))
      for (const secret of [emu.token, emu.tokenSecret]) expect(bytes.includes(Buffer.from(secret))).toBe(false)
    }))

  it.effect("R-REST-RECORD-43: a second run fetches details and activity only for changed records; --full refetches all", () =>
    Effect.gen(function*() {
      const emu = yield* emulatorWithFaultReset
      const file = yield* tempFile
      yield* runBackup(emu, file)
      const ws = emu.workspaces[1]!
      const target = liveIds(emu, ws)[3]!
      yield* rest(emu, (c) => c.updateRecord({ workspaceId: ws, recordId: target, title: "Changed for the incremental test" }))
      emu.resetStats()
      // No rolling refresh in this run: only the changed record is read.
      const second = yield* runBackup(emu, file, { refreshEvery: 0 })
      expect(second.changes).toEqual({ created: 0, updated: 1, deleted: 0 })
      expect(emu.stats().byRoute["get-record"]).toBe(1)
      expect(emu.stats().byRoute["list-record-activity"]).toBe(1)
      emu.resetStats()
      const third = yield* runBackup(emu, file, { full: true })
      expect(third.changes).toEqual({ created: 0, updated: 0, deleted: 0 })
      expect(emu.stats().byRoute["get-record"]).toBe(allLive(emu).length)
    }))

  it.effect("diff after a scripted mix of creates, updates and deletes is exact", () =>
    Effect.gen(function*() {
      const emu = yield* emulatorWithFaultReset
      const file = yield* tempFile
      yield* runBackup(emu, file)
      const [w0, w1] = [emu.workspaces[0]!, emu.workspaces[1]!]
      // Picked before the creates: in the alt reading's order the new records come first.
      const ids0 = liveIds(emu, w0)
      const ids1 = liveIds(emu, w1)
      const created = yield* rest(emu, (c) =>
        Effect.forEach(["New A", "New B", "New C"], (title, i) => c.createRecord({ workspaceId: i === 2 ? w1 : w0, title })))
      const updated = [ids0[1]!, ids1[2]!]
      const deleted = [ids0[4]!, ids1[5]!]
      yield* rest(emu, (c) =>
        Effect.all([
          c.updateRecord({ workspaceId: w0, recordId: updated[0]!, done: true, title: "Updated one" }),
          c.updateRecord({ workspaceId: w1, recordId: updated[1]!, title: "Updated two" }),
          c.deleteRecord({ workspaceId: w0, recordId: deleted[0]! }),
          c.deleteRecord({ workspaceId: w1, recordId: deleted[1]! })
        ]))
      const second = yield* runBackup(emu, file)
      expect(second.changes).toEqual({ created: 3, updated: 2, deleted: 2 })
      const { result } = yield* Effect.provide(diff(), SnapshotStore.layer(file))
      expect(result.records).toEqual({
        created: created.map((c) => c.id).sort(),
        updated: [...updated].sort(),
        deleted: [...deleted].sort()
      })
      expect(result.files).toEqual({ created: [], updated: [], deleted: [] })
    }))

  it.effect("R-REST-ERR-05 R-REST-ERR-06: under 429s and random 500s the backup completes with the same content", () =>
    Effect.gen(function*() {
      const emu = yield* emulatorWithFaultReset
      const file = yield* tempFile
      const clean = yield* runBackup(emu, file)
      // A seeded share of 429s (Retry-After 0: another client of the token used up the
      // window) rather than a rate limit: a limit only throttles a client faster than it,
      // and how fast this machine is decides that; the share meets 429s however loaded it is.
      emu.faults.configure({ throttleRate: 0.1, retryAfter: 0, failRate: 0.15, seed: 3 })
      emu.resetStats()
      const stormy = yield* runBackup(emu, file, { full: true }, { limiter: { initialRps: 200, maxInFlight: 8 }, retry: { maxRetries: 8, baseDelayMs: 5, capDelayMs: 200 } })
      const stats = emu.stats()
      expect(stats.byStatus["500"]).toBeGreaterThan(0)
      expect(stats.byStatus["429"]).toBeGreaterThan(0)
      expect(stormy.changes).toEqual({ created: 0, updated: 0, deleted: 0 })
      expect(stormy.records).toBe(clean.records)
      expect(stormy.activities).toBe(clean.activities)
      expect(stormy.files).toBe(clean.files)
    }), 120_000)

  it.effect("a run failed by a fault is marked failed, marks nothing deleted, and the next run resumes", () =>
    Effect.gen(function*() {
      const emu = yield* emulatorWithFaultReset
      const file = yield* tempFile
      const first = yield* runBackup(emu, file)
      // Every record changes, so every record needs get-record; then get-record breaks midway.
      const all = emu.workspaces.flatMap((ws) => liveIds(emu, ws).map((id) => ({ ws, id })))
      yield* rest(emu, (c) => Effect.forEach(all, ({ id, ws }) => c.updateRecord({ workspaceId: ws, recordId: id, color: "#123456" }), { concurrency: 4 }))
      emu.faults.inject({ route: "get-record", kind: "500", times: 1000 })
      const failure = yield* Effect.provide(
        Effect.flip(backup({ detailConcurrency: 1, workspaceConcurrency: 1 })),
        layers(emu, file, { retry: { maxRetries: 1, baseDelayMs: 1, capDelayMs: 2 } })
      )
      expect(failure._tag).toBe("PageError")
      expect(failure.message).toMatch(/get-record \(workspace \w+, record \w+\)/)
      emu.faults.reset()
      const runs = yield* useStore(file, (s) => s.listRuns)
      expect(runs.map((r) => r.status)).toEqual(["complete", "failed"])
      expect(runs[1]!.error).toMatch(/HTTP 500/)
      // The default diff skips the failed run: nothing deleted.
      const { result, selection } = yield* Effect.provide(diff(), SnapshotStore.layer(file))
      expect(selection!.to.id).toBe(Number(first.runId))
      expect(result.records.deleted).toEqual([])
      emu.resetStats()
      const next = yield* runBackup(emu, file)
      expect(next.changes).toEqual({ created: 0, updated: all.length, deleted: 0 })
      expect(yield* runIds(file, next.runId)).toEqual(allLive(emu))
    }))

  it.effect("R-REST-PAGE-01: with churn on, every record that existed throughout the backup is in the run exactly once", () =>
    Effect.gen(function*() {
      const emu = yield* emulatorWithFaultReset
      const file = yield* tempFile
      const before = allLive(emu)
      emu.faults.configure({ churn: { insertsPerPage: 2, deletesPerPage: 2 } })
      const result = yield* runBackup(emu, file, {}, { limiter: { initialRps: 2000, maxInFlight: 8 } })
      emu.faults.reset()
      const after = new Set(allLive(emu))
      const ids = yield* runIds(file, result.runId)
      expect(new Set(ids).size).toBe(ids.length)
      const inRun = new Set(ids)
      expect(before.filter((id) => after.has(id) && !inRun.has(id))).toEqual([])
      const notes = yield* useStore(file, (s) => s.notes(Number(result.runId)))
      // Two scans a workspace: live and archived records, each asked for explicitly.
      expect(notes.filter((n) => n.kind === "scan" && (n.detail as { operation: string }).operation === "list-records")).toHaveLength(2 * emu.workspaces.length)
    }))

  it.effect("backs up only the named workspaces, by id or slug, and rejects an unknown one", () =>
    Effect.gen(function*() {
      const emu = yield* emulatorWithFaultReset
      const file = yield* tempFile
      const ws = emu.workspaces[1]!
      const slug = emu.ctx.db.prepare("SELECT slug FROM workspaces WHERE id = ?").pluck().get(ws) as string
      // A slug matches only when the service sends one (the documents name a workspace's id alone).
      const result = yield* runBackup(emu, file, { workspaces: [emu.variant === "alt" ? ws : slug] })
      expect(result.workspaces).toBe(1)
      expect(yield* runIds(file, result.runId)).toEqual([...liveIds(emu, ws)].sort())
      const error = yield* Effect.provide(Effect.flip(backup({ workspaces: ["nope"] })), layers(emu, file))
      expect(error._tag).toBe("WorkspaceNotFound")
    }))
})
