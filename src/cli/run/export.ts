/** `worksync export`: the work behind the definition in ../commands/export.ts. */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { ExportError, exportSnapshot } from "../../connectors/export.ts"
import { SnapshotStore } from "../../store/snapshot.ts"
import type { ExportFlags } from "../commands/export.ts"
import { verbosityOf } from "../common-options.ts"
import { CliExit, ExitCode } from "../exit.ts"
import { logLine, printJson } from "../output.ts"
import { makeProgress } from "../progress.ts"
import { snapshotFailure } from "./snapshot-failure.ts"

export const exportRun = (flags: ExportFlags) =>
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
      Effect.catch((e): Effect.Effect<never, unknown> => {
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
  })
