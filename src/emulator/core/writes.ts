/**
 * Shared write helpers: inserting records and action rows, positions, and announcing
 * events. Used by the operations, the seed and the admin helpers.
 */
import type { EmulatorContext } from "../context.ts"
import { get, run } from "./sql.ts"

/** Gap between positions of consecutive records, so inserts between two need no renumbering. */
export const POSITION_STEP = 65536

export interface NewRecord {
  readonly workspaceId: string
  readonly listId: string
  readonly title: string
  readonly text?: string
  readonly html?: string
  readonly done?: boolean
  readonly archived?: boolean
  readonly position: number
  readonly startedAt?: { iso: string; allDay: boolean } | null
  readonly duedAt?: { iso: string; allDay: boolean } | null
  readonly color?: string | null
  readonly createdBy: string | null
  readonly createdAt: string
  readonly updatedAt?: string
  readonly assigneeIds?: ReadonlyArray<string>
  readonly tagIds?: ReadonlyArray<string>
}

const INSERT_RECORD = `INSERT INTO records (id, uid, workspace_id, list_id, title, text, html, done, archived, position,
  started_at, started_all_day, dued_at, dued_all_day, color, created_by, created_at, updated_at, assignee_ids, tag_ids)
  VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`

/** Inserts a record with its assignees and tags; returns its id and uid. */
export const insertRecord = (ctx: EmulatorContext, r: NewRecord): { id: string; uid: string } => {
  const id = ctx.ids.id()
  const uid = ctx.ids.uid()
  run(
    ctx.db,
    INSERT_RECORD,
    id,
    uid,
    r.workspaceId,
    r.listId,
    r.title,
    r.text ?? "",
    r.html ?? "",
    r.done ? 1 : 0,
    r.archived ? 1 : 0,
    r.position,
    r.startedAt?.iso ?? null,
    r.startedAt?.allDay ? 1 : 0,
    r.duedAt?.iso ?? null,
    r.duedAt?.allDay ? 1 : 0,
    r.color ?? null,
    r.createdBy,
    r.createdAt,
    r.updatedAt ?? r.createdAt,
    [...new Set(r.assigneeIds ?? [])].join(","),
    [...new Set(r.tagIds ?? [])].join(",")
  )
  r.assigneeIds?.forEach((userId, i) =>
    run(ctx.db, "INSERT OR IGNORE INTO record_assignees (record_id, user_id, position) VALUES (?, ?, ?)", id, userId, i)
  )
  r.tagIds?.forEach((tagId, i) =>
    run(ctx.db, "INSERT OR IGNORE INTO record_tags (record_id, tag_id, position) VALUES (?, ?, ?)", id, tagId, i)
  )
  return { id, uid }
}

/**
 * Refreshes a record's denormalized assignee and tag ids from record_assignees and
 * record_tags; call after changing either table.
 */
export const syncRecordLinks = (ctx: EmulatorContext, recordId: string): void => {
  run(
    ctx.db,
    `UPDATE records SET
       assignee_ids = COALESCE((SELECT group_concat(user_id, ',') FROM
         (SELECT user_id FROM record_assignees WHERE record_id = @id ORDER BY position, user_id)), ''),
       tag_ids = COALESCE((SELECT group_concat(tag_id, ',') FROM
         (SELECT tag_id FROM record_tags WHERE record_id = @id ORDER BY position, tag_id)), '')
     WHERE id = @id`,
    { id: recordId }
  )
}

/** The highest position in a list, its trashed records included (read through records_list_position). */
export const END_OF_LIST = "SELECT max(position) AS p FROM records WHERE list_id = +?"

/** Next position at the end of a list. */
export const endOfList = (ctx: EmulatorContext, listId: string): number =>
  (get<{ p: number | null }>(ctx.db, END_OF_LIST, listId)?.p ?? 0) + POSITION_STEP

export interface NewAction {
  readonly workspaceId: string
  readonly recordId: string | null
  readonly userId: string | null
  readonly type: string
  readonly oldValue?: unknown
  readonly newValue?: unknown
  readonly affectedUserId?: string | null
  readonly customFieldId?: string | null
  readonly automated?: boolean
  readonly at?: string
}

/** Records an action in the activity table (old/new values are stored as JSON text). */
export const recordAction = (ctx: EmulatorContext, a: NewAction): string => {
  const id = ctx.ids.id()
  const at = a.at ?? ctx.clock.iso()
  run(
    ctx.db,
    `INSERT INTO activity (id, workspace_id, record_id, kind, category, category_id, type, old_value, new_value,
       automated, user_id, affected_user_id, custom_field_id, created_at, updated_at)
     VALUES (?, ?, ?, 'ACTION', 'TODO', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    id,
    a.workspaceId,
    a.recordId,
    a.recordId,
    a.type,
    a.oldValue === undefined ? null : JSON.stringify(a.oldValue),
    a.newValue === undefined ? null : JSON.stringify(a.newValue),
    a.automated ? 1 : 0,
    a.userId,
    a.affectedUserId ?? null,
    a.customFieldId ?? null,
    at,
    at
  )
  return id
}

export interface NewComment {
  readonly workspaceId: string
  readonly recordId: string
  readonly userId: string
  readonly html: string
  readonly text: string
  readonly parentId?: string | null
  readonly at?: string
}

/** Records a comment on a record (category TODO). */
export const insertComment = (ctx: EmulatorContext, c: NewComment): string => {
  const id = ctx.ids.id()
  const at = c.at ?? ctx.clock.iso()
  run(
    ctx.db,
    `INSERT INTO activity (id, workspace_id, record_id, kind, category, category_id, parent_id, html, text, user_id,
       created_at, updated_at)
     VALUES (?, ?, ?, 'COMMENT', 'TODO', ?, ?, ?, ?, ?, ?, ?)`,
    id,
    c.workspaceId,
    c.recordId,
    c.recordId,
    c.parentId ?? null,
    c.html,
    c.text,
    c.userId,
    at,
    at
  )
  return id
}

/** Marks a record changed now. */
export const touchRecord = (ctx: EmulatorContext, recordId: string, at = ctx.clock.iso()): void => {
  run(ctx.db, "UPDATE records SET updated_at = ? WHERE id = ?", at, recordId)
}

/** Announces a change to webhooks (after the write committed). */
export const emit = (
  ctx: EmulatorContext,
  event: string,
  workspaceId: string,
  previousValue: unknown,
  currentValue: unknown
): void => ctx.events.emit({ event, workspaceId, previousValue, currentValue })
