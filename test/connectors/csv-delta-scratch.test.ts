/**
 * A delta pass plans out of the heap: the rows earlier passes created (the journal's id
 * map, and for `--plan` their records' ids and the workspace's records by list and title)
 * and the keys of the export read so far are kept in scratch files
 * (store/scratch-records.ts) while the rows are read, gone once planning ends. What is planned from them is the same: a changed row's record is found (a field
 * edited there is kept), a key repeated in the file is compared once, the rows gone from
 * the export are deleted over more than one page in the id map's order, and `--plan`
 * leaves this journal's records out of its conflicts.
 */
import { expect, layer } from "@effect/vitest"
import Database from "better-sqlite3"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { RestClient } from "../../src/client/rest-client.ts"
import { importCsv } from "../../src/connectors/csv/import.ts"
import type { ImportOptions } from "../../src/connectors/csv/options.ts"
import { Journal } from "../../src/store/journal.ts"
import { OP_KINDS } from "../../src/sync/plan.ts"
import { Emulator, emulatorLayer, tempDir, withOwnTmpdir } from "../support/effect.ts"
import { testClient } from "../sync/replay-helpers.ts"
import { planInto } from "./csv-plan-helpers.ts"

/** The delta pass's scratch files in the temporary directory, by name. */
const scratchFiles = () =>
  fs.readdirSync(os.tmpdir()).filter((f) => /^worksync-import-(mapped|seen|targets|titles)-/.test(f)).map((f) => f.replace(/-[^-]+$/, "")).sort()

/** Rows of the first export; the newer one keeps the first KEPT of them (every tenth renamed). */
const ROWS = 1_200
const KEPT = 500

const header = "key,title,list\n"
const line = (key: string, title: string) => `${key},${title},To do\n`

const importRun = (journalFile: string, options: Pick<ImportOptions, "workspaceId" | "csv">) =>
  Effect.flatMap(Emulator, (handle) =>
    Effect.gen(function*() {
      return yield* importCsv(yield* RestClient, yield* Journal, { mapping: { preset: "generic" }, ...options })
    }).pipe(Effect.provide(Layer.merge(Journal.layer(journalFile), testClient(handle)))))

layer(emulatorLayer({ seed: "empty" }), { timeout: 60_000, excludeTestServices: true })("a delta pass's rows, kept out of the heap", (it) => {
  it.effect("the rows of earlier passes and of the export are kept in scratch files while planning, gone after; the plan is the same", () =>
    Effect.gen(function*() {
      const handle = yield* Emulator
      const ws = handle.admin.createWorkspace({ name: "delta-scratch" }).id
      const dir = yield* tempDir("ws-delta-scratch-")
      const csv = path.join(dir, "export.csv")
      const journal = path.join(dir, "j.sqlite")
      const key = (i: number) => `T-${i + 1}`
      fs.writeFileSync(csv, header + Array.from({ length: ROWS }, (_, i) => line(key(i), `Task ${i + 1}`)).join(""))
      const first = yield* importRun(journal, { workspaceId: ws, csv: { file: csv } })
      expect(first).toMatchObject({ rows: ROWS, created: ROWS, failed: 0 })

      // A record of the workspace no pass of this journal made.
      const other = path.join(dir, "other.csv")
      fs.writeFileSync(other, header + line("X-1", "Elsewhere"))
      yield* importRun(path.join(dir, "other.sqlite"), { workspaceId: ws, csv: { file: other } })
      // T-10's title edited on the target since the first pass.
      const recordId = (handle.ctx.db.prepare("SELECT id FROM records WHERE workspace_id = ? AND title = ?").get(ws, "Task 10") as { id: string }).id
      yield* Effect.flatMap(RestClient, (c) => c.updateRecord({ workspaceId: ws, recordId, title: "Task 10 (edited on the target)" })).pipe(
        Effect.provide(testClient(handle))
      )

      // The newer export: the first KEPT rows, every tenth renamed, T-3 twice (the repeat is
      // rejected), two new rows titled as a record of this journal and as the other one.
      const newer = Array.from({ length: KEPT }, (_, i) => line(key(i), i % 10 === 9 ? `Task ${i + 1} (renamed)` : `Task ${i + 1}`))
      newer.splice(200, 0, line("T-3", "Task 3 (repeated)"))
      newer.push(line("N-1", "Task 1"), line("N-2", "Elsewhere"))
      fs.writeFileSync(csv, header + newer.join(""))
      let during: Array<string> = []
      const second = yield* withOwnTmpdir("ws-delta-scratch-tmp-", Effect.gen(function*() {
        expect(scratchFiles()).toEqual([])
        const result = yield* planInto(handle, journal, {
          workspaceId: ws,
          csv: { file: csv },
          mapping: { preset: "generic" },
          batchSize: 100,
          deleteMissing: true,
          planReport: true,
          onRowsRead: () => Effect.sync(() => void (during = scratchFiles()))
        })
        expect(scratchFiles()).toEqual([])
        return result
      }))
      expect(during).toEqual(["worksync-import-mapped", "worksync-import-seen", "worksync-import-targets", "worksync-import-titles"])

      const renamed = KEPT / 10
      expect(second).toMatchObject({ rows: KEPT + 3, rejected: 1, pass: 2, deleted: ROWS - KEPT, missing: 0 })
      // T-10's record was found: its title, edited there, is kept; the other renames are updates.
      expect(second.updated).toBe(renamed - 1)
      expect(second.kept).toEqual([{ what: "title", item: "T-10", why: expect.stringContaining(`record ${recordId}`) }])
      // Of the records titled as a new row, only the other journal's is a conflict.
      expect(second.planReport?.conflicts.filter((c) => c.what === "record")).toEqual([
        { what: "record", item: "Elsewhere", why: expect.stringContaining("already in list") }
      ])

      const db = new Database(journal, { readonly: true })
      try {
        const keys = (kind: string) =>
          (db.prepare("SELECT key FROM ops WHERE kind = ? AND key LIKE ? ORDER BY seq").all(kind, "%/%") as Array<{ key: string }>).map((r) => r.key)
        // The gone rows' deletes, over two pages, in the id map's order (by key).
        const gone = Array.from({ length: ROWS - KEPT }, (_, i) => `k:${key(KEPT + i)}`).sort()
        expect(keys(OP_KINDS.recordDelete)).toEqual(gone.map((k) => `${k}/delete`))
        expect(keys(OP_KINDS.recordUpdate)).toEqual(
          Array.from({ length: renamed }, (_, n) => `k:${key(n * 10 + 9)}/update/2`).filter((k) => k !== "k:T-10/update/2")
        )
      } finally {
        db.close()
      }
    }), 180_000)
})
