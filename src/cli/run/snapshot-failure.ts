/**
 * How the snapshot commands (backup, diff, export) end on snapshot problems: a missing
 * or foreign file and an unknown run are invocation errors (64); anything else is 1.
 */
import { NothingToExport } from "../../connectors/export.ts"
import { RunNotFound, SnapshotError, StoreOpenError } from "../../store/snapshot.ts"
import { CliExit, ExitCode, usageError } from "../exit.ts"

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
