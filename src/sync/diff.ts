/**
 * Differences between two runs of a snapshot, computed inside SQLite: set operations
 * on the run membership tables (ids) and version ids (a version id changes exactly
 * when the content hash does). Nothing is loaded beyond the ids in the answer.
 */
import * as Effect from "effect/Effect"
import {
  type RunNotFound,
  resolveRun,
  type RunRow,
  type SnapshotError,
  SnapshotStore,
  type SnapshotStoreService
} from "../store/snapshot.ts"

export interface IdChanges {
  readonly created: ReadonlyArray<string>
  readonly updated: ReadonlyArray<string>
  readonly deleted: ReadonlyArray<string>
}

/** The contract's `worksync diff --json` object. */
export interface DiffResult {
  readonly records: IdChanges
  readonly files: IdChanges
}

export interface ChangeCounts {
  readonly created: number
  readonly updated: number
  readonly deleted: number
}

/** Membership tables that diff compares. */
export type DiffEntity = "records" | "files"

const table = (entity: DiffEntity) => (entity === "records" ? "run_records" : "run_files")

// `from` may be 0 (no earlier run): every id of `to` is then created.
export const createdSql = (entity: DiffEntity) =>
  `SELECT t.id FROM ${table(entity)} t WHERE t.run_id = @to
   AND NOT EXISTS (SELECT 1 FROM ${table(entity)} f WHERE f.run_id = @from AND f.id = t.id) ORDER BY t.id`
export const deletedSql = (entity: DiffEntity) =>
  `SELECT f.id FROM ${table(entity)} f WHERE f.run_id = @from
   AND NOT EXISTS (SELECT 1 FROM ${table(entity)} t WHERE t.run_id = @to AND t.id = f.id) ORDER BY f.id`
export const updatedSql = (entity: DiffEntity) =>
  `SELECT t.id FROM ${table(entity)} t JOIN ${table(entity)} f ON f.run_id = @from AND f.id = t.id
   WHERE t.run_id = @to AND f.vid <> t.vid ORDER BY t.id`

const countSql = (sql: string) => `SELECT count(*) AS n FROM (${sql})`

/** Ids created, updated and deleted between run `fromId` (0: none) and run `toId`, sorted. */
export const diffIds = (store: SnapshotStoreService, entity: DiffEntity, fromId: number, toId: number) =>
  store.query(`diff ${entity}`, (db) => {
    const ids = (sql: string) => db.prepare(sql).pluck().all({ to: toId, from: fromId }) as Array<string>
    return {
      created: ids(createdSql(entity)),
      updated: ids(updatedSql(entity)),
      deleted: ids(deletedSql(entity))
    } satisfies IdChanges
  })

/** Only the numbers (what `backup --json` reports). */
export const diffCounts = (store: SnapshotStoreService, entity: DiffEntity, fromId: number, toId: number) =>
  store.query(`count ${entity} changes`, (db) => {
    const n = (sql: string) => (db.prepare(countSql(sql)).get({ to: toId, from: fromId }) as { n: number }).n
    return {
      created: n(createdSql(entity)),
      updated: n(updatedSql(entity)),
      deleted: n(deletedSql(entity))
    } satisfies ChangeCounts
  })

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
