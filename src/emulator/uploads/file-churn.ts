/**
 * Churn under list-files (FaultOptions.fileChurn): after each page is served, the first
 * files of the listing's order are deleted (the part a forward reader has passed, so the
 * rest shifts left under its offset) and new confirmed files are added (they land where
 * the variant's order puts new files: last in the reference order, first in the alt one).
 *
 * `backdated` new files take timestamps older than every file of the listing (an import
 * of old files): first in the reference order, last in the alt one, and, to a reader that
 * judges by timestamps, indistinguishable from files that were there all along. Each
 * holds one byte in storage, so a copy can download it.
 */
import type { EmulatorContext } from "../context.ts"
import { all, get, run } from "../core/sql.ts"
import { fileChurnPageOf } from "../faults.ts"
import { deleteFile, insertFile, storageKeyFor } from "./files.ts"
import { isDiskObjectStore } from "./object-store.ts"

const CHURN_BYTES = new Uint8Array([0x78])

export const applyFileChurn = (
  ctx: EmulatorContext,
  scope: { readonly where: string; readonly args: ReadonlyArray<unknown> },
  order: string
): void => {
  const churn = fileChurnPageOf(ctx)
  if (churn === null || (churn.insertsPerPage <= 0 && churn.deletesPerPage <= 0)) return
  const front = all<{ uid: string; org_id: string; workspace_id: string | null }>(
    ctx.db,
    `SELECT f.uid, f.org_id, f.workspace_id FROM files f WHERE ${scope.where} ORDER BY ${order} LIMIT ?`,
    ...scope.args,
    Math.max(1, churn.deletesPerPage)
  )
  const first = front[0]
  if (first === undefined) return
  const oldest = churn.backdated === true
    ? get<{ at: string | null }>(ctx.db, `SELECT min(f.created_at) AS at FROM files f WHERE ${scope.where}`, ...scope.args)?.at ?? null
    : null
  ctx.db.transaction(() => {
    for (const row of front.slice(0, churn.deletesPerPage)) deleteFile(ctx.db, row.uid)
    for (let i = 0; i < churn.insertsPerPage; i++) {
      const file = insertFile(ctx, {
        name: `churn-${ctx.ids.uid()}.txt`,
        size: CHURN_BYTES.length,
        type: "text/plain",
        extension: "txt",
        orgId: first.org_id,
        workspaceId: first.workspace_id,
        status: "CONFIRMED"
      })
      if (oldest !== null) {
        // One second before the oldest, the later of this batch older still: each lands first.
        const at = new Date(Date.parse(oldest) - 1000 * (i + 1)).toISOString()
        run(ctx.db, "UPDATE files SET created_at = ?, updated_at = ? WHERE uid = ?", at, at, file.uid)
      }
      if (isDiskObjectStore(ctx.objects)) ctx.objects.putBytes(storageKeyFor(file.uid), CHURN_BYTES)
    }
  })()
}
