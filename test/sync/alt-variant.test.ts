/**
 * The whole jobs against the emulator's alt variant, whatever variant the rest of the
 * suite runs: documented fields only, and the other reading of every choice
 * (assumptions.ts CHOICES). Backup, diff, import and restore complete with the right data.
 */
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as path from "node:path"
import { RestClient } from "../../src/client/rest-client.ts"
import { importCsv } from "../../src/connectors/csv/import.ts"
import type { EmulatorHandle } from "../../src/emulator/index.ts"
import { Journal } from "../../src/store/journal.ts"
import { resolveRun, SnapshotStore } from "../../src/store/snapshot.ts"
import { backup } from "../../src/sync/backup.ts"
import { diff } from "../../src/sync/diff.ts"
import { restore } from "../../src/sync/restore.ts"
import { Emulator, emulatorLayer, tempDir } from "../support/effect.ts"
import { testClient } from "./replay-helpers.ts"

const ids = (alt: EmulatorHandle, sql: string, ...args: Array<unknown>) => alt.ctx.db.prepare(sql).pluck().all(...args) as Array<string>

// No TestClock: the client's retries and timeouts run on real time against a real server.
layer(emulatorLayer({ seed: "demo", variant: "alt" }), { timeout: 30_000, excludeTestServices: true })("jobs against the alt variant", (it) => {
  it.effect("R-REST-PAGE-09..11 R-REST-RECORD-19: backup stores every record (archived too), then diff sees exactly the changes", () =>
    Effect.gen(function*() {
      const alt = yield* Emulator
      const dir = yield* tempDir("ws-alt-backup-")
      const layer = Layer.merge(testClient(alt), SnapshotStore.layer(path.join(dir, "snap.sqlite")))
      const first = yield* Effect.provide(backup(), layer)
      const all = ids(alt, "SELECT id FROM records WHERE deleted_at IS NULL ORDER BY id")
      expect(ids(alt, "SELECT id FROM records WHERE deleted_at IS NULL AND archived = 1").length).toBeGreaterThan(0)
      expect(first).toMatchObject({ workspaces: alt.workspaces.length, records: all.length, changes: { created: all.length } })

      const ws = alt.workspaces[0]!
      const [renamed, removed] = ids(alt, "SELECT id FROM records WHERE workspace_id = ? AND deleted_at IS NULL AND archived = 0 ORDER BY id LIMIT 2", ws)
      yield* Effect.flatMap(RestClient, (c) =>
        Effect.zip(
          c.updateRecord({ workspaceId: ws, recordId: renamed!, title: "Renamed in the alt reading" }),
          c.deleteRecord({ workspaceId: ws, recordId: removed! })
        )).pipe(Effect.provide(testClient(alt)))
      const second = yield* Effect.provide(backup(), layer)
      expect(second.changes).toEqual({ created: 0, updated: 1, deleted: 1 })
      const { result } = yield* Effect.provide(diff(), SnapshotStore.layer(path.join(dir, "snap.sqlite")))
      expect(result.records).toEqual({ created: [], updated: [renamed], deleted: [removed] })
    }))

  it.effect("R-REST-RECORD-38..41: import-csv creates every row with its tags and done; lists the reading cannot make are named, their rows in the first list", () =>
    Effect.gen(function*() {
      const alt = yield* Emulator
      const ws = alt.admin.createWorkspace({ name: "alt import" }).id
      const journalFile = path.join(yield* tempDir("ws-alt-import-"), "j.sqlite")
      const result = yield* Effect.gen(function*() {
        return yield* importCsv(yield* RestClient, yield* Journal, {
          workspaceId: ws,
          csv: { file: path.join("examples", "data", "generic.csv") },
          mapping: { preset: "generic" }
        })
      }).pipe(Effect.provide(Layer.merge(Journal.layer(journalFile), testClient(alt))))
      expect(result).toMatchObject({ rows: 3, created: 3, rejected: 0, failed: 0, unknown: 0, blocked: 0, listsNotMade: ["Backlog", "Doing"] })
      // CREATE_LIST_READING: `POST /v1/lists` answers the lists and makes none.
      expect(result.notices).toEqual([
        'lists: create-list answered success but list-lists does not show the list: not possible on this service; records go to the first list: "Backlog", "Doing"'
      ])
      const rows = alt.ctx.db.prepare(
        `SELECT r.title, l.title AS list, r.done, (SELECT count(*) FROM record_tags rt WHERE rt.record_id = r.id) AS tags
         FROM records r JOIN lists l ON l.id = r.list_id WHERE r.workspace_id = ? AND r.deleted_at IS NULL ORDER BY r.title`
      ).all(ws) as Array<{ title: string; list: string; done: number; tags: number }>
      expect(rows.map((r) => r.list)).toEqual(["To do", "To do", "To do"])
      expect(rows.filter((r) => r.done === 1)).toHaveLength(1)
      expect(rows.reduce((n, r) => n + r.tags, 0)).toBeGreaterThan(0)
    }))

  it.effect("R-REST-RECORD-29: restore into a new workspace: every record, archived and lists left as the reading allows and reported", () =>
    Effect.gen(function*() {
      const alt = yield* Emulator
      const dir = yield* tempDir("ws-alt-restore-")
      const source = alt.workspaces[1]!
      const target = alt.admin.createWorkspace({ name: "alt restore" }).id
      const layer = Layer.mergeAll(testClient(alt), SnapshotStore.layer(path.join(dir, "snap.sqlite")), Journal.layer(path.join(dir, "j.sqlite")))
      const backupAndRestore = Effect.gen(function*() {
        yield* backup({ workspaces: [source] })
        const store = yield* SnapshotStore
        return yield* restore(store, yield* RestClient, yield* Journal, {
          run: (yield* resolveRun(store, undefined))!,
          sourceWorkspaceId: source,
          targetWorkspaceId: target
        })
      }).pipe(Effect.provide(layer))
      const result = yield* backupAndRestore
      expect(result.failed + result.unknown).toBe(0)
      expect(result.created).toBe(result.records)
      const titles = (ws: string) => ids(alt, "SELECT title FROM records WHERE workspace_id = ? AND deleted_at IS NULL ORDER BY title", ws)
      expect(titles(target)).toEqual(titles(source))
      const archivedAtSource = ids(alt, "SELECT id FROM records WHERE workspace_id = ? AND deleted_at IS NULL AND archived = 1", source).length
      expect(archivedAtSource).toBeGreaterThan(0)
      // UNDOCUMENTED_INPUT_FIELDS: `archived` taken with success and ignored, found by reading back.
      expect(result.notices.join("\n")).toContain("archived: update-record with archived answered success but get-record shows it unchanged")
      expect(result.notRestored.map((n) => n.what)).toEqual(expect.arrayContaining(["archived", "lists"]))
      // Restored again: what the target cannot hold is no difference, so nothing is sent.
      alt.resetStats()
      const again = yield* backupAndRestore
      expect(again).toMatchObject({ created: 0, updated: 0, unchanged: again.records, failed: 0 })
      const writes = ["create-record", "update-record", "move-record", "create-list"].map((w) => alt.stats().byRoute[w] ?? 0)
      expect(writes).toEqual([0, 0, 0, 0])
    }))
})
