/** Lookups shared by the operations: a live record of a workspace, or 422 NOT_FOUND. */
import type { EmulatorContext } from "../context.ts"
import { notFound } from "../http.ts"
import { recordDetail, type RecordDetailJson } from "./serialize.ts"
import { get } from "./sql.ts"

export const requireRecordDetail = (ctx: EmulatorContext, workspaceId: string, recordId: string): RecordDetailJson => {
  const live = get(ctx.db, "SELECT 1 FROM records WHERE id = ? AND workspace_id = ? AND deleted_at IS NULL", recordId, workspaceId)
  if (live === undefined) throw notFound("Record")
  return recordDetail(ctx.db, recordId)!
}

export const requireRecordExists = (ctx: EmulatorContext, workspaceId: string, recordId: string): void => {
  const live = get(ctx.db, "SELECT 1 FROM records WHERE id = ? AND workspace_id = ? AND deleted_at IS NULL", recordId, workspaceId)
  if (live === undefined) throw notFound("Record")
}
