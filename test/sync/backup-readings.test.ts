/**
 * Backup against a service that serves only what the documents name and reads what they
 * leave open otherwise (docs/architecture.md, "Decoding policy"): a proxy in front of the
 * emulator strips undocumented fields, answers count-records without a count, and leaves
 * archived records out of list-records when the filter is omitted.
 */
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { clientLayer } from "../../src/client/layer.ts"
import { type EmulatorHandle, startEmulator } from "../../src/emulator/index.ts"
import { SnapshotStore } from "../../src/store/snapshot.ts"
import { backup, type BackupOptions } from "../../src/sync/backup.ts"
import { type ReadingProxy, startReadingProxy } from "../client/reading-proxy.ts"

type Json = Record<string, unknown>

let emu: EmulatorHandle
let proxy: ReadingProxy
beforeAll(async () => {
  // The proxy makes the other reading out of the reference one, whatever variant the suite runs.
  emu = await startEmulator({ seed: "demo", variant: "reference" })
  proxy = await startReadingProxy(new URL(emu.restUrl).origin, { rewrite: documentedOnly })
})
afterAll(async () => {
  await proxy?.close()
  await emu?.close()
})

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

const tempFile = () => path.join(fs.mkdtempSync(path.join(os.tmpdir(), "ws-backup-readings-")), "snap.sqlite")

const runBackup = (file: string, options: BackupOptions = {}) =>
  Effect.runPromise(
    Effect.provide(
      Effect.either(backup(options)),
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
  )

const ids = (sql: string, ...args: Array<unknown>) => emu.ctx.db.prepare(sql).pluck().all(...args) as Array<string>

describe("backup against a service of documented fields only", () => {
  it("R-REST-PAGE-09 R-REST-PAGE-10 R-REST-PAGE-11: completes with every record, archived ones included", async () => {
    const file = tempFile()
    const result = await runBackup(file)
    expect(Either.isRight(result)).toBe(true)
    const all = ids("SELECT id FROM records WHERE deleted_at IS NULL ORDER BY id")
    const archived = ids("SELECT id FROM records WHERE deleted_at IS NULL AND archived = 1")
    expect(archived.length).toBeGreaterThan(0)
    expect(Either.getOrThrow(result)).toMatchObject({ workspaces: emu.workspaces.length, records: all.length })
    const stored = await Effect.runPromise(
      Effect.provide(
        Effect.map(SnapshotStore, (s) => s.db.prepare("SELECT id FROM run_records WHERE run_id = 1 ORDER BY id").pluck().all()),
        SnapshotStore.layer(file)
      )
    )
    expect(stored).toEqual(all)
    // Every list-records call said which archived records it wanted.
    const listCalls = proxy.bodies.filter((b) => b.operation === "list-records")
    expect(listCalls.length).toBeGreaterThan(0)
    expect(listCalls.every((b) => typeof (b.body as Json)["archived"] === "boolean")).toBe(true)
  })

  it("a workspace is named by id; a slug the service does not send matches nothing", async () => {
    const ws = emu.workspaces[0]!
    const byId = await runBackup(tempFile(), { workspaces: [ws] })
    expect(Either.getOrThrow(byId).workspaces).toBe(1)
    const slug = emu.ctx.db.prepare("SELECT slug FROM workspaces WHERE id = ?").pluck().get(ws) as string
    const bySlug = await runBackup(tempFile(), { workspaces: [slug] })
    expect(Either.isLeft(bySlug) && bySlug.left._tag).toBe("WorkspaceNotFound")
  })
})
