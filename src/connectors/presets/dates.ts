/**
 * Dates as other tools write them, read into what `create-record` takes: `YYYY-MM-DD`
 * (all-day) or an ISO 8601 timestamp with a zone (timed).
 *
 * - everything `normalizeDate` reads (ISO forms; Jira's `05/Nov/25 5:16 PM`,
 *   `3/Nov/20 12:17` and the time-less `24/Jan/24`; a time without a zone as UTC, see
 *   assumptions.ts `CSV_TIMESTAMP_WITHOUT_ZONE`);
 * - epoch milliseconds (ClickUp), as digits: 10 to 13 of them, so a year alone or a small
 *   count is never taken for a date.
 *
 * Never throws: anything else is undefined, and the reader reports the cell.
 */
import { normalizeDate } from "../csv/row.ts"

const EPOCH_MS = /^\d{10,13}$/

/** Epoch milliseconds (as text) as an ISO timestamp in UTC, or undefined. */
export const epochMillis = (raw: string): string | undefined => {
  const s = raw.trim()
  if (!EPOCH_MS.test(s)) return undefined
  const d = new Date(Number(s))
  return Number.isNaN(d.getTime()) ? undefined : d.toISOString()
}

/** Any date form a supported tool writes, normalised; undefined when the cell is not one. */
export const toolDate = (raw: string): string | undefined => {
  const s = raw.trim()
  if (s === "") return undefined
  return epochMillis(s) ?? normalizeDate(s)
}
