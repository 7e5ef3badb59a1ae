/** `worksync prune`: the work behind the definition in ../commands/prune.ts. */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as fs from "node:fs"
import { StoreBusy } from "../../store/file-lock.ts"
import { ObjectStoreError, openObjectStore } from "../../store/object-store.ts"
import { SnapshotStore } from "../../store/snapshot.ts"
import { EmptyPolicy, prune, type PruneReport } from "../../sync/prune.ts"
import type { RetentionPolicy } from "../../sync/retention.ts"
import type { PruneFlags } from "../commands/prune.ts"
import { verbosityOf } from "../common-options.ts"
import { CliExit, ExitCode, usageError } from "../exit.ts"
import { withNotify } from "../notify.ts"
import { logLine, printJson } from "../output.ts"
import { formatBytes } from "../progress.ts"
import { snapshotFailure } from "./snapshot-failure.ts"

/** The contract's `--json` object. */
const contractJson = (r: PruneReport) => ({
  runs: r.runs.map((d) => ({ runId: String(d.runId), startedAt: d.startedAt, keep: d.keep, reasons: d.reasons })),
  forgotten: r.forgotten,
  kept: r.kept,
  bytesBefore: r.bytesBefore,
  bytesAfter: r.bytesAfter
})

const summary = (r: PruneReport): string =>
  r.dryRun
    ? `prune: dry run: would forget ${r.forgotten} run${r.forgotten === 1 ? "" : "s"}, keep ${r.kept}; nothing was changed`
    : `prune: forgot ${r.forgotten} run${r.forgotten === 1 ? "" : "s"}, kept ${r.kept}; removed ${r.removedVersions} stored versions` +
      ` and ${r.removedObjects} file objects; ${formatBytes(r.bytesBefore)} -> ${formatBytes(r.bytesAfter)}`

export const pruneRun = (flags: PruneFlags) =>
  Effect.gen(function*() {
    const verbosity = verbosityOf(flags)
    const counts = [
      ["keep-last", flags.keepLast],
      ["keep-daily", flags.keepDaily],
      ["keep-weekly", flags.keepWeekly],
      ["keep-monthly", flags.keepMonthly]
    ] as const
    for (const [name, value] of counts) {
      const n = Option.getOrUndefined(value)
      if (n !== undefined && n < 0) return yield* Effect.fail(usageError(`--${name} ${n}: must be 0 or more`))
    }
    const policy: RetentionPolicy = {
      keepLast: Option.getOrUndefined(flags.keepLast),
      keepDaily: Option.getOrUndefined(flags.keepDaily),
      keepWeekly: Option.getOrUndefined(flags.keepWeekly),
      keepMonthly: Option.getOrUndefined(flags.keepMonthly)
    }
    const filesDir = Option.getOrUndefined(flags.files)
    if (filesDir !== undefined && !fs.statSync(filesDir, { throwIfNoEntry: false })?.isDirectory()) {
      return yield* Effect.fail(usageError(`--files ${filesDir}: no such directory (the DIR of backup --files)`))
    }

    const report = yield* Effect.gen(function*() {
      const files = filesDir === undefined ? undefined : yield* openObjectStore(filesDir)
      return yield* prune({ policy, dryRun: flags.dryRun, files })
    }).pipe(
      Effect.provide(SnapshotStore.layer(flags.snapshot, { mustExist: true })),
      Effect.catch((e): Effect.Effect<never, unknown> => {
        if (e instanceof EmptyPolicy) return Effect.fail(usageError(e.message))
        if (e instanceof StoreBusy) return Effect.fail(new CliExit({ code: ExitCode.failed, message: e.message }))
        if (e instanceof ObjectStoreError) {
          return Effect.fail(new CliExit({ code: ExitCode.failed, message: `prune: ${e.message}; a rerun finishes the job` }))
        }
        const mapped = snapshotFailure(e, flags.snapshot)
        return Effect.fail(mapped ?? e)
      })
    )

    if (flags.json) yield* printJson(contractJson(report))
    if (flags.dryRun || verbosity === "verbose") {
      for (const d of report.runs) {
        const line = `run ${d.runId}  ${d.startedAt}  ${d.keep ? "keep  " : "forget"}${d.reasons.length > 0 ? `  ${d.reasons.join(", ")}` : ""}`
        yield* logLine(verbosity, line)
      }
    }
    yield* logLine(verbosity, summary(report))
    return summary(report)
  }).pipe(withNotify("prune", flags, (line) => line))
