/**
 * `worksync copy-files --from SRC --to DST --journal FILE [--concurrency N] [--json]`:
 * SRC and DST are `workspace:ID` or `dir:PATH`; the target account may differ
 * (`--to-rest-url`, `--to-token`, ...; each defaults to the source's).
 *
 * Exit: 0 every file copied (now or before); 1 some file failed or the copy could not
 * finish (a rerun with the same journal resumes); 64 bad invocation (an unknown source
 * workspace among them).
 *
 * The definition only; the work is in ../run/copy-files.ts, loaded when the command runs.
 */
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import * as Effect from "effect/Effect"
import { connectionOptions, jsonOption, targetConnectionOptions, verbosityOptions } from "../common-options.ts"
import { engineOption, onEngineOr } from "../engine-option.ts"
import { withExamples } from "../help-doc.ts"

/**
 * The connector's DEFAULT_CONCURRENCY (connectors/files/copy.ts), for help without loading
 * the connector; run/copy-files.ts fails to compile if the two differ.
 */
export const COPY_DEFAULT_CONCURRENCY = 4

export const options = {
  ...connectionOptions,
  to_: targetConnectionOptions,
  from: Options.text("from").pipe(Options.withDescription("source: workspace:ID or dir:PATH")),
  to: Options.text("to").pipe(Options.withDescription("target: workspace:ID or dir:PATH")),
  journal: Options.text("journal").pipe(
    Options.withDescription("journal: a SQLite file or a PostgreSQL URL, created if missing; rerun with the same journal to resume")
  ),
  concurrency: Options.integer("concurrency").pipe(
    Options.withDescription(`files copied at once (default ${COPY_DEFAULT_CONCURRENCY})`),
    Options.optional
  ),
  include: Options.text("include").pipe(
    Options.withDescription("with a dir: source, copy only paths matching this glob (repeatable)"),
    Options.repeated
  ),
  exclude: Options.text("exclude").pipe(
    Options.withDescription("with a dir: source, skip paths matching this glob (repeatable)"),
    Options.repeated
  ),
  uploadStrategy: Options.choice("upload-strategy", ["auto", "presign"] as const).pipe(
    Options.withDescription(
      "to a workspace: auto sends small files in GraphQL uploadFiles batches (measured faster), presign sends every file through the presigned flow"
    ),
    Options.withDefault("auto" as const)
  ),
  json: jsonOption,
  ...engineOption,
  ...verbosityOptions
}

export type CopyFilesFlags = Command.Command.ParseConfig<typeof options>

export const copyFilesCommand = Command.make("copy-files", options, (flags) =>
  onEngineOr("copy-files", flags, () => Effect.flatMap(Effect.promise(() => import("../run/copy-files.ts")), (run) => run.copyFilesRun(flags)))).pipe(
    Command.withDescription(
      withExamples("copy files between workspaces and directories (presigned uploads, resumable)", [
        "worksync copy-files --from workspace:website --to dir:./files --journal files.journal.sqlite",
        "worksync copy-files --from dir:./files --to workspace:archive --journal up.journal.sqlite --exclude manifest.ndjson",
        "worksync copy-files --from workspace:website --to workspace:website --to-profile other-account --journal move.sqlite"
      ], ["Rerun with the same --journal to resume: nothing is copied twice."])
    )
  )
