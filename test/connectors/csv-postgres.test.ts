/**
 * A CSV import with its journal in PostgreSQL (`--journal postgres://...`): planned exactly
 * as into a journal file (same ops, same order, same figures; a planning thread is asked
 * for and not used, since only a file can be opened twice), predicted by the dry run
 * (a journal that does not exist yet is an empty one, and is not created), and replayed
 * once: a rerun sends nothing.
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as fs from "node:fs"
import * as path from "node:path"
import { expect, layer } from "@effect/vitest"
import { RestClient } from "../../src/client/rest-client.ts"
import { importCsv } from "../../src/connectors/csv/import.ts"
import type { ImportOptions } from "../../src/connectors/csv/options.ts"
import { planCsvImport } from "../../src/connectors/csv/plan.ts"
import type { ImportResult } from "../../src/connectors/csv/result.ts"
import { Journal } from "../../src/store/journal.ts"
import { parsePostgresUrl } from "../../src/store/postgres.ts"
import { Emulator, emulatorLayer, tempDir } from "../support/effect.ts"
import { freshSchema, pgClient, query } from "../support/postgres.ts"
import { journalOps } from "../store/journal-ops.ts"
import { recordCount, testClient } from "../sync/replay-helpers.ts"
import { planInto } from "./csv-plan-helpers.ts"

/** Keyless rows (identical ones become occurrences), rejected rows, lists to ensure. */
const rowsOf = (from: number, to: number) =>
  Array.from({ length: to - from }, (_, k) => {
    const i = from + k
    if (i % 97 === 5) return `,no title ${i},Backlog`
    if (i % 50 === 3) return "Same row,,Backlog"
    return `Task ${i},line ${i},${i % 3 === 0 ? "Doing" : "Backlog"}`
  })

const writeCsv = (file: string, rows: ReadonlyArray<string>) => fs.writeFileSync(file, ["title,description,list", ...rows].join("\n") + "\n")

/** The ops of a PostgreSQL journal as `journalOps` gives a file's. */
const pgOps = (location: string) =>
  Effect.scoped(Effect.gen(function*() {
    const { schema, url } = parsePostgresUrl(location)
    const client = yield* pgClient(url)
    return yield* query(client, `SELECT key, kind, payload, depends_on, state, plan_run::int AS plan_run FROM ${schema}.ops ORDER BY seq`)
  }))

const tableCount = (location: string) =>
  Effect.scoped(Effect.gen(function*() {
    const { schema, url } = parsePostgresUrl(location)
    const client = yield* pgClient(url)
    const rows = yield* query<{ n: number }>(client, "SELECT count(*)::int AS n FROM information_schema.tables WHERE table_schema = $1", [schema])
    return rows[0]!.n
  }))

/** Everything of a result but where its rejects went. */
const figures = ({ rejectsFile: _, ...rest }: ImportResult) => rest

layer(emulatorLayer({ seed: "empty" }), { timeout: 30_000, excludeTestServices: true })("import-csv with a PostgreSQL journal", (it) => {
  it.effect("plans what a journal file gets, the dry run predicts it, and a rerun of the import sends nothing", () =>
    Effect.gen(function*() {
      const handle = yield* Emulator
      const ws = handle.admin.createWorkspace({ name: "csv-postgres" }).id
      const dir = yield* tempDir("ws-csv-pg-")
      const csv = path.join(dir, "in.csv")
      const file = path.join(dir, "journal.sqlite")
      const location = yield* freshSchema
      const options: ImportOptions = { workspaceId: ws, csv: { file: csv }, mapping: { preset: "generic" }, planThread: true }
      const dryRun = (journal: string) =>
        Effect.gen(function*() {
          return yield* planCsvImport(yield* RestClient, { dryRunJournalFile: journal }, { ...options, dryRun: true })
        }).pipe(Effect.provide(testClient(handle)))

      writeCsv(csv, rowsOf(0, 700))
      // No journal there yet: planned against nothing, and nothing is created.
      const predicted = yield* dryRun(location)
      expect(yield* tableCount(location)).toBe(0)
      const planned = yield* planInto(handle, location, options)
      expect(figures(planned)).toEqual(figures(predicted))
      expect(figures(yield* planInto(handle, file, options))).toEqual(figures(planned))
      // Rows appended: the dry run reads the journal's states, and planning agrees.
      writeCsv(csv, rowsOf(0, 1000))
      const predictedAgain = yield* dryRun(location)
      expect(predictedAgain.plan?.ops["record.create"]).toBeGreaterThan(0)
      const again = yield* planInto(handle, location, options)
      expect(figures(again)).toEqual(figures(predictedAgain))
      expect(figures(yield* planInto(handle, file, options))).toEqual(figures(again))
      expect(yield* pgOps(location)).toEqual(journalOps(file, { withPlanRun: true }))

      // Replay into the service from the PostgreSQL journal, then once more: nothing is sent twice.
      const run = Effect.gen(function*() {
        return yield* importCsv(yield* RestClient, yield* Journal, options)
      }).pipe(Effect.provide(Layer.merge(Journal.layer(location), testClient(handle))))
      const first = yield* run
      const records = recordCount(handle, ws)
      expect(records).toBeGreaterThan(900)
      expect(first).toMatchObject({ created: records, failed: 0, unknown: 0, blocked: 0 })
      const second = yield* run
      expect(second.created).toBe(0)
      expect(second.skipped).toBe(records)
      expect(recordCount(handle, ws)).toBe(records)
    }), 120_000)
})
