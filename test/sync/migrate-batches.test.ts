/**
 * migrate reads its source run a batch of records at a time (records a list at a time by
 * position, comments and file values per batch of records, comparison per batch): a
 * source of more records than a batch, with a list that spans two batches and comments
 * (a reply among them) on its records, is carried and verified as a whole, its order kept.
 */
import { expect, layer } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as path from "node:path"
import { GraphqlClient } from "../../src/client/graphql-client.ts"
import { RestClient } from "../../src/client/rest-client.ts"
import { workspaceFilesFromServices } from "../../src/connectors/files/workspace-files.ts"
import { insertList } from "../../src/emulator/core/lists.ts"
import { insertComment, insertRecord } from "../../src/emulator/core/writes.ts"
import type { EmulatorHandle } from "../../src/emulator/index.ts"
import { Journal } from "../../src/store/journal.ts"
import { SnapshotStore } from "../../src/store/snapshot.ts"
import { RECORDS_PER_BATCH } from "../../src/sync/migrate/source-run.ts"
import { migrate, type MigrateEnd } from "../../src/sync/migrate/migrate.ts"
import { Emulator, emulatorLayer, tempDir } from "../support/effect.ts"
import { testClient } from "./replay-helpers.ts"

const q = <A>(handle: EmulatorHandle, sql: string, ...args: Array<unknown>) => handle.ctx.db.prepare(sql).all(...args) as Array<A>

/** Records of the source: Backlog holds more than a batch, Doing the rest. */
const RECORDS = RECORDS_PER_BATCH + 60
const IN_BACKLOG = RECORDS_PER_BATCH + 20

/**
 * The source: its records inserted directly (the emulator's own writes, as its seed does),
 * each list's positions the reverse of the records' creation (so neither id nor creation
 * order is the list's order); a comment and a reply to it on the last record created, a
 * comment on the first.
 */
const seedSource = (handle: EmulatorHandle) => {
  const ws = handle.admin.createWorkspace({ name: `source ${Math.random()}` }).id
  const author = handle.admin.createUser({ email: `author-${ws}@source.example`, firstName: "Ada", lastName: "Author", workspaces: { [ws]: "MEMBER" } })
  const lists = { Backlog: insertList(handle.ctx, ws, "Backlog").id, Doing: insertList(handle.ctx, ws, "Doing").id }
  const ids: Array<string> = []
  for (let i = 0; i < RECORDS; i++) {
    const inBacklog = i < IN_BACKLOG
    ids.push(insertRecord(handle.ctx, {
      workspaceId: ws,
      listId: inBacklog ? lists.Backlog : lists.Doing,
      title: `Record ${i + 1}`,
      position: (RECORDS - i) * 1000,
      createdBy: author.userId,
      createdAt: new Date(Date.UTC(2026, 0, 1) + i * 60_000).toISOString()
    }).id)
  }
  const comment = (recordId: string, html: string, at: string, parentId?: string) =>
    insertComment(handle.ctx, { workspaceId: ws, recordId, html, text: html.replace(/<[^>]+>/g, ""), userId: author.userId, at, ...(parentId !== undefined ? { parentId } : {}) })
  const last = ids[ids.length - 1]!
  const first = comment(last, "<p>First word</p>", "2026-02-01T10:00:00.000Z")
  comment(last, "<p>A reply</p>", "2026-02-01T11:00:00.000Z", first)
  comment(ids[0]!, "<p>On the first record</p>", "2026-02-01T09:00:00.000Z")
  return ws
}

const endOf = (handle: EmulatorHandle, workspaceId: string) =>
  Effect.gen(function*() {
    const ctx = yield* Layer.build(testClient(handle))
    return {
      rest: Context.get(ctx, RestClient),
      graphql: Context.get(ctx, GraphqlClient),
      files: yield* Effect.provide(workspaceFilesFromServices, ctx),
      workspaceId
    } satisfies MigrateEnd
  })

const migrateOnce = (handle: EmulatorHandle, dir: string, source: string, target: string) =>
  Effect.scoped(Effect.gen(function*() {
    const store = Context.get(yield* Layer.build(SnapshotStore.layer(path.join(dir, "source.sqlite"))), SnapshotStore)
    const journal = Context.get(yield* Layer.build(Journal.layer(path.join(dir, "journal.sqlite"))), Journal)
    return yield* migrate({ source: yield* endOf(handle, source), target: yield* endOf(handle, target), journal, store, people: "skip" })
  }))

/** A list's record titles in the list's order, from the emulator's database. */
const order = (handle: EmulatorHandle, ws: string, list: string) =>
  q<{ title: string }>(handle, "SELECT r.title FROM records r JOIN lists l ON l.id = r.list_id WHERE r.workspace_id = ? AND l.title = ? ORDER BY r.position, r.id", ws, list)
    .map((r) => r.title)

// Real HTTP to the emulator: the live clock. Over five hundred records sent one at a time per list.
layer(emulatorLayer({ seed: "empty" }), { timeout: 60_000, excludeTestServices: true })("migrate: a source larger than a batch", (it) => {
  it.effect("R-REST-RECORD-04: every record, a list's order across batches, and the comments are carried and verified; a rerun sends nothing", () =>
    Effect.gen(function*() {
      const handle = yield* Emulator
      const dir = yield* tempDir("ws-migrate-batches-")
      const source = seedSource(handle)
      const target = handle.admin.createWorkspace({ name: `target ${Math.random()}` }).id
      // The target has the lists (the alt reading makes none): this is about what the batches carry.
      for (const title of ["Backlog", "Doing"]) insertList(handle.ctx, target, title)

      const first = yield* migrateOnce(handle, dir, source, target)
      expect(first.mismatches).toEqual([])
      expect(first.verified).toBe(true)
      expect(first.records).toMatchObject({ source: RECORDS, created: RECORDS, failed: 0 })
      expect(first.comments).toMatchObject({ source: 3, created: 3, failed: 0 })
      expect([...first.lists.orderKept].sort()).toEqual(["Backlog", "Doing"])
      expect(first.lists.orderNotKept).toEqual([])
      for (const list of ["Backlog", "Doing"]) expect(order(handle, target, list)).toEqual(order(handle, source, list))
      // COMMENT_PARENT_SHOWN: where the service names a reply's parent, the reply answers the copy of it.
      const onTarget = (words: string) =>
        q<{ id: string; parent_id: string | null }>(handle, "SELECT id, parent_id FROM activity WHERE workspace_id = ? AND kind = 'COMMENT' AND text LIKE ?", target, `%${words}%`)
      expect(q<{ n: number }>(handle, "SELECT count(*) AS n FROM activity WHERE workspace_id = ? AND kind = 'COMMENT'", target)[0]!.n).toBe(3)
      const [parent] = onTarget("First word")
      const [reply] = onTarget("A reply")
      expect(onTarget("On the first record")).toHaveLength(1)
      expect(reply?.parent_id).toBe(handle.variant === "alt" ? null : parent?.id)

      const again = yield* migrateOnce(handle, dir, source, target)
      expect(again.verified).toBe(true)
      expect(again.records).toMatchObject({ created: 0, skipped: RECORDS, failed: 0 })
      expect(again.comments).toMatchObject({ created: 0, skipped: 3, failed: 0 })
    }), 600_000)
})
