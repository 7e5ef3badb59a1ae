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
import * as Command from "effect/cli/Command"
import * as Flag from "effect/cli/Flag"
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
  from: Flag.String("from").pipe(Flag.withDescription("source: workspace:ID or dir:PATH")),
  to: Flag.String("to").pipe(Flag.withDescription("target: workspace:ID or dir:PATH")),
  journal: Flag.String("journal").pipe(
    Flag.withDescription("journal: a SQLite file or a PostgreSQL URL, created if missing; rerun with the same journal to resume")
  ),
  concurrency: Flag.Int("concurrency").pipe(
    Flag.withDescription(`files copied at once (default ${COPY_DEFAULT_CONCURRENCY})`),
    Flag.optional
  ),
  include: Flag.String("include").pipe(
    Flag.withDescription("with a dir: source, copy only paths matching this glob (repeatable)"),
    Flag.atLeast(0)
  ),
  exclude: Flag.String("exclude").pipe(
    Flag.withDescription("with a dir: source, skip paths matching this glob (repeatable)"),
    Flag.atLeast(0)
  ),
  uploadStrategy: Flag.Literals("upload-strategy", ["auto", "presign"] as const).pipe(
    Flag.withDescription(
      "to a workspace: auto sends small files in GraphQL uploadFiles batches (measured faster), presign sends every file through the presigned flow"
    ),
    Flag.withDefault("auto" as const)
  ),
  json: jsonOption,
  ...engineOption,
  ...verbosityOptions
}

export type CopyFilesFlags = Command.Command.Config.Infer<typeof options>

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
