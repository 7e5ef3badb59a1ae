/**
 * Backup against a service that serves only what the documents name and reads what they
 * leave open otherwise (docs/architecture.md, "Decoding policy"): a proxy in front of the
 * emulator strips undocumented fields, answers count-records without a count, and leaves
 * archived records out of list-records when the filter is omitted.
 */
import { expect, layer } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as Layer from "effect/Layer"
import * as path from "node:path"
import { clientLayer } from "../../src/client/layer.ts"
import type { EmulatorHandle } from "../../src/emulator/index.ts"
import { SnapshotStore } from "../../src/store/snapshot.ts"
import { backup, type BackupOptions } from "../../src/sync/backup.ts"
import type { ReadingProxy } from "../client/reading-proxy.ts"
import { readingProxy } from "../streams/helpers.ts"
import { Emulator, emulatorLayer, tempDir } from "../support/effect.ts"
import { sqliteOf } from "../support/sqlite-store.ts"

type Json = Record<string, unknown>

/** The proxy in front of the file's emulator. */
class Proxy extends Context.Service<Proxy, ReadingProxy>()("test/ReadingProxy") {}

const pick = (o: Json, keys: ReadonlyArray<string>): Json => Object.fromEntries(keys.map((k) => [k, o[k]]))

/** The other reading of every answer backup reads, with documented keys only. */
function documentedOnly(operation: string, body: unknown, request: unknown): unknown {
  const b = body as Json
  switch (operation) {
    case "list-workspaces":
      return { items: (b["items"] as Array<Json>).map((w) => pick(w, ["id"])), totalCount: b["totalCount"] }
    case "list-users":
      return { users: (b["users"] as Array<Json>).map((u) => pick(u, ["id", "email", "fullName"])), totalCount: b["totalCount"] }
    case "list-lists":
      return (b["items"] as Array<Json>).map((l) => pick(l, ["id", "title"]))
    case "count-records":
      return {}
    case "list-records": {
      // Without the filter, this reading leaves archived records out.
      if ((request as Json | null)?.["archived"] !== undefined) return body
      const items = (b["items"] as Array<Json>).filter((r) => r["archived"] !== true)
      return { ...b, items }
    }
    case "list-record-activity":
      return { ...b, items: (b["items"] as Array<Json>).map((a) => ({ ...a, __typename: "TimelineEntry" })) }
    case "list-files":
      return {
        ...b,
        items: (b["items"] as Array<Json>).map((f) => ({
          ...f,
          folder: f["folder"] === null ? null : pick(f["folder"] as Json, ["id"]),
          todo: f["todo"] === null ? null : pick(f["todo"] as Json, ["id"])
        }))
      }
    default:
      return body
  }
}

const tempFile = Effect.map(tempDir("ws-backup-readings-"), (dir) => path.join(dir, "snap.sqlite"))

const runBackup = (emu: EmulatorHandle, proxy: ReadingProxy, file: string, options: BackupOptions = {}) =>
  Effect.provide(
    Effect.result(backup(options)),
    Layer.merge(
      clientLayer({
        restUrl: `${proxy.url}/rest`,
        baseUrl: emu.baseUrl,
        token: emu.token,
        org: emu.org,
        retry: { maxRetries: 4, baseDelayMs: 5, capDelayMs: 50 }
      }),
      SnapshotStore.layer(file)
    )
  )

const ids = (emu: EmulatorHandle, sql: string, ...args: Array<unknown>) => emu.ctx.db.prepare(sql).pluck().all(...args) as Array<string>

/** The proxy makes the other reading out of the reference one, whatever variant the suite runs. */
const emulatorBehindProxy = Layer.effect(
  Proxy,
  Effect.flatMap(Emulator, (emu) => readingProxy(new URL(emu.restUrl).origin, { rewrite: documentedOnly }))
).pipe(Layer.provideMerge(emulatorLayer({ seed: "demo", variant: "reference" })))

// No TestClock: the client's retries and timeouts run on real time against a real server.
layer(emulatorBehindProxy, { timeout: 30_000, excludeTestServices: true })("backup against a service of documented fields only", (it) => {
  it.effect("R-REST-PAGE-09 R-REST-PAGE-10 R-REST-PAGE-11: completes with every record, archived ones included", () =>
    Effect.gen(function*() {
      const emu = yield* Emulator
      const proxy = yield* Proxy
      const file = yield* tempFile
      const result = yield* runBackup(emu, proxy, file)
      expect(Result.isSuccess(result)).toBe(true)
      const all = ids(emu, "SELECT id FROM records WHERE deleted_at IS NULL ORDER BY id")
      const archived = ids(emu, "SELECT id FROM records WHERE deleted_at IS NULL AND archived = 1")
      expect(archived.length).toBeGreaterThan(0)
      expect(Result.getOrThrow(result)).toMatchObject({ workspaces: emu.workspaces.length, records: all.length })
      const stored = yield* Effect.provide(
        Effect.map(SnapshotStore, (s) => sqliteOf(s).prepare("SELECT id FROM run_records WHERE run_id = 1 ORDER BY id").pluck().all()),
        SnapshotStore.layer(file)
      )
      expect(stored).toEqual(all)
      // Every list-records call said which archived records it wanted.
      const listCalls = proxy.bodies.filter((b) => b.operation === "list-records")
      expect(listCalls.length).toBeGreaterThan(0)
      expect(listCalls.every((b) => typeof (b.body as Json)["archived"] === "boolean")).toBe(true)
    }))

  it.effect("a workspace is named by id; a slug the service does not send matches nothing", () =>
    Effect.gen(function*() {
      const emu = yield* Emulator
      const proxy = yield* Proxy
      const ws = emu.workspaces[0]!
      const byId = yield* runBackup(emu, proxy, yield* tempFile, { workspaces: [ws] })
      expect(Result.getOrThrow(byId).workspaces).toBe(1)
      const slug = emu.ctx.db.prepare("SELECT slug FROM workspaces WHERE id = ?").pluck().get(ws) as string
      const bySlug = yield* runBackup(emu, proxy, yield* tempFile, { workspaces: [slug] })
      expect(Result.isFailure(bySlug) && bySlug.failure._tag).toBe("WorkspaceNotFound")
    }))
})
