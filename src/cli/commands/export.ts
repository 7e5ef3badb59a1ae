/**
 * `worksync export --snapshot FILE --out DIR [--format ndjson|csv] [--run RUN]
 *  [--files DIR] [--guard-formulas] [--json]`: records, activity, files and workspaces of
 * one run; with `--files`, the run's file bytes under `DIR/files/` too.
 *
 * The definition only; the work is in ../run/export.ts, loaded when the command runs.
 */
import * as Command from "effect/cli/Command"
import * as Flag from "effect/cli/Flag"
import * as Effect from "effect/Effect"
import { booleanFlag, jsonOption, verbosityOptions } from "../common-options.ts"
import { withExamples } from "../help-doc.ts"

export const options = {
  snapshot: Flag.String("snapshot").pipe(Flag.withDescription("snapshot written by worksync backup: a SQLite file or a PostgreSQL URL")),
  out: Flag.String("out").pipe(Flag.withDescription("directory for records, activity, files and workspaces files")),
  format: Flag.Literals("format", ["ndjson", "csv"] as const).pipe(
    Flag.withDescription("ndjson (default): one stored object per line; csv: one row per object, flattened"),
    Flag.withDefault("ndjson" as const)
  ),
  run: Flag.String("run").pipe(Flag.withDescription("run id; default the latest complete run"), Flag.optional),
  files: Flag.String("files").pipe(
    Flag.withDescription(
      "the files directory of backup --files: also lay the run's file bytes out under OUT/files/<workspace>/, with a manifest.ndjson each, as copy-files does"
    ),
    Flag.optional
  ),
  guardFormulas: booleanFlag("guard-formulas").pipe(
    Flag.withDescription("csv: prefix cells starting with = + - @ with an apostrophe (spreadsheet formula injection)")
  ),
  json: jsonOption,
  ...verbosityOptions
}

export type ExportFlags = Command.Command.Config.Infer<typeof options>

export const exportCommand = Command.make("export", options, (flags) =>
  Effect.flatMap(Effect.promise(() => import("../run/export.ts")), (run) => run.exportRun(flags))).pipe(
    Command.withDescription(
      withExamples("write one snapshot run as ndjson or csv files", [
        "worksync export --snapshot backup.sqlite --out export/",
        "worksync export --snapshot backup.sqlite --out export/ --format csv --guard-formulas --run 4",
        "worksync export --snapshot backup.sqlite --out export/ --files files/   # with the files' bytes"
      ])
    )
  )
