/**
 * `worksync diff --snapshot FILE [--from RUN] [--to RUN] --json`: records and files
 * created, updated and deleted between two runs. Defaults: `--to` the latest complete
 * run, `--from` the complete run of the same scope before it.
 */
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { NothingToExport } from "../../connectors/export.ts"
import { RunNotFound, SnapshotError, SnapshotStore, StoreOpenError } from "../../store/snapshot.ts"
import { diff, type IdChanges } from "../../sync/diff.ts"
import { jsonOption, verbosityOf, verbosityOptions } from "../common-options.ts"
import { CliExit, ExitCode, usageError } from "../exit.ts"
import { logLine, printJson } from "../output.ts"
import { withExamples } from "../help-doc.ts"

const options = {
  snapshot: Options.text("snapshot").pipe(Options.withDescription("SQLite snapshot file written by worksync backup")),
  from: Options.text("from").pipe(
    Options.withDescription("earlier run id; default the complete run of the same scope before --to"),
    Options.optional
  ),
  to: Options.text("to").pipe(Options.withDescription("later run id; default the latest complete run"), Options.optional),
  json: jsonOption,
  ...verbosityOptions
}

const line = (what: string, c: IdChanges) =>
  `${what}: ${c.created.length} created, ${c.updated.length} updated, ${c.deleted.length} deleted`

export const diffCommand = Command.make("diff", options, (flags) =>
  Effect.gen(function*() {
    const verbosity = verbosityOf(flags)
    const { selection, result } = yield* diff({
      from: Option.getOrUndefined(flags.from),
      to: Option.getOrUndefined(flags.to)
    }).pipe(
      Effect.provide(SnapshotStore.layer(flags.snapshot, { mustExist: true })),
      Effect.catchAll((e): Effect.Effect<never, unknown> => Effect.fail(snapshotFailure(e, flags.snapshot) ?? e))
    )
    if (selection === undefined) {
      return yield* Effect.fail(usageError(`--snapshot ${flags.snapshot} has no complete run; run worksync backup first`))
    }
    if (flags.json) yield* printJson(result)
    yield* logLine(verbosity, `diff: run ${selection.from?.id ?? "(none)"} -> run ${selection.to.id}`)
    yield* logLine(verbosity, `  ${line("records", result.records)}`)
    yield* logLine(verbosity, `  ${line("files", result.files)}`)
    for (const [what, changes] of [["record", result.records], ["file", result.files]] as const) {
      for (const kind of ["created", "updated", "deleted"] as const) {
        for (const id of changes[kind]) yield* logLine(verbosity, `  ${what} ${kind} ${id}`, "detail")
      }
    }
  })).pipe(Command.withDescription(
    withExamples("records and files created, updated and deleted between two snapshot runs", [
      "worksync diff --snapshot backup.sqlite --json                # the latest run against the one before",
      "worksync diff --snapshot backup.sqlite --from 3 --to 7 --json --verbose"
    ])
  ))

/**
 * How the snapshot commands (backup, diff, export) end on snapshot problems: a missing
 * or foreign file and an unknown run are invocation errors (64); anything else is 1.
 */
export const snapshotFailure = (e: unknown, file: string): CliExit | undefined => {
  if (e instanceof StoreOpenError) {
    if (e.reason === "not-found") return usageError(`--snapshot: file not found: ${file}; run worksync backup first`)
    if (e.reason === "not-a-store" || e.reason === "too-new") return usageError(`--snapshot ${e.message}`)
    return new CliExit({ code: ExitCode.failed, message: e.message })
  }
  if (e instanceof RunNotFound) return usageError(e.message)
  if (e instanceof NothingToExport) return usageError(e.message)
  if (e instanceof SnapshotError) return new CliExit({ code: ExitCode.failed, message: e.message })
  return undefined
}
