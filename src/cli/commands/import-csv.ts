/**
 * `worksync import-csv --workspace ID --csv FILE --journal FILE [mapping] [--dry-run]
 *  [--rejects FILE] [--json]`: one record per valid row, exactly once across reruns.
 *
 * Exit: 0 every row imported (now or before); 2 finished, some rows rejected (see the
 * rejects file); 1 could not finish (a rerun resumes from the journal); 64 bad invocation
 * (unknown column in the mapping, unreadable CSV, journal of another workspace).
 */
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as fs from "node:fs"
import { RestClient } from "../../client/rest-client.ts"
import { importCsv, ImportFailed, type ImportResult, ImportUsageError } from "../../connectors/csv/import.ts"
import { type Field, MappingError, parseMapFlag, parseMappingFile } from "../../connectors/csv/mapping.ts"
import { PRESET_NAMES } from "../../connectors/csv/presets.ts"
import { describeJournalError, Journal, JournalBusy, journalLayer } from "../../store/journal.ts"
import { ReplayAborted } from "../../sync/replay.ts"
import { connectionOptions, jsonOption, verbosityOf, verbosityOptions } from "../common-options.ts"
import { clientLayerFromFlags } from "../connection.ts"
import { CliExit, ExitCode, registerDescriber, usageError } from "../exit.ts"
import { logLine, printJson } from "../output.ts"
import { makeProgress } from "../progress.ts"
import { withExamples } from "../help-doc.ts"

registerDescriber(describeJournalError)

const options = {
  ...connectionOptions,
  workspace: Options.text("workspace").pipe(Options.withDescription("target workspace id or slug")),
  csv: Options.text("csv").pipe(Options.withDescription("the CSV file to import")),
  journal: Options.text("journal").pipe(
    Options.withDescription("SQLite journal file (created if missing); rerun with the same file to resume")
  ),
  map: Options.text("map").pipe(
    Options.withDescription("FIELD=COLUMN (repeatable); fields: title, description, descriptionHtml, list, startedAt, duedAt, assignees, tags, done, key"),
    Options.repeated
  ),
  mapping: Options.text("mapping").pipe(Options.withDescription("JSON file {\"FIELD\": \"COLUMN\", ...}"), Options.optional),
  preset: Options.choice("preset", PRESET_NAMES).pipe(
    Options.withDescription("column names of a tool's CSV export: generic, trello, asana, jira"),
    Options.optional
  ),
  dryRun: Options.boolean("dry-run").pipe(Options.withDescription("print the plan; send nothing, write no journal")),
  rejects: Options.text("rejects").pipe(
    Options.withDescription("rejected rows (original columns plus row and error); default <csv>.rejects.csv"),
    Options.optional
  ),
  delimiter: Options.text("delimiter").pipe(Options.withDescription("field delimiter; guessed from the header by default"), Options.optional),
  encoding: Options.text("encoding").pipe(Options.withDescription("text encoding of the CSV (default utf-8), e.g. windows-1252"), Options.optional),
  concurrency: Options.integer("concurrency").pipe(Options.withDescription("records created at once (default 8)"), Options.optional),
  json: jsonOption,
  ...verbosityOptions
}

const defaultRejects = (csv: string) => `${csv.replace(/\.csv$/i, "")}.rejects.csv`

const mappingFrom = (flags: {
  readonly map: ReadonlyArray<string>
  readonly mapping: Option.Option<string>
  readonly preset: Option.Option<(typeof PRESET_NAMES)[number]>
}) =>
  Effect.gen(function*() {
    const pairs: Array<readonly [Field, string]> = []
    for (const m of flags.map) {
      const parsed = parseMapFlag(m)
      if (Either.isLeft(parsed)) return yield* Effect.fail(usageError(parsed.left.message))
      pairs.push(parsed.right)
    }
    let file: Partial<Record<Field, string>> | undefined
    if (Option.isSome(flags.mapping)) {
      const name = flags.mapping.value
      let text: string
      try {
        text = fs.readFileSync(name, "utf8")
      } catch {
        return yield* Effect.fail(usageError(`--mapping ${name}: file not found`))
      }
      const parsed = parseMappingFile(name, text)
      if (Either.isLeft(parsed)) return yield* Effect.fail(usageError(parsed.left.message))
      file = parsed.right
    }
    const preset = Option.getOrUndefined(flags.preset)
    if (pairs.length === 0 && file === undefined && preset === undefined) {
      return { preset: "generic" as const }
    }
    return { flags: pairs, ...(file !== undefined ? { file } : {}), ...(preset !== undefined ? { preset } : {}) }
  })

const summary = (r: ImportResult, dryRun: boolean): string =>
  dryRun
    ? `dry run: ${r.rows} rows, ${r.plan?.ops[`record.create`] ?? 0} records to create, ${r.skipped} already imported, ${r.rejected} rejected`
    : `import: ${r.rows} rows, ${r.created} created, ${r.skipped} already imported, ${r.rejected} rejected`

export const importCsvCommand = Command.make("import-csv", options, (flags) =>
  Effect.gen(function*() {
    const verbosity = verbosityOf(flags)
    const mapping = yield* mappingFrom(flags)
    if (!fs.existsSync(flags.csv)) {
      return yield* Effect.fail(usageError(`--csv ${flags.csv}: file not found`))
    }
    const concurrency = Option.getOrElse(flags.concurrency, () => 8)
    if (concurrency < 1) return yield* Effect.fail(usageError(`--concurrency ${concurrency}: must be at least 1`))
    const client = yield* clientLayerFromFlags(flags, { rest: true })
    const rejectsFile = Option.getOrElse(flags.rejects, () => defaultRejects(flags.csv))
    const reading = yield* makeProgress({ label: "rows read", unit: "items", verbosity })
    const sending = yield* makeProgress({ label: "operations", unit: "items", verbosity })
    const base = {
      workspaceId: flags.workspace,
      csv: {
        file: flags.csv,
        delimiter: Option.getOrUndefined(flags.delimiter),
        encoding: Option.getOrUndefined(flags.encoding)
      },
      mapping,
      concurrency,
      onRowsRead: (n: number) => reading.advance(n),
      onReplayStart: (total: number) => Effect.zipRight(reading.done(), sending.setTotal(total)),
      onOpEnd: () => sending.advance(1)
    }
    const run: Effect.Effect<ImportResult, unknown> = flags.dryRun
      ? Effect.flatMap(RestClient, (rest) =>
        importCsv(rest, { dryRunJournalFile: flags.journal }, { ...base, dryRun: true })).pipe(Effect.provide(client))
      : Effect.gen(function*() {
        const journal = yield* Journal
        const rest = yield* RestClient
        return yield* importCsv(rest, journal, { ...base, rejectsFile })
      }).pipe(Effect.provide(Layer.merge(journalLayer(flags.journal), client)))

    const result = yield* run.pipe(
      Effect.catchAll((e): Effect.Effect<never, CliExit | unknown> => {
        if (e instanceof ImportUsageError || e instanceof MappingError) return Effect.fail(usageError(e.message))
        if (e instanceof ImportFailed || e instanceof ReplayAborted) {
          return Effect.fail(new CliExit({ code: ExitCode.failed, message: `${e.message}; rerun with the same --journal to resume` }))
        }
        if (e instanceof JournalBusy) return Effect.fail(new CliExit({ code: ExitCode.failed, message: e.message }))
        return Effect.fail(e)
      })
    )
    if (!flags.dryRun) yield* sending.done()
    else yield* reading.done()

    if (flags.json) {
      yield* printJson({
        rows: result.rows,
        created: result.created,
        skipped: result.skipped,
        rejected: result.rejected,
        ...(flags.dryRun ? { dryRun: true, plan: result.plan } : {})
      })
    }
    yield* logLine(verbosity, summary(result, flags.dryRun))
    if (flags.dryRun && result.plan !== undefined && verbosity !== "quiet") {
      for (const [kind, n] of Object.entries(result.plan.ops)) yield* logLine(verbosity, `  ${kind}: ${n}`)
      for (const r of result.plan.first) {
        yield* logLine(verbosity, `  row ${r.row}: ${JSON.stringify(r.title)}${r.list ? ` in ${JSON.stringify(r.list)}` : ""}${r.done ? " (done)" : ""}`)
      }
    }
    const unfinished = result.failed + result.unknown + result.blocked
    if (unfinished > 0) {
      const first = result.failures[0] ?? `${unfinished} operations could not finish`
      return yield* Effect.fail(
        new CliExit({
          code: ExitCode.failed,
          message: `${unfinished} operation${unfinished === 1 ? "" : "s"} not finished, first: ${first}; rerun with the same --journal to resume`
        })
      )
    }
    if (result.rejected > 0) {
      return yield* Effect.fail(
        new CliExit({
          code: ExitCode.rejected,
          message: `${result.rejected} row${result.rejected === 1 ? "" : "s"} rejected${flags.dryRun ? "" : `; see ${rejectsFile}`}`
        })
      )
    }
  })).pipe(Command.withDescription(
    withExamples("create one record per valid CSV row, exactly once across reruns (journal)", [
      "worksync import-csv --workspace website --csv trello.csv --preset trello --journal import.sqlite --dry-run",
      "worksync import-csv --workspace website --csv trello.csv --preset trello --journal import.sqlite",
      "worksync import-csv --workspace website --csv tasks.csv --map title=Name --map duedAt=\"Due date\" --journal import.sqlite"
    ], ["Exit 2 when rows were rejected (see --rejects); rerun with the same --journal to resume after exit 1."])
  ))
