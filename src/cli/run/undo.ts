/** `worksync undo`: the work behind the definition in ../commands/undo.ts. */
import * as Effect from "effect/Effect"
import * as fs from "node:fs"
import { RestClient } from "../../client/rest-client.ts"
import { StoreBusy } from "../../store/file-lock.ts"
import { describeJournalError, openJournal } from "../../store/journal.ts"
import { isPostgresUrl } from "../../store/postgres-url.ts"
import { findWorkspace } from "../../sync/backup.ts"
import { journalKind, targetWorkspace, undo, type UndoReport } from "../../sync/undo.ts"
import type { UndoFlags } from "../commands/undo.ts"
import { type ConnectionFlags, verbosityOf } from "../common-options.ts"
import { checkConfigFile, clientLayerFromFlags, nextStepSuffix, targetFlags } from "../connection.ts"
import { CliExit, ExitCode, registerDescriber, usageError } from "../exit.ts"
import { logLine, printJson } from "../output.ts"
import { targetPrefix } from "./target.ts"

registerDescriber(describeJournalError)

const messageOf = (e: unknown): string =>
  typeof e === "object" && e !== null && "message" in e ? String((e as { message: unknown }).message) : String(e)

const summary = (r: UndoReport, dryRun: boolean): string =>
  dryRun
    ? `undo (dry run): would delete ${r.deleted}, revert ${r.reverted}; ${r.kept.length} kept; nothing was sent`
    : `undo: ${r.deleted} deleted, ${r.reverted} reverted, ${r.kept.length} kept, ${r.failed} failed`

/** The runs whose journals undo reads. */
const UNDOABLE = ["import-csv", "migrate", "restore"]

export const undoRun = (flags: UndoFlags) =>
  Effect.scoped(
    Effect.gen(function*() {
      const verbosity = verbosityOf(flags)
      yield* checkConfigFile
      // Opening creates a missing file: a journal to undo must exist.
      if (!isPostgresUrl(flags.journal) && !fs.existsSync(flags.journal)) {
        return yield* Effect.fail(usageError(`--journal ${flags.journal}: no such file; name the journal of the import-csv, migrate or restore to undo`))
      }
      const sourceFlags: ConnectionFlags = flags
      const client = yield* clientLayerFromFlags(targetFlags(sourceFlags, flags.to_), { rest: true }, targetPrefix(flags.to_))
      const report = yield* Effect.gen(function*() {
        const journal = yield* openJournal(flags.journal).pipe(
          Effect.catch((e) => Effect.fail(e instanceof StoreBusy ? new CliExit({ code: ExitCode.failed, message: e.message }) : e))
        )
        const kind = yield* journalKind(journal)
        if (kind === undefined || !UNDOABLE.includes(kind)) {
          return yield* Effect.fail(
            usageError(`--journal ${journal.file}: holds no run of import-csv, migrate or restore${kind !== undefined ? ` (it is a ${kind} journal)` : ""}; nothing to undo`)
          )
        }
        const ws = yield* targetWorkspace(journal)
        // Another account would answer every read "not found", which undo takes for "already
        // gone": the workspace the runs wrote to must be reachable first.
        if (ws !== undefined) {
          yield* findWorkspace(ws).pipe(
            Effect.catchTag("WorkspaceNotFound", () =>
              Effect.fail(usageError(
                `--journal ${journal.file}: its runs wrote to workspace ${ws}, which this connection does not reach; give the connection the ${kind} used${kind === "import-csv" ? "" : " (the target flags, --to-*)"}`
              )))
          )
        }
        yield* logLine(verbosity, `undo: the ${kind} run(s) of ${journal.file}${ws !== undefined ? ` in workspace ${ws}` : ""}`, "detail")
        return yield* undo(yield* RestClient, journal, { dryRun: flags.dryRun })
      }).pipe(
        Effect.provide(client),
        Effect.catch((e): Effect.Effect<never, unknown> =>
          e instanceof CliExit ? Effect.fail(e) : Effect.fail(
            new CliExit({
              code: ExitCode.failed,
              message: `undo failed: ${messageOf(e)}${nextStepSuffix(e)}; rerun with the same --journal to resume`
            })
          )
        )
      )
      if (flags.json) {
        yield* printJson({ deleted: report.deleted, reverted: report.reverted, kept: report.kept, failed: report.failed })
      }
      for (const k of report.kept) yield* logLine(verbosity, `undo: kept ${k.what} ${k.id}: ${k.why}`, "detail")
      yield* logLine(verbosity, summary(report, flags.dryRun))
      if (report.failed > 0) {
        return yield* Effect.fail(
          new CliExit({
            code: ExitCode.failed,
            message: `undo: ${report.failed} operation(s) could not finish; rerun with the same --journal to retry them`
          })
        )
      }
    })
  )
