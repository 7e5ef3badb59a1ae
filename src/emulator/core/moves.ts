/**
 * "Moves during a scan" fault: after a list-records page is served, records from the
 * back of the order (not yet read by a forward scan) are moved, as move-record would,
 * into another list and to a place before the page just served (already read). A scan
 * that assumes the order never changes misses them: the count does not move, and the
 * pages it reads next only look shifted by one, as after an insertion.
 *
 * In the alt variant's order (newest first, RECORD_ORDER) a move changes no place in the
 * listing, so the fault changes list and position there too but nothing shifts.
 */
import type { EmulatorContext } from "../context.ts"
import { all, run } from "./sql.ts"
import { emit, recordAction } from "./writes.ts"
import { recordDetail } from "./serialize.ts"

interface Row {
  readonly id: string
  readonly workspace_id: string
  readonly list_id: string
  readonly position: number
}

/**
 * Moves `moves` records after a page ending at offset `end` of the listing
 * `where`/`params` (ordered by `order`, the variant's list-records order).
 */
export const applyMoves = (
  ctx: EmulatorContext,
  moves: number,
  where: ReadonlyArray<string>,
  params: ReadonlyArray<unknown>,
  order: string,
  end: number
): void => {
  if (moves <= 0) return
  const condition = `r.deleted_at IS NULL AND ${where.join(" AND ")}`
  const reversed = order.split(",").map((term) =>
    /\bdesc\b/i.test(term) ? term.replace(/\bdesc\b/i, "ASC") : `${term.replace(/\basc\b/i, "").trim()} DESC`
  ).join(", ")
  // The farthest records: a forward scan has not reached them yet.
  const movers = all<Row>(
    ctx.db,
    `SELECT r.id, r.workspace_id, r.list_id, r.position FROM records r WHERE ${condition} ORDER BY ${reversed} LIMIT +?`,
    ...params,
    moves
  )
  // Their new place: halfway into what was already served, so churn at the very front
  // (deletions) does not take them away.
  const anchor = all<Row>(
    ctx.db,
    `SELECT r.id, r.workspace_id, r.list_id, r.position FROM records r WHERE ${condition} ORDER BY ${order} LIMIT 1 OFFSET +?`,
    ...params,
    Math.floor(Math.max(0, end - moves) / 2)
  )[0]
  if (anchor === undefined) return
  const now = ctx.clock.iso()
  const moved: Array<Row> = []
  ctx.db.transaction(() => {
    movers.forEach((row, i) => {
      if (row.id === anchor.id) return
      const other = all<{ id: string; title: string }>(
        ctx.db,
        "SELECT id, title FROM lists WHERE workspace_id = +? AND id <> ? AND deleted_at IS NULL ORDER BY position, id LIMIT 1",
        row.workspace_id,
        row.list_id
      )[0]
      run(
        ctx.db,
        "UPDATE records SET list_id = ?, position = ?, updated_at = ? WHERE id = ?",
        other?.id ?? row.list_id,
        anchor.position - (moves - i) / (moves + 1),
        now,
        row.id
      )
      if (other !== undefined) {
        recordAction(ctx, {
          workspaceId: row.workspace_id,
          recordId: row.id,
          userId: null,
          type: "MOVE",
          newValue: other.title,
          at: now
        })
      }
      moved.push(row)
    })
  })()
  for (const row of moved) emit(ctx, "TODO_MOVED", row.workspace_id, null, recordDetail(ctx.db, row.id))
}
