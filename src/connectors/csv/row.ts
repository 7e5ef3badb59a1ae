/**
 * One CSV row, validated with Schema: the raw mapped cells in, a record to create out,
 * or a readable error naming the field. Nothing here does I/O.
 *
 * - title: required, trimmed, not empty.
 * - description: plain text; the service turns blank lines into paragraphs and newlines
 *   into line breaks (R-REST-RECORD-30/31), so we only normalise CRLF to LF.
 * - startedAt / duedAt: a bare `YYYY-MM-DD` stays all-day, a timestamp stays timed
 *   (R-REST-RECORD-34/35). See `normalizeDate` for the forms read.
 * - assignees: e-mails separated by commas or semicolons; tags: titles likewise.
 * - done: the usual spellings (yes/no, true/false, 1/0, x, done, ...), and a date
 *   (a completion time such as Asana's "Completed At") means done.
 */
import { Schema, type SchemaAST, SchemaIssue, SchemaTransformation } from "effect"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import { isBareDate, isIsoTimestamp } from "../../schema/dates.ts"

const MONTHS: Readonly<Record<string, string>> = {
  jan: "01", feb: "02", mar: "03", apr: "04", may: "05", jun: "06",
  jul: "07", aug: "08", sep: "09", oct: "10", nov: "11", dec: "12"
}

const JIRA_DATE = /^(\d{1,2})\/([A-Za-z]{3})\/(\d{2}|\d{4})(?:\s+(\d{1,2}):(\d{2})(?:\s*([AaPp][Mm]))?)?$/
const ZONELESS = /^(\d{4}-\d{2}-\d{2})[T ](\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?)$/

/**
 * A date cell as `create-record` takes it, or undefined when it is not a date:
 * - `YYYY-MM-DD` (all-day), an ISO 8601 timestamp with a zone (timed);
 * - an ISO timestamp without a zone (`2024-05-01 09:30`), read as UTC (assumptions.ts
 *   `CSV_TIMESTAMP_WITHOUT_ZONE`);
 * - Jira's `24/Jan/24` (all-day) and `24/Jan/24 10:15 AM` (timed, UTC).
 */
export const normalizeDate = (raw: string): string | undefined => {
  // The forms most files hold, checked by character (no regex, no Date, no lookup):
  // they are taken as they are.
  const n = raw.length
  if (n === 10 ? isDay(raw) : n === 20 && isUtcSeconds(raw)) return raw
  const hit = dateMemo.get(raw)
  if (hit !== undefined) return hit === null ? undefined : hit
  const d = normalizeDateOnce(raw)
  // Bounded: a file of all-distinct timestamps must not grow it without end.
  if (dateMemo.size < 4096) dateMemo.set(raw, d ?? null)
  return d
}

/**
 * Results by cell text, for the forms the fast checks leave: a file repeats a few hundred
 * days, and checking one (a regex match, a Date to validate the day) allocates. (A lookup
 * of a text not seen before costs too: the Map enters it in the engine's string table.)
 */
const dateMemo = new Map<string, string | null>()

/** The decimal value of `s[from, to)` if it is all digits, else -1. */
const digits = (s: string, from: number, to: number): number => {
  let v = 0
  for (let i = from; i < to; i++) {
    const c = s.charCodeAt(i) - 48
    if (c < 0 || c > 9) return -1
    v = v * 10 + c
  }
  return v
}

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]

/**
 * `YYYY-MM-DD` naming a real calendar day, as `isBareDate` decides it, read from the
 * first 10 characters of `s`. Years 0-99 are read as 1900-1999, as `Date.UTC` reads them
 * in `isBareDate` (0000-02-29 is no day there).
 */
const isDay = (s: string): boolean => {
  if (s.charCodeAt(4) !== 45 || s.charCodeAt(7) !== 45) return false
  const year = digits(s, 0, 4)
  const month = digits(s, 5, 7)
  const day = digits(s, 8, 10)
  if (year < 0 || month < 1 || month > 12 || day < 1) return false
  const y = year < 100 ? 1900 + year : year
  const leap = y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0)
  return day <= (month === 2 && leap ? 29 : DAYS_IN_MONTH[month - 1]!)
}

/** `YYYY-MM-DDTHH:MM:SSZ`, as `isIsoTimestamp(s, true)` decides it. */
const isUtcSeconds = (s: string): boolean => {
  if (s.charCodeAt(10) !== 84 || s.charCodeAt(13) !== 58 || s.charCodeAt(16) !== 58 || s.charCodeAt(19) !== 90) return false
  const hour = digits(s, 11, 13)
  const minute = digits(s, 14, 16)
  const second = digits(s, 17, 19)
  return hour >= 0 && hour <= 23 && minute >= 0 && minute <= 59 && second >= 0 && second <= 59 && isDay(s)
}

/** `normalizeDate` without its shortcuts (exported for the test that holds them equal). */
export const normalizeDateOnce = (raw: string): string | undefined => {
  const s = raw.trim()
  if (isBareDate(s)) return s
  if (isIsoTimestamp(s, true)) return s
  const z = ZONELESS.exec(s)
  if (z !== null) {
    const candidate = `${z[1]}T${z[2]!.length === 5 ? `${z[2]}:00` : z[2]}Z`
    return isIsoTimestamp(candidate, true) ? candidate : undefined
  }
  const j = JIRA_DATE.exec(s)
  if (j !== null) {
    const month = MONTHS[j[2]!.toLowerCase()]
    if (month === undefined) return undefined
    const year = j[3]!.length === 2 ? `20${j[3]}` : j[3]!
    const date = `${year}-${month}-${j[1]!.padStart(2, "0")}`
    if (!isBareDate(date)) return undefined
    if (j[4] === undefined) return date
    let hour = Number(j[4])
    const ampm = j[6]?.toLowerCase()
    if (ampm !== undefined) {
      if (hour < 1 || hour > 12) return undefined
      hour = (hour % 12) + (ampm === "pm" ? 12 : 0)
    }
    if (hour > 23) return undefined
    return `${date}T${String(hour).padStart(2, "0")}:${j[5]}:00Z`
  }
  return undefined
}

const TRUE = new Set(["true", "t", "yes", "y", "1", "x", "done", "complete", "completed", "closed", "resolved", "checked", "✓", "✔", "☑", "on"])
const FALSE = new Set(["false", "f", "no", "n", "0", "", "not done", "open", "todo", "to do", "incomplete", "pending", "unchecked", "☐", "off", "-"])

/** true / false for the usual spellings, a completion date is true; undefined otherwise. */
export const parseDone = (raw: string): boolean | undefined => {
  const s = raw.trim().toLowerCase()
  if (TRUE.has(s)) return true
  if (FALSE.has(s)) return false
  if (normalizeDate(raw) !== undefined) return true
  return undefined
}

const EMAIL = /^[^\s@,;]+@[^\s@,;]+\.[^\s@,;]+$/

/** Splits on `,` `;` and newlines, trims, drops empty items (one array, no regex: per-row path). */
const splitList = (raw: string): Array<string> => {
  const out: Array<string> = []
  let start = 0
  const n = raw.length
  for (let i = 0; i <= n; i++) {
    const c = i < n ? raw.charCodeAt(i) : 44
    if (c === 44 || c === 59 || c === 10) {
      if (i > start) {
        const s = raw.slice(start, i).trim()
        if (s !== "") out.push(s)
      }
      start = i + 1
    }
  }
  return out
}

/** Distinct items in first-seen order, as `[...new Set(a)]`; lists are short, so no Set for them. */
const distinct = (a: Array<string>): Array<string> => {
  if (a.length < 2) return a
  if (a.length > 16) return [...new Set(a)]
  const out: Array<string> = []
  outer: for (let i = 0; i < a.length; i++) {
    const s = a[i]!
    for (let j = 0; j < out.length; j++) if (out[j] === s) continue outer
    out.push(s)
  }
  return out
}

/** A decoding failure whose message is the whole error text (no "Expected ..." prefix). */
const fail = (actual: string, message: string, options: SchemaAST.ParseOptions) =>
  Effect.fail(new SchemaIssue.InvalidValue({ message }, actual, options))

/** The encoding side of the row transformations (rows are only decoded here). */
const identityEncode = <A>(a: A) => Effect.succeed(a)

/** A cell: trimmed, and an empty cell counts as absent. */
const Cell = Schema.optional(Schema.String)

const Title = Schema.String.pipe(Schema.decodeTo(
  Schema.String,
  SchemaTransformation.transformEffect({
    decode: (s: string, options) => {
      const t = s.trim()
      return t === "" ? fail(s, "title is empty", options) : Effect.succeed(t)
    },
    encode: identityEncode
  })
))

const DateCell = (field: string) =>
  Schema.String.pipe(Schema.decodeTo(
    Schema.String,
    SchemaTransformation.transformEffect({
      decode: (s: string, options) => {
        const d = normalizeDate(s)
        return d === undefined
          ? fail(s, `${field} ${JSON.stringify(s)} is not a date: use YYYY-MM-DD (all-day) or an ISO 8601 timestamp such as 2024-05-01T09:30:00Z (timed)`, options)
          : Effect.succeed(d)
      },
      encode: identityEncode
    })
  ))

const Emails = Schema.String.pipe(Schema.decodeTo(
  Schema.Array(Schema.String),
  SchemaTransformation.transformEffect({
    decode: (s: string, options) => {
      const out: Array<string> = []
      for (const e of splitList(s)) {
        if (!EMAIL.test(e)) return fail(s, `assignees: ${JSON.stringify(e)} is not an e-mail address`, options)
        out.push(e.toLowerCase())
      }
      return Effect.succeed<ReadonlyArray<string>>([...new Set(out)])
    },
    encode: (a) => Effect.succeed(a.join(", "))
  })
))

const Titles = Schema.String.pipe(Schema.decodeTo(
  Schema.Array(Schema.String),
  SchemaTransformation.transform({
    decode: (s: string): ReadonlyArray<string> => [...new Set(splitList(s))],
    encode: (a) => a.join(", ")
  })
))

const Done = Schema.String.pipe(Schema.decodeTo(
  Schema.Boolean,
  SchemaTransformation.transformEffect({
    decode: (s: string, options) => {
      const d = parseDone(s)
      return d === undefined
        ? fail(s, `done ${JSON.stringify(s)} is not a yes/no value (yes, no, true, false, 1, 0, x, done, or a completion date)`, options)
        : Effect.succeed(d)
    },
    encode: (b) => Effect.succeed(b ? "true" : "false")
  })
))

const Text = Schema.String.pipe(Schema.decodeTo(
  Schema.String,
  SchemaTransformation.transform({ decode: (s: string) => s.replace(/\r\n?/g, "\n"), encode: (s) => s })
))

const Trimmed = Schema.String.pipe(Schema.decodeTo(
  Schema.String,
  SchemaTransformation.transform({ decode: (s: string) => s.trim(), encode: (s) => s })
))

/** The mapped cells of one row, empty cells already removed. */
export const RawRow = Schema.Struct({
  title: Cell,
  description: Cell,
  descriptionHtml: Cell,
  list: Cell,
  startedAt: Cell,
  duedAt: Cell,
  assignees: Cell,
  tags: Cell,
  done: Cell,
  key: Cell
})
export type RawRow = typeof RawRow.Type

/** A valid row: what one `create-record` (plus `done`) will carry. */
export const CsvRow = Schema.Struct({
  /**
   * Always present in the input (an empty cell is ""), so a missing title reads "title is empty";
   * an object without one reads "is missing", the wording of every missing key (decode.ts).
   */
  title: Title.annotateKey({ messageMissingKey: "is missing" }),
  description: Schema.optional(Text),
  descriptionHtml: Schema.optional(Schema.String),
  list: Schema.optional(Trimmed),
  startedAt: Schema.optional(DateCell("startedAt")),
  duedAt: Schema.optional(DateCell("duedAt")),
  // A missing (or undefined) cell decodes to the default (no assignees, no tags, not done);
  // `Effect.sync` gives every row its own array.
  assignees: Emails.pipe(Schema.withDecodingDefaultType(Effect.sync((): ReadonlyArray<string> => []))),
  tags: Titles.pipe(Schema.withDecodingDefaultType(Effect.sync((): ReadonlyArray<string> => []))),
  done: Done.pipe(Schema.withDecodingDefaultType(Effect.succeed(false))),
  key: Schema.optional(Trimmed)
}).check(
  Schema.makeFilter((r) =>
    r.description !== undefined && r.descriptionHtml !== undefined
      ? {
        path: ["descriptionHtml"],
        issue: "description and descriptionHtml are both set; a record takes one or the other (R-REST-RECORD-33)"
      }
      : undefined
  )
)
export type CsvRow = typeof CsvRow.Type

const decodeRow = Schema.decodeUnknownResult(CsvRow, { errors: "first" })
const formatIssue = SchemaIssue.makeFormatterStandardSchemaV1()

/** The schema's verdict on one row, the error as one readable line. */
export const decodeRowWithSchema = (raw: Readonly<Record<string, string | undefined>>): Result.Result<CsvRow, string> =>
  decodeRow(raw).pipe(
    Result.mapError((e) => {
      const issue = formatIssue(e.issue).issues[0]
      return issue === undefined ? e.message : issue.message
    })
  )

type Mutable<T> = { -readonly [K in keyof T]: T[K] }

/**
 * Slots of a row's mapped cells in a positional array (the order of `RawRow`'s fields):
 * the extractor fills one reused array instead of building an object per row.
 */
export const CELL = {
  title: 0,
  description: 1,
  descriptionHtml: 2,
  list: 3,
  startedAt: 4,
  duedAt: 5,
  assignees: 6,
  tags: 7,
  done: 8,
  key: 9
} as const satisfies Record<keyof RawRow, number>
export const CELL_FIELDS = Object.keys(CELL) as ReadonlyArray<keyof RawRow>
export type Cells = Array<string | undefined>

/** The cells as the object the schema decodes (absent cells left out). */
export const cellsToRaw = (cells: ReadonlyArray<string | undefined>): Record<string, string | undefined> => {
  const raw: Record<string, string | undefined> = {}
  for (let i = 0; i < CELL_FIELDS.length; i++) {
    const v = cells[i]
    if (v !== undefined) raw[CELL_FIELDS[i]!] = v
  }
  return raw
}

/**
 * The same decoding as `CsvRow`, hand-written for speed (a million rows must plan in
 * seconds). It only ever accepts: any doubt (an invalid cell, an unusual shape) returns
 * undefined and the schema decides, with its error message. A property test checks that
 * whatever this accepts equals the schema's result.
 */
export const fastDecodeCells = (cells: ReadonlyArray<string | undefined>): CsvRow | undefined => {
  const title = cells[CELL.title]
  if (typeof title !== "string") return undefined
  const t = title.trim()
  if (t === "") return undefined
  const out: Mutable<Partial<CsvRow>> & { title: string } = { title: t }
  const description = cells[CELL.description]
  if (description !== undefined) out.description = description.includes("\r") ? description.replace(/\r\n?/g, "\n") : description
  const descriptionHtml = cells[CELL.descriptionHtml]
  if (descriptionHtml !== undefined) {
    if (description !== undefined) return undefined
    out.descriptionHtml = descriptionHtml
  }
  const list = cells[CELL.list]
  if (list !== undefined) out.list = list.trim()
  const startedAt = cells[CELL.startedAt]
  if (startedAt !== undefined) {
    const d = normalizeDate(startedAt)
    if (d === undefined) return undefined
    out.startedAt = d
  }
  const duedAt = cells[CELL.duedAt]
  if (duedAt !== undefined) {
    const d = normalizeDate(duedAt)
    if (d === undefined) return undefined
    out.duedAt = d
  }
  const assignees = cells[CELL.assignees]
  if (assignees !== undefined) {
    const emails = splitList(assignees)
    for (let i = 0; i < emails.length; i++) {
      const e = emails[i]!
      if (!EMAIL.test(e)) return undefined
      emails[i] = e.toLowerCase()
    }
    out.assignees = distinct(emails)
  } else out.assignees = []
  const tags = cells[CELL.tags]
  out.tags = tags === undefined ? [] : distinct(splitList(tags))
  const done = cells[CELL.done]
  if (done !== undefined) {
    const d = parseDone(done)
    if (d === undefined) return undefined
    out.done = d
  } else out.done = false
  const key = cells[CELL.key]
  if (key !== undefined) out.key = key.trim()
  return out as CsvRow
}

/** `fastDecodeCells` over the mapped cells as an object. */
export const fastDecodeRow = (raw: Readonly<Record<string, string | undefined>>): CsvRow | undefined => {
  const cells: Cells = []
  for (let i = 0; i < CELL_FIELDS.length; i++) cells.push(raw[CELL_FIELDS[i]!])
  return fastDecodeCells(cells)
}

/** Validates one row's mapped cells: the fast path, else the schema (and its error). */
export const validateRow = (raw: Readonly<Record<string, string | undefined>>): Result.Result<CsvRow, string> => {
  const fast = fastDecodeRow(raw)
  return fast !== undefined ? Result.succeed(fast) : decodeRowWithSchema(raw)
}

/** `validateRow` over positional cells; the object for the schema is built only when needed. */
export const validateCells = (cells: ReadonlyArray<string | undefined>): Result.Result<CsvRow, string> => {
  const fast = fastDecodeCells(cells)
  return fast !== undefined ? Result.succeed(fast) : decodeRowWithSchema(cellsToRaw(cells))
}
