/**
 * Churn under list-files (FaultOptions.fileChurn): after each page is served, the first
 * files of the listing's order are deleted (the part a forward reader has passed, so the
 * rest shifts left under its offset) and new confirmed files are added (they land where
 * the variant's order puts new files: last in the reference order, first in the alt one).
 */
import type { EmulatorContext } from "../context.ts"
import { all } from "../core/sql.ts"
import { fileChurnOf } from "../faults.ts"
import { deleteFile, insertFile } from "./files.ts"

export const applyFileChurn = (
  ctx: EmulatorContext,
  scope: { readonly where: string; readonly args: ReadonlyArray<unknown> },
  order: string
): void => {
  const churn = fileChurnOf(ctx)
  if (churn === null || (churn.insertsPerPage <= 0 && churn.deletesPerPage <= 0)) return
  const front = all<{ uid: string; org_id: string; workspace_id: string | null }>(
    ctx.db,
    `SELECT f.uid, f.org_id, f.workspace_id FROM files f WHERE ${scope.where} ORDER BY ${order} LIMIT ?`,
    ...scope.args,
    Math.max(1, churn.deletesPerPage)
  )
  const first = front[0]
  if (first === undefined) return
  ctx.db.transaction(() => {
    for (const row of front.slice(0, churn.deletesPerPage)) deleteFile(ctx.db, row.uid)
    for (let i = 0; i < churn.insertsPerPage; i++) {
      insertFile(ctx, {
        name: `churn-${ctx.ids.uid()}.txt`,
        size: 1,
        type: "text/plain",
        extension: "txt",
        orgId: first.org_id,
        workspaceId: first.workspace_id,
        status: "CONFIRMED"
      })
    }
  })()
}
