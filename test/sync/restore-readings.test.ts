/**
 * Restore into a service that reads the documents otherwise: update-record that takes
 * only its documented fields (no `archived`), no tag operations, update-record answering
 * `{success: true}`. The records are restored with what the service takes; what it does
 * not is reported in one line each (docs/architecture.md, "Decoding policy").
 */
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as path from "node:path"
import { clientLayer } from "../../src/client/layer.ts"
import { RestClient } from "../../src/client/rest-client.ts"
import type { EmulatorHandle } from "../../src/emulator/index.ts"
import { Journal } from "../../src/store/journal.ts"
import { resolveRun, SnapshotStore } from "../../src/store/snapshot.ts"
import { backup } from "../../src/sync/backup.ts"
import { restore, restoreDate } from "../../src/sync/restore.ts"
import type { ReadingProxyOptions } from "../client/reading-proxy.ts"
import { readingProxy } from "../streams/helpers.ts"
import { Emulator, emulatorLayer, tempDir } from "../support/effect.ts"
import { testClient } from "./replay-helpers.ts"

interface Row {
  title: string
  done: number
  archived: number
  list: string
  tags: number
}
const recordsOf = (handle: EmulatorHandle, ws: string): Array<Row> =>
  handle.ctx.db
    .prepare(
      `SELECT r.title, r.done, r.archived, l.title AS list,
         (SELECT count(*) FROM record_tags rt WHERE rt.record_id = r.id) AS tags
       FROM records r JOIN lists l ON l.id = r.list_id
       WHERE r.workspace_id = ? AND r.deleted_at IS NULL ORDER BY r.title, l.title, r.done`
    )
    .all(ws) as Array<Row>

/** Backs the first workspace up (straight from the emulator), then restores it through a proxy. */
const restoreThrough = (handle: EmulatorHandle, options: ReadingProxyOptions) =>
  Effect.gen(function*() {
    const dir = yield* tempDir("ws-restore-readings-")
    const source = handle.workspaces[0]!
    const target = handle.admin.createWorkspace({ name: `restored ${Math.random()}` }).id
    // The proxy lives for this restore only: it is closed before the test looks at the result.
    const result = yield* Effect.scoped(Effect.gen(function*() {
      const proxy = yield* readingProxy(new URL(handle.restUrl).origin, options)
      const targetClient = clientLayer({
        restUrl: `${proxy.url}/rest`,
        baseUrl: handle.baseUrl,
        token: handle.token,
        org: handle.org,
        retry: { maxRetries: 2, baseDelayMs: 5, capDelayMs: 20 }
      })
      const snapshot = SnapshotStore.layer(path.join(dir, "snap.sqlite"))
      yield* Effect.provide(backup({ workspaces: [source] }), Layer.merge(testClient(handle), snapshot))
      return yield* Effect.gen(function*() {
        const store = yield* SnapshotStore
        const run = (yield* resolveRun(store, undefined))!
        return yield* restore(store, yield* RestClient, yield* Journal, { run, sourceWorkspaceId: source, targetWorkspaceId: target })
      }).pipe(Effect.provide(Layer.mergeAll(targetClient, snapshot, Journal.layer(path.join(dir, "journal.sqlite")))))
    }))
    return { source, target, result }
  })

const withoutArchivedField: ReadingProxyOptions["refuse"] = (op, body) =>
  op === "update-record" && typeof body === "object" && body !== null && "archived" in body
    ? { status: 400, body: { error: { code: "BAD_REQUEST", message: "archived is not a field of update-record" }, issues: [{ path: "/archived", message: "Unknown field" }] } }
    : undefined

// The proxy makes the other reading out of the reference one, whatever variant the suite runs.
// No TestClock: the client's retries and timeouts run on real time against a real server.
layer(emulatorLayer({ seed: "demo", variant: "reference" }), { timeout: 30_000, excludeTestServices: true })("restore where the service reads the documents otherwise", (it) => {
  it.effect("R-REST-RECORD-43: update-record without `archived`: everything else is restored, archived reported", () =>
    Effect.gen(function*() {
      const handle = yield* Emulator
      const { source, target, result } = yield* restoreThrough(handle, { refuse: withoutArchivedField })
      expect(result.failed + result.unknown).toBe(0)
      expect(result.created).toBe(result.records)
      expect(result.notices).toEqual(["archived: not available from this service (update-record archived); records keep their archived state"])
      const strip = (rows: Array<Row>) => rows.map(({ archived: _, ...r }) => r)
      expect(strip(recordsOf(handle, target))).toEqual(strip(recordsOf(handle, source)))
      expect(recordsOf(handle, source).some((r) => r.archived === 1)).toBe(true)
      expect(recordsOf(handle, target).every((r) => r.archived === 0)).toBe(true)
    }))

  it.effect("R-REST-CALL-02: without tag operations, records are restored without tags, reported", () =>
    Effect.gen(function*() {
      const handle = yield* Emulator
      const { source, target, result } = yield* restoreThrough(handle, {
        unavailable: ["list-tags", "create-tag"],
        rewrite: (op, body) => (op === "update-record" ? { success: true } : body)
      })
      expect(result.failed + result.unknown).toBe(0)
      expect(result.notices).toEqual(["tags: not available from this service (list-tags); records are restored without their tags"])
      expect(recordsOf(handle, source).some((r) => r.tags > 0)).toBe(true)
      expect(recordsOf(handle, target).every((r) => r.tags === 0)).toBe(true)
      const strip = (rows: Array<Row>) => rows.map(({ tags: _, ...r }) => r)
      expect(strip(recordsOf(handle, target))).toEqual(strip(recordsOf(handle, source)))
    }))

  it("ALL_DAY_READ_FORM: a zoneless midnight (the other reading of an all-day date) is sent back as a bare date", () => {
    expect(restoreDate("2024-05-01T00:00:00")).toBe("2024-05-01")
    expect(restoreDate("2024-05-01T00:00:00.000Z")).toBe("2024-05-01")
    expect(restoreDate("2024-05-01T09:30:00")).toBe("2024-05-01T09:30:00Z")
    expect(restoreDate("2024-05-01T09:30:00+02:00")).toBe("2024-05-01T09:30:00+02:00")
  })
})
