/**
 * Retention of a snapshot: keep the last N complete runs of each scope, drop older runs,
 * then drop stored versions no remaining run refers to. The store does the work
 * (`SnapshotStore.pruneRuns`, src/store/snapshot.ts), in one transaction with set-based
 * deletes; see there for what is never lost (the latest complete run of every scope among
 * it).
 */
import type * as Effect from "effect/Effect"
import type { PruneResult, SnapshotError, SnapshotStoreService } from "../../src/store/snapshot.ts"

export type { PruneResult }

/** Prunes `store` to the last `keep` complete runs per scope (keep < 1 counts as 1). */
export const pruneRuns = (store: SnapshotStoreService, keep: number): Effect.Effect<PruneResult, SnapshotError> =>
  store.pruneRuns({ keep })
