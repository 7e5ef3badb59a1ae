import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as path from "node:path"
import { RestClient } from "../../src/client/rest-client.ts"
import { insertList } from "../../src/emulator/core/lists.ts"
import type { EmulatorHandle } from "../../src/emulator/index.ts"
import { Journal, JournalDb } from "../../src/store/journal.ts"
import { resolveRun, SnapshotStore } from "../../src/store/snapshot.ts"
import { backup } from "../../src/sync/backup.ts"
import { restore, restoreDate } from "../../src/sync/restore.ts"
import { Emulator, emulatorLayer, tempDir } from "../support/effect.ts"
import { testClient } from "./replay-helpers.ts"

const WRITES = ["create-record", "update-record", "move-record", "delete-record", "create-list", "create-tag"]
const writesSent = (handle: EmulatorHandle) => WRITES.reduce((n, r) => n + (handle.stats().byRoute[r] ?? 0), 0)

interface Row {
  title: string
  done: number
  archived: number
  list: string
}
const recordsOf = (handle: EmulatorHandle, ws: string): Array<Row> =>
  (handle.ctx.db
    .prepare(
      `SELECT r.title, r.done, r.archived, l.title AS list FROM records r JOIN lists l ON l.id = r.list_id
       WHERE r.workspace_id = ? AND r.deleted_at IS NULL ORDER BY r.title, l.title, r.done`
    )
    .all(ws) as Array<Row>)

/**
 * The target holds the source's records. The alt reading's update-record ignores the
 * fields it does not document, and its list create makes no list (assumptions.ts
 * UNDOCUMENTED_INPUT_FIELDS, CREATE_LIST_READING): there `archived` cannot be restored and
 * the records are in the target's first list (the result says both).
 */
const expectRestored = (handle: EmulatorHandle, target: string, source: string) => {
  const comparable = (rows: Array<Row>) => (handle.variant === "alt" ? rows.map(({ archived: _, list: __, ...r }) => r) : rows)
  expect(comparable(recordsOf(handle, target))).toEqual(comparable(recordsOf(handle, source)))
  if (handle.variant === "alt") expect(new Set(recordsOf(handle, target).map((r) => r.list))).toEqual(new Set(["To do"]))
}

// No TestClock: the client's retries and timeouts run on real time against a real server.
layer(emulatorLayer({ seed: "demo" }), { timeout: 30_000, excludeTestServices: true })("restore (snapshot run -> workspace, through the journal)", (it) => {
  it.effect("R-REST-RECORD-29 R-REST-RECORD-50: creates what is missing, then only changes; a second restore sends nothing", () =>
    Effect.gen(function*() {
      const handle = yield* Emulator
      const dir = yield* tempDir("ws-restore-")
      const snapshotFile = path.join(dir, "snap.sqlite")
      const journalFile = path.join(dir, "journal.sqlite")
      const source = handle.workspaces[0]!
      const target = handle.admin.createWorkspace({ name: "restored" }).id
      const layer = Layer.mergeAll(testClient(handle), SnapshotStore.layer(snapshotFile), Journal.layer(journalFile))
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
      const go = () => backupAndRestore.pipe(Effect.provide(layer))

      const first = yield* go()
      expect(first.records).toBeGreaterThan(5)
      expect(first.created).toBe(first.records)
      expect(first.failed + first.unknown).toBe(0)
      expectRestored(handle, target, source)
      if (handle.variant === "alt") {
        expect(first.notices.join("\n")).toContain("archived: update-record with archived answered success but get-record shows it unchanged")
        expect(first.notRestored.map((n) => n.what)).toEqual(expect.arrayContaining(["archived", "lists"]))
      }

      handle.resetStats()
      const second = yield* go()
      expect(second.unchanged).toBe(second.records)
      expect(second.created + second.updated).toBe(0)
      expect(writesSent(handle)).toBe(0)

      // Change one source record: the next restore updates that one only.
      const changed = handle.ctx.db
        .prepare("SELECT id FROM records WHERE workspace_id = ? AND deleted_at IS NULL ORDER BY id LIMIT 1")
        .get(source) as { id: string }
      yield* Effect.flatMap(RestClient, (c) => c.updateRecord({ workspaceId: source, recordId: changed.id, title: "Renamed at source", done: true }))
        .pipe(Effect.provide(testClient(handle)))
      handle.resetStats()
      const third = yield* go()
      // Same list: no move.
      expect(third.planned).toEqual({ creates: 0, updates: 1, moves: 0, deletes: 0 })
      expect(handle.stats().byRoute["create-record"] ?? 0).toBe(0)
      // One update: where `archived` was found ignored (the alt reading), the journal knows it and it is not sent.
      expect(handle.stats().byRoute["update-record"] ?? 0).toBe(1)
      expectRestored(handle, target, source)
    }))

  it.effect("R-REST-RECORD-53 R-REST-RECORD-54: with deleteMissing, a record deleted at the source is deleted on the target once; without it, it stays", () =>
    Effect.gen(function*() {
      const handle = yield* Emulator
      const dir = yield* tempDir("ws-restore-delete-")
      const source = handle.admin.createWorkspace({ name: "delete-source" }).id
      const target = handle.admin.createWorkspace({ name: "delete-target" }).id
      const layer = Layer.mergeAll(testClient(handle), SnapshotStore.layer(path.join(dir, "snap.sqlite")), Journal.layer(path.join(dir, "journal.sqlite")))
      const run = <A, E>(effect: Effect.Effect<A, E, RestClient | SnapshotStore | Journal>) => effect.pipe(Effect.provide(layer))
      const ids = yield* run(
        Effect.gen(function*() {
          const client = yield* RestClient
          const list = insertList(handle.ctx, source, "Work")
          const out: Array<string> = []
          for (const title of ["Keep one", "Keep two", "Gone at source"]) {
            out.push((yield* client.createRecord({ workspaceId: source, listId: list.id, title })).id)
          }
          return out
        })
      )
      const backupAndRestore = (options: { deleteMissing?: boolean; dryRun?: boolean; workspace?: string } = {}) =>
        run(
          Effect.gen(function*() {
            yield* backup({ workspaces: [options.workspace ?? source] })
            const store = yield* SnapshotStore
            return yield* restore(store, yield* RestClient, yield* Journal, {
              run: (yield* resolveRun(store, undefined))!,
              sourceWorkspaceId: source,
              targetWorkspaceId: target,
              ...(options.deleteMissing === true ? { deleteMissing: true } : {}),
              ...(options.dryRun === true ? { dryRun: true } : {})
            })
          }).pipe(Effect.result)
        )
      const titles = (ws: string) => recordsOf(handle, ws).map((r) => r.title)
      const first = yield* backupAndRestore({ deleteMissing: true })
      expect(first).toMatchObject({ _tag: "Success", success: { created: 3, deleted: 0 } })
      expect(titles(target)).toEqual(["Gone at source", "Keep one", "Keep two"])

      yield* run(Effect.flatMap(RestClient, (c) => c.deleteRecord({ workspaceId: source, recordId: ids[2]! })))
      // Off by default: the copy keeps it.
      const kept = yield* backupAndRestore()
      expect(kept).toMatchObject({ _tag: "Success", success: { planned: { deletes: 0 }, deleted: 0 } })
      expect(titles(target)).toEqual(["Gone at source", "Keep one", "Keep two"])
      // A dry run counts the delete and sends nothing.
      handle.resetStats()
      const dry = yield* backupAndRestore({ deleteMissing: true, dryRun: true })
      expect(dry).toMatchObject({ _tag: "Success", success: { planned: { creates: 0, updates: 0, deletes: 1 } } })
      expect(writesSent(handle)).toBe(0)
      // A run holding no record of the source (another workspace backed up) deletes nothing.
      const wrongRun = yield* backupAndRestore({ deleteMissing: true, workspace: target })
      expect(wrongRun).toMatchObject({ _tag: "Failure", failure: { _tag: "RestoreError" } })
      expect(wrongRun._tag === "Failure" && wrongRun.failure.message).toMatch(/holds no record of workspace .*refusing to delete/)
      expect(writesSent(handle)).toBe(0)

      // A journal of another kind of run is refused before anything is planned.
      const importJournal = new JournalDb(path.join(dir, "import.sqlite"))
      importJournal.setMeta("kind", "import-csv")
      importJournal.close()
      const foreign = yield* Effect.gen(function*() {
        const store = yield* SnapshotStore
        return yield* restore(store, yield* RestClient, yield* Journal, {
          run: (yield* resolveRun(store, undefined))!,
          sourceWorkspaceId: source,
          targetWorkspaceId: target,
          deleteMissing: true
        })
      }).pipe(
        Effect.flip,
        Effect.provide(Layer.mergeAll(testClient(handle), SnapshotStore.layer(path.join(dir, "snap.sqlite")), Journal.layer(path.join(dir, "import.sqlite"))))
      )
      expect(foreign.message).toMatch(/was planned by import-csv, not by a restore; use another journal file$/)

      const deleted = yield* backupAndRestore({ deleteMissing: true })
      expect(deleted).toMatchObject({ _tag: "Success", success: { planned: { deletes: 1 }, deleted: 1, failed: 0 } })
      expect(handle.stats().byRoute["delete-record"]).toBe(1)
      expect(titles(target)).toEqual(["Keep one", "Keep two"])
      // Once: the next restore plans no delete and sends nothing.
      handle.resetStats()
      const again = yield* backupAndRestore({ deleteMissing: true })
      expect(again).toMatchObject({ _tag: "Success", success: { planned: { creates: 0, updates: 0, moves: 0, deletes: 0 } } })
      expect(writesSent(handle)).toBe(0)
    }))

  it("all-day dates read back as midnight UTC are sent as bare dates; timed ones unchanged", () => {
    expect(restoreDate("2024-05-01T00:00:00.000Z")).toBe("2024-05-01")
    expect(restoreDate("2024-05-01T09:30:00.000Z")).toBe("2024-05-01T09:30:00.000Z")
    expect(restoreDate(null)).toBeUndefined()
  })
})
