/**
 * The dry run predicts the plan: on any file, and against a journal an earlier import
 * left, it counts the same new ops, rejects and first rows that planning into the
 * journal then produces.
 */
import * as Effect from "effect/Effect"
import * as fc from "fast-check"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { RestClient } from "../../src/client/rest-client.ts"
import { type ImportOptions, type ImportResult, planCsvImport } from "../../src/connectors/csv/import.ts"
import { type EmulatorHandle, startEmulator } from "../../src/emulator/index.ts"
import { testClient, tmpDir } from "../sync/replay-helpers.ts"
import { planInto } from "./csv-plan-helpers.ts"

let handle: EmulatorHandle
beforeAll(async () => {
  handle = await startEmulator({ seed: "empty" })
})
afterAll(() => handle.close())

const dryRun = (journalFile: string, options: ImportOptions) =>
  Effect.runPromise(
    Effect.gen(function*() {
      return yield* planCsvImport(yield* RestClient, { dryRunJournalFile: journalFile }, { ...options, dryRun: true })
    }).pipe(Effect.provide(testClient(handle)))
  )

/** What a plan says of itself, the rejects file aside. */
const summary = (r: ImportResult) => ({ rows: r.rows, rejected: r.rejected, skipped: r.skipped, plan: r.plan })

const scratchFiles = () => fs.readdirSync(os.tmpdir()).filter((f) => f.startsWith("worksync-dry-run-"))

describe("import-csv --dry-run", () => {
  it("counts what planning then does: repeated rows (occurrences), repeated keys (rejects), bad rows, rows planned by an earlier run", async () => {
    const ws = handle.admin.createWorkspace({ name: "dry-run-property" }).id
    // Rows drawn from small pools, so files repeat rows and keys, within and across runs.
    const row = fc.record({
      key: fc.option(fc.integer({ min: 0, max: 30 }), { nil: undefined }),
      title: fc.constantFrom("Alpha", "Beta", "Gamma", ""),
      list: fc.constantFrom("A", "B", "")
    })
    const file = fc.array(row, { minLength: 1, maxLength: 60 })
    const before = scratchFiles()
    await fc.assert(
      fc.asyncProperty(file, fc.array(row, { maxLength: 30 }), fc.boolean(), async (rows, appended, withKeys) => {
        const dir = tmpDir("ws-dry-run-")
        const csv = path.join(dir, "in.csv")
        const journal = path.join(dir, "journal.sqlite")
        const write = (rs: typeof rows) =>
          fs.writeFileSync(
            csv,
            [withKeys ? "key,title,list" : "title,list", ...rs.map((r) => (withKeys ? `${r.key ?? ""},${r.title},${r.list}` : `${r.title},${r.list}`))].join("\n") + "\n"
          )
        const options: ImportOptions = { workspaceId: ws, csv: { file: csv }, mapping: { preset: "generic" } }
        // On a fresh journal, then on the file with rows appended against what was planned.
        write(rows)
        const predicted = await dryRun(journal, options)
        expect(summary(await planInto(handle, journal, options))).toEqual(summary(predicted))
        write([...rows, ...appended])
        const predictedAgain = await dryRun(journal, options)
        expect(summary(await planInto(handle, journal, options))).toEqual(summary(predictedAgain))
      }),
      { numRuns: 25 }
    )
    // The dry runs' scratch files are gone.
    expect(scratchFiles()).toEqual(before)
  }, 120_000)
})
