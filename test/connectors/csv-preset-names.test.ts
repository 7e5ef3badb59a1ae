/**
 * A tool's export plans its rows' names out of the heap: while a Jira export is planned,
 * every row's names (id, issue key, title), its sub-tasks and the rows whose descriptions
 * name others are kept in a scratch file (store/scratch-row-names.ts), which is gone once
 * planning ends, finished or failed. What the end of the file plans from it, a page at a
 * time, is every link: sub-tasks before their parents and over more than one page,
 * references forward and back, a parent and a reference outside the export.
 */
import { expect, layer } from "@effect/vitest"
import Database from "better-sqlite3"
import * as Effect from "effect/Effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import type { ImportOptions } from "../../src/connectors/csv/options.ts"
import { EXTRA_KINDS } from "../../src/sync/plan-extras.ts"
import { REFERENCES_KIND } from "../../src/sync/references.ts"
import { Emulator, emulatorLayer, tempDir, withOwnTmpdir } from "../support/effect.ts"
import { planInto } from "./csv-plan-helpers.ts"

const scratchFiles = () => fs.readdirSync(os.tmpdir()).filter((f) => f.startsWith("worksync-import-names-"))

/** Rows of the export: 600 sub-tasks first (two per parent, parents later in the file), then 600 rows. */
const ROWS = 1_200
const SUBTASKS = 600
const PARENTS = 300
const idOf = (i: number) => String(5_000 + i)
const keyOf = (i: number) => `PRJ-${i + 1}`

/** Every row's description names another row (forward, and back at the end); the last names one outside. */
const jiraExport = (): string => {
  const lines = ["Summary,Issue key,Issue id,Issue Type,Status,Parent id,Description"]
  for (let i = 0; i < ROWS; i++) {
    const parent = i < SUBTASKS ? idOf(SUBTASKS + (i % PARENTS)) : i === ROWS - 1 ? "4999" : ""
    const named = i === ROWS - 1 ? "ZZZ-9" : keyOf((i + 7) % ROWS)
    lines.push(`Issue ${i},${keyOf(i)},${idOf(i)},${i < SUBTASKS ? "Sub-task" : "Task"},To Do,${parent},"See ${named} first"`)
  }
  return lines.join("\n") + "\n"
}

layer(emulatorLayer({ seed: "empty" }), { timeout: 60_000, excludeTestServices: true })("a tool's rows' names, kept out of the heap", (it) => {
  it.effect("a Jira export's sub-tasks and references are planned from a scratch file, which is gone after", () =>
    Effect.gen(function*() {
      const handle = yield* Emulator
      const ws = handle.admin.createWorkspace({ name: "names" }).id
      const dir = yield* tempDir("ws-preset-names-")
      const csv = path.join(dir, "jira.csv")
      fs.writeFileSync(csv, jiraExport())
      const journal = path.join(dir, "j.sqlite")
      let during: Array<string> = []
      const options: ImportOptions = {
        workspaceId: ws,
        csv: { file: csv },
        mapping: { preset: "jira" },
        batchSize: 100,
        onRowsRead: () => Effect.sync(() => void (during = scratchFiles()))
      }
      const result = yield* withOwnTmpdir("ws-preset-names-tmp-", Effect.gen(function*() {
        const before = scratchFiles()
        const result = yield* planInto(handle, journal, options)
        // The names were on disk while the rows were read, and the file is gone now.
        expect(before).toEqual([])
        expect(during).toHaveLength(1)
        expect(scratchFiles()).toEqual([])
        return result
      }))

      expect(result.rows).toBe(ROWS)
      expect(result.plan?.ops[EXTRA_KINDS.checklistCreate]).toBe(PARENTS)
      expect(result.plan?.ops[EXTRA_KINDS.checklistItemCreate]).toBe(SUBTASKS)
      expect(result.plan?.ops[REFERENCES_KIND]).toBe(ROWS - 1)
      expect(result.references).toEqual({ rewritten: ROWS - 1, outside: 1 })
      expect(result.problems).toEqual([`line ${ROWS + 1}: parent "4999" is not in the file; imported as a record of its own`])

      const db = new Database(journal, { readonly: true })
      try {
        const payloads = (kind: string) =>
          (db.prepare("SELECT key, payload, depends_on FROM ops WHERE kind = ? ORDER BY seq").all(kind) as Array<{ key: string; payload: string; depends_on: string }>)
            .map((r) => ({ ...r, payload: JSON.parse(r.payload) as { recordRef: string; title?: string; refs?: Array<{ token: string; ref: string }> } }))
        // Each sub-task is an item of its parent's one "Sub-tasks" checklist, in the file's order.
        const items = payloads(EXTRA_KINDS.checklistItemCreate)
        expect(items.map((r) => [r.payload.recordRef, r.payload.title])).toEqual(
          Array.from({ length: SUBTASKS }, (_, i) => [`k:${idOf(SUBTASKS + (i % PARENTS))}`, `Issue ${i}`])
        )
        expect(items.every((r) => r.depends_on === `${r.payload.recordRef}/subtasks`)).toBe(true)
        // Each reference names the row the text names, by its key.
        const refs = payloads(REFERENCES_KIND)
        expect(refs.map((r) => [r.payload.recordRef, r.payload.refs])).toEqual(
          Array.from({ length: ROWS - 1 }, (_, i) => [`k:${idOf(i)}`, [{ token: keyOf((i + 7) % ROWS), ref: `k:${idOf((i + 7) % ROWS)}` }]])
        )
      } finally {
        db.close()
      }
    }), 120_000)

  it.effect("a plan that fails mid-file leaves no scratch file behind", () =>
    Effect.gen(function*() {
      const handle = yield* Emulator
      const ws = handle.admin.createWorkspace({ name: "names-failing" }).id
      const dir = yield* tempDir("ws-preset-names-")
      const csv = path.join(dir, "jira.csv")
      fs.writeFileSync(csv, jiraExport())
      let batches = 0
      let during: Array<string> = []
      const error = yield* withOwnTmpdir("ws-preset-names-tmp-", Effect.flip(planInto(handle, path.join(dir, "j.sqlite"), {
        workspaceId: ws,
        csv: { file: csv },
        mapping: { preset: "jira" },
        batchSize: 100,
        onRowsRead: () => {
          during = scratchFiles()
          return ++batches === 3 ? Effect.die(new Error("reading stopped")) : Effect.void
        }
      })).pipe(Effect.tap(() => Effect.sync(() => expect(scratchFiles()).toEqual([])))))
      expect(error._tag).toBe("ImportFailed")
      expect(batches).toBe(3)
      expect(during).toHaveLength(1)
    }), 120_000)
})
