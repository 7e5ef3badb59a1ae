/**
 * Differences between two runs, computed inside the store's database: set operations on
 * the run membership tables (ids) and version ids (a version id changes exactly when the
 * content hash does). Written once, in the SQL both backends speak, over the service's
 * `select` (both backends add these reads to their service). A `fromId` of 0 means no
 * earlier run: every id of `toId` is then created.
 */
import * as Effect from "effect/Effect"
import type { SnapshotQueries } from "./snapshot-reads.ts"
import type { SnapshotError } from "./snapshot-types.ts"

/** Membership tables that a diff compares. */
export type DiffEntity = "records" | "files"

export interface IdChanges {
  readonly created: ReadonlyArray<string>
  readonly updated: ReadonlyArray<string>
  readonly deleted: ReadonlyArray<string>
}

export interface ChangeCounts {
  readonly created: number
  readonly updated: number
  readonly deleted: number
}

/** One created, updated or deleted id of a page of changes, with its stored content before and after. */
export interface ChangeRow {
  readonly id: string
  readonly from_vid: number | null
  readonly to_vid: number | null
  /** Stored content (JSON text) in the `from` run; null when created. */
  readonly before: string | null
  /** Stored content in the `to` run; null when deleted. */
  readonly after: string | null
  readonly workspace_id: string
}

export interface SnapshotDiff {
  /** Ids created, updated and deleted between run `fromId` (0: none) and run `toId`, sorted. */
  readonly diffIds: (entity: DiffEntity, fromId: number, toId: number) => Effect.Effect<IdChanges, SnapshotError>
  /** Only the numbers of `diffIds`. */
  readonly diffCounts: (entity: DiffEntity, fromId: number, toId: number) => Effect.Effect<ChangeCounts, SnapshotError>
  /**
   * Up to `limit` changed ids after `afterId` (keyset paging), by id, in one pass over
   * both runs: changed or created ids of `toId`, and deleted ids of `fromId`.
   */
  readonly changesPage: (
    entity: DiffEntity,
    fromId: number,
    toId: number,
    afterId: string,
    limit: number
  ) => Effect.Effect<Array<ChangeRow>, SnapshotError>
}

type Kind = "created" | "updated" | "deleted"

const table = (entity: DiffEntity) => (entity === "records" ? "run_records" : "run_files")

/** Each kind's read, taking the two run ids in the order of its `?` (paramsOf). */
const idsSql = (kind: Kind, entity: DiffEntity): string => {
  const t = table(entity)
  switch (kind) {
    case "created":
      return `SELECT t.id FROM ${t} t WHERE t.run_id = ?
              AND NOT EXISTS (SELECT 1 FROM ${t} f WHERE f.run_id = ? AND f.id = t.id) ORDER BY t.id`
    case "deleted":
      return `SELECT f.id FROM ${t} f WHERE f.run_id = ?
              AND NOT EXISTS (SELECT 1 FROM ${t} t WHERE t.run_id = ? AND t.id = f.id) ORDER BY f.id`
    case "updated":
      return `SELECT t.id FROM ${t} t JOIN ${t} f ON f.run_id = ? AND f.id = t.id
              WHERE t.run_id = ? AND f.vid <> t.vid ORDER BY t.id`
  }
}

/** The parameters of each read above, in the order its `?` appear. */
const paramsOf = (kind: Kind, fromId: number, toId: number) => (kind === "created" ? [toId, fromId] : [fromId, toId])

const pageSql = (entity: DiffEntity) => {
  const run = table(entity)
  const content = entity === "records" ? "records" : "files"
  const col = entity === "records" ? "detail" : "item"
  return `
    SELECT c.id, c.from_vid, c.to_vid,
      (SELECT ${col} FROM ${content} WHERE vid = c.from_vid) AS before,
      (SELECT ${col} FROM ${content} WHERE vid = c.to_vid) AS after,
      coalesce((SELECT workspace_id FROM ${content} WHERE vid = c.to_vid),
               (SELECT workspace_id FROM ${content} WHERE vid = c.from_vid)) AS workspace_id
    FROM (
      SELECT t.id, f.vid AS from_vid, t.vid AS to_vid
        FROM ${run} t LEFT JOIN ${run} f ON f.run_id = ? AND f.id = t.id
        WHERE t.run_id = ? AND t.id > ? AND (f.vid IS NULL OR f.vid <> t.vid)
      UNION ALL
      SELECT f.id, f.vid AS from_vid, NULL AS to_vid
        FROM ${run} f
        WHERE f.run_id = ? AND f.id > ?
          AND NOT EXISTS (SELECT 1 FROM ${run} t WHERE t.run_id = ? AND t.id = f.id)
    ) c
    ORDER BY c.id LIMIT ?`
}

export const snapshotDiff = ({ select }: SnapshotQueries): SnapshotDiff => {
  const ids = (entity: DiffEntity, kind: Kind, fromId: number, toId: number) =>
    Effect.map(
      select<{ id: string }>(`diff ${entity}`, { sql: idsSql(kind, entity), params: paramsOf(kind, fromId, toId) }),
      (rows) => rows.map((r) => r.id)
    )
  const count = (entity: DiffEntity, kind: Kind, fromId: number, toId: number) =>
    Effect.map(
      select<{ n: number }>(`count ${entity} changes`, {
        sql: `SELECT count(*) AS n FROM (${idsSql(kind, entity)}) AS c`,
        params: paramsOf(kind, fromId, toId)
      }),
      (rows) => rows[0]?.n ?? 0
    )
  return {
    diffIds: (entity, fromId, toId) =>
      Effect.all({
        created: ids(entity, "created", fromId, toId),
        updated: ids(entity, "updated", fromId, toId),
        deleted: ids(entity, "deleted", fromId, toId)
      }),
    diffCounts: (entity, fromId, toId) =>
      Effect.all({
        created: count(entity, "created", fromId, toId),
        updated: count(entity, "updated", fromId, toId),
        deleted: count(entity, "deleted", fromId, toId)
      }),
    changesPage: (entity, fromId, toId, afterId, limit) =>
      select<ChangeRow>(`read ${entity} changes`, {
        sql: pageSql(entity),
        // In the order of the `?` above.
        params: [fromId, toId, afterId, fromId, afterId, toId, limit]
      })
  }
}
