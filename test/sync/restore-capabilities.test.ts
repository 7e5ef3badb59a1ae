/**
 * Restore's `notRestored` names what the target cannot do on every run, read from what
 * the journal recorded (capabilities.ts: `capability.missing:<name>`, the lists it could
 * not make), not from what the run at hand happened to send: a rerun that sends nothing
 * reports the same. Under the alt reading (assumptions.ts UNDOCUMENTED_INPUT_FIELDS,
 * CREATE_LIST_READING): update-record takes `archived` with success and ignores it, and
 * POST /v1/lists answers without making a list.
 */
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as path from "node:path"
import { RestClient } from "../../src/client/rest-client.ts"
import { insertList } from "../../src/emulator/core/lists.ts"
import type { EmulatorHandle } from "../../src/emulator/index.ts"
import { Journal } from "../../src/store/journal.ts"
import { resolveRun, SnapshotStore } from "../../src/store/snapshot.ts"
import { backup } from "../../src/sync/backup.ts"
import { restore } from "../../src/sync/restore.ts"
import { Emulator, emulatorLayer, tempDir } from "../support/effect.ts"
import { testClient } from "./replay-helpers.ts"

const WRITES = ["create-record", "update-record", "move-record", "delete-record", "create-list", "POST /v1/lists", "create-tag"]
const writesSent = (handle: EmulatorHandle) => WRITES.reduce((n, r) => n + (handle.stats().byRoute[r] ?? 0), 0)

// No TestClock: the client's retries and timeouts run on real time against a real server.
layer(emulatorLayer({ seed: "empty", variant: "alt" }), { timeout: 60_000, excludeTestServices: true })("restore reports what the target cannot do on every run", (it) => {
  it.effect("R-REST-RECORD-43 R-REST-CALL-15: archived ignored and a list not made are in notRestored on the first run and on a rerun that sends nothing", () =>
    Effect.gen(function*() {
      const handle = yield* Emulator
      const dir = yield* tempDir("ws-restore-capabilities-")
      const source = handle.admin.createWorkspace({ name: `source ${Math.random()}` }).id
      const backlog = insertList(handle.ctx, source, "Backlog")
      const target = handle.admin.createWorkspace({ name: `target ${Math.random()}` }).id
      const layer = Layer.mergeAll(testClient(handle), SnapshotStore.layer(path.join(dir, "snap.sqlite")), Journal.layer(path.join(dir, "journal.sqlite")))

      const restoreOnce = Effect.gen(function*() {
        const store = yield* SnapshotStore
        const run = (yield* resolveRun(store, undefined))!
        return yield* restore(store, yield* RestClient, yield* Journal, { run, sourceWorkspaceId: source, targetWorkspaceId: target })
      }).pipe(Effect.provide(layer))

      yield* Effect.gen(function*() {
        const rest = yield* RestClient
        for (const title of ["Alpha", "Bravo", "Charlie"]) yield* rest.createRecord({ workspaceId: source, title, listId: backlog.id })
        // Archived at the source (directly: the alt reading has no write that archives).
        handle.ctx.db.prepare("UPDATE records SET archived = 1 WHERE workspace_id = ? AND title IN ('Alpha', 'Bravo')").run(source)
        yield* backup({ workspaces: [source] })
      }).pipe(Effect.provide(layer))

      const entry = (r: { notRestored: ReadonlyArray<{ what: string }> }, what: string) => r.notRestored.find((n) => n.what === what)
      const first = yield* restoreOnce
      expect(first.failed + first.unknown).toBe(0)
      expect(first.created).toBe(3)
      expect(entry(first, "archived")).toMatchObject({ count: 2, why: expect.stringContaining("update-record") })
      expect(entry(first, "lists")).toMatchObject({ count: 1, why: expect.stringContaining('"Backlog"') })

      handle.resetStats()
      const again = yield* restoreOnce
      expect(writesSent(handle)).toBe(0)
      expect(again).toMatchObject({ created: 0, updated: 0, unchanged: 3 })
      expect(again.notices).toEqual([])
      expect(entry(again, "archived")).toEqual(entry(first, "archived"))
      expect(entry(again, "lists")).toEqual(entry(first, "lists"))
      // One entry per feature.
      expect(again.notRestored.map((n) => n.what).filter((w) => w === "archived" || w === "lists").sort()).toEqual(["archived", "lists"])
    }))
})
