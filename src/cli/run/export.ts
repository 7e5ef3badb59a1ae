/** `worksync export`: the work behind the definition in ../commands/export.ts. */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as fs from "node:fs"
import { ExportError, exportSnapshot } from "../../connectors/export.ts"
import { openObjectStore } from "../../store/object-store.ts"
import { SnapshotStore } from "../../store/snapshot.ts"
import type { ExportFlags } from "../commands/export.ts"
import { verbosityOf } from "../common-options.ts"
import { CliExit, ExitCode, usageError } from "../exit.ts"
import { logLine, printJson } from "../output.ts"
import { formatBytes, makeProgress } from "../progress.ts"
import { snapshotFailure } from "./snapshot-failure.ts"

export const exportRun = (flags: ExportFlags) =>
  Effect.gen(function*() {
    const verbosity = verbosityOf(flags)
    const filesDir = Option.getOrUndefined(flags.files)
    if (filesDir !== undefined && !fs.statSync(filesDir, { throwIfNoEntry: false })?.isDirectory()) {
      return yield* Effect.fail(usageError(`--files ${filesDir}: no such directory (the DIR of backup --files)`))
    }
    // Rows of all four files together; the total is not known before the files are written.
    const progress = yield* makeProgress({ label: "rows exported", unit: "items", verbosity })
    // Rows so far of each file: two files may be written at once.
    const written = new Map<string, number>()
    const files = filesDir === undefined ? undefined : yield* openObjectStore(filesDir).pipe(
      Effect.mapError((e) => new CliExit({ code: ExitCode.failed, message: e.message }))
    )
    const result = yield* exportSnapshot({
      files,
      outDir: flags.out,
      format: flags.format,
      run: Option.getOrUndefined(flags.run),
      guardFormulas: flags.guardFormulas,
      onProgress: (file, rows) => {
        const added = rows - (written.get(file) ?? 0)
        written.set(file, rows)
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
        ...Object.fromEntries(result.files.map((f) => [f.name, f.rows])),
        ...(result.fileBytes === undefined ? {} : { fileBytes: { written: result.fileBytes.written, bytes: result.fileBytes.bytes } })
      })
    }
    yield* logLine(
      verbosity,
      `export: run ${result.runId} to ${flags.out}: ${result.files.map((f) => `${f.name} ${f.rows}`).join(", ")}` +
        (result.fileBytes === undefined ? "" : `; ${result.fileBytes.written} file(s) under files/ (${formatBytes(result.fileBytes.bytes)})`)
    )
    const failed = result.fileBytes?.failed ?? []
    if (failed.length > 0) {
      return yield* Effect.fail(
        new CliExit({
          code: ExitCode.failed,
          message: `export: run ${result.runId}: ${failed.length} file(s) not written under files/ (first: ${failed[0]}); the others are`
        })
      )
    }
  })
