/**
 * Record dates. A bare `YYYY-MM-DD` is all-day (R-REST-RECORD-34), a timestamp is timed
 * (R-REST-RECORD-35); `allDay` forces either (R-REST-RECORD-36/37). An all-day date is a
 * floating calendar date, read back as midnight UTC (assumptions.ts ALL_DAY_READ_FORM).
 */
import { isAllDayInput } from "../../schema/dates.ts"

export interface StoredDate {
  readonly iso: string
  readonly allDay: boolean
}

/** The calendar date as written (no zone conversion: an all-day date floats). */
const calendarDate = (value: string): string => value.slice(0, 10)

export const toStoredDate = (value: string, allDay: boolean | undefined): StoredDate => {
  const bare = isAllDayInput(value)
  const wantAllDay = allDay ?? bare
  if (wantAllDay) return { iso: `${calendarDate(value)}T00:00:00.000Z`, allDay: true }
  return { iso: bare ? `${value}T00:00:00.000Z` : new Date(value).toISOString(), allDay: false }
}

/** Re-reads a stored date under a new `allDay` flag (update-record sending only allDay). */
export const reinterpret = (iso: string | null, allDay: boolean): StoredDate | null =>
  iso === null ? null : allDay ? { iso: `${calendarDate(iso)}T00:00:00.000Z`, allDay: true } : { iso, allDay: false }
