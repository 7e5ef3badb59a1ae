/**
 * Delta passes of import-csv against the emulator: a newer export imported with the same
 * journal carries what changed and nothing else (writes counted on the server), target
 * edits are kept and reported (or overwritten when asked), rows gone from the export are
 * reported (or deleted when asked), and a plan says what the following run then does.
 */
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as fs from "node:fs"
import * as path from "node:path"
import { GraphqlClient } from "../../../src/client/graphql-client.ts"
import { RestClient } from "../../../src/client/rest-client.ts"
import { importCsv } from "../../../src/connectors/csv/import.ts"
import type { ImportOptions } from "../../../src/connectors/csv/options.ts"
import type { EmulatorHandle } from "../../../src/emulator/index.ts"
import { Journal } from "../../../src/store/journal.ts"
import { Emulator, emulatorLayer, tempDir } from "../../support/effect.ts"
import { testClient } from "../../sync/replay-helpers.ts"

interface Row {
  readonly key: string
  readonly title: string
  readonly description: string
  readonly list: string
  readonly duedAt: string
  readonly done: boolean
}

const header = "key,title,description,list,duedAt,done"
const cell = (v: string) => (/[",\n]/.test(v) ? `"${v.replace(/"/g, "\"\"")}"` : v)
const write = (file: string, rows: ReadonlyArray<Row>) =>
  fs.writeFileSync(file, [header, ...rows.map((r) => [r.key, r.title, r.description, r.list, r.duedAt, r.done ? "yes" : "no"].map(cell).join(","))].join("\n") + "\n")

const firstExport = (n: number): Array<Row> =>
  Array.from({ length: n }, (_, i) => ({
    key: `T-${i + 1}`,
    title: `Task ${i + 1}`,
    description: `About task ${i + 1}`,
    list: i % 3 === 0 ? "Doing" : "To do",
    duedAt: `2025-03-${String((i % 28) + 1).padStart(2, "0")}`,
    done: i % 5 === 0
  }))

/**
 * Every tenth row changed (one field or two, in turn; one in five only moved to the other
 * list), one new row for twenty, every fiftieth row gone.
 */
const newerExport = (rows: ReadonlyArray<Row>) => {
  const changed: Array<string> = []
  const moved: Array<string> = []
  const gone: Array<string> = []
  const next: Array<Row> = []
  rows.forEach((r, i) => {
    if (i % 50 === 7) {
      gone.push(r.key)
      return
    }
    if (i % 10 === 3) {
      changed.push(r.key)
      const kind = (i / 10 | 0) % 5
      if (kind === 4) {
        // A list change only: a move, no update-record.
        moved.push(r.key)
        next.push({ ...r, list: r.list === "Doing" ? "To do" : "Doing" })
        return
      }
      next.push(
        kind === 0
          ? { ...r, title: `${r.title} (renamed)` }
          : kind === 1
          ? { ...r, description: `${r.description}, revised`, done: !r.done }
          : kind === 2
          ? { ...r, duedAt: "2025-06-30" }
          : { ...r, done: !r.done }
      )
      return
    }
    next.push(r)
  })
  const added = Array.from({ length: rows.length / 20 }, (_, i): Row => ({
    key: `N-${i + 1}`,
    title: `New ${i + 1}`,
    description: "",
    list: "To do",
    duedAt: "",
    done: false
  }))
  return { rows: [...next, ...added], changed, moved, gone, added }
}

const importRun = (journalFile: string, options: Partial<ImportOptions> & Pick<ImportOptions, "workspaceId" | "csv">) =>
  Effect.flatMap(Emulator, (handle) =>
    Effect.gen(function*() {
      // Comments of a tool's export are written through GraphQL.
      return yield* importCsv(yield* RestClient, yield* Journal, { mapping: { preset: "generic" }, graphql: yield* GraphqlClient, ...options })
    }).pipe(Effect.provide(Layer.merge(Journal.layer(journalFile), testClient(handle)))))

const planRun = (journalFile: string, options: Partial<ImportOptions> & Pick<ImportOptions, "workspaceId" | "csv">) =>
  Effect.flatMap(Emulator, (handle) =>
    Effect.gen(function*() {
      return yield* importCsv(yield* RestClient, { dryRunJournalFile: journalFile }, {
        mapping: { preset: "generic" },
        ...options,
        dryRun: true,
        planReport: true
      })
    }).pipe(Effect.provide(testClient(handle))))

/** The plan's conflict for a list the alt reading's create-list does not make (none in the reference). */
const listConflicts = (handle: EmulatorHandle) =>
  handle.variant === "alt" ? [{ what: "list", item: "Doing", why: expect.stringContaining("could not create it") }] : []

const WRITES = ["create-record", "update-record", "move-record", "delete-record", "create-list"] as const
const writes = (handle: EmulatorHandle) => Object.fromEntries(WRITES.map((w) => [w, handle.stats().byRoute[w] ?? 0]))
const delta = (before: Record<string, number>, after: Record<string, number>) =>
  Object.fromEntries(WRITES.map((w) => [w, after[w]! - before[w]!]))

interface Live {
  readonly id: string
  readonly title: string
  readonly text: string
  readonly list: string
  readonly duedAt: string | null
  readonly done: boolean
}

/** The workspace's live records, read from the emulator's own store. */
const live = (handle: EmulatorHandle, ws: string): Array<Live> =>
  (handle.ctx.db
    .prepare(
      `SELECT r.id, r.title, r.text, l.title AS list, r.dued_at AS duedAt, r.done FROM records r JOIN lists l ON l.id = r.list_id
       WHERE r.workspace_id = ? AND r.deleted_at IS NULL ORDER BY r.title`
    )
    .all(ws) as Array<Omit<Live, "done"> & { done: number }>).map((r) => ({ ...r, done: r.done === 1 }))

/** The workspace equals the export: one record per row, with its fields (lists as the service could make them). */
const expectEqual = (handle: EmulatorHandle, ws: string, rows: ReadonlyArray<Row>) => {
  const got = live(handle, ws)
  expect(got.map((r) => r.title)).toEqual(rows.map((r) => r.title).sort())
  const byTitle = new Map(got.map((r) => [r.title, r]))
  for (const r of rows) {
    const rec = byTitle.get(r.title)!
    expect({ title: rec.title, text: rec.text, done: rec.done, due: rec.duedAt?.slice(0, 10) ?? "", list: rec.list }).toEqual({
      title: r.title,
      text: r.description,
      done: r.done,
      due: r.duedAt,
      // The alt reading's create-list makes no list: every record is in the first one.
      list: handle.variant === "alt" ? "To do" : r.list
    })
  }
}

// The layer's tests run on the live clock: planning and replay talk to the emulator over HTTP.
layer(emulatorLayer({ seed: "empty" }), { timeout: 60_000, excludeTestServices: true })("import-csv delta passes", (it) => {
  it.effect("a newer export (10% changed, 5% new, 2% gone) ends equal to the export with only those writes; --delete-missing deletes the gone rows; the plan says what the run does", () =>
    Effect.gen(function*() {
      const handle = yield* Emulator
      const ws = handle.admin.createWorkspace({ name: "delta" }).id
      const dir = yield* tempDir("ws-import-delta-")
      const csv = path.join(dir, "export.csv")
      const journal = path.join(dir, "journal.sqlite")
      const rows = firstExport(200)
      write(csv, rows)
      const first = yield* importRun(journal, { workspaceId: ws, csv: { file: csv } })
      expect(first).toMatchObject({ rows: 200, created: 200, updated: 0, pass: 1, failed: 0 })
      expectEqual(handle, ws, rows)

      const newer = newerExport(rows)
      write(csv, newer.rows)
      // The plan reads the journal and the target and writes nothing.
      const journalBytes = fs.readFileSync(journal)
      const beforePlan = writes(handle)
      const plan = yield* planRun(journal, { workspaceId: ws, csv: { file: csv } })
      expect(delta(beforePlan, writes(handle))).toEqual(Object.fromEntries(WRITES.map((w) => [w, 0])))
      expect(fs.readFileSync(journal).equals(journalBytes)).toBe(true)
      // Moves between the two lists are changes only where the service made the lists.
      const moved = handle.variant === "alt" ? 0 : newer.moved.length
      const updated = newer.changed.length - newer.moved.length + moved
      expect(plan.planReport).toMatchObject({
        create: newer.added.length,
        update: updated,
        unchanged: rows.length - newer.gone.length - updated,
        delete: 0,
        lists: [],
        tags: [],
        invite: [],
        unresolved: [],
        conflicts: listConflicts(handle)
      })
      expect(plan.planReport!.notCarried).toEqual([
        { what: "rows gone from the export", count: newer.gone.length, why: expect.stringContaining("--delete-missing") }
      ])

      // The delta pass: only the changes are written.
      const before = writes(handle)
      const second = yield* importRun(journal, { workspaceId: ws, csv: { file: csv } })
      expect(second).toMatchObject({
        rows: newer.rows.length,
        created: newer.added.length,
        updated: plan.planReport!.update,
        pass: 2,
        missing: newer.gone.length,
        deleted: 0,
        kept: [],
        failed: 0
      })
      expect(delta(before, writes(handle))).toEqual({
        "create-record": newer.added.length,
        "update-record": newer.changed.length - newer.moved.length,
        "move-record": moved,
        "delete-record": 0,
        "create-list": 0
      })
      // The gone rows are still there; everything else is as the export says.
      const gone = new Set(newer.gone)
      expectEqual(handle, ws, [...newer.rows, ...rows.filter((r) => gone.has(r.key))])

      // Again with --delete-missing: the gone rows' records are deleted, nothing else is sent.
      const planDelete = yield* planRun(journal, { workspaceId: ws, csv: { file: csv }, deleteMissing: true })
      expect(planDelete.planReport).toMatchObject({ create: 0, update: 0, delete: newer.gone.length, unchanged: newer.rows.length })
      const beforeDelete = writes(handle)
      const third = yield* importRun(journal, { workspaceId: ws, csv: { file: csv }, deleteMissing: true })
      expect(third).toMatchObject({ created: 0, updated: 0, deleted: newer.gone.length, missing: 0, pass: 3 })
      expect(delta(beforeDelete, writes(handle))).toEqual({ ...Object.fromEntries(WRITES.map((w) => [w, 0])), "delete-record": newer.gone.length })
      expectEqual(handle, ws, newer.rows)

      // A rerun of the same export sends nothing.
      const beforeRerun = writes(handle)
      const fourth = yield* importRun(journal, { workspaceId: ws, csv: { file: csv }, deleteMissing: true })
      expect(fourth).toMatchObject({ created: 0, updated: 0, deleted: 0, missing: 0, pass: 4 })
      expect(delta(beforeRerun, writes(handle))).toEqual(Object.fromEntries(WRITES.map((w) => [w, 0])))
    }), 120_000)

  it.effect("a field edited on the target since the last pass is kept and reported; --overwrite-target-edits replaces it", () =>
    Effect.gen(function*() {
      const handle = yield* Emulator
      const ws = handle.admin.createWorkspace({ name: "delta-edits" }).id
      const dir = yield* tempDir("ws-import-delta-")
      const csv = path.join(dir, "export.csv")
      const journal = path.join(dir, "journal.sqlite")
      const rows = firstExport(10)
      write(csv, rows)
      yield* importRun(journal, { workspaceId: ws, csv: { file: csv } })
      const recordOf = (title: string) => live(handle, ws).find((r) => r.title === title)!
      // Edited on the target: T-2's title, T-3's due date.
      const edit = (title: string, fields: { title?: string; duedAt?: string }) =>
        Effect.flatMap(RestClient, (c) => c.updateRecord({ workspaceId: ws, recordId: recordOf(title).id, ...fields })).pipe(
          Effect.provide(testClient(handle))
        )
      yield* edit("Task 2", { title: "Task 2 (edited on the target)" })
      yield* edit("Task 3", { duedAt: "2025-12-24" })
      // The newer export changes both fields, and T-3's description too.
      const newer = rows.map((r) =>
        r.key === "T-2" ? { ...r, title: "Task 2 (renamed in the export)" } : r.key === "T-3" ? { ...r, duedAt: "2025-07-01", description: "revised" } : r
      )
      write(csv, newer)
      const plan = yield* planRun(journal, { workspaceId: ws, csv: { file: csv } })
      expect(plan.planReport).toMatchObject({ create: 0, update: 1, unchanged: 9, delete: 0 })
      expect(plan.planReport!.conflicts).toEqual([
        ...listConflicts(handle),
        { what: "title", item: "T-2", why: expect.stringContaining("edited on the target") },
        { what: "duedAt", item: "T-3", why: expect.stringContaining("edited on the target") }
      ])
      const kept = yield* importRun(journal, { workspaceId: ws, csv: { file: csv } })
      expect(kept).toMatchObject({ updated: 1, pass: 2 })
      expect(kept.kept.map((k) => [k.what, k.item])).toEqual([["title", "T-2"], ["duedAt", "T-3"]])
      // The target's edits stay; the field not edited there is carried.
      expect(recordOf("Task 2 (edited on the target)")).toBeDefined()
      expect(recordOf("Task 3")).toMatchObject({ text: "revised" })
      expect(recordOf("Task 3").duedAt?.slice(0, 10)).toBe("2025-12-24")

      // Reported again on the next pass (still different), and replaced when asked.
      const again = yield* planRun(journal, { workspaceId: ws, csv: { file: csv } })
      expect(again.planReport!.conflicts.filter((c) => c.what !== "list").map((c) => [c.what, c.item])).toEqual([["title", "T-2"], ["duedAt", "T-3"]])
      const before = writes(handle)
      const overwritten = yield* importRun(journal, { workspaceId: ws, csv: { file: csv }, overwriteTargetEdits: true })
      expect(overwritten).toMatchObject({ updated: 2, kept: [] })
      expect(delta(before, writes(handle))["update-record"]).toBe(2)
      expect(recordOf("Task 2 (renamed in the export)")).toBeDefined()
      expect(recordOf("Task 3").duedAt?.slice(0, 10)).toBe("2025-07-01")
    }), 60_000)

  it.effect("a newer Jira export adds the comments new on an issue already imported, and sends nothing else", () =>
    Effect.gen(function*() {
      const handle = yield* Emulator
      const ws = handle.admin.createWorkspace({ name: "delta-comments" }).id
      const dir = yield* tempDir("ws-import-delta-")
      const csv = path.join(dir, "jira.csv")
      const journal = path.join(dir, "journal.sqlite")
      const jira = { preset: "jira" as const }
      fs.writeFileSync(
        csv,
        "Summary,Issue key,Issue id,Status,Comment\n" +
          "Alpha,OPS-1,1001,To Do,05/Nov/25 5:16 PM;Ada Lovelace;First comment\n" +
          "Beta,OPS-2,1002,To Do,\n"
      )
      const first = yield* importRun(journal, { workspaceId: ws, csv: { file: csv }, mapping: jira })
      expect(first).toMatchObject({ created: 2, comments: 1, failed: 0, pass: 1 })
      // Later: a second comment on OPS-1 (Jira repeats the Comment column).
      fs.writeFileSync(
        csv,
        "Summary,Issue key,Issue id,Status,Comment,Comment\n" +
          "Alpha,OPS-1,1001,To Do,05/Nov/25 5:16 PM;Ada Lovelace;First comment,06/Nov/25 9:00 AM;Grace Hopper;Second comment\n" +
          "Beta,OPS-2,1002,To Do,,\n"
      )
      const before = writes(handle)
      const second = yield* importRun(journal, { workspaceId: ws, csv: { file: csv }, mapping: jira })
      expect(second).toMatchObject({ created: 0, updated: 0, comments: 1, failed: 0, pass: 2 })
      expect(delta(before, writes(handle))).toEqual(Object.fromEntries(WRITES.map((w) => [w, 0])))
      const comments = handle.ctx.db
        .prepare("SELECT a.text FROM activity a JOIN records r ON r.id = a.record_id WHERE r.workspace_id = ? AND r.title = 'Alpha' AND a.kind = 'COMMENT' AND a.deleted_at IS NULL ORDER BY a.created_at")
        .all(ws) as Array<{ text: string }>
      expect(comments.map((c) => c.text.split("\n").pop())).toEqual(["First comment", "Second comment"])
    }), 60_000)
})
