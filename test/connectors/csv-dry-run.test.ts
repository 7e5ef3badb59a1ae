/**
 * The dry run predicts the plan: on any file, and against a journal an earlier import
 * left, it counts the same new ops, rejects and first rows that planning into the
 * journal then produces.
 */
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as fc from "fast-check"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { RestClient } from "../../src/client/rest-client.ts"
import type { ImportOptions } from "../../src/connectors/csv/options.ts"
import { planCsvImport } from "../../src/connectors/csv/plan.ts"
import type { ImportResult } from "../../src/connectors/csv/result.ts"
import type { EmulatorHandle } from "../../src/emulator/index.ts"
import { Emulator, emulatorLayer } from "../support/effect.ts"
import { testClient, tmpDir } from "../sync/replay-helpers.ts"
import { planInto } from "./csv-plan-helpers.ts"


const dryRun = (handle: EmulatorHandle, journalFile: string, options: ImportOptions) =>
  Effect.gen(function*() {
    return yield* planCsvImport(yield* RestClient, { dryRunJournalFile: journalFile }, { ...options, dryRun: true })
  }).pipe(Effect.provide(testClient(handle)))

/** What a plan says of itself, the rejects file aside. */
const summary = (r: ImportResult) => ({ rows: r.rows, rejected: r.rejected, skipped: r.skipped, plan: r.plan })

const scratchFiles = () => fs.readdirSync(os.tmpdir()).filter((f) => f.startsWith("worksync-dry-run-"))

// Planning talks to the emulator over real HTTP: the layer's tests run on the live clock.
layer(emulatorLayer({ seed: "empty" }), { timeout: 30_000, excludeTestServices: true })("import-csv --dry-run", (it) => {
  it.effect("counts what planning then does: repeated rows (occurrences), repeated keys (rejects), bad rows, rows planned by an earlier run", () =>
    Effect.gen(function*() {
      const handle = yield* Emulator
      const ws = handle.admin.createWorkspace({ name: "dry-run-property" }).id
      // Rows drawn from small pools, so files repeat rows and keys, within and across runs.
      const row = fc.record({
        key: fc.option(fc.integer({ min: 0, max: 30 }), { nil: undefined }),
        title: fc.constantFrom("Alpha", "Beta", "Gamma", ""),
        list: fc.constantFrom("A", "B", "")
      })
      const file = fc.array(row, { minLength: 1, maxLength: 60 })
      const before = scratchFiles()
      // fast-check drives the property with promises: each run goes through this test's services.
      const run = Effect.runPromiseWith(yield* Effect.context<never>())
      yield* Effect.promise(() => fc.assert(
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
          const predicted = await run(dryRun(handle, journal, options))
          expect(summary(await run(planInto(handle, journal, options)))).toEqual(summary(predicted))
          write([...rows, ...appended])
          const predictedAgain = await run(dryRun(handle, journal, options))
          expect(summary(await run(planInto(handle, journal, options)))).toEqual(summary(predictedAgain))
        }),
        { numRuns: 25 }
      ))
      // The dry runs' scratch files are gone.
      expect(scratchFiles()).toEqual(before)
    }), 120_000)
})
