/** The core-table reads the delivery engine needs. */
import { workspaceLevel } from "../auth.ts"
import type { EmulatorContext } from "../context.ts"

/**
 * Is `userId` currently a member of `workspaceId` (R-WEBHOOK-DELIVERY-16)? Membership is
 * what authentication grants: a membership row, or the organization's OWNER and ADMINs.
 */
export const isWorkspaceMember = (ctx: EmulatorContext, userId: string, workspaceId: string): boolean =>
  workspaceId !== "" && workspaceLevel(ctx, workspaceId, userId) !== null

export const userEmail = (ctx: EmulatorContext, userId: string): string | null => {
  const row = ctx.db.prepare("SELECT email FROM users WHERE id = ?").get(userId) as { email: string } | undefined
  return row?.email ?? null
}
