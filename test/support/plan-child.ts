/**
 * A child process for kill tests: plans a CSV import into a journal (nothing is sent),
 * printing `reading` once rows start to flow and `planned` at the end.
 *
 *   node --import tsx test/support/plan-child.ts JOURNAL CSV WORKSPACE   (connection in WORKSYNC_*)
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { clientLayer } from "../../src/client/layer.ts"
import { RestClient } from "../../src/client/rest-client.ts"
import { planCsvImport } from "../../src/connectors/csv/plan.ts"
import { Journal } from "../../src/store/journal.ts"

const [journalFile, csv, workspaceId] = process.argv.slice(2) as [string, string, string]
let announced = false
const env = (name: string) => process.env[`WORKSYNC_${name}`] ?? ""

await Effect.runPromise(
  Effect.gen(function*() {
    yield* planCsvImport(yield* RestClient, yield* Journal, {
      workspaceId,
      csv: { file: csv },
      mapping: { preset: "generic" },
      planThread: true,
      onRowsRead: () =>
        Effect.sync(() => {
          if (!announced) process.stdout.write("reading\n")
          announced = true
        })
    })
  }).pipe(
    Effect.provide(
      Layer.merge(
        Journal.layer(journalFile),
        clientLayer({ restUrl: env("REST_URL"), baseUrl: env("BASE_URL"), token: env("TOKEN"), org: env("ORG") })
      )
    )
  )
)
process.stdout.write("planned\n")
