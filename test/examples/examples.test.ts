/**
 * Every example of examples/ runs against the emulator: the change stream written to a
 * sink, a paging stream with a custom transform, and the Promise facade.
 */
import * as Effect from "effect/Effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { backupAndExportChanges } from "../../examples/change-stream-to-ndjson.ts"
import { openWorkByList } from "../../examples/paging-transform.ts"
import { nightly } from "../../examples/promise-facade.ts"
import { type EmulatorHandle, startEmulator } from "../../src/emulator/index.ts"
import { emulatorClient, emulatorEnv, runScript } from "../pipelines/helpers.ts"

let emu: EmulatorHandle
let dir: string

beforeAll(async () => {
  emu = await startEmulator({ seed: "demo" })
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "worksync-examples-"))
})
afterAll(async () => {
  await emu.close()
  fs.rmSync(dir, { recursive: true, force: true })
})

const lines = (file: string) => fs.readFileSync(file, "utf8").trim().split("\n").filter((l) => l !== "").map((l) => JSON.parse(l) as Record<string, unknown>)

describe("examples", () => {
  it("change-stream-to-ndjson: the first run writes every record and file as created, the next only what changed", async () => {
    const snapshot = path.join(dir, "changes.sqlite")
    const out = path.join(dir, "changes.ndjson")
    const first = await Effect.runPromise(backupAndExportChanges(snapshot, out).pipe(Effect.provide(emulatorClient(emu))))
    const initial = lines(out)
    expect(first.written).toBe(initial.length)
    expect(initial.every((l) => l.kind === "created")).toBe(true)
    expect(initial.filter((l) => l.entity === "record")).toHaveLength(60)

    const [deleted] = emu.admin.deleteRecords(1, emu.workspaces[0])
    const second = await Effect.runPromise(backupAndExportChanges(snapshot, out).pipe(Effect.provide(emulatorClient(emu))))
    expect(second.runId).toBe("2")
    expect(lines(out)).toContainEqual(expect.objectContaining({ entity: "record", kind: "deleted", id: deleted }))
    expect(lines(out).every((l) => typeof l.title === "string" || l.title === null)).toBe(true)
  })

  it("R-REST-RECORD-14: paging-transform counts open records per list and assignee, from done=false pages only", async () => {
    const workspaceId = emu.workspaces[1]!
    const rows = await Effect.runPromise(openWorkByList(workspaceId).pipe(Effect.provide(emulatorClient(emu))))
    const open = emu.ctx.db
      .prepare("SELECT count(*) FROM records WHERE workspace_id = ? AND deleted_at IS NULL AND done = 0 AND archived = 0")
      .pluck()
      .get(workspaceId) as number
    expect(open).toBeGreaterThan(0)
    expect(rows.length).toBeGreaterThan(0)
    // Each open record counts once per assignee (or once as "(nobody)"), so at least once.
    expect(rows.reduce((n, r) => n + r.open, 0)).toBeGreaterThanOrEqual(open)
    expect(rows.some((r) => r.list === "Done")).toBe(false)
    for (let i = 1; i < rows.length; i++) expect(rows[i - 1]!.open).toBeGreaterThanOrEqual(rows[i]!.open)
    for (const r of rows) expect(r.overdue).toBeLessThanOrEqual(r.open)
  })

  it("promise-facade: a nightly job in plain async code (backup, changes, overdue records to JSON)", async () => {
    const connection = { restUrl: emu.restUrl, baseUrl: emu.baseUrl, token: emu.token, org: emu.org }
    const snapshot = path.join(dir, "nightly.sqlite")
    const overdueFile = path.join(dir, "overdue.json")
    const first = await nightly(connection, emu.workspaces[1]!, snapshot, overdueFile)
    expect(first).toMatchObject({ runId: "1", changed: 30 })
    const overdue = JSON.parse(fs.readFileSync(overdueFile, "utf8")) as Array<{ duedAt: string }>
    expect(overdue).toHaveLength(first.overdue)
    for (const r of overdue) expect(Date.parse(r.duedAt)).toBeLessThan(Date.now())

    emu.admin.deleteRecords(1, emu.workspaces[1])
    expect(await nightly(connection, emu.workspaces[1]!, snapshot, overdueFile)).toMatchObject({ runId: "2", changed: 1 })
  })

  it("promise-facade as a script: a refused token is recognised by its tag and ends with exit 1", async () => {
    const r = await runScript("examples/promise-facade.ts", [emu.workspaces[0]!, path.join(dir, "script.sqlite")], {
      ...emulatorEnv(emu),
      WORKSYNC_TOKEN: "pat_refused_by_the_emulator"
    }, dir)
    expect(r.code).toBe(1)
    expect(r.stderr.trim()).toBe("the token was refused: check WORKSYNC_TOKEN")
  })
})
