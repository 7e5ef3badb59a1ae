/**
 * Differences between two runs of a snapshot, computed inside the store's database: set operations
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
// Each read takes the two run ids in the order its `?` appear (paramsOf).
export const createdSql = (entity: DiffEntity) =>
  `SELECT t.id FROM ${table(entity)} t WHERE t.run_id = ?
   AND NOT EXISTS (SELECT 1 FROM ${table(entity)} f WHERE f.run_id = ? AND f.id = t.id) ORDER BY t.id`
export const deletedSql = (entity: DiffEntity) =>
  `SELECT f.id FROM ${table(entity)} f WHERE f.run_id = ?
   AND NOT EXISTS (SELECT 1 FROM ${table(entity)} t WHERE t.run_id = ? AND t.id = f.id) ORDER BY f.id`
export const updatedSql = (entity: DiffEntity) =>
  `SELECT t.id FROM ${table(entity)} t JOIN ${table(entity)} f ON f.run_id = ? AND f.id = t.id
   WHERE t.run_id = ? AND f.vid <> t.vid ORDER BY t.id`

const countSql = (sql: string) => `SELECT count(*) AS n FROM (${sql}) AS c`

/** The parameters of each read above, in the order its `?` appear. */
const paramsOf = (kind: "created" | "updated" | "deleted", fromId: number, toId: number) =>
  kind === "created" ? [toId, fromId] : [fromId, toId]

/** Ids created, updated and deleted between run `fromId` (0: none) and run `toId`, sorted. */
export const diffIds = (store: SnapshotStoreService, entity: DiffEntity, fromId: number, toId: number) =>
  Effect.all({
    created: ids(store, entity, createdSql(entity), paramsOf("created", fromId, toId)),
    updated: ids(store, entity, updatedSql(entity), paramsOf("updated", fromId, toId)),
    deleted: ids(store, entity, deletedSql(entity), paramsOf("deleted", fromId, toId))
  }) satisfies Effect.Effect<IdChanges, SnapshotError>

const ids = (store: SnapshotStoreService, entity: DiffEntity, sql: string, params: Array<number>) =>
  Effect.map(store.select<{ id: string }>(`diff ${entity}`, { sql, params }), (rows) => rows.map((r) => r.id))

/** Only the numbers (what `backup --json` reports). */
export const diffCounts = (store: SnapshotStoreService, entity: DiffEntity, fromId: number, toId: number) => {
  const n = (sql: string, params: Array<number>) =>
    Effect.map(store.select<{ n: number }>(`count ${entity} changes`, { sql: countSql(sql), params }), (rows) => rows[0]?.n ?? 0)
  return Effect.all({
    created: n(createdSql(entity), paramsOf("created", fromId, toId)),
    updated: n(updatedSql(entity), paramsOf("updated", fromId, toId)),
    deleted: n(deletedSql(entity), paramsOf("deleted", fromId, toId))
  }) satisfies Effect.Effect<ChangeCounts, SnapshotError>
}

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
