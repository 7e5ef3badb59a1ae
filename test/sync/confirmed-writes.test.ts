/**
 * A 2xx is not proof: against a service that answers writes with success and does not
 * carry them out (the emulator's alt reading: `POST /v1/lists` answers the lists and makes
 * none, CREATE_LIST_READING; update-record ignores `archived`, UNDOCUMENTED_INPUT_FIELDS),
 * replay reads the write back, degrades (records in the first list, archived state kept),
 * reports it, finishes, and no later run of the journal sends the write again.
 */
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as fs from "node:fs"
import * as path from "node:path"
import { clientLayer } from "../../src/client/layer.ts"
import { RestClient } from "../../src/client/rest-client.ts"
import { importCsv } from "../../src/connectors/csv/import.ts"
import type { EmulatorHandle } from "../../src/emulator/index.ts"
import { Journal } from "../../src/store/journal.ts"
import { CAPABILITY, missingCapabilities } from "../../src/sync/capabilities.ts"
import { listEnsureKey, OP_KINDS, PHASES } from "../../src/sync/plan.ts"
import { replay } from "../../src/sync/replay.ts"
import { makeRecordExecutors } from "../../src/sync/replay-records.ts"
import { type ReadingProxy, startReadingProxy } from "../client/reading-proxy.ts"
import { Emulator, emulatorLayer, tempDir } from "../support/effect.ts"
import { testClient } from "./replay-helpers.ts"

const HEADER = "key,title,list,done"
const CSV_ROWS = ["1,Plan the offsite,Backlog,no", "2,Send the invitations,Backlog,yes", "3,Review the budget,Doing,"]

const listsOf = (handle: EmulatorHandle, ws: string) =>
  handle.ctx.db
    .prepare("SELECT r.title, l.title AS list FROM records r JOIN lists l ON l.id = r.list_id WHERE r.workspace_id = ? AND r.deleted_at IS NULL ORDER BY r.title")
    .all(ws) as Array<{ title: string; list: string }>

/** A proxy in front of the emulator that records every request's operation and body. */
const recorder = (handle: EmulatorHandle) =>
  Effect.acquireRelease(
    Effect.promise(() => startReadingProxy(new URL(handle.restUrl).origin)),
    (proxy) => Effect.promise(() => proxy.close())
  )

const clientThrough = (handle: EmulatorHandle, proxy: ReadingProxy) =>
  clientLayer({
    restUrl: `${proxy.url}/rest`,
    baseUrl: handle.baseUrl,
    token: handle.token,
    org: handle.org,
    retry: { maxRetries: 2, baseDelayMs: 5, capDelayMs: 20 }
  })

const creates = (proxy: ReadingProxy) => proxy.operations.filter((o) => o === "create-list" || o === "POST /v1/lists").length

// The alt reading whatever variant the suite runs; real HTTP, so the live clock.
layer(emulatorLayer({ seed: "demo", variant: "alt" }), { timeout: 30_000, excludeTestServices: true })("writes answered with success that do nothing", (it) => {
  it.effect("R-REST-CALL-15: a list create that makes no list: rows go to the first list, the lists are named, and no later run sends the create again", () =>
    Effect.gen(function*() {
      const handle = yield* Emulator
      const proxy = yield* recorder(handle)
      const ws = handle.admin.createWorkspace({ name: `no lists ${Math.random()}` }).id
      const dir = yield* tempDir("ws-confirmed-lists-")
      const journalFile = path.join(dir, "j.sqlite")
      const csv = path.join(dir, "rows.csv")
      const importRows = (rows: ReadonlyArray<string>) =>
        Effect.gen(function*() {
          fs.writeFileSync(csv, [HEADER, ...rows].join("\n") + "\n")
          return yield* importCsv(yield* RestClient, yield* Journal, {
            workspaceId: ws,
            csv: { file: csv },
            mapping: { file: { key: "key", title: "title", list: "list", done: "done" } }
          })
        }).pipe(Effect.provide(Layer.merge(Journal.layer(journalFile), clientThrough(handle, proxy))))

      const first = yield* importRows(CSV_ROWS)
      expect(first).toMatchObject({ rows: 3, created: 3, failed: 0, unknown: 0, blocked: 0, listsNotMade: ["Backlog", "Doing"] })
      expect(first.notices).toEqual([
        'lists: create-list answered success but list-lists does not show the list: not possible on this service; records go to the first list: "Backlog", "Doing"'
      ])
      expect(listsOf(handle, ws)).toEqual([
        { title: "Plan the offsite", list: "To do" },
        { title: "Review the budget", list: "To do" },
        { title: "Send the invitations", list: "To do" }
      ])
      expect(creates(proxy)).toBeGreaterThan(0)

      // A later pass with a row in another new list: the journal knows lists cannot be made.
      proxy.operations.length = 0
      const second = yield* importRows([...CSV_ROWS, "4,Book the band,Later,"])
      expect(second).toMatchObject({ created: 1, skipped: 3, failed: 0, unknown: 0, blocked: 0, listsNotMade: ["Backlog", "Doing", "Later"] })
      expect(second.notices[0]).toContain('"Later"')
      expect(creates(proxy)).toBe(0)
      expect(listsOf(handle, ws).find((r) => r.title === "Book the band")?.list).toBe("To do")
    }))

  it.effect("R-REST-CALL-15: creates answered with a made-up list and tag that were never made: read back, rows imported without them, reported", () =>
    Effect.gen(function*() {
      const handle = yield* Emulator
      // The answer names an item (an id and the title), yet nothing is made.
      const proxy = yield* Effect.acquireRelease(
        Effect.promise(() =>
          startReadingProxy(new URL(handle.restUrl).origin, {
            refuse: (op, body) =>
              op === "create-list" || op === "POST /v1/lists" || op === "create-tag"
                ? { status: 200, body: { id: `made-up-${op.length}`, title: (body as { title: string }).title } }
                : undefined
          })
        ),
        (p) => Effect.promise(() => p.close())
      )
      const ws = handle.admin.createWorkspace({ name: `made up ${Math.random()}` }).id
      const dir = yield* tempDir("ws-confirmed-made-up-")
      const csv = path.join(dir, "rows.csv")
      fs.writeFileSync(csv, "title,list,tags\nPlan the offsite,Backlog,planning\n")
      const result = yield* Effect.gen(function*() {
        return yield* importCsv(yield* RestClient, yield* Journal, {
          workspaceId: ws,
          csv: { file: csv },
          mapping: { file: { title: "title", list: "list", tags: "tags" } }
        })
      }).pipe(Effect.provide(Layer.merge(Journal.layer(path.join(dir, "j.sqlite")), clientThrough(handle, proxy))))
      expect(result).toMatchObject({ created: 1, failed: 0, unknown: 0, blocked: 0, listsNotMade: ["Backlog"] })
      expect(result.notices).toEqual([
        "tags: create-tag answered success but list-tags does not show the tag: not possible on this service; records are created without them",
        'lists: create-list answered success but list-lists does not show the list: not possible on this service; records go to the first list: "Backlog"'
      ])
      expect(listsOf(handle, ws)).toEqual([{ title: "Plan the offsite", list: "To do" }])
    }))

  it.effect("a list.ensure left 'answered success but not found: not sent again' by an earlier version finishes on the next run", () =>
    Effect.gen(function*() {
      const handle = yield* Emulator
      const ws = handle.admin.createWorkspace({ name: `old journal ${Math.random()}` }).id
      const journalFile = path.join(yield* tempDir("ws-confirmed-old-"), "j.sqlite")
      const report = yield* Effect.gen(function*() {
        const journal = yield* Journal
        const key = listEnsureKey(ws, "Backlog")
        yield* journal.addOps([{ key, kind: OP_KINDS.listEnsure, payload: { workspaceId: ws, title: "Backlog" } }])
        // What that version left: sent, answered 2xx but unreadable (applied), not found, failed.
        yield* journal.claim(key)
        yield* journal.markUncertain(key, "create-list: unexpected response at id", { applied: true })
        yield* journal.claim(key)
        yield* journal.fail(key, "the service answered success but the answer was unreadable, and the result was not found: not sent again", { outcomeUnknown: true })
        yield* journal.retryFailed()
        const r = yield* replay(journal, makeRecordExecutors(yield* RestClient), { phases: PHASES })
        return { r, op: Option.getOrThrow(yield* journal.get(key)) }
      }).pipe(Effect.provide(Layer.merge(Journal.layer(journalFile), testClient(handle))))
      expect(report.r).toMatchObject({ failed: 0, unknown: 0 })
      expect(report.op).toMatchObject({ state: "done", result: { id: null, title: "Backlog" } })
    }))

  it.effect("R-REST-RECORD-43: update-record that ignores `archived`: read back, the rest applied, reported, and no later run sends it", () =>
    Effect.gen(function*() {
      const handle = yield* Emulator
      const proxy = yield* recorder(handle)
      const ws = handle.workspaces[0]!
      const ids = handle.ctx.db
        .prepare("SELECT id FROM records WHERE workspace_id = ? AND deleted_at IS NULL AND archived = 0 AND done = 0 ORDER BY id LIMIT 4")
        .pluck()
        .all(ws) as Array<string>
      const journalFile = path.join(yield* tempDir("ws-confirmed-archived-"), "j.sqlite")
      const notices: Array<string> = []
      const updateAll = (from: number, to: number) =>
        Effect.gen(function*() {
          const journal = yield* Journal
          yield* journal.addOps(ids.slice(from, to).map((id) => ({
            key: `archive:${id}`,
            kind: OP_KINDS.recordUpdate,
            payload: { workspaceId: ws, recordId: id, fields: { done: true, archived: true } }
          })))
          const executors = makeRecordExecutors(yield* RestClient, { onNotice: (line) => notices.push(line) })
          const report = yield* replay(journal, executors, { phases: PHASES, concurrency: 1 })
          return { report, missing: yield* missingCapabilities(journal) }
        }).pipe(Effect.provide(Layer.merge(Journal.layer(journalFile), clientThrough(handle, proxy))))
      const archivedSent = () =>
        proxy.bodies.filter((b) => b.operation === "update-record" && typeof b.body === "object" && b.body !== null && "archived" in b.body).length

      const first = yield* updateAll(0, 2)
      expect(first.report).toMatchObject({ sent: 2, failed: 0, unknown: 0 })
      const line = "archived: update-record with archived answered success but get-record shows it unchanged: not possible on this service; records keep their archived state"
      expect(notices).toEqual([line])
      expect(first.missing.get(CAPABILITY.archived)).toBe(line)
      // Read back after the first; the second is sent without it. (Each update also reads
      // the record once before it is sent: its earlier values, which undo puts back.)
      expect(archivedSent()).toBe(1)
      expect(proxy.operations.filter((o) => o === "get-record")).toHaveLength(1 + 2)
      const state = (id: string) => handle.ctx.db.prepare("SELECT done, archived FROM records WHERE id = ?").get(id)
      expect(ids.slice(0, 2).map(state)).toEqual([{ done: 1, archived: 0 }, { done: 1, archived: 0 }])

      // A later run of the journal knows: `archived` is not sent, and it is told again.
      proxy.bodies.length = 0
      notices.length = 0
      const second = yield* updateAll(2, 4)
      expect(second.report).toMatchObject({ sent: 2, failed: 0 })
      expect(archivedSent()).toBe(0)
      expect(notices).toEqual([line])
      expect(ids.slice(2, 4).map(state)).toEqual([{ done: 1, archived: 0 }, { done: 1, archived: 0 }])
    }))
})
