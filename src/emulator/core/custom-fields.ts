/**
 * Custom field definitions and record values (assumptions.ts CUSTOM_FIELD_TYPES and
 * EXTRA_OPERATIONS). A value is set with the key matching the field's type.
 */
import { Schema } from "effect"
import { CUSTOM_FIELD_TYPES } from "../../schema/assumptions.ts"
import { openStruct } from "../../schema/open.ts"
import type { EmulatorContext, Principal, RestOperation } from "../context.ts"
import { badRequest, notFound } from "../http.ts"
import { requireWorkspace } from "./access.ts"
import { requireRecordDetail } from "./lookup.ts"
import { recordDetail } from "./serialize.ts"
import { all, get, run } from "./sql.ts"
import { decodeInput } from "./validate.ts"
import { emit, POSITION_STEP, recordAction, touchRecord } from "./writes.ts"

interface FieldRow {
  id: string
  name: string
  type: string
  position: number
  table_columns: string
}

const fieldJson = (ctx: EmulatorContext, f: FieldRow) => ({
  id: f.id,
  name: f.name,
  type: f.type,
  position: f.position,
  customFieldOptions: all<{ id: string; title: string; color: string | null }>(
    ctx.db,
    "SELECT id, title, color FROM custom_field_options WHERE custom_field_id = +? ORDER BY position, id",
    f.id
  ),
  tableColumns: f.type === "TABLE" ? (JSON.parse(f.table_columns) as Array<unknown>) : null
})

const FIELD_COLUMNS = "id, name, type, position, table_columns"

const requireField = (ctx: EmulatorContext, workspaceId: string, fieldId: string): FieldRow => {
  const row = get<FieldRow>(
    ctx.db,
    `SELECT ${FIELD_COLUMNS} FROM custom_fields WHERE id = ? AND workspace_id = ? AND deleted_at IS NULL`,
    fieldId,
    workspaceId
  )
  if (row === undefined) throw notFound("Custom field")
  return row
}

export const ListCustomFieldsInput = openStruct({ workspaceId: Schema.String })
export const CreateCustomFieldInput = openStruct({
  workspaceId: Schema.String,
  name: Schema.String,
  type: Schema.Literals(CUSTOM_FIELD_TYPES),
  options: Schema.optional(Schema.Array(openStruct({ title: Schema.String, color: Schema.optional(Schema.String) }))),
  tableColumns: Schema.optional(
    Schema.Array(openStruct({ name: Schema.String, type: Schema.optional(Schema.Literals(["TEXT", "NUMBER", "CHECKBOX", "DATE"])) }))
  )
})
export const UpdateCustomFieldInput = openStruct({
  workspaceId: Schema.String,
  customFieldId: Schema.String,
  name: Schema.optional(Schema.String)
})
export const DeleteCustomFieldInput = openStruct({ workspaceId: Schema.String, customFieldId: Schema.String })
export const SetRecordCustomFieldInput = openStruct({
  workspaceId: Schema.String,
  recordId: Schema.String,
  customFieldId: Schema.String,
  text: Schema.optional(Schema.NullOr(Schema.String)),
  number: Schema.optional(Schema.NullOr(Schema.Number)),
  checked: Schema.optional(Schema.NullOr(Schema.Boolean)),
  optionIds: Schema.optional(Schema.NullOr(Schema.Array(Schema.String))),
  tableRows: Schema.optional(
    Schema.NullOr(
      Schema.Array(
        openStruct({
          position: Schema.Number,
          cells: Schema.Array(openStruct({ columnId: Schema.String, value: Schema.Unknown }))
        })
      )
    )
  )
})

const listCustomFields = (ctx: EmulatorContext, principal: Principal, body: Record<string, unknown>) => {
  const input = decodeInput(ListCustomFieldsInput, body)
  const ws = requireWorkspace(ctx, principal, input.workspaceId, "read")
  const rows = all<FieldRow>(
    ctx.db,
    `SELECT ${FIELD_COLUMNS} FROM custom_fields WHERE workspace_id = +? AND deleted_at IS NULL ORDER BY position, id`,
    ws.id
  )
  return { items: rows.map((f) => fieldJson(ctx, f)), totalCount: rows.length }
}

const createCustomField = (ctx: EmulatorContext, principal: Principal, body: Record<string, unknown>) => {
  const input = decodeInput(CreateCustomFieldInput, body)
  const ws = requireWorkspace(ctx, principal, input.workspaceId, "write")
  const now = ctx.clock.iso()
  const id = ctx.ids.id()
  const columns = input.type === "TABLE" ? (input.tableColumns ?? []).map((c) => ({ id: ctx.ids.id(), name: c.name, type: c.type ?? "TEXT" })) : []
  ctx.db.transaction(() => {
    const position =
      (get<{ p: number | null }>(ctx.db, "SELECT max(position) AS p FROM custom_fields WHERE workspace_id = +?", ws.id)?.p ?? 0) + POSITION_STEP
    run(
      ctx.db,
      "INSERT INTO custom_fields (id, workspace_id, name, type, position, table_columns, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
      id,
      ws.id,
      input.name,
      input.type,
      position,
      JSON.stringify(columns),
      now,
      now
    )
    if (input.type === "SELECT_SINGLE" || input.type === "SELECT_MULTI") {
      ;(input.options ?? []).forEach((o, i) =>
        run(
          ctx.db,
          "INSERT INTO custom_field_options (id, custom_field_id, title, color, position) VALUES (?, ?, ?, ?, ?)",
          ctx.ids.id(),
          id,
          o.title,
          o.color ?? null,
          i + 1
        )
      )
    }
  })()
  const field = fieldJson(ctx, requireField(ctx, ws.id, id))
  emit(ctx, "CUSTOM_FIELD_CREATED", ws.id, null, field)
  return field
}

const updateCustomField = (ctx: EmulatorContext, principal: Principal, body: Record<string, unknown>) => {
  const input = decodeInput(UpdateCustomFieldInput, body)
  const ws = requireWorkspace(ctx, principal, input.workspaceId, "write")
  const before = fieldJson(ctx, requireField(ctx, ws.id, input.customFieldId))
  if (input.name !== undefined) {
    run(ctx.db, "UPDATE custom_fields SET name = ?, updated_at = ? WHERE id = ?", input.name, ctx.clock.iso(), before.id)
  }
  const after = fieldJson(ctx, requireField(ctx, ws.id, input.customFieldId))
  emit(ctx, "CUSTOM_FIELD_UPDATED", ws.id, before, after)
  return after
}

const deleteCustomField = (ctx: EmulatorContext, principal: Principal, body: Record<string, unknown>) => {
  const input = decodeInput(DeleteCustomFieldInput, body)
  const ws = requireWorkspace(ctx, principal, input.workspaceId, "write")
  const before = fieldJson(ctx, requireField(ctx, ws.id, input.customFieldId))
  const now = ctx.clock.iso()
  run(ctx.db, "UPDATE custom_fields SET deleted_at = ?, updated_at = ? WHERE id = ?", now, now, before.id)
  emit(ctx, "CUSTOM_FIELD_DELETED", ws.id, before, null)
  return { success: true as const }
}

/** The value columns for a field type; a key for another type is a 400. */
const valueColumns = (
  field: FieldRow,
  input: typeof SetRecordCustomFieldInput.Type,
  validOptions: ReadonlyArray<string>
) => {
  const wrong = (key: string) => badRequest(`A ${field.type} field takes ${key}`, [{ path: [key], message: "is missing" }])
  const v = { text: null as string | null, number: null as number | null, checked: null as number | null, option_ids: null as string | null, table_rows: null as string | null }
  switch (field.type) {
    case "TEXT":
    case "DATE":
    case "FILE":
      if (input.text === undefined) throw wrong("text")
      v.text = input.text
      break
    case "NUMBER":
      if (input.number === undefined) throw wrong("number")
      v.number = input.number
      break
    case "CHECKBOX":
      if (input.checked === undefined) throw wrong("checked")
      v.checked = input.checked === null ? null : input.checked ? 1 : 0
      break
    case "SELECT_SINGLE":
    case "SELECT_MULTI": {
      if (input.optionIds === undefined) throw wrong("optionIds")
      const ids = input.optionIds ?? []
      if (field.type === "SELECT_SINGLE" && ids.length > 1) throw badRequest("A SELECT_SINGLE field takes one option", [{ path: ["optionIds"], message: "at most one option" }])
      if (ids.some((id) => !validOptions.includes(id))) throw notFound("Custom field option")
      v.option_ids = input.optionIds === null ? null : JSON.stringify(ids)
      break
    }
    case "TABLE":
      if (input.tableRows === undefined) throw wrong("tableRows")
      v.table_rows = input.tableRows === null ? null : JSON.stringify(input.tableRows)
      break
  }
  return v
}

const setRecordCustomField = (ctx: EmulatorContext, principal: Principal, body: Record<string, unknown>) => {
  const input = decodeInput(SetRecordCustomFieldInput, body)
  const ws = requireWorkspace(ctx, principal, input.workspaceId, "write")
  const before = requireRecordDetail(ctx, ws.id, input.recordId)
  const field = requireField(ctx, ws.id, input.customFieldId)
  const options = all<{ id: string }>(ctx.db, "SELECT id FROM custom_field_options WHERE custom_field_id = ?", field.id).map((o) => o.id)
  const v = valueColumns(field, input, options)
  const oldValue = before.customFields.find((f) => f.id === field.id) ?? null
  const now = ctx.clock.iso()
  ctx.db.transaction(() => {
    run(
      ctx.db,
      `INSERT INTO record_custom_values (record_id, custom_field_id, text, number, checked, option_ids, table_rows, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (record_id, custom_field_id) DO UPDATE SET text = excluded.text, number = excluded.number,
         checked = excluded.checked, option_ids = excluded.option_ids, table_rows = excluded.table_rows, updated_at = excluded.updated_at`,
      input.recordId,
      field.id,
      v.text,
      v.number,
      v.checked,
      v.option_ids,
      v.table_rows,
      now
    )
    touchRecord(ctx, input.recordId, now)
  })()
  const after = recordDetail(ctx.db, input.recordId)!
  recordAction(ctx, {
    workspaceId: ws.id,
    recordId: input.recordId,
    userId: principal.userId,
    type: "UPDATE_CUSTOM_FIELD",
    oldValue,
    newValue: after.customFields.find((f) => f.id === field.id) ?? null,
    customFieldId: field.id,
    at: now
  })
  emit(ctx, "TODO_CUSTOM_FIELD_UPDATED", ws.id, before, after)
  return after
}

export const customFieldOperations: ReadonlyArray<RestOperation> = [
  { name: "list-custom-fields", write: false, handle: listCustomFields, input: ListCustomFieldsInput, family: "custom fields", summary: "Custom field definitions of a workspace" },
  { name: "create-custom-field", write: true, handle: createCustomField, input: CreateCustomFieldInput, family: "custom fields", summary: "Defines a custom field" },
  { name: "update-custom-field", write: true, handle: updateCustomField, input: UpdateCustomFieldInput, family: "custom fields", summary: "Renames a custom field" },
  { name: "delete-custom-field", write: true, handle: deleteCustomField, input: DeleteCustomFieldInput, family: "custom fields", summary: "Deletes a custom field" },
  { name: "set-record-custom-field", write: true, handle: setRecordCustomField, input: SetRecordCustomFieldInput, family: "custom fields", summary: "Sets a record's value of a custom field; answers the record detail" }
]
