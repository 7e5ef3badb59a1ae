/**
 * Every example of examples/ runs against the emulator: the change stream written to a
 * sink, a paging stream with a custom transform, and the Promise facade.
 */
import * as Effect from "effect/Effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { expect, layer } from "@effect/vitest"
import { backupAndExportChanges } from "../../examples/change-stream-to-ndjson.ts"
import { openWorkByList } from "../../examples/paging-transform.ts"
import { nightly } from "../../examples/promise-facade.ts"
import { Emulator, emulatorLayer, tempDir } from "../support/effect.ts"
import { emulatorClient, emulatorEnv, runScript } from "../pipelines/helpers.ts"

const lines = (file: string) => fs.readFileSync(file, "utf8").trim().split("\n").filter((l) => l !== "").map((l) => JSON.parse(l) as Record<string, unknown>)

// Real HTTP to the emulator and real child processes: the live clock (no TestClock).
layer(emulatorLayer({ seed: "demo" }), { timeout: 30_000, excludeTestServices: true })("examples", (it) => {
  it.effect("change-stream-to-ndjson: the first run writes every record and file as created, the next only what changed", () =>
    Effect.gen(function*() {
      const emu = yield* Emulator
      const dir = yield* tempDir("worksync-examples-")
      const snapshot = path.join(dir, "changes.sqlite")
      const out = path.join(dir, "changes.ndjson")
      const first = yield* backupAndExportChanges(snapshot, out).pipe(Effect.provide(emulatorClient(emu)))
      const initial = lines(out)
      expect(first.written).toBe(initial.length)
      expect(initial.every((l) => l.kind === "created")).toBe(true)
      expect(initial.filter((l) => l.entity === "record")).toHaveLength(60)

      const [deleted] = emu.admin.deleteRecords(1, emu.workspaces[0])
      const second = yield* backupAndExportChanges(snapshot, out).pipe(Effect.provide(emulatorClient(emu)))
      expect(second.runId).toBe("2")
      expect(lines(out)).toContainEqual(expect.objectContaining({ entity: "record", kind: "deleted", id: deleted }))
      expect(lines(out).every((l) => typeof l.title === "string" || l.title === null)).toBe(true)
    }))

  it.effect("R-REST-RECORD-14: paging-transform counts open records per list and assignee, from done=false pages only", () =>
    Effect.gen(function*() {
      const emu = yield* Emulator
      const workspaceId = emu.workspaces[1]!
      const rows = yield* openWorkByList(workspaceId).pipe(Effect.provide(emulatorClient(emu)))
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
    }))

  it.effect("promise-facade: a nightly job in plain async code (backup, changes, overdue records to JSON)", () =>
    Effect.gen(function*() {
      const emu = yield* Emulator
      const dir = yield* tempDir("worksync-examples-")
      const connection = { restUrl: emu.restUrl, baseUrl: emu.baseUrl, token: emu.token, org: emu.org }
      const snapshot = path.join(dir, "nightly.sqlite")
      const overdueFile = path.join(dir, "overdue.json")
      // The facade is the Promise API: its calls stay Promises, awaited by the test.
      const first = yield* Effect.promise(() => nightly(connection, emu.workspaces[1]!, snapshot, overdueFile))
      expect(first).toMatchObject({ runId: "1", changed: 30 })
      const overdue = JSON.parse(fs.readFileSync(overdueFile, "utf8")) as Array<{ duedAt: string }>
      expect(overdue).toHaveLength(first.overdue)
      for (const r of overdue) expect(Date.parse(r.duedAt)).toBeLessThan(Date.now())

      emu.admin.deleteRecords(1, emu.workspaces[1])
      expect(yield* Effect.promise(() => nightly(connection, emu.workspaces[1]!, snapshot, overdueFile))).toMatchObject({ runId: "2", changed: 1 })
    }))

  it.effect("promise-facade as a script: a refused token is recognised by its tag and ends with exit 1", () =>
    Effect.gen(function*() {
      const emu = yield* Emulator
      const dir = yield* tempDir("worksync-examples-")
      const r = yield* Effect.promise(() =>
        runScript("examples/promise-facade.ts", [emu.workspaces[0]!, path.join(dir, "script.sqlite")], {
          ...emulatorEnv(emu),
          WORKSYNC_TOKEN: "pat_refused_by_the_emulator"
        }, dir)
      )
      expect(r.code).toBe(1)
      expect(r.stderr.trim()).toBe("the token was refused: check WORKSYNC_TOKEN")
    }))
})
