/**
 * Background reconciliation (R-FILE-STATUS-06): shortly after a PENDING row's signing
 * window closes, resolve it against storage even when confirm never came. An object of
 * the declared size (any size when none was declared) confirms the row; otherwise the
 * row and any stray object are removed (RECONCILE_MISSING_OBJECT). Emits nothing.
 */
import type { EmulatorContext } from "../context.ts"
import { confirmFile, deleteFile, listExpiredPending } from "./files.ts"
import { presignTtlMs } from "./presign.ts"
import { uploadsInFlight } from "./storage.ts"
import { run } from "../core/sql.ts"

/** How long after the window closes a row is resolved: 1% of the window ("shortly"), at least 5 ms. */
export const reconcileGraceMs = (ctx: Pick<EmulatorContext, "timeScale" | "variant">): number =>
  Math.max(5, presignTtlMs(ctx) / 100)

/** Resolves every due PENDING row once; returns how many rows it resolved. */
export const reconcileOnce = (ctx: EmulatorContext): number => {
  const due = listExpiredPending(ctx.db, ctx.clock.now() - reconcileGraceMs(ctx))
  const busy = uploadsInFlight(ctx)
  let resolved = 0
  for (const file of due) {
    // A PUT that started inside the window may still be streaming; look again next tick.
    if (busy.has(file.storageKey)) continue
    const stat = ctx.objects.stat(file.storageKey)
    // RECONCILE_MISSING_OBJECT: the alt variant confirms whatever landed, at its real size.
    if (stat !== null && (file.declaredSize === null || stat.size === file.declaredSize || ctx.variant === "alt")) {
      confirmFile(ctx, file.uid, stat.size)
    } else {
      deleteFile(ctx.db, file.uid)
      if (stat !== null) ctx.objects.remove(file.storageKey)
    }
    resolved++
  }
  // A claim older than the signing window guards an URL that has expired anyway.
  run(ctx.db, "DELETE FROM presign_uses WHERE used_at < ?", ctx.clock.now() - presignTtlMs(ctx))
  return resolved
}

/** Starts the periodic pass; the returned function stops it. */
export const startReconciliation = (ctx: EmulatorContext): (() => void) => {
  const period = Math.min(1000, Math.max(5, reconcileGraceMs(ctx)))
  const timer = setInterval(() => {
    try {
      reconcileOnce(ctx)
    } catch {
      // The database may be closing while a tick runs; the next tick (if any) retries.
    }
  }, period)
  timer.unref()
  return () => clearInterval(timer)
}
