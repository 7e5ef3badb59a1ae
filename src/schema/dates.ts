/**
 * Date and timestamp strings. Reads are tolerant (any ISO 8601 timestamp); inputs
 * are either a bare calendar date (all-day) or a timestamp with a zone designator
 * (timed), see `DATE_INPUT_FORMS` in assumptions.ts.
 */
import { Schema } from "effect"

const BARE_DATE = /^(\d{4})-(\d{2})-(\d{2})$/
const TIMESTAMP =
  /^(\d{4})-(\d{2})-(\d{2})T([01]\d|2[0-3]):([0-5]\d)(?::([0-5]\d)(?:\.\d{1,9})?)?(Z|[+-](?:[01]\d|2[0-3]):?[0-5]\d)?$/i

const validCalendarDate = (y: string, m: string, d: string): boolean => {
  const year = Number(y)
  const month = Number(m)
  const day = Number(d)
  if (month < 1 || month > 12 || day < 1) return false
  const last = new Date(Date.UTC(year, month, 0)).getUTCDate()
  return day <= last
}

/** `YYYY-MM-DD` naming a real calendar day. */
export const isBareDate = (s: string): boolean => {
  const m = BARE_DATE.exec(s)
  return m !== null && validCalendarDate(m[1]!, m[2]!, m[3]!)
}

/** An ISO 8601 date-time; `requireZone` demands `Z` or an offset. */
export const isIsoTimestamp = (s: string, requireZone = false): boolean => {
  const m = TIMESTAMP.exec(s)
  if (m === null || !validCalendarDate(m[1]!, m[2]!, m[3]!)) return false
  return !requireZone || m[7] !== undefined
}

/** A timestamp as the service reports it (createdAt, startedAt, ...). */
export const IsoTimestamp = Schema.String.check(
  Schema.makeFilter((s: string) => isIsoTimestamp(s) || `expected an ISO 8601 timestamp, got ${JSON.stringify(s)}`, {
    identifier: "IsoTimestamp"
  })
)

/** `startedAt` / `duedAt` as sent to create-record and update-record (R-REST-RECORD-34/35). */
export const DateInput = Schema.String.check(
  Schema.makeFilter(
    (s: string) =>
      isBareDate(s) ||
      isIsoTimestamp(s, true) ||
      `expected a bare date YYYY-MM-DD (all-day) or an ISO 8601 timestamp with a zone such as 2024-05-01T09:30:00Z (timed), got ${JSON.stringify(s)}`,
    { identifier: "DateInput" }
  )
)
export type DateInput = typeof DateInput.Type

/** Whether a date input names an all-day date (bare `YYYY-MM-DD`). */
export const isAllDayInput = (s: string): boolean => isBareDate(s)
