import Database from "better-sqlite3"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as fs from "node:fs"
import * as path from "node:path"
import { expect, layer } from "@effect/vitest"
import { RestClient } from "../../src/client/rest-client.ts"
import { importCsv } from "../../src/connectors/csv/import.ts"
import type { ImportOptions } from "../../src/connectors/csv/options.ts"
import { planCsvImport } from "../../src/connectors/csv/plan.ts"
import { Journal, JournalDb } from "../../src/store/journal.ts"
import { OP_KINDS, packRecordCreate, PHASES, TARGET_WORKSPACE_META, unpackRecordCreate } from "../../src/sync/plan.ts"
import { replay } from "../../src/sync/replay.ts"
import { makeRecordExecutors } from "../../src/sync/replay-records.ts"
import { Emulator, emulatorLayer, tempDir } from "../support/effect.ts"
import { testClient, titleCounts } from "../sync/replay-helpers.ts"


const withJournal = <A, E>(journalFile: string, f: (journal: typeof Journal.Service, client: typeof RestClient.Service) => Effect.Effect<A, E>) =>
  Effect.flatMap(Emulator, (handle) =>
    Effect.gen(function*() {
      return yield* f(yield* Journal, yield* RestClient)
    }).pipe(Effect.provide(Layer.merge(Journal.layer(journalFile), testClient(handle)))))

const csvOf = (dir: string, rows: ReadonlyArray<string>) => {
  const file = path.join(dir, "in.csv")
  fs.writeFileSync(file, ["title,list,done", ...rows].join("\n") + "\n")
  return file
}

const payloadsOf = (journalFile: string, kind: string): Array<unknown> => {
  const db = new Database(journalFile, { readonly: true })
  try {
    return (db.prepare("SELECT payload FROM ops WHERE kind = ? ORDER BY seq").pluck().all(kind) as Array<string>).map((p) => JSON.parse(p))
  } finally {
    db.close()
  }
}

// Imports talk to the emulator over real HTTP: the layer's tests run on the live clock.
layer(emulatorLayer({ seed: "empty" }), { timeout: 30_000, excludeTestServices: true })("import-csv journal payloads", (it) => {
  it.effect("R-REST-RECORD-27: creates are planned without workspaceId (held once in the journal) and replay sends it", () =>
    Effect.gen(function*() {
      const handle = yield* Emulator
      const ws = handle.admin.createWorkspace({ name: "compact" }).id
      const dir = yield* tempDir("ws-csv-payload-")
      const journalFile = path.join(dir, "j.sqlite")
      const options: ImportOptions = { workspaceId: ws, csv: { file: csvOf(dir, ["Alpha,Backlog,yes", "Beta,,no"]) }, mapping: { preset: "generic" } }
      yield* withJournal(journalFile, (journal, client) => planCsvImport(client, journal, options))
      const stored = payloadsOf(journalFile, OP_KINDS.recordCreate)
      // Packed: field values by position, no names, no workspace.
      expect(stored).toEqual([["Alpha", "line 2", null, "Backlog", null, null, null, null, null, null, null, true], ["Beta", "line 3"]])
      const creates = stored.map(unpackRecordCreate)
      expect(creates).toEqual([
        { title: "Alpha", origin: "line 2", listTitle: "Backlog", then: { done: true } },
        { title: "Beta", origin: "line 3" }
      ])
      // Ensure ops are few and keep it.
      expect(payloadsOf(journalFile, OP_KINDS.listEnsure)[0]).toMatchObject({ workspaceId: ws, title: "Backlog" })

      const result = yield* withJournal(journalFile, (journal, client) => importCsv(client, journal, options))
      expect(result.created).toBe(2)
      expect(result.failed).toBe(0)
      expect(Object.fromEntries(titleCounts(handle, ws))).toEqual({ Alpha: 1, Beta: 1 })
      // `done` was set in the create's own op, from the decoded payload (with the journal's
      // workspace): no separate update op.
      expect(payloadsOf(journalFile, OP_KINDS.recordUpdate)).toEqual([])
      const done = handle.ctx.db.prepare("SELECT done FROM records WHERE workspace_id = ? AND title = 'Alpha'").get(ws) as { done: number }
      expect(done.done).toBe(1)
    }))

  it.effect("R-REST-RECORD-27: every field of a row is packed at its position, as packRecordCreate packs it", () =>
    Effect.gen(function*() {
      const handle = yield* Emulator
      const ws = handle.admin.createWorkspace({ name: "packed-fields" }).id
      const dir = yield* tempDir("ws-csv-payload-")
      const journalFile = path.join(dir, "j.sqlite")
      const { list, tag } = yield* withJournal(journalFile, (_journal, client) =>
        Effect.all({ list: client.createList({ workspaceId: ws, title: "Known" }), tag: client.createTag({ workspaceId: ws, title: "old" }) })
      )
      const file = path.join(dir, "full.csv")
      fs.writeFileSync(
        file,
        [
          "title,description,descriptionHtml,list,startedAt,duedAt,tags,done",
          "Full,Plain text,,Known,2024-05-01,2024-05-02T10:00:00Z,old;new,yes",
          "Sparse,,,New list,,2024-06-01,,no",
          "Tagged,,<p>Html</p>,,,,old,no"
        ].join("\n") + "\n"
      )
      yield* withJournal(journalFile, (journal, client) =>
        planCsvImport(client, journal, { workspaceId: ws, csv: { file }, mapping: { preset: "generic" } })
      )
      const stored = payloadsOf(journalFile, OP_KINDS.recordCreate)
      const creates = stored.map(unpackRecordCreate)
      expect(creates).toEqual([
        {
          title: "Full",
          origin: "line 2",
          listId: list.id,
          description: "Plain text",
          startedAt: "2024-05-01",
          duedAt: "2024-05-02T10:00:00Z",
          tagIds: [tag.id],
          tagTitles: ["new"],
          then: { done: true }
        },
        { title: "Sparse", origin: "line 3", listTitle: "New list", duedAt: "2024-06-01" },
        { title: "Tagged", origin: "line 4", descriptionHtml: "<p>Html</p>", tagIds: [tag.id] }
      ])
      // The same arrays packRecordCreate makes (positions, trailing nulls dropped).
      expect(stored).toEqual(creates.map((c) => packRecordCreate(c as Parameters<typeof packRecordCreate>[0])))
    }))

  it.effect("R-REST-RECORD-27: a create payload without workspaceId in a journal that names no workspace fails as unreadable, sending nothing", () =>
    Effect.gen(function*() {
      const handle = yield* Emulator
      const ws = handle.admin.createWorkspace({ name: "no-meta" }).id
      const dir = yield* tempDir("ws-csv-payload-")
      const journalFile = path.join(dir, "j.sqlite")
      const core = new JournalDb(journalFile)
      core.addOps([{ key: "k:1", kind: OP_KINDS.recordCreate, payload: packRecordCreate({ title: "Orphan" }) }])
      expect(core.getMeta(TARGET_WORKSPACE_META)).toBeUndefined()
      core.close()
      const report = yield* withJournal(journalFile, (journal, client) =>
        replay(journal, makeRecordExecutors(client), { phases: PHASES, concurrency: 2 }))
      expect(report.failed).toBe(1)
      const db = new Database(journalFile, { readonly: true })
      const row = db.prepare("SELECT state, error FROM ops WHERE key = 'k:1'").get() as { state: string; error: string }
      db.close()
      expect(row.state).toBe("failed")
      expect(row.error).toContain("no workspaceId")
      expect(titleCounts(handle, ws).size).toBe(0)
    }))

  it("R-REST-RECORD-27: a packed create round-trips every field", () => {
    const full = {
      title: "T",
      origin: "line 9",
      listId: "l1",
      listTitle: "L",
      description: "d",
      descriptionHtml: "<p>d</p>",
      startedAt: "2024-01-01",
      duedAt: "2024-01-02T10:00:00.000Z",
      assigneeIds: ["u1"],
      tagIds: ["t1"],
      tagTitles: ["x"],
      then: { done: true },
      sourceKey: "s"
    }
    expect(unpackRecordCreate(JSON.parse(JSON.stringify(packRecordCreate(full))))).toEqual(full)
    expect(packRecordCreate({ title: "only" })).toEqual(["only"])
    // Objects (restore, older journals) are read as they are.
    expect(unpackRecordCreate({ workspaceId: "w", title: "x" })).toEqual({ workspaceId: "w", title: "x" })
  })

  it.effect("R-REST-RECORD-27: a create payload that names its workspace (older journals, restore) is sent as it is", () =>
    Effect.gen(function*() {
      const handle = yield* Emulator
      const ws = handle.admin.createWorkspace({ name: "full" }).id
      const dir = yield* tempDir("ws-csv-payload-")
      const journalFile = path.join(dir, "j.sqlite")
      const core = new JournalDb(journalFile)
      core.addOps([{ key: "k:1", kind: OP_KINDS.recordCreate, payload: { workspaceId: ws, title: "Old style" } }])
      core.close()
      const report = yield* withJournal(journalFile, (journal, client) =>
        replay(journal, makeRecordExecutors(client), { phases: PHASES, concurrency: 2 }))
      expect(report.failed).toBe(0)
      expect(Object.fromEntries(titleCounts(handle, ws))).toEqual({ "Old style": 1 })
    }))
})
