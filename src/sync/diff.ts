/**
 * Differences between two runs of a snapshot, computed inside the store's database (the
 * store's diffIds and diffCounts, snapshot-diff.ts): nothing is loaded beyond the ids in
 * the answer. Which runs a diff compares is decided here.
 */
import * as Effect from "effect/Effect"
import {
  type DiffEntity,
  type IdChanges,
  type RunNotFound,
  resolveRun,
  type RunRow,
  type SnapshotError,
  SnapshotStore,
  type SnapshotStoreService
} from "../store/snapshot.ts"

export type { ChangeCounts, DiffEntity, IdChanges } from "../store/snapshot.ts"

/** The contract's `worksync diff --json` object. */
export interface DiffResult {
  readonly records: IdChanges
  readonly files: IdChanges
}

/** Ids created, updated and deleted between run `fromId` (0: none) and run `toId`, sorted (the store's diffIds). */
export const diffIds = (store: SnapshotStoreService, entity: DiffEntity, fromId: number, toId: number) =>
  store.diffIds(entity, fromId, toId)

/** Only the numbers (what `backup --json` reports). */
export const diffCounts = (store: SnapshotStoreService, entity: DiffEntity, fromId: number, toId: number) =>
  store.diffCounts(entity, fromId, toId)

export interface DiffSelection {
  readonly from: RunRow | undefined
  readonly to: RunRow
}

/**
 * The runs a diff compares: `to` defaults to the latest complete run, `from` to the
 * complete run of the same scope before it (none: everything in `to` is created).
 */
export const selectRuns = (
  store: SnapshotStoreService,
  options: { readonly from?: string | undefined; readonly to?: string | undefined }
): Effect.Effect<DiffSelection | undefined, SnapshotError | RunNotFound> =>
  Effect.gen(function*() {
    const to = yield* resolveRun(store, options.to)
    if (to === undefined) return undefined
    const from = options.from !== undefined
      ? yield* resolveRun(store, options.from)
      : yield* store.previousComplete(to.scope, to.id)
    return { from, to }
  })

/** The contract's diff between two runs (ids sorted). */
export const diffRuns = (
  store: SnapshotStoreService,
  fromId: number | undefined,
  toId: number
): Effect.Effect<DiffResult, SnapshotError> =>
  Effect.all({
    records: diffIds(store, "records", fromId ?? 0, toId),
    files: diffIds(store, "files", fromId ?? 0, toId)
  })

/** `diffRuns` with the store from the context and the contract's defaults. */
export const diff = (options: { readonly from?: string | undefined; readonly to?: string | undefined } = {}) =>
  Effect.gen(function*() {
    const store = yield* SnapshotStore
    const selection = yield* selectRuns(store, options)
    if (selection === undefined) return { selection, result: emptyDiff }
    return { selection, result: yield* diffRuns(store, selection.from?.id, selection.to.id) }
  })

export const emptyDiff: DiffResult = {
  records: { created: [], updated: [], deleted: [] },
  files: { created: [], updated: [], deleted: [] }
}
