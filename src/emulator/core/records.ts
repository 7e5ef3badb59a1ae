/**
 * Record operations: list, get, create, update, move, delete, count, search
 * (REST document, Endpoints; rules R-REST-RECORD-*, R-REST-SEARCH-*, R-REST-PAGE-*).
 */
import {
  CountRecordsInput,
  CreateRecordInput,
  DeleteRecordInput,
  GetRecordInput,
  ListRecordsInput,
  MoveRecordInput,
  SearchRecordsInput,
  UpdateRecordInput
} from "../../schema/inputs.ts"
import {
  PAGE_DEFAULT_LIMIT,
  PAGE_DEFAULT_SKIP,
  PAGE_MAX_LIMIT,
  SEARCH_DEFAULT_LIMIT,
  SEARCH_MAX_LIMIT
} from "../../schema/limits.ts"
import type { EmulatorContext, Principal, RestOperation } from "../context.ts"
import { churnPageOf } from "../faults.ts"
import type { ChurnOptions } from "../options.ts"
import { notFound } from "../http.ts"
import { type AllDay, allDayOf, keepAllDayFlags } from "../alt/shapes.ts"
import { accessibleWorkspaceIds, requireWorkspace } from "./access.ts"
import { reinterpret, toStoredDate, type StoredDate } from "./dates.ts"
import { htmlToText, sanitizeHtml, textToHtml } from "./html.ts"
import {
  RECORD_COLUMNS,
  recordDetail,
  type RecordDetailJson,
  type RecordRow,
  type RecordTuple,
  searchResults,
  SUMMARY_COLUMNS,
  summariesOfTuples
} from "./serialize.ts"
import { all, allRaw, get, run } from "./sql.ts"
import { type Key, pageBoundary, rememberBoundary } from "./page-boundaries.ts"
import { applyMoves } from "./moves.ts"
import { decodeInput, pageLimit } from "./validate.ts"
import { emit, endOfList, insertRecord, POSITION_STEP, recordAction, syncRecordLinks } from "./writes.ts"

const FROM_RECORDS = `FROM records r`

/**
 * list-records order (RECORD_ORDER): position then id; the alt variant's other reading,
 * newest first, is as stable (created_at then id).
 */
const recordOrder = (ctx: EmulatorContext): string =>
  ctx.variant === "alt" ? "r.created_at DESC, r.id DESC" : "r.position, r.id"

/** Escapes LIKE wildcards so a search is literal text. */
const likePattern = (text: string): string => `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`

interface Filter {
  readonly where: Array<string>
  readonly params: Array<unknown>
}

/**
 * The workspace scope of a read: one named workspace, or every workspace the caller reaches
 * (R-REST-RECORD-11/12). Its conditions and list-records' filters write parameters as `+?`
 * (sql.ts: a page is planned once, not on every call).
 */
const scope = (ctx: EmulatorContext, principal: Principal, workspaceRef: string | undefined): Filter => {
  if (workspaceRef !== undefined) {
    const ws = requireWorkspace(ctx, principal, workspaceRef, "read")
    return { where: ["r.workspace_id = +?"], params: [ws.id] }
  }
  return {
    where: ["r.workspace_id IN (SELECT value FROM json_each(?))"],
    params: [JSON.stringify(accessibleWorkspaceIds(ctx, principal))]
  }
}

/** A record of a workspace the caller may use, or 422 NOT_FOUND. */
const requireRecord = (ctx: EmulatorContext, workspaceId: string, recordId: string): RecordDetailJson & { workspaceId: string } => {
  const owner = get<{ workspace_id: string }>(
    ctx.db,
    "SELECT workspace_id FROM records WHERE id = ? AND deleted_at IS NULL",
    recordId
  )
  if (owner === undefined || owner.workspace_id !== workspaceId) throw notFound("Record")
  return { ...recordDetail(ctx.db, recordId)!, workspaceId }
}

const requireList = (ctx: EmulatorContext, workspaceId: string, listId: string): { id: string; title: string } => {
  const list = get<{ id: string; title: string }>(
    ctx.db,
    "SELECT id, title FROM lists WHERE id = ? AND workspace_id = ? AND deleted_at IS NULL",
    listId,
    workspaceId
  )
  if (list === undefined) throw notFound("List")
  return list
}

const firstList = (ctx: EmulatorContext, workspaceId: string): { id: string; title: string } => {
  const list = get<{ id: string; title: string }>(
    ctx.db,
    "SELECT id, title FROM lists WHERE workspace_id = +? AND deleted_at IS NULL ORDER BY position, id LIMIT 1",
    workspaceId
  )
  if (list === undefined) throw notFound("List (the workspace has no lists)")
  return list
}

/** Users that may be assigned in a workspace (members, or org OWNER/ADMIN). */
const requireAssignees = (ctx: EmulatorContext, workspaceId: string, userIds: ReadonlyArray<string>): Array<string> => {
  const unique = [...new Set(userIds)]
  const known = all<{ id: string }>(
    ctx.db,
    `SELECT u.id FROM users u
      WHERE u.id IN (SELECT value FROM json_each(?))
        AND (EXISTS (SELECT 1 FROM workspace_members wm WHERE wm.workspace_id = ? AND wm.user_id = u.id)
          OR EXISTS (SELECT 1 FROM org_members om JOIN workspaces w ON w.org_id = om.org_id
                      WHERE w.id = ? AND om.user_id = u.id AND om.level IN ('OWNER', 'ADMIN')))`,
    JSON.stringify(unique),
    workspaceId,
    workspaceId
  )
  if (known.length !== unique.length) throw notFound("Assignee")
  return unique
}

const requireTags = (ctx: EmulatorContext, workspaceId: string, tagIds: ReadonlyArray<string>): Array<string> => {
  const unique = [...new Set(tagIds)]
  const known = all<{ id: string }>(
    ctx.db,
    "SELECT id FROM tags WHERE id IN (SELECT value FROM json_each(?)) AND workspace_id = ? AND deleted_at IS NULL",
    JSON.stringify(unique),
    workspaceId
  )
  if (known.length !== unique.length) throw notFound("Tag")
  return unique
}

/**
 * Churn fault: after a page is read, records appear before the first one and the front
 * ones disappear, so the next offset page drifts. `backdated` records take a createdAt
 * older than every record of the listing (an import of old records): to a reader that
 * judges by timestamps they look as if they had been there all along (and the alt
 * order, newest first, lists them last).
 */
const applyChurn = (ctx: EmulatorContext, filter: Filter, churn: ChurnOptions | null): void => {
  if (churn === null) return
  const front = all<{ id: string; workspace_id: string; list_id: string; position: number }>(
    ctx.db,
    `SELECT r.id, r.workspace_id, r.list_id, r.position ${FROM_RECORDS}
      WHERE r.deleted_at IS NULL AND ${filter.where.join(" AND ")}
      ORDER BY ${recordOrder(ctx)} LIMIT +?`,
    ...filter.params,
    Math.max(1, churn.deletesPerPage)
  )
  const first = front[0]
  if (first === undefined) return
  const now = ctx.clock.iso()
  const oldest = churn.backdated === true
    ? get<{ at: string | null }>(
      ctx.db,
      `SELECT min(r.created_at) AS at ${FROM_RECORDS} WHERE r.deleted_at IS NULL AND ${filter.where.join(" AND ")}`,
      ...filter.params
    )?.at ?? null
    : null
  const created: Array<string> = []
  const doomed = front.slice(0, churn.deletesPerPage)
  ctx.db.transaction(() => {
    for (let i = 0; i < churn.insertsPerPage; i++) {
      const { id } = insertRecord(ctx, {
        workspaceId: first.workspace_id,
        listId: first.list_id,
        title: `Churn record ${ctx.ids.uid()}`,
        position: first.position - (churn.insertsPerPage - i),
        createdBy: null,
        createdAt: oldest === null ? now : new Date(Date.parse(oldest) - 1000 * (i + 1)).toISOString()
      })
      created.push(id)
    }
    for (const row of doomed) trashRecord(ctx, row.workspace_id, row.id)
  })()
  for (const id of created) emit(ctx, "TODO_CREATED", first.workspace_id, null, recordDetail(ctx.db, id))
}

const listRecords = (ctx: EmulatorContext, principal: Principal, body: Record<string, unknown>) => {
  const input = decodeInput(ListRecordsInput, body)
  const filter = scope(ctx, principal, input.workspaceId)
  const { params, where } = filter
  if (input.listId !== undefined) {
    const exists = get(ctx.db, "SELECT 1 FROM lists WHERE id = ? AND deleted_at IS NULL", input.listId)
    if (exists === undefined) throw notFound("List")
    where.push("r.list_id = +?")
    params.push(input.listId)
  }
  if (input.done !== undefined) {
    where.push("r.done = +?")
    params.push(input.done ? 1 : 0)
  }
  archivedFilter(ctx, filter, input.archived)
  if (input.assigneeIds !== undefined && input.assigneeIds.length > 0) {
    idFilter(ctx, filter, "record_assignees", "user_id", input.assigneeIds)
  }
  if (input.tagIds !== undefined && input.tagIds.length > 0) {
    idFilter(ctx, filter, "record_tags", "tag_id", input.tagIds)
  }
  if (input.search !== undefined && input.search !== "") {
    where.push("r.title LIKE +? ESCAPE '\\'")
    params.push(likePattern(input.search))
  }
  const skip = input.skip ?? PAGE_DEFAULT_SKIP
  const limit = pageLimit(input.limit, PAGE_DEFAULT_LIMIT, PAGE_MAX_LIMIT)
  const order = pageOrder(ctx, input.workspaceId !== undefined ? "workspace" : input.listId !== undefined ? "list" : "all")
  const condition = where.join(" AND ")
  const boundary = pageBoundary(ctx, condition, params, skip)
  const rows =
    boundary === undefined
      ? allRaw<RecordTuple>(
          ctx.db,
          `SELECT ${order.columns} FROM records r ${order.index}
            WHERE r.deleted_at IS NULL AND ${condition}
            ORDER BY ${order.orderBy} LIMIT +? OFFSET +?`,
          ...params,
          limit + 1,
          skip
        )
      : allRaw<RecordTuple>(
          ctx.db,
          `SELECT ${order.columns} FROM records r ${order.index}
            WHERE r.deleted_at IS NULL AND ${condition} AND ${order.after}
            ORDER BY ${order.orderBy} LIMIT +? OFFSET +?`,
          ...params,
          boundary.sort,
          boundary.id,
          limit + 1,
          boundary.offset
        )
  const hasNextPage = rows.length > limit
  if (hasNextPage) {
    rows.pop()
    rememberBoundary(ctx, condition, params, skip + rows.length, order.keyOf(rows[rows.length - 1]!))
  }
  return pageOf(ctx, filter, rows, hasNextPage, skip)
}

/** How a list-records page walks its variant's order (RECORD_ORDER). */
interface PageOrder {
  /**
   * SUMMARY_COLUMNS; the alt variant's also the all-day flags its answer needs (its pages
   * read the table, where they are), kept for altAnswer by keepAllDayFlags.
   */
  readonly columns: string
  readonly orderBy: string
  /** The index to walk ("" lets SQLite choose). */
  readonly index: string
  /** The rows after a remembered key (page-boundaries.ts), two parameters: its sort value and id. */
  readonly after: string
  readonly keyOf: (row: RecordTuple) => Key
}

/**
 * Position then id: the covering indexes hold every summary column, so the page and the
 * rows it skips come from one index walk without touching the table. The alt variant's
 * order, newest first, walks its creation-time indexes (ddl.ts ALT_ORDER_INDEXES) and
 * reads the table.
 */
const pageOrder = (ctx: EmulatorContext, scope: "workspace" | "list" | "all"): PageOrder =>
  ctx.variant === "alt"
    ? {
        columns: `${SUMMARY_COLUMNS}, r.started_all_day, r.dued_all_day`,
        orderBy: recordOrder(ctx),
        index: scope === "all" ? "INDEXED BY records_created" : "",
        after: "(r.created_at, r.id) < (?, ?)",
        keyOf: (row) => ({ sort: row[9], id: row[0] })
      }
    : {
        columns: SUMMARY_COLUMNS,
        orderBy: recordOrder(ctx),
        index: scope === "workspace" ? "INDEXED BY records_ws_order" : scope === "list" ? "INDEXED BY records_list" : "INDEXED BY records_order",
        after: "(r.position, r.id) > (?, ?)",
        keyOf: (row) => ({ sort: row[5], id: row[0] })
      }

const pageOf = (ctx: EmulatorContext, filter: Filter, rows: ReadonlyArray<RecordTuple>, hasNextPage: boolean, skip: number) => {
  const items = summariesOfTuples(ctx.db, rows)
  const churn = churnPageOf(ctx)
  applyChurn(ctx, filter, churn)
  applyMoves(ctx, churn?.movesPerPage ?? 0, filter.where, filter.params, recordOrder(ctx), skip + rows.length)
  const answer = {
    items,
    pageInfo: {
      hasNextPage,
      hasPreviousPage: skip > 0,
      startCursor: items[0]?.id ?? null,
      endCursor: items[items.length - 1]?.id ?? null
    }
  }
  if (ctx.variant === "alt") keepAllDayFlags(answer, allDayFlagsOf(rows))
  return answer
}

/** The flags of the alt variant's page rows: SUMMARY_COLUMNS, then started_all_day and dued_all_day. */
const allDayFlagsOf = (rows: ReadonlyArray<ReadonlyArray<unknown>>): Array<AllDay> =>
  rows.map((row) => allDayOf(row[14] === 1, row[15] === 1))

/**
 * The `archived` filter of list-records and count-records (LIST_RECORDS_DETAILS): when
 * omitted the reference lists both, the alt variant only live records (as search-records).
 */
const archivedFilter = (ctx: EmulatorContext, filter: Filter, archived: boolean | undefined): void => {
  if (archived !== undefined) {
    filter.where.push("r.archived = +?")
    filter.params.push(archived ? 1 : 0)
  } else if (ctx.variant === "alt") {
    filter.where.push("r.archived = 0")
  }
}

/** `assigneeIds` / `tagIds`: records having any of the ids (reference) or all of them (alt). */
const idFilter = (ctx: EmulatorContext, filter: Filter, table: string, column: string, ids: ReadonlyArray<string>): void => {
  const unique = [...new Set(ids)]
  if (ctx.variant === "alt") {
    filter.where.push(
      `(SELECT count(DISTINCT x.${column}) FROM ${table} x WHERE x.record_id = r.id AND x.${column} IN (SELECT value FROM json_each(?))) = ?`
    )
    filter.params.push(JSON.stringify(unique), unique.length)
    return
  }
  filter.where.push(`EXISTS (SELECT 1 FROM ${table} x WHERE x.record_id = r.id AND x.${column} IN (SELECT value FROM json_each(?)))`)
  filter.params.push(JSON.stringify(unique))
}

const getRecord = (ctx: EmulatorContext, principal: Principal, body: Record<string, unknown>) => {
  const input = decodeInput(GetRecordInput, body)
  const ws = requireWorkspace(ctx, principal, input.workspaceId, "read")
  const { workspaceId: _, ...detail } = requireRecord(ctx, ws.id, input.recordId)
  return detail
}

const descriptionOf = (input: { description?: string | undefined; descriptionHtml?: string | undefined }) => {
  if (input.description !== undefined) return { text: input.description.replace(/\r\n?/g, "\n").trim(), html: textToHtml(input.description) }
  if (input.descriptionHtml !== undefined) {
    const html = sanitizeHtml(input.descriptionHtml)
    return { text: htmlToText(html), html }
  }
  return undefined
}

const createRecord = (ctx: EmulatorContext, principal: Principal, body: Record<string, unknown>) => {
  const input = decodeInput(CreateRecordInput, body)
  const ws = requireWorkspace(ctx, principal, input.workspaceId, "write")
  const list = input.listId === undefined ? firstList(ctx, ws.id) : requireList(ctx, ws.id, input.listId)
  const assignees = input.assigneeIds === undefined ? [] : requireAssignees(ctx, ws.id, input.assigneeIds)
  const tags = input.tagIds === undefined ? [] : requireTags(ctx, ws.id, input.tagIds)
  const description = descriptionOf(input)
  const now = ctx.clock.iso()
  const record = ctx.db.transaction(() => {
    const position = endOfList(ctx, list.id)
    const created = insertRecord(ctx, {
      workspaceId: ws.id,
      listId: list.id,
      title: input.title,
      text: description?.text ?? "",
      html: description?.html ?? "",
      position,
      startedAt: input.startedAt === undefined ? null : toStoredDate(input.startedAt, input.allDay),
      duedAt: input.duedAt === undefined ? null : toStoredDate(input.duedAt, input.allDay),
      createdBy: principal.userId,
      createdAt: now,
      assigneeIds: assignees,
      tagIds: tags
    })
    recordAction(ctx, { workspaceId: ws.id, recordId: created.id, userId: principal.userId, type: "CREATE", newValue: input.title, at: now })
    return { ...created, position }
  })()
  emit(ctx, "TODO_CREATED", ws.id, null, recordDetail(ctx.db, record.id))
  return {
    id: record.id,
    uid: record.uid,
    title: input.title,
    rank: record.position,
    list: { id: list.id, title: list.title },
    position: record.position,
    todoList: { id: list.id, title: list.title }
  }
}

/** Events of a due-date change: added, updated or removed. */
const dueDateEvent = (before: string | null, after: string | null): string | null => {
  if (before === after) return null
  if (before === null) return "TODO_DUE_DATE_ADDED"
  if (after === null) return "TODO_DUE_DATE_REMOVED"
  return "TODO_DUE_DATE_UPDATED"
}

const updateRecord = (ctx: EmulatorContext, principal: Principal, body: Record<string, unknown>) => {
  const input = decodeInput(UpdateRecordInput, body)
  const ws = requireWorkspace(ctx, principal, input.workspaceId, "write")
  const { workspaceId: _, ...before } = requireRecord(ctx, ws.id, input.recordId)
  const flags = get<{ started_all_day: number; dued_all_day: number }>(
    ctx.db,
    "SELECT started_all_day, dued_all_day FROM records WHERE id = ?",
    input.recordId
  )!
  const assignees = input.assigneeIds === undefined ? undefined : requireAssignees(ctx, ws.id, input.assigneeIds)
  const description = descriptionOf(input)
  const now = ctx.clock.iso()
  const actor = principal.userId
  const sets: Array<string> = []
  const params: Array<unknown> = []
  const actions: Array<{ type: string; oldValue?: unknown; newValue?: unknown; affectedUserId?: string }> = []
  const set = (column: string, value: unknown) => {
    sets.push(`${column} = ?`)
    params.push(value)
  }
  if (input.title !== undefined && input.title !== before.title) {
    set("title", input.title)
    actions.push({ type: "UPDATE_TITLE", oldValue: before.title, newValue: input.title })
  }
  if (description !== undefined && (description.html !== before.html || description.text !== before.text)) {
    set("text", description.text)
    set("html", description.html)
    actions.push({ type: "UPDATE_DESCRIPTION", oldValue: before.text, newValue: description.text })
  }
  if (input.done !== undefined && input.done !== before.done) {
    set("done", input.done ? 1 : 0)
    actions.push({ type: "UPDATE_DONE", oldValue: before.done, newValue: input.done })
  }
  if (input.archived !== undefined && input.archived !== before.archived) {
    set("archived", input.archived ? 1 : 0)
    actions.push({ type: "UPDATE_ARCHIVED", oldValue: before.archived, newValue: input.archived })
  }
  if (input.color !== undefined && input.color !== before.color) {
    set("color", input.color)
    actions.push({ type: "UPDATE_COLOR", oldValue: before.color, newValue: input.color })
  }
  const dateChange = (
    value: string | null | undefined,
    current: string | null,
    currentAllDay: boolean,
    column: "started" | "dued",
    action: string
  ) => {
    let next: StoredDate | null | undefined
    if (value === null) next = null
    else if (value !== undefined) next = toStoredDate(value, input.allDay)
    else if (input.allDay !== undefined && current !== null) next = reinterpret(current, input.allDay)
    if (next === undefined) return
    const nextIso = next?.iso ?? null
    const nextAllDay = next?.allDay ?? false
    if (nextIso === current && nextAllDay === currentAllDay) return
    set(`${column}_at`, nextIso)
    set(`${column}_all_day`, nextAllDay ? 1 : 0)
    if (nextIso !== current) actions.push({ type: action, oldValue: current, newValue: nextIso })
  }
  dateChange(input.startedAt, before.startedAt, flags.started_all_day === 1, "started", "UPDATE_STARTED_AT")
  dateChange(input.duedAt, before.duedAt, flags.dued_all_day === 1, "dued", "UPDATE_DUE_DATE")
  const beforeUsers = before.users.map((u) => u.id)
  const added = assignees === undefined ? [] : assignees.filter((id) => !beforeUsers.includes(id))
  const removed = assignees === undefined ? [] : beforeUsers.filter((id) => !assignees.includes(id))
  for (const id of added) actions.push({ type: "ADD_ASSIGNEE", affectedUserId: id })
  for (const id of removed) actions.push({ type: "REMOVE_ASSIGNEE", affectedUserId: id })

  if (sets.length > 0 || added.length > 0 || removed.length > 0) {
    ctx.db.transaction(() => {
      set("updated_at", now)
      run(ctx.db, `UPDATE records SET ${sets.join(", ")} WHERE id = ?`, ...params, input.recordId)
      if (assignees !== undefined) {
        run(ctx.db, "DELETE FROM record_assignees WHERE record_id = ?", input.recordId)
        assignees.forEach((userId, i) =>
          run(ctx.db, "INSERT INTO record_assignees (record_id, user_id, position) VALUES (?, ?, ?)", input.recordId, userId, i)
        )
        syncRecordLinks(ctx, input.recordId)
      }
      for (const a of actions) {
        recordAction(ctx, {
          workspaceId: ws.id,
          recordId: input.recordId,
          userId: actor,
          type: a.type,
          oldValue: a.oldValue,
          newValue: a.newValue,
          affectedUserId: a.affectedUserId ?? null,
          at: now
        })
      }
    })()
  }
  const after = recordDetail(ctx.db, input.recordId)!
  if (after.title !== before.title) emit(ctx, "TODO_NAME_CHANGED", ws.id, before, after)
  if (after.done !== before.done) emit(ctx, "TODO_DONE_STATUS_UPDATED", ws.id, before, after)
  const due = dueDateEvent(before.duedAt, after.duedAt)
  if (due !== null) emit(ctx, due, ws.id, before, after)
  for (const _ of added) emit(ctx, "TODO_ASSIGNEE_ADDED", ws.id, before, after)
  for (const _ of removed) emit(ctx, "TODO_ASSIGNEE_REMOVED", ws.id, before, after)
  return after
}

const moveRecord = (ctx: EmulatorContext, principal: Principal, body: Record<string, unknown>) => {
  const input = decodeInput(MoveRecordInput, body)
  const ws = requireWorkspace(ctx, principal, input.workspaceId, "write")
  const { workspaceId: _, ...before } = requireRecord(ctx, ws.id, input.recordId)
  const target = requireList(ctx, ws.id, input.listId)
  if (target.id === before.todoList.id) return { success: true as const }
  const now = ctx.clock.iso()
  ctx.db.transaction(() => {
    run(
      ctx.db,
      "UPDATE records SET list_id = ?, position = ?, updated_at = ? WHERE id = ?",
      target.id,
      endOfList(ctx, target.id),
      now,
      input.recordId
    )
    recordAction(ctx, {
      workspaceId: ws.id,
      recordId: input.recordId,
      userId: principal.userId,
      type: "MOVE",
      oldValue: before.todoList.title,
      newValue: target.title,
      at: now
    })
  })()
  emit(ctx, "TODO_MOVED", ws.id, before, recordDetail(ctx.db, input.recordId))
  return { success: true as const }
}

/** Deletion moves the record to the trash: it vanishes from every read (R-REST-RECORD-53). */
export const trashRecord = (ctx: EmulatorContext, workspaceId: string, recordId: string): void => {
  const before = recordDetail(ctx.db, recordId)
  if (before === undefined) return
  const now = ctx.clock.iso()
  run(ctx.db, "UPDATE records SET deleted_at = ?, updated_at = ? WHERE id = ?", now, now, recordId)
  emit(ctx, "TODO_DELETED", workspaceId, before, null)
}

const deleteRecord = (ctx: EmulatorContext, principal: Principal, body: Record<string, unknown>) => {
  const input = decodeInput(DeleteRecordInput, body)
  const ws = requireWorkspace(ctx, principal, input.workspaceId, "write")
  requireRecord(ctx, ws.id, input.recordId)
  trashRecord(ctx, ws.id, input.recordId)
  return { success: true as const }
}

const countRecords = (ctx: EmulatorContext, principal: Principal, body: Record<string, unknown>) => {
  const input = decodeInput(CountRecordsInput, body)
  const filter = scope(ctx, principal, input.workspaceId)
  const { params, where } = filter
  if (input.done !== undefined) {
    where.push("r.done = ?")
    params.push(input.done ? 1 : 0)
  }
  archivedFilter(ctx, filter, input.archived)
  const row = get<{ n: number }>(
    ctx.db,
    `SELECT count(*) AS n FROM records r WHERE r.deleted_at IS NULL AND ${where.join(" AND ")}`,
    ...params
  )!
  return { count: row.n }
}

const searchRecords = (ctx: EmulatorContext, principal: Principal, body: Record<string, unknown>) => {
  const input = decodeInput(SearchRecordsInput, body)
  const ws = requireWorkspace(ctx, principal, input.workspaceId, "read")
  const where = ["r.workspace_id = +?", "r.deleted_at IS NULL", "(r.title LIKE +? ESCAPE '\\' OR r.text LIKE +? ESCAPE '\\')"]
  const pattern = likePattern(input.query)
  const params: Array<unknown> = [ws.id, pattern, pattern]
  if (input.done !== undefined) {
    where.push("r.done = +?")
    params.push(input.done ? 1 : 0)
  }
  // Archived records are left out unless asked for (R-REST-SEARCH-05/06).
  if (input.archived !== true) where.push("r.archived = 0")
  const limit = pageLimit(input.limit, SEARCH_DEFAULT_LIMIT, SEARCH_MAX_LIMIT)
  const rows = all<RecordRow>(
    ctx.db,
    `SELECT ${RECORD_COLUMNS} ${FROM_RECORDS} WHERE ${where.join(" AND ")} ORDER BY r.position, r.id LIMIT +?`,
    ...params,
    limit
  )
  return searchResults(ctx.db, rows)
}

export const recordOperations: ReadonlyArray<RestOperation> = [
  { name: "list-records", write: false, handle: listRecords, input: ListRecordsInput, family: "records", summary: "Record summaries, paged by skip/limit" },
  { name: "get-record", write: false, handle: getRecord, input: GetRecordInput, family: "records", summary: "One record's detail" },
  { name: "create-record", write: true, handle: createRecord, input: CreateRecordInput, family: "records", summary: "Creates a record" },
  { name: "update-record", write: true, handle: updateRecord, input: UpdateRecordInput, family: "records", summary: "Updates a record; answers its detail" },
  { name: "move-record", write: true, handle: moveRecord, input: MoveRecordInput, family: "records", summary: "Moves a record to another list" },
  { name: "delete-record", write: true, handle: deleteRecord, input: DeleteRecordInput, family: "records", summary: "Moves a record to the trash" },
  { name: "count-records", write: false, handle: countRecords, input: CountRecordsInput, family: "records", summary: "Counts records: { count }" },
  { name: "search-records", write: false, handle: searchRecords, input: SearchRecordsInput, family: "search", summary: "Searches titles and content; a bare array" }
]

export { POSITION_STEP }
