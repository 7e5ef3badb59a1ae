/**
 * How the snapshot commands (backup, diff, export) end on snapshot problems: a missing
 * or foreign file and an unknown run are invocation errors (64); anything else is 1.
 */
import { NothingToExport } from "../../connectors/export.ts"
import { isPostgresUrl, redactUrl } from "../../store/postgres-url.ts"
import { RunNotFound, SnapshotError, StoreOpenError } from "../../store/snapshot.ts"
import { CliExit, ExitCode, usageError } from "../exit.ts"

/** A store location as messages show it: a database URL never with its password. */
export const shownLocation = (location: string): string => isPostgresUrl(location) ? redactUrl(location) : location

export const snapshotFailure = (e: unknown, location: string): CliExit | undefined => {
  if (e instanceof StoreOpenError) {
    if (e.reason === "not-found") {
      return usageError(
        isPostgresUrl(location)
          ? `--snapshot ${shownLocation(location)}: no snapshot in that database schema; run worksync backup first`
          : `--snapshot: file not found: ${location}; run worksync backup first`
      )
    }
    if (e.reason === "not-a-store" || e.reason === "too-new") return usageError(`--snapshot ${e.message}`)
    return new CliExit({ code: ExitCode.failed, message: e.message })
  }
  if (e instanceof RunNotFound) return usageError(e.message)
  if (e instanceof NothingToExport) return usageError(e.message)
  if (e instanceof SnapshotError) return new CliExit({ code: ExitCode.failed, message: e.message })
  return undefined
}
