/**
 * `worksync export --snapshot FILE --out DIR [--format ndjson|csv] [--run RUN]
 *  [--guard-formulas] [--json]`: records, activity, files and workspaces of one run.
 */
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { ExportError, exportSnapshot } from "../../connectors/export.ts"
import { SnapshotStore } from "../../store/snapshot.ts"
import { jsonOption, verbosityOf, verbosityOptions } from "../common-options.ts"
import { CliExit, ExitCode } from "../exit.ts"
import { logLine, printJson } from "../output.ts"
import { makeProgress } from "../progress.ts"
import { snapshotFailure } from "./diff.ts"
import { withExamples } from "../help-doc.ts"

const options = {
  snapshot: Options.text("snapshot").pipe(Options.withDescription("SQLite snapshot file written by worksync backup")),
  out: Options.text("out").pipe(Options.withDescription("directory for records, activity, files and workspaces files")),
  format: Options.choice("format", ["ndjson", "csv"] as const).pipe(
    Options.withDescription("ndjson (default): one stored object per line; csv: one row per object, flattened"),
    Options.withDefault("ndjson" as const)
  ),
  run: Options.text("run").pipe(Options.withDescription("run id; default the latest complete run"), Options.optional),
  guardFormulas: Options.boolean("guard-formulas").pipe(
    Options.withDescription("csv: prefix cells starting with = + - @ with an apostrophe (spreadsheet formula injection)")
  ),
  json: jsonOption,
  ...verbosityOptions
}

export const exportCommand = Command.make("export", options, (flags) =>
  Effect.gen(function*() {
    const verbosity = verbosityOf(flags)
    // Rows of all four files together; the total is not known before the files are written.
    const progress = yield* makeProgress({ label: "rows exported", unit: "items", verbosity })
    let last = { file: "", rows: 0 }
    const result = yield* exportSnapshot({
      outDir: flags.out,
      format: flags.format,
      run: Option.getOrUndefined(flags.run),
      guardFormulas: flags.guardFormulas,
      onProgress: (file, rows) => {
        const added = file === last.file ? rows - last.rows : rows
        last = { file, rows }
        Effect.runSync(progress.advance(added))
      }
    }).pipe(
      Effect.ensuring(progress.done()),
      Effect.provide(SnapshotStore.layer(flags.snapshot, { mustExist: true })),
      Effect.catchAll((e): Effect.Effect<never, unknown> => {
        if (e instanceof ExportError) return Effect.fail(new CliExit({ code: ExitCode.failed, message: e.message }))
        return Effect.fail(snapshotFailure(e, flags.snapshot) ?? e)
      })
    )
    if (flags.json) {
      yield* printJson({
        runId: result.runId,
        format: result.format,
        ...Object.fromEntries(result.files.map((f) => [f.name, f.rows]))
      })
    }
    yield* logLine(
      verbosity,
      `export: run ${result.runId} to ${flags.out}: ${result.files.map((f) => `${f.name} ${f.rows}`).join(", ")}`
    )
  })).pipe(Command.withDescription(
    withExamples("write one snapshot run as ndjson or csv files", [
      "worksync export --snapshot backup.sqlite --out export/",
      "worksync export --snapshot backup.sqlite --out export/ --format csv --guard-formulas --run 4"
    ])
  ))
