import { parse } from "csv-parse/sync"
import * as Effect from "effect/Effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { ACTIVITY_COLUMNS, type Column, FILE_COLUMNS, RECORD_COLUMNS, toCells, WORKSPACE_COLUMNS } from "../../src/connectors/export-columns.ts"
import { exportRun } from "../../src/connectors/export.ts"
import { openSnapshot, type SnapshotStoreService } from "../../src/store/snapshot.ts"
import { activityOf, detailOf, fileOf, summaryOf } from "../store/snapshot-fixtures.ts"
import { tempDir } from "../support/effect.ts"
import { sqliteOf } from "../support/sqlite-store.ts"

const withStore = <A>(file: string, f: (store: SnapshotStoreService) => Effect.Effect<A, unknown>) =>
  Effect.scoped(Effect.flatMap(openSnapshot(file), f))

const workspace = { id: "w1", slug: "main", name: "Main", organizationId: "o1", createdAt: "2026-01-01T00:00:00.000Z", updatedAt: "2026-01-01T00:00:00.000Z" }

const fill = (store: SnapshotStoreService) =>
  Effect.gen(function*() {
    const run = yield* store.beginRun("*", false)
    yield* store.putWorkspaces(run, [workspace])
    const records = ["c", "a", "b"].map((id, i) => {
      const detail = detailOf(id, i, id === "b" ? { title: "=HYPERLINK(\"http://x\")", color: "@red", position: -3 } : {})
      return { kind: "version" as const, workspaceId: "w1", summary: summaryOf(detail), detail, activity: activityOf(id, id === "a" ? 30 : 2) }
    })
    yield* store.putRecords(run, records)
    yield* store.putFiles(run, "w1", [fileOf("f2"), fileOf("f1")])
    yield* store.completeRun(run, {})
    return run
  })

describe("export", () => {
  it.effect("ndjson lines parse back to the stored rows, in id order", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir("ws-export-")
      const out = path.join(dir, "out")
      const { result, stored } = yield* withStore(path.join(dir, "s.sqlite"), (store) =>
        Effect.gen(function*() {
          yield* fill(store)
          const result = yield* exportRun(store, { outDir: out, format: "ndjson" })
          const stored = sqliteOf(store).prepare("SELECT detail FROM records ORDER BY id").pluck().all() as Array<string>
          return { result, stored }
        })
      )
      expect(result.files.map((f) => [f.name, f.rows])).toEqual([["records", 3], ["activity", 34], ["files", 2], ["workspaces", 1]])
      const lines = (name: string) => fs.readFileSync(path.join(out, `${name}.ndjson`), "utf8").trimEnd().split("\n").map((l) => JSON.parse(l))
      const records = lines("records")
      expect(records).toEqual(stored.map((s) => JSON.parse(s)))
      expect(records.map((r) => r.id)).toEqual(["a", "b", "c"])
      // A record line is the get-record detail plus workspaceId.
      expect(records[0]).toEqual({ ...detailOf("a", 1), workspaceId: "w1" })
      const activity = lines("activity")
      expect(activity.filter((a) => a.recordId === "a")).toHaveLength(30)
      expect(activity[0]).toEqual({ ...activityOf("a", 1)[0], recordId: "a" })
      expect(lines("files").map((f) => [f.id, f.workspaceId])).toEqual([["f1", "w1"], ["f2", "w1"]])
      expect(lines("workspaces")).toEqual([workspace])
      expect(fs.readdirSync(out).sort()).toEqual(["activity.ndjson", "files.ndjson", "records.ndjson", "workspaces.ndjson"])
    }))

  it.effect("csv parses back with csv-parse: one row per record, flattened columns, assignees and tags joined", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir("ws-export-")
      const out = path.join(dir, "out")
      yield* withStore(path.join(dir, "s.sqlite"), (store) =>
        Effect.gen(function*() {
          yield* fill(store)
          yield* exportRun(store, { outDir: out, format: "csv" })
        })
      )
      const rows = parse(fs.readFileSync(path.join(out, "records.csv")), { columns: true }) as Array<Record<string, string>>
      expect(rows).toHaveLength(3)
      expect(Object.keys(rows[0]!)).toEqual(RECORD_COLUMNS.map((c) => c.name))
      const a = rows[0]!
      const d = detailOf("a", 1)
      expect(a).toMatchObject({
        id: "a", workspaceId: "w1", title: d.title, done: "true", archived: "false", startedAt: "", listId: "l1",
        listTitle: "Inbox", assignees: "ada@example.com", tags: "red; blue", tagIds: "t1; t2", commentCount: "0"
      })
      expect(JSON.parse(a.customFields!)).toEqual([])
      // Without the guard, formula-like cells are written as they are.
      expect(rows[1]!.title).toBe("=HYPERLINK(\"http://x\")")
      expect(rows[1]!.position).toBe("-3")
      const activity = parse(fs.readFileSync(path.join(out, "activity.csv")), { columns: true }) as Array<Record<string, string>>
      expect(activity).toHaveLength(34)
      const files = parse(fs.readFileSync(path.join(out, "files.csv")), { columns: true }) as Array<Record<string, string>>
      expect(files.map((f) => [f.id, f.userEmail, f.size])).toEqual([["f1", "ada@example.com", "10"], ["f2", "ada@example.com", "10"]])
    }))

  it.effect("guards spreadsheet formula injection in csv cells when asked (strings only, numbers untouched)", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir("ws-export-")
      const out = path.join(dir, "out")
      yield* withStore(path.join(dir, "s.sqlite"), (store) =>
        Effect.gen(function*() {
          yield* fill(store)
          yield* exportRun(store, { outDir: out, format: "csv", guardFormulas: true })
        })
      )
      const rows = parse(fs.readFileSync(path.join(out, "records.csv")), { columns: true }) as Array<Record<string, string>>
      expect(rows[1]!.title).toBe("'=HYPERLINK(\"http://x\")")
      expect(rows[1]!.color).toBe("'@red")
      expect(rows[1]!.position).toBe("-3")
      expect(toCells(RECORD_COLUMNS.slice(3, 4), { title: "+1" }, true)).toEqual(["'+1"])
      expect(toCells(RECORD_COLUMNS.slice(3, 4), { title: "-1" }, true)).toEqual(["'-1"])
    }))

  it.effect("csv cells that need quoting (quotes, commas, line breaks) are quoted as RFC 4180 says; unicode and empty cells are written as they are", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir("ws-export-")
      // Each case in a record of its own; the rows of every file are compared with an
      // independent formatting of the stored objects (read back from the ndjson export).
      const cases: ReadonlyArray<Record<string, unknown>> = [
        { title: "Plan, then act", text: "line one\nline two" },
        { title: "\"Quoted\" at the start", html: "<p>windows\r\nbreak</p>" },
        { title: "\"", text: "lone\rcarriage return", cover: "" },
        { title: "Ünïcødé — 日本語 🎉", text: "  padded  ", color: null, timezone: "" },
        { title: "=SUM(\"a\",1)", tags: [{ id: "t,1", title: "a,b" }, { id: "t2", title: "say \"hi\"" }] },
        { title: "", text: "", customFields: [{ id: "cf1", value: "x,\"y\"\n" }], checklists: [{ title: "é,\"" }] }
      ]
      const file = path.join(dir, "s.sqlite")
      yield* withStore(file, (store) =>
        Effect.gen(function*() {
          const run = yield* store.beginRun("*", false)
          const named = { ...workspace, name: "Main, \"the\" one" }
          const attached = { ...fileOf("f1"), name: "a,b\n\"c\".txt" }
          yield* store.putWorkspaces(run, [named])
          yield* store.putRecords(run, cases.map((extra, i) => {
            const detail = detailOf(`r${i}`, 0, extra)
            return { kind: "version" as const, workspaceId: "w1", summary: summaryOf(detail), detail, activity: activityOf(`r${i}`, 2) }
          }))
          yield* store.putFiles(run, "w1", [attached])
          yield* store.completeRun(run, {})
          for (const guard of [false, true]) {
            for (const format of ["ndjson", "csv"] as const) {
              yield* exportRun(store, { outDir: path.join(dir, `${guard}`), format, guardFormulas: guard })
            }
          }
        })
      )
      // RFC 4180, character by character: a field with a quote, a comma, CR or LF is
      // enclosed in quotes and its quotes doubled; records end with LF.
      const field = (text: string): string => {
        let special = false
        let doubled = ""
        for (const ch of text) {
          if (ch === "\"" || ch === "," || ch === "\r" || ch === "\n") special = true
          doubled += ch === "\"" ? "\"\"" : ch
        }
        return special ? `"${doubled}"` : text
      }
      const record = (cells: ReadonlyArray<string>) => `${cells.map(field).join(",")}\n`
      const files: ReadonlyArray<readonly [string, ReadonlyArray<Column>]> = [
        ["records", RECORD_COLUMNS],
        ["activity", ACTIVITY_COLUMNS],
        ["files", FILE_COLUMNS],
        ["workspaces", WORKSPACE_COLUMNS]
      ]
      for (const guard of [false, true]) {
        const out = path.join(dir, `${guard}`)
        for (const [name, columns] of files) {
          const objects = fs.readFileSync(path.join(out, `${name}.ndjson`), "utf8").trimEnd().split("\n").map((l) => JSON.parse(l))
          const expected = record(columns.map((c) => c.name)) + objects.map((o) => record(toCells(columns, o, guard))).join("")
          const written = fs.readFileSync(path.join(out, `${name}.csv`), "utf8")
          expect(written).toBe(expected)
          // And csv-parse reads the cells back.
          expect(parse(written, { relax_quotes: false })).toEqual([columns.map((c) => c.name), ...objects.map((o) => toCells(columns, o, guard))])
        }
      }
      const rows = parse(fs.readFileSync(path.join(dir, "false", "records.csv")), { columns: true }) as Array<Record<string, string>>
      expect(rows.map((r) => r.title)).toEqual(cases.map((c) => c.title))
      expect(rows[3]!.text).toBe("  padded  ")
      expect(rows[4]!.tags).toBe("a,b; say \"hi\"")
    }))

  it.effect("is deterministic: two exports of one run are byte-identical", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir("ws-export-")
      yield* withStore(path.join(dir, "s.sqlite"), (store) =>
        Effect.gen(function*() {
          yield* fill(store)
          yield* exportRun(store, { outDir: path.join(dir, "x"), format: "csv" })
          yield* exportRun(store, { outDir: path.join(dir, "y"), format: "csv" })
        })
      )
      for (const name of ["records", "activity", "files", "workspaces"]) {
        expect(fs.readFileSync(path.join(dir, "x", `${name}.csv`))).toEqual(fs.readFileSync(path.join(dir, "y", `${name}.csv`)))
      }
    }))

  it.effect("an export that fails in its last file leaves the files of an earlier export as they were, and no partial file", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir("ws-export-")
      const out = path.join(dir, "out")
      const earlier = ["records", "activity", "files", "workspaces"].map((name) => [`${name}.csv`, `the earlier export's ${name}\n`] as const)
      fs.mkdirSync(out)
      for (const [file, text] of earlier) fs.writeFileSync(path.join(out, file), text)
      const error = yield* withStore(path.join(dir, "s.sqlite"), (store) =>
        Effect.gen(function*() {
          yield* fill(store)
          // The workspaces file is written last: records, activity and files are complete by then.
          sqliteOf(store).prepare("UPDATE workspaces SET item = '{\"id\": ' WHERE id = 'w1'").run()
          return yield* Effect.flip(exportRun(store, { outDir: out, format: "csv", threads: false }))
        })
      )
      expect(error._tag).toBe("ExportError")
      expect(error.message).toMatch(/workspaces\.csv: .*JSON/)
      expect(fs.readdirSync(out).sort()).toEqual(earlier.map(([file]) => file).sort())
      for (const [file, text] of earlier) expect(fs.readFileSync(path.join(out, file), "utf8")).toBe(text)
    }))

  it.effect("fails with a clear error when the snapshot has no complete run", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir("ws-export-")
      const error = yield* withStore(path.join(dir, "s.sqlite"), (store) =>
        Effect.flip(exportRun(store, { outDir: path.join(dir, "o"), format: "ndjson" }))
      )
      expect(error._tag).toBe("NothingToExport")
      expect(error.message).toMatch(/no complete run/)
    }))
})
