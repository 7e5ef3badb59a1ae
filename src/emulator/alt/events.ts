/**
 * Webhook event values of the alt variant (EVENT_VALUE_SHAPES, WEBHOOK_HEALTH_CHECK_BODY):
 * record events carry the record summary, lists `{id, title}`, tags a string color,
 * activity items their documented keys, custom fields the alt type names; the health
 * check carries no value.
 */
import type Database from "better-sqlite3"
import { WEBHOOK_HEALTH_CHECK_EVENT } from "../webhooks/timing.ts"
import { allDayOfRecord, altActivityItem, altCustomFieldDefinition, altList, altRecordSummary, altTag } from "./shapes.ts"

type Json = Record<string, unknown>

export const altEventValue = (db: Database.Database, event: string, value: unknown): unknown => {
  if (value === null || value === undefined || typeof value !== "object") return value ?? null
  const v = value as Json
  if (event === WEBHOOK_HEALTH_CHECK_EVENT) return null
  if (event.startsWith("TODO_LIST_")) return altList(v)
  if (event.startsWith("TODO_CHECKLIST_")) return v
  if (event.startsWith("TODO_")) return altRecordSummary(v, allDayOfRecord(db, v["id"] as string))
  if (event.startsWith("TAG_")) return altTag(v)
  if (event.startsWith("COMMENT_")) return altActivityItem(v)
  if (event.startsWith("CUSTOM_FIELD_")) return altCustomFieldDefinition(v)
  return v
}
