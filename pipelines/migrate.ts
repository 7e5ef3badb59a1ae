/**
 * Migration from another tool: its CSV export through a preset, then its attachments
 * from a directory, into one workspace, with a dry run first.
 *
 *   1. dry run: plan the import (rows, records to create, rejected rows) and list the
 *      files, sending nothing; with `--dry-run` stop here;
 *   2. if the plan rejects rows, stop unless `--accept-rejects` (fix the CSV first);
 *   3. import the CSV through the journal `<state>/import.journal.sqlite` (exactly once:
 *      a rerun creates nothing twice);
 *   4. copy the directory into the workspace through `<state>/files.journal.sqlite`.
 *
 * Exit 0 all done; 2 done but rows were rejected (see the rejects file); 1 incomplete
 * (a rerun resumes); 64 bad invocation.
 *
 *   WORKSYNC_REST_URL=... WORKSYNC_TOKEN=... WORKSYNC_BASE_URL=... WORKSYNC_TOKEN_ID=... WORKSYNC_TOKEN_SECRET=... \
 *   npx tsx pipelines/migrate.ts --workspace ID --csv export.csv --preset trello --files attachments/ --state migration/ [--dry-run]
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as fs from "node:fs"
import * as path from "node:path"
import { clientLayer, type ClientServices } from "../src/client/layer.ts"
import { RestClient } from "../src/client/rest-client.ts"
import { GraphqlClient } from "../src/client/graphql-client.ts"
import { importCsv } from "../src/connectors/csv/import.ts"
import type { ImportResult } from "../src/connectors/csv/result.ts"
import { PRESET_NAMES, type PresetName } from "../src/connectors/csv/presets.ts"
import { copyFiles, type CopySummary } from "../src/connectors/files/copy.ts"
import { walkDirectory } from "../src/connectors/files/walk.ts"
import { workspaceFilesFromServices } from "../src/connectors/files/workspace-files.ts"
import { openJournal } from "../src/store/journal.ts"
import { connectionFromEnv } from "./lib/connection.ts"
import { messageOf, PipelineIncomplete, PipelineRejected, PipelineUsage } from "./lib/errors.ts"
import { isMain, optionalString, required, runPipelineMain } from "./lib/main.ts"

export interface MigrateOptions {
  readonly workspaceId: string
  readonly csv: string
  readonly preset: PresetName
  /** Directory of attachments to upload; none: records only. */
  readonly filesDir?: string | undefined
  /** Directory for the journals and the rejects file. */
  readonly stateDir: string
  /** Plan only. */
  readonly dryRun?: boolean | undefined
  /** Import even when the plan rejects rows (they go to the rejects file). */
  readonly acceptRejects?: boolean | undefined
}

export interface MigratePlan {
  readonly rows: number
  /** Records the import would create (rows already imported are not counted). */
  readonly toCreate: number
  readonly alreadyImported: number
  readonly rejected: number
  readonly files: number
  readonly bytes: number
}

export interface MigrateResult {
  readonly plan: MigratePlan
  readonly dryRun: boolean
  readonly import?: {
    readonly rows: number
    readonly created: number
    readonly skipped: number
    readonly rejected: number
    /** What the service could not take (operations beyond the documents), one line each. */
    readonly notices?: ReadonlyArray<string>
  }
  readonly files?: { readonly files: number; readonly copied: number; readonly skipped: number; readonly failed: number; readonly bytes: number }
  readonly rejectsFile?: string
}

const importFailure = (e: unknown) =>
  typeof e === "object" && e !== null && (e as { _tag?: string })._tag === "ImportUsageError"
    ? new PipelineUsage({ message: messageOf(e) })
    : new PipelineIncomplete({ message: `import incomplete: ${messageOf(e)}; rerun to resume` })

/** The plan: what the import and the file copy would do, with nothing sent. */
export const planMigration = (options: MigrateOptions): Effect.Effect<MigratePlan, PipelineUsage | PipelineIncomplete, ClientServices> =>
  Effect.gen(function*() {
    if (!fs.existsSync(options.csv)) return yield* new PipelineUsage({ message: `--csv ${options.csv}: file not found` })
    if (options.filesDir !== undefined && !fs.statSync(options.filesDir, { throwIfNoEntry: false })?.isDirectory()) {
      return yield* new PipelineUsage({ message: `--files ${options.filesDir}: no such directory` })
    }
    const rest = yield* RestClient
    const journalFile = path.join(options.stateDir, "import.journal.sqlite")
    const dry: ImportResult = yield* importCsv(
      rest,
      { dryRunJournalFile: fs.existsSync(journalFile) ? journalFile : undefined },
      { workspaceId: options.workspaceId, csv: { file: options.csv }, mapping: { preset: options.preset }, dryRun: true }
    ).pipe(Effect.mapError(importFailure))
    const local = options.filesDir === undefined ? [] : yield* Effect.promise(() => walkDirectory(options.filesDir!))
    return {
      rows: dry.rows,
      toCreate: dry.plan?.ops["record.create"] ?? 0,
      alreadyImported: dry.skipped,
      rejected: dry.rejected,
      files: local.length,
      bytes: local.reduce((n, f) => n + f.size, 0)
    }
  })

export const migrate = (
  options: MigrateOptions
): Effect.Effect<MigrateResult, PipelineUsage | PipelineIncomplete | PipelineRejected, ClientServices> =>
  Effect.gen(function*() {
    const plan = yield* planMigration(options)
    if (options.dryRun === true) return { plan, dryRun: true }
    if (plan.rejected > 0 && options.acceptRejects !== true) {
      return yield* new PipelineRejected({
        message: `the dry run rejects ${plan.rejected} of ${plan.rows} row(s); nothing was sent. ` +
          `Fix the CSV, or pass --accept-rejects to import the valid rows (the rejected ones go to the rejects file)`
      })
    }
    yield* Effect.try({
      try: () => fs.mkdirSync(options.stateDir, { recursive: true }),
      catch: (e) => new PipelineUsage({ message: `--state ${options.stateDir}: ${messageOf(e)}` })
    })
    const rejectsFile = path.join(options.stateDir, "import.rejects.csv")

    const imported = yield* Effect.scoped(
      Effect.gen(function*() {
        const journal = yield* openJournal(path.join(options.stateDir, "import.journal.sqlite"))
        return yield* importCsv(yield* RestClient, journal, {
          workspaceId: options.workspaceId,
          csv: { file: options.csv },
          mapping: { preset: options.preset },
          rejectsFile,
          // Comments and attachments of another tool's export are written through GraphQL.
          graphql: yield* GraphqlClient
        })
      })
    ).pipe(Effect.mapError(importFailure))
    const unfinished = imported.failed + imported.unknown + imported.blocked
    if (unfinished > 0) {
      return yield* new PipelineIncomplete({
        message: `import incomplete: ${unfinished} operation(s) not finished (first: ${imported.failures[0] ?? "unknown"}); rerun to resume`
      })
    }

    let files: CopySummary | undefined
    if (options.filesDir !== undefined) {
      const from = { kind: "dir" as const, path: path.resolve(options.filesDir) }
      files = yield* Effect.scoped(
        Effect.gen(function*() {
          const target = yield* workspaceFilesFromServices
          const journal = yield* openJournal(path.join(options.stateDir, "files.journal.sqlite"))
          return yield* copyFiles({ from, to: { kind: "workspace", workspaceId: options.workspaceId }, target, journal })
        })
      ).pipe(Effect.mapError((e) => new PipelineIncomplete({ message: `file copy incomplete: ${messageOf(e)}; rerun to resume` })))
      if (files.failed > 0) {
        const first = files.failures[0]
        return yield* new PipelineIncomplete({
          message: `${files.failed} of ${files.files} file(s) not uploaded (first: ${first?.name}: ${first?.reason}); rerun to resume`
        })
      }
    }

    const result: MigrateResult = {
      plan,
      dryRun: false,
      import: {
        rows: imported.rows,
        created: imported.created,
        skipped: imported.skipped,
        rejected: imported.rejected,
        ...(imported.notices.length > 0 ? { notices: imported.notices } : {})
      },
      ...(files !== undefined
        ? { files: { files: files.files, copied: files.copied, skipped: files.skipped, failed: files.failed, bytes: files.bytes } }
        : {}),
      ...(imported.rejected > 0 ? { rejectsFile } : {})
    }
    if (imported.rejected > 0) {
      return yield* new PipelineRejected({
        message: `imported ${imported.created} record(s); ${imported.rejected} row(s) rejected, see ${rejectsFile}`
      })
    }
    return result
  })

export const summarize = (r: MigrateResult): string =>
  r.dryRun
    ? `dry run: ${r.plan.rows} rows, ${r.plan.toCreate} records to create, ${r.plan.alreadyImported} already imported, ` +
      `${r.plan.rejected} rejected; ${r.plan.files} file(s) (${r.plan.bytes} bytes) to upload; nothing was sent`
    : `${r.import?.created ?? 0} record(s) created, ${r.import?.skipped ?? 0} already imported; ` +
      `${r.files?.copied ?? 0} file(s) uploaded, ${r.files?.skipped ?? 0} already uploaded` +
      (r.import?.notices !== undefined ? `; ${r.import.notices.join("; ")}` : "")

const USAGE =
  `migrate --workspace ID --csv FILE --preset ${PRESET_NAMES.join("|")} --state DIR [--files DIR] [--dry-run] [--accept-rejects] [--json]`

if (isMain(import.meta.url)) {
  await runPipelineMain(
    "migrate",
    USAGE,
    {
      workspace: { type: "string" },
      csv: { type: "string" },
      preset: { type: "string" },
      files: { type: "string" },
      state: { type: "string" },
      "dry-run": { type: "boolean" },
      "accept-rejects": { type: "boolean" }
    },
    (values) =>
      Effect.gen(function*() {
        const workspaceId = yield* required(values, "workspace")
        const csv = yield* required(values, "csv")
        const stateDir = yield* required(values, "state")
        const preset = optionalString(values, "preset") ?? "generic"
        if (!(PRESET_NAMES as ReadonlyArray<string>).includes(preset)) {
          return yield* new PipelineUsage({ message: `--preset ${preset}: one of ${PRESET_NAMES.join(", ")}` })
        }
        const connection = connectionFromEnv(process.env)
        if (connection instanceof PipelineUsage) return yield* connection
        const result = yield* migrate({
          workspaceId,
          csv,
          preset: preset as PresetName,
          filesDir: optionalString(values, "files"),
          stateDir,
          dryRun: values["dry-run"] === true,
          acceptRejects: values["accept-rejects"] === true
        }).pipe(Effect.provide(Layer.orDie(clientLayer(connection))))
        return { result, summary: summarize(result) }
      })
  )
}
