/**
 * Checklist item assignees: the one change behind TODO_CHECKLIST_ITEM_ASSIGNEE_ADDED and
 * _REMOVED that no REST operation makes (assumptions.ts CHECKLIST_ITEM_ASSIGNEES).
 */
import { workspaceLevel } from "../../auth.ts"
import type { EmulatorContext } from "../../context.ts"
import { atLeast, requireWorkspace } from "../access.ts"
import { forbidden, gqlError, notFound } from "../errors.ts"
import { userById } from "../models.ts"
import type { GqlContext } from "../request.ts"
import { exec, many, one } from "../sql.ts"

interface ItemSql {
  readonly id: string
  readonly checklist_id: string
  readonly title: string
  readonly done: number
  readonly position: number
  readonly started_at: string | null
  readonly dued_at: string | null
  readonly record_id: string
  readonly workspace_id: string
}

const itemById = (ctx: EmulatorContext, id: string): ItemSql | undefined =>
  one<ItemSql>(
    ctx.db,
    `SELECT i.id, i.checklist_id, i.title, i.done, i.position, i.started_at, i.dued_at, c.record_id, r.workspace_id
       FROM checklist_items i
       JOIN checklists c ON c.id = i.checklist_id AND c.deleted_at IS NULL
       JOIN records r ON r.id = c.record_id AND r.deleted_at IS NULL
      WHERE i.id = ? AND i.deleted_at IS NULL`,
    id
  )

const assigneeIds = (ctx: EmulatorContext, itemId: string): Array<string> =>
  many<{ user_id: string }>(ctx.db, "SELECT user_id FROM checklist_item_assignees WHERE item_id = ? ORDER BY position, user_id", itemId).map(
    (r) => r.user_id
  )

/** The item as deliveries carry it: the record detail's item shape plus its parents and assignees. */
const itemJson = (ctx: EmulatorContext, item: ItemSql) => ({
  id: item.id,
  title: item.title,
  done: item.done === 1,
  position: item.position,
  startedAt: item.started_at,
  duedAt: item.dued_at,
  checklistId: item.checklist_id,
  recordId: item.record_id,
  assignees: assigneeIds(ctx, item.id).flatMap((id) => {
    const u = userById(ctx, id)
    return u === null ? [] : [{ id: u.id, fullName: u.fullName, email: u.email }]
  })
})

const itemModel = (ctx: EmulatorContext, item: ItemSql) => {
  const json = itemJson(ctx, item)
  return { ...json, todoId: item.record_id, assignees: () => assigneeIds(ctx, item.id).map((id) => userById(ctx, id)).filter((u) => u !== null) }
}

type Input = { readonly input: { readonly checklistItemId: string; readonly userId: string } }

const change = (g: GqlContext, args: Input, add: boolean) => {
  const item = itemById(g.ctx, args.input.checklistItemId)
  if (item === undefined) throw notFound("Checklist item")
  const scope = requireWorkspace(g, item.workspace_id)
  if (!atLeast(scope.level, "CLIENT")) throw forbidden(`Access level ${scope.level} cannot change records`)
  if (userById(g.ctx, args.input.userId) === null || workspaceLevel(g.ctx, item.workspace_id, args.input.userId) === null) {
    throw gqlError("USER_NOT_FOUND", "The user is not in this workspace")
  }
  const current = assigneeIds(g.ctx, item.id)
  const present = current.includes(args.input.userId)
  if (present === add) return itemModel(g.ctx, item)
  const before = itemJson(g.ctx, item)
  const now = g.ctx.clock.iso()
  g.ctx.db.transaction(() => {
    if (add) {
      exec(
        g.ctx.db,
        "INSERT INTO checklist_item_assignees (item_id, user_id, position) VALUES (?, ?, ?)",
        item.id,
        args.input.userId,
        current.length
      )
    } else {
      exec(g.ctx.db, "DELETE FROM checklist_item_assignees WHERE item_id = ? AND user_id = ?", item.id, args.input.userId)
    }
    exec(g.ctx.db, "UPDATE checklist_items SET updated_at = ? WHERE id = ?", now, item.id)
    exec(g.ctx.db, "UPDATE records SET updated_at = ? WHERE id = ?", now, item.record_id)
  })()
  const after = itemById(g.ctx, item.id)!
  g.ctx.events.emit({
    event: add ? "TODO_CHECKLIST_ITEM_ASSIGNEE_ADDED" : "TODO_CHECKLIST_ITEM_ASSIGNEE_REMOVED",
    workspaceId: item.workspace_id,
    previousValue: before,
    currentValue: itemJson(g.ctx, after)
  })
  return itemModel(g.ctx, after)
}

export const checklistMutations = {
  addChecklistItemAssignee: (_: unknown, args: Input, g: GqlContext) => change(g, args, true),
  removeChecklistItemAssignee: (_: unknown, args: Input, g: GqlContext) => change(g, args, false)
}
