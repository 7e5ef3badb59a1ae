/**
 * The snapshot store: backup runs, versioned entities and their membership in runs
 * (docs/snapshot.md), behind one service with two backends. A location that is a
 * PostgreSQL URL (`postgres://USER@HOST:PORT/DB`, optional `?schema=NAME`) opens the
 * PostgreSQL backend, shared by processes on many machines; anything else is a SQLite
 * file, the default. Callers see only `SnapshotStoreService`.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import { snapshotOnPostgres } from "./postgres-backends.ts"
import { isPostgresUrl } from "./postgres-url.ts"
import { openSqliteSnapshot } from "./snapshot-sqlite.ts"
import { RunNotFound, type RunRow, type SnapshotError, type SnapshotStoreService } from "./snapshot-types.ts"
import { StoreOpenError } from "./sqlite.ts"

export { StoreOpenError }
export type { ChangeCounts, ChangeRow, DiffEntity, IdChanges } from "./snapshot-diff.ts"
export type { RunEntity, RunFileKnownObject, RunFileObject, WorkspaceEntity } from "./snapshot-reads.ts"
export {
  type FileObjectRef,
  type ForgetResult,
  type MemberChange,
  type MemberChangeAsk,
  type MemberState,
  type MemberVersion,
  type MirrorReread,
  type RecordEntry,
  type RecordVersionRef,
  type RunCounts,
  type RunNote,
  RunNotFound,
  type RunRow,
  type RunStatus,
  scopeOf,
  SnapshotError,
  type SnapshotQuery,
  type SnapshotStoreService,
  type Verification
} from "./snapshot-types.ts"

export interface SnapshotOpenOptions {
  /** Open an existing store only (reading commands must not create an empty one). */
  readonly mustExist?: boolean
}

/** Opens the store at `location` (a file, or a PostgreSQL URL) for the scope. */
export const openSnapshot = (
  location: string,
  options: SnapshotOpenOptions = {}
): Effect.Effect<SnapshotStoreService, StoreOpenError, Scope.Scope> =>
  isPostgresUrl(location)
    ? Effect.flatMap(snapshotOnPostgres, (pg) => pg.openPostgresSnapshot(location, options))
    : openSqliteSnapshot(location, options)

export class SnapshotStore extends Context.Service<SnapshotStore, SnapshotStoreService>()("worksync/SnapshotStore") {
  /** Opens (creating when missing) the store at `location` for the life of the layer. */
  static readonly layer = (location: string, options: SnapshotOpenOptions = {}) =>
    Layer.effect(SnapshotStore, openSnapshot(location, options))
}

/**
 * Resolves a run argument: a run id given (must exist and be complete unless
 * `allowIncomplete`), or the latest complete run.
 */
export const resolveRun = (
  store: SnapshotStoreService,
  run: string | undefined,
  options: { readonly allowIncomplete?: boolean } = {}
): Effect.Effect<RunRow | undefined, SnapshotError | RunNotFound> =>
  Effect.gen(function*() {
    if (run === undefined) return yield* store.latestComplete
    const id = Number(run)
    if (!Number.isInteger(id) || id <= 0) {
      return yield* new RunNotFound({ file: store.file, run, detail: "is not a run id (a positive integer)" })
    }
    const row = yield* store.getRun(id)
    if (row === undefined) return yield* new RunNotFound({ file: store.file, run, detail: "does not exist" })
    if (row.status !== "complete" && options.allowIncomplete !== true) {
      return yield* new RunNotFound({ file: store.file, run, detail: `is ${row.status}, not complete` })
    }
    return row
  })

