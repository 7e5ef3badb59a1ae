/**
 * Activity reads: one record's comments and actions (list-record-activity,
 * R-REST-ACTIVITY-*) and a workspace-wide feed (list-activity). Newest first
 * (assumptions.ts ACTIVITY_ORDER).
 */
import { Schema } from "effect"
import { ListRecordActivityInput, Limit, Skip } from "../../schema/inputs.ts"
import {
  ACTIVITY_DEFAULT_LIMIT,
  ACTIVITY_MAX_LIMIT,
  LIST_ACTIVITY_DEFAULT_LIMIT,
  PAGE_DEFAULT_SKIP,
  PAGE_MAX_LIMIT
} from "../../schema/limits.ts"
import { openStruct } from "../../schema/open.ts"
import type { EmulatorContext, Principal, RestOperation } from "../context.ts"
import { notFound } from "../http.ts"
import { accessibleWorkspaceIds, requireWorkspace } from "./access.ts"
import { ACTIVITY_SELECT, activityItem, type ActivityRow } from "./serialize.ts"
import { all, get } from "./sql.ts"
import { decodeInput, pageLimit } from "./validate.ts"

const KIND_FILTER = {
  all: "",
  comments: " AND a.kind = 'COMMENT'",
  actions: " AND a.kind = 'ACTION'"
} as const

/** ACTIVITY_ORDER: newest first; the alt variant's reading, oldest first. */
const activityOrder = (ctx: EmulatorContext): string =>
  ctx.variant === "alt" ? "a.created_at ASC, a.id ASC" : "a.created_at DESC, a.id DESC"

const listRecordActivity = (ctx: EmulatorContext, principal: Principal, body: Record<string, unknown>) => {
  const input = decodeInput(ListRecordActivityInput, body)
  const ws = requireWorkspace(ctx, principal, input.workspaceId, "read")
  const record = get(ctx.db, "SELECT 1 FROM records WHERE id = ? AND workspace_id = ? AND deleted_at IS NULL", input.recordId, ws.id)
  if (record === undefined) throw notFound("Record")
  // REST_TRANSPORT_DETAILS: the alt variant leaves deleted comments out.
  const kind = KIND_FILTER[input.type ?? "all"] + (ctx.variant === "alt" ? " AND a.deleted_at IS NULL" : "")
  const limit = pageLimit(input.limit, ACTIVITY_DEFAULT_LIMIT, ACTIVITY_MAX_LIMIT)
  const skip = input.skip ?? PAGE_DEFAULT_SKIP
  const rows = all<ActivityRow>(
    ctx.db,
    `${ACTIVITY_SELECT} WHERE a.record_id = +?${kind} ORDER BY ${activityOrder(ctx)} LIMIT +? OFFSET +?`,
    input.recordId,
    limit,
    skip
  )
  const total = get<{ n: number }>(ctx.db, `SELECT count(*) AS n FROM activity a WHERE a.record_id = ?${kind}`, input.recordId)!.n
  return { items: rows.map(activityItem), totalCount: total }
}

/** list-activity body (an emulator choice: assumptions.ts EXTRA_OPERATIONS). */
export const ListActivityInput = openStruct({
  workspaceId: Schema.optional(Schema.String),
  skip: Schema.optional(Skip),
  limit: Schema.optional(Limit)
})

const listActivity = (ctx: EmulatorContext, principal: Principal, body: Record<string, unknown>) => {
  const input = decodeInput(ListActivityInput, body)
  const ids =
    input.workspaceId === undefined
      ? accessibleWorkspaceIds(ctx, principal)
      : [requireWorkspace(ctx, principal, input.workspaceId, "read").id]
  const limit = pageLimit(input.limit, LIST_ACTIVITY_DEFAULT_LIMIT, PAGE_MAX_LIMIT)
  const skip = input.skip ?? PAGE_DEFAULT_SKIP
  const key = JSON.stringify(ids)
  const rows = all<ActivityRow>(
    ctx.db,
    `${ACTIVITY_SELECT} WHERE a.workspace_id IN (SELECT value FROM json_each(?))
      ORDER BY ${activityOrder(ctx)} LIMIT +? OFFSET +?`,
    key,
    limit,
    skip
  )
  const total = get<{ n: number }>(
    ctx.db,
    "SELECT count(*) AS n FROM activity WHERE workspace_id IN (SELECT value FROM json_each(?))",
    key
  )!.n
  return {
    items: rows.map((row) => ({ ...activityItem(row), recordId: row.record_id, workspaceId: row.workspace_id })),
    totalCount: total
  }
}

export const activityOperations: ReadonlyArray<RestOperation> = [
  { name: "list-record-activity", write: false, handle: listRecordActivity, input: ListRecordActivityInput, family: "activity", summary: "A record's comments and actions, newest first" },
  { name: "list-activity", write: false, handle: listActivity, input: ListActivityInput, family: "activity", summary: "Workspace-wide activity, newest first" }
]
