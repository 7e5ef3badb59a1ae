/**
 * Undo from the journal (src/sync/undo.ts): before-values recorded by the update
 * executor are put back, a field edited on the target since is kept and reported, a
 * journal written before before-values were recorded keeps its updates, a comment whose
 * delete-comment is answered success and not applied is kept and reported (the run
 * finishes, a rerun sends nothing), and an undo under ambiguous writes and dropped
 * connections deletes each record exactly once.
 */
import { expect, layer } from "@effect/vitest"
import Database from "better-sqlite3"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as path from "node:path"
import { GraphqlClient } from "../../src/client/graphql-client.ts"
import { RestClient } from "../../src/client/rest-client.ts"
import { insertList } from "../../src/emulator/core/lists.ts"
import type { EmulatorHandle } from "../../src/emulator/index.ts"
import { openJournal } from "../../src/store/journal.ts"
import { resolveRun, SnapshotStore } from "../../src/store/snapshot.ts"
import { backup } from "../../src/sync/backup.ts"
import { recordNamespace } from "../../src/sync/plan.ts"
import { EXTRA_KINDS, EXTRA_PHASES } from "../../src/sync/plan-extras.ts"
import { replay } from "../../src/sync/replay.ts"
import { makeExtraExecutors } from "../../src/sync/replay-extras.ts"
import { restore } from "../../src/sync/restore.ts"
import { undo } from "../../src/sync/undo.ts"
import { Emulator, emulatorLayer, tempDir } from "../support/effect.ts"
import { freshSchema } from "../support/postgres.ts"
import { testClient } from "./replay-helpers.ts"

interface Row {
  id: string
  title: string
  done: number
  dued_at: string | null
}
const rowsOf = (handle: EmulatorHandle, ws: string): Array<Row> =>
  handle.ctx.db
    .prepare("SELECT id, title, done, dued_at FROM records WHERE workspace_id = ? AND deleted_at IS NULL ORDER BY id")
    .all(ws) as Array<Row>
const byId = (handle: EmulatorHandle, ws: string) => new Map(rowsOf(handle, ws).map((r) => [r.id, r]))
const deletedIn = (handle: EmulatorHandle, ws: string): number =>
  (handle.ctx.db.prepare("SELECT COUNT(*) AS n FROM records WHERE workspace_id = ? AND deleted_at IS NOT NULL").get(ws) as { n: number }).n
const sent = (handle: EmulatorHandle, route: string): number => handle.stats().byRoute[route] ?? 0
const writes = (handle: EmulatorHandle) => ["update-record", "move-record", "delete-record", "create-record"].reduce((n, r) => n + sent(handle, r), 0)

const snapshotLayer = (handle: EmulatorHandle, dir: string, source: string) =>
  Layer.merge(testClient(handle), SnapshotStore.layer(path.join(dir, `${source}.snapshot.sqlite`)))

/** Backs `source` up into its snapshot. */
const backedUp = (handle: EmulatorHandle, dir: string, source: string) =>
  Effect.scoped(Effect.asVoid(backup({ workspaces: [source] })).pipe(Effect.provide(snapshotLayer(handle, dir, source))))

/** Restores the latest run of `source`'s snapshot into `target` with the journal `file`. */
const restored = (handle: EmulatorHandle, dir: string, file: string, source: string, target: string) =>
  Effect.scoped(
    Effect.gen(function*() {
      const store = yield* SnapshotStore
      return yield* restore(store, yield* RestClient, yield* openJournal(file), {
        run: (yield* resolveRun(store, undefined))!,
        sourceWorkspaceId: source,
        targetWorkspaceId: target
      })
    }).pipe(Effect.provide(snapshotLayer(handle, dir, source)))
  )

const undoWith = (handle: EmulatorHandle, file: string, options: { dryRun?: boolean } = {}) =>
  Effect.scoped(
    Effect.gen(function*() {
      const journal = yield* openJournal(file)
      return yield* undo(yield* RestClient, journal, options)
    }).pipe(Effect.provide(testClient(handle, { maxRetries: 4 })))
  )

const update = (handle: EmulatorHandle, ws: string, recordId: string, fields: Record<string, unknown>) =>
  Effect.flatMap(RestClient, (c) => c.updateRecord({ workspaceId: ws, recordId, ...fields })).pipe(Effect.provide(testClient(handle)))

/** A workspace with one list and records of these titles (all-day due dates); their ids. */
const seeded = (handle: EmulatorHandle, name: string, titles: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const ws = handle.admin.createWorkspace({ name }).id
    const list = insertList(handle.ctx, ws, "Work")
    const ids: Array<string> = []
    for (const title of titles) {
      const created = yield* Effect.flatMap(RestClient, (c) => c.createRecord({ workspaceId: ws, listId: list.id, title, duedAt: "2026-01-10" })).pipe(
        Effect.provide(testClient(handle))
      )
      ids.push(created.id)
    }
    return { ws, ids }
  })

// No TestClock: the client's retries and timeouts run on real time against a real server.
layer(emulatorLayer({ seed: "empty" }), { timeout: 60_000, excludeTestServices: true })("undo (journal -> target, exactly once)", (it) => {
  it.effect("R-REST-RECORD-43 R-REST-RECORD-44: undo after a restore in place puts back the values its updates replaced; a field edited since stays and is reported", () =>
    Effect.gen(function*() {
      const handle = yield* Emulator
      const dir = yield* tempDir("ws-undo-")
      const journal = path.join(dir, "restore.sqlite")
      const { ids, ws } = yield* seeded(handle, "in-place", ["Alpha", "Beta", "Gamma", "Delta"])
      const [alpha, beta, gamma, delta] = ids as [string, string, string, string]
      // The snapshot holds the records as seeded; then the target changes.
      yield* backedUp(handle, dir, ws)
      yield* update(handle, ws, alpha, { title: "Alpha later" })
      yield* update(handle, ws, beta, { done: true, duedAt: "2026-03-04" })
      yield* update(handle, ws, gamma, { title: "Gamma later" })
      const beforeRestore = byId(handle, ws)

      // The restore of that snapshot puts the records back as they were in it...
      const restoredInPlace = yield* restored(handle, dir, journal, ws, ws)
      expect(restoredInPlace).toMatchObject({ updated: 3, created: 0, failed: 0 })
      expect(byId(handle, ws).get(alpha)?.title).toBe("Alpha")
      // ...and its journal holds what each update replaced, read before it was sent.
      const db = new Database(journal, { readonly: true })
      const befores = db.prepare("SELECT before FROM ops WHERE kind = 'record.update' AND state = 'done'").all() as Array<{ before: string | null }>
      db.close()
      expect(befores).toHaveLength(3)
      expect(befores.map((b) => JSON.parse(b.before!).fields.title).sort()).toEqual(["Alpha later", "Beta", "Gamma later"])

      // Someone renames Gamma on the target after the restore.
      yield* update(handle, ws, gamma, { title: "Gamma edited after" })
      handle.resetStats()
      const dry = yield* undoWith(handle, journal, { dryRun: true })
      expect(writes(handle)).toBe(0)
      const report = yield* undoWith(handle, journal)
      expect(report).toMatchObject({ deleted: 0, reverted: 3, failed: 0 })
      expect(report.kept).toEqual([{ what: "field title", id: gamma, why: "changed on the target since the journal wrote it" }])
      expect({ deleted: dry.deleted, reverted: dry.reverted, kept: dry.kept }).toEqual({ deleted: 0, reverted: 3, kept: report.kept })
      const after = byId(handle, ws)
      expect(after.get(alpha)).toEqual(beforeRestore.get(alpha))
      expect(after.get(beta)).toMatchObject({ done: 1, dued_at: beforeRestore.get(beta)!.dued_at })
      expect(after.get(gamma)?.title).toBe("Gamma edited after")
      expect(after.get(delta)).toEqual(beforeRestore.get(delta))

      // A rerun sends nothing and reports the same.
      handle.resetStats()
      const again = yield* undoWith(handle, journal)
      expect(writes(handle)).toBe(0)
      expect({ ...again, replay: undefined }).toEqual({ ...report, replay: undefined })
    }))

  it.effect("on a PostgreSQL journal: the before-values of a restore in place are put back, its creates deleted; a rerun sends nothing", () =>
    Effect.gen(function*() {
      const handle = yield* Emulator
      const dir = yield* tempDir("ws-undo-")
      const journal = yield* freshSchema
      const { ids, ws } = yield* seeded(handle, "postgres", ["First", "Second"])
      yield* backedUp(handle, dir, ws)
      yield* update(handle, ws, ids[0]!, { title: "First later" })
      // Deleted since the backup: the restore creates it again (a new id).
      yield* Effect.flatMap(RestClient, (c) => c.deleteRecord({ workspaceId: ws, recordId: ids[1]! })).pipe(Effect.provide(testClient(handle)))
      expect(yield* restored(handle, dir, journal, ws, ws)).toMatchObject({ created: 1, updated: 1, failed: 0 })
      expect(rowsOf(handle, ws).map((r) => r.title).sort()).toEqual(["First", "Second"])
      const report = yield* undoWith(handle, journal)
      expect(report).toMatchObject({ deleted: 1, reverted: 1, kept: [], failed: 0 })
      expect(rowsOf(handle, ws).map((r) => r.title)).toEqual(["First later"])
      handle.resetStats()
      expect(yield* undoWith(handle, journal)).toMatchObject({ deleted: 1, reverted: 1, failed: 0 })
      expect(writes(handle)).toBe(0)
    }))

  it.effect("a journal written before before-values were recorded keeps its updates, each reported (no earlier value recorded), and sends nothing", () =>
    Effect.gen(function*() {
      const handle = yield* Emulator
      const dir = yield* tempDir("ws-undo-")
      const journal = path.join(dir, "old.sqlite")
      const { ids, ws } = yield* seeded(handle, "old-format", ["One", "Two"])
      yield* backedUp(handle, dir, ws)
      for (const id of ids) yield* update(handle, ws, id, { title: `changed ${id}` })
      expect(yield* restored(handle, dir, journal, ws, ws)).toMatchObject({ updated: 2, failed: 0 })
      // As a version before journal format 4 left it: no before-values.
      const db = new Database(journal)
      db.exec("UPDATE ops SET before = NULL")
      db.close()
      const restoredTitles = rowsOf(handle, ws).map((r) => r.title)
      handle.resetStats()
      const report = yield* undoWith(handle, journal)
      expect(writes(handle)).toBe(0)
      expect(report).toMatchObject({ deleted: 0, reverted: 0, failed: 0 })
      expect(report.kept.filter((k) => k.what === "update")).toEqual(
        expect.arrayContaining(ids.map((id) => ({ what: "update", id, why: "no earlier value recorded" })))
      )
      expect(rowsOf(handle, ws).map((r) => r.title)).toEqual(restoredTitles)
    }))

  it.effect("under ambiguous writes and dropped connections, undo puts each earlier value back, and a rerun sends nothing", () =>
    Effect.gen(function*() {
      const handle = yield* Emulator
      const dir = yield* tempDir("ws-undo-")
      const journal = path.join(dir, "revert-faults.sqlite")
      const { ids, ws } = yield* seeded(handle, "revert-faults", Array.from({ length: 12 }, (_, i) => `Revert ${i}`))
      yield* backedUp(handle, dir, ws)
      for (const id of ids) yield* update(handle, ws, id, { title: `Edited ${id}`, done: true })
      const edited = rowsOf(handle, ws)
      expect(yield* restored(handle, dir, journal, ws, ws)).toMatchObject({ updated: 12, failed: 0 })
      handle.faults.configure({ ambiguousWriteRate: 0.3, dropRate: 0.05, seed: 7 })
      let report = yield* undoWith(handle, journal).pipe(Effect.ensuring(Effect.sync(() => handle.faults.reset())))
      for (let i = 0; i < 3 && report.failed > 0; i++) report = yield* undoWith(handle, journal)
      expect(report).toMatchObject({ deleted: 0, reverted: 12, kept: [], failed: 0 })
      expect(rowsOf(handle, ws)).toEqual(edited)
      handle.resetStats()
      expect(yield* undoWith(handle, journal)).toMatchObject({ reverted: 12, failed: 0 })
      expect(writes(handle)).toBe(0)
    }), 120_000)

  it.effect("a comment the service answers delete-comment for and keeps is reported kept, the run finishes, and a rerun sends nothing", () =>
    Effect.gen(function*() {
      const handle = yield* Emulator
      const dir = yield* tempDir("ws-undo-")
      const file = path.join(dir, "comment-kept.sqlite")
      const { ids, ws } = yield* seeded(handle, "comment-kept", ["Found"])
      const recordId = ids[0]!
      // A run that commented on a record it found (mapped, not created): its comment is what undo deletes.
      yield* Effect.scoped(Effect.gen(function*() {
        const journal = yield* openJournal(file)
        yield* journal.setMeta("kind", "import-csv")
        yield* journal.setMapping({ namespace: recordNamespace(ws), sourceKey: "k:found", targetId: recordId })
        yield* journal.addOps([{ key: "k:found/comment/0", kind: EXTRA_KINDS.commentCreate, payload: { workspaceId: ws, recordRef: "k:found", text: "Noted by the run" } }])
        const made = yield* replay(journal, makeExtraExecutors(yield* RestClient, yield* GraphqlClient), { phases: EXTRA_PHASES })
        expect(made).toMatchObject({ failed: 0, unknown: 0 })
      }).pipe(Effect.provide(testClient(handle))))
      const live = () =>
        (handle.ctx.db.prepare("SELECT id FROM activity WHERE record_id = ? AND kind = 'COMMENT' AND deleted_at IS NULL").all(recordId) as Array<{ id: string }>)
          .map((c) => c.id)
      const [commentId] = live()
      expect(commentId).toBeDefined()

      // The service answers delete-comment 200 and keeps the comment.
      handle.resetStats()
      handle.faults.inject({ route: "delete-comment", kind: "not-applied" })
      const report = yield* undoWith(handle, file).pipe(Effect.ensuring(Effect.sync(() => handle.faults.reset())))
      expect(sent(handle, "delete-comment")).toBe(1)
      expect(report).toMatchObject({ deleted: 0, reverted: 0, failed: 0 })
      expect(report.kept).toEqual([{ what: "comment", id: commentId, why: expect.stringContaining("still shows the comment") }])
      expect(live()).toEqual([commentId])

      // A rerun neither sends it again nor fails: the same report.
      handle.resetStats()
      const again = yield* undoWith(handle, file)
      expect(sent(handle, "delete-comment")).toBe(0)
      expect({ ...again, replay: undefined }).toEqual({ ...report, replay: undefined })
    }))

  it.effect("a create of the runs whose outcome is unknown is reported (rerun the command first), not guessed at", () =>
    Effect.gen(function*() {
      const handle = yield* Emulator
      const dir = yield* tempDir("ws-undo-")
      const file = path.join(dir, "unsettled.sqlite")
      const ws = handle.admin.createWorkspace({ name: "unsettled" }).id
      yield* Effect.scoped(Effect.gen(function*() {
        const journal = yield* openJournal(file)
        yield* journal.setMeta("kind", "import-csv")
        yield* journal.addOps([
          { key: "k:sent", kind: "record.create", payload: { workspaceId: ws, title: "Maybe made" } },
          { key: "k:never", kind: "record.create", payload: { workspaceId: ws, title: "Never sent" } }
        ])
        yield* journal.claim("k:sent")
        yield* journal.markUncertain("k:sent", "HTTP 504")
      }))
      handle.resetStats()
      const report = yield* undoWith(handle, file)
      expect(writes(handle)).toBe(0)
      expect(report).toMatchObject({ deleted: 0, reverted: 0, failed: 0 })
      expect(report.kept).toEqual([{ what: "record.create", id: "k:sent", why: expect.stringContaining("did not finish") }])
    }))

  it.effect("under ambiguous writes and dropped connections, undo deletes each record a restore created exactly once, and nothing else", () =>
    Effect.gen(function*() {
      const handle = yield* Emulator
      const dir = yield* tempDir("ws-undo-")
      const journal = path.join(dir, "faults.sqlite")
      const source = yield* seeded(handle, "faults-source", Array.from({ length: 40 }, (_, i) => `Faulted ${i}`))
      const target = yield* seeded(handle, "faults-target", ["Was here", "Also here"])
      yield* backedUp(handle, dir, source.ws)
      const created = yield* restored(handle, dir, journal, source.ws, target.ws)
      expect(created).toMatchObject({ created: 40, failed: 0 })
      handle.resetStats()
      handle.faults.configure({ ambiguousWriteRate: 0.25, dropRate: 0.05, seed: 11 })
      let report = yield* undoWith(handle, journal).pipe(Effect.ensuring(Effect.sync(() => handle.faults.reset())))
      // An op whose retries all met a fault fails; the rerun finishes it.
      for (let i = 0; i < 3 && report.failed > 0; i++) report = yield* undoWith(handle, journal)
      expect(report).toMatchObject({ deleted: 40, reverted: 0, failed: 0 })
      expect(rowsOf(handle, target.ws).map((r) => r.title).sort()).toEqual(["Also here", "Was here"])
      expect(deletedIn(handle, target.ws)).toBe(40)
      expect(rowsOf(handle, source.ws)).toHaveLength(40)
      // Faults did land on deletes; no record had a delete that deleted it twice, and a
      // repeated delete (after a lost answer) found it gone.
      const stats = handle.stats().byRouteStatus
      expect(stats["delete-record 200"] ?? 0).toBeLessThan(40)
      expect(sent(handle, "delete-record")).toBeGreaterThan(40)
      handle.resetStats()
      const again = yield* undoWith(handle, journal)
      expect(writes(handle)).toBe(0)
      expect(again).toMatchObject({ deleted: 40, failed: 0 })
    }), 120_000)
})
