/**
 * import-csv against services that read the documents otherwise: without the operations
 * beyond the documents that tags and lists need (list-tags, create-tag, create-list), the
 * records are imported without them and the result says so in one line
 * (docs/architecture.md, "Decoding policy").
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as path from "node:path"
import { expect, layer } from "@effect/vitest"
import { clientLayer } from "../../src/client/layer.ts"
import { RestClient } from "../../src/client/rest-client.ts"
import { importCsv } from "../../src/connectors/csv/import.ts"
import type { EmulatorHandle } from "../../src/emulator/index.ts"
import { Journal } from "../../src/store/journal.ts"
import { type ReadingProxy, type ReadingProxyOptions, startReadingProxy } from "../client/reading-proxy.ts"
import { Emulator, emulatorLayer, tempDir } from "../support/effect.ts"


const SAMPLE = path.join("examples", "data", "generic.csv")

/** Imports the generic sample into a new workspace through a proxy that reads the service otherwise. */
const importThrough = (options: ReadingProxyOptions) =>
  Effect.gen(function*() {
    const handle = yield* Emulator
    const proxy: ReadingProxy = yield* Effect.acquireRelease(
      Effect.promise(() => startReadingProxy(new URL(handle.restUrl).origin, options)),
      (proxy) => Effect.promise(() => proxy.close())
    )
    const ws = handle.admin.createWorkspace({ name: `readings ${Math.random()}` }).id
    const client = clientLayer({
      restUrl: `${proxy.url}/rest`,
      baseUrl: handle.baseUrl,
      token: handle.token,
      org: handle.org,
      retry: { maxRetries: 2, baseDelayMs: 5, capDelayMs: 20 }
    })
    const journalFile = path.join(yield* tempDir("ws-readings-"), "j.sqlite")
    const result = yield* Effect.gen(function*() {
      return yield* importCsv(yield* RestClient, yield* Journal, { workspaceId: ws, csv: { file: SAMPLE }, mapping: { preset: "generic" } })
    }).pipe(Effect.provide(Layer.merge(Journal.layer(journalFile), client)))
    return { ws, result, operations: [...proxy.operations] }
  }).pipe(Effect.scoped)

const stored = (handle: EmulatorHandle, ws: string) =>
  handle.ctx.db
    .prepare(
      `SELECT r.title, l.title AS list, r.done,
         (SELECT count(*) FROM record_tags rt WHERE rt.record_id = r.id) AS tags
       FROM records r JOIN lists l ON l.id = r.list_id WHERE r.workspace_id = ? AND r.deleted_at IS NULL ORDER BY r.title`
    )
    .all(ws) as Array<{ title: string; list: string; done: number; tags: number }>

// The proxy makes the other reading out of the reference one, whatever variant the suite
// runs. Imports go over real HTTP: the layer's tests run on the live clock.
layer(emulatorLayer({ seed: "demo", variant: "reference" }), { timeout: 30_000, excludeTestServices: true })("import-csv where the service lacks operations beyond the documents", (it) => {
  it.effect("R-REST-CALL-02: without list-tags and create-tag, every row is imported without tags, and it is reported", () =>
    Effect.gen(function*() {
      const handle = yield* Emulator
      const { ws, result, operations } = yield* importThrough({ unavailable: ["list-tags", "create-tag"] })
      expect(result).toMatchObject({ rows: 3, created: 3, rejected: 0, failed: 0, unknown: 0, blocked: 0 })
      expect(result.notices).toEqual(["tags: not available from this service (list-tags); records are imported without their tags"])
      const records = stored(handle, ws)
      expect(records.map((r) => r.tags)).toEqual([0, 0, 0])
      // Lists and done still arrive.
      expect(new Set(records.map((r) => r.list))).toEqual(new Set(["Backlog", "Doing"]))
      expect(records.filter((r) => r.done === 1)).toHaveLength(1)
      expect(operations).not.toContain("create-tag")
    }))

  it.effect("R-REST-CALL-02: list-tags there but create-tag not: records without the missing tags, reported", () =>
    Effect.gen(function*() {
      const handle = yield* Emulator
      const { ws, result } = yield* importThrough({ unavailable: ["create-tag"] })
      expect(result).toMatchObject({ rows: 3, created: 3, failed: 0, blocked: 0 })
      expect(result.notices).toEqual(["tags: not available from this service (create-tag); records are created without them"])
      expect(stored(handle, ws).map((r) => r.tags)).toEqual([0, 0, 0])
    }))

  it.effect("R-REST-CALL-15: create-list missing, the documented POST /v1/lists makes the list", () =>
    Effect.gen(function*() {
      const handle = yield* Emulator
      const { ws, result, operations } = yield* importThrough({ unavailable: ["create-list"] })
      expect(result).toMatchObject({ rows: 3, created: 3, failed: 0, blocked: 0, notices: [] })
      expect(operations).toContain("POST /v1/lists")
      expect(new Set(stored(handle, ws).map((r) => r.list))).toEqual(new Set(["Backlog", "Doing"]))
    }))

  it.effect("R-REST-RECORD-28: with no way to make a list, records go to the first list, reported with the lists named", () =>
    Effect.gen(function*() {
      const handle = yield* Emulator
      const { ws, result } = yield* importThrough({ unavailable: ["create-list", "POST /v1/lists"] })
      expect(result).toMatchObject({ rows: 3, created: 3, failed: 0, blocked: 0, listsNotMade: ["Backlog", "Doing"] })
      expect(result.notices).toEqual(['lists: not available from this service (create-list); records go to the first list: "Backlog", "Doing"'])
      const first = handle.ctx.db.prepare("SELECT title FROM lists WHERE workspace_id = ? ORDER BY position LIMIT 1").pluck().get(ws)
      // A new workspace has only its first list: every record lands there.
      expect(new Set(stored(handle, ws).map((r) => r.list))).toEqual(new Set([first]))
    }))

  it.effect("R-REST-RECORD-41: create-record answering the other example {id, uid, title, position, todoList} imports alike", () =>
    Effect.gen(function*() {
      const { result } = yield* importThrough({
        rewrite: (op, body) => {
          if (op !== "create-record") return body
          const b = body as { id: string; uid: string; title: string; position?: number; list: unknown }
          return { id: b.id, uid: b.uid, title: b.title, position: 1, todoList: b.list }
        }
      })
      expect(result).toMatchObject({ rows: 3, created: 3, failed: 0, unknown: 0, blocked: 0 })
    }))

  it.effect("R-REST-RECORD-42: update-record answering {success: true} (its answer is not shown) sets done alike", () =>
    Effect.gen(function*() {
      const handle = yield* Emulator
      const { ws, result } = yield* importThrough({ rewrite: (op, body) => (op === "update-record" ? { success: true } : body) })
      expect(result).toMatchObject({ rows: 3, created: 3, failed: 0, unknown: 0, blocked: 0 })
      expect(stored(handle, ws).filter((r) => r.done === 1)).toHaveLength(1)
    }))
})
