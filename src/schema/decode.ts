/**
 * Decoding with the project's options (keep extra keys, report every issue) and
 * readable failures that name the path of the bad field.
 */
import { Effect, Either, ParseResult, Schema } from "effect"

/** Extra keys are kept (clients tolerate them); every issue is collected. */
export const decodeOptions = { onExcessProperty: "preserve", errors: "all" } as const

export const decodeUnknown =
  <A, I, R>(schema: Schema.Schema<A, I, R>) =>
  (input: unknown): Effect.Effect<A, ParseResult.ParseError, R> =>
    Schema.decodeUnknown(schema, decodeOptions)(input)

export const decodeUnknownEither =
  <A, I>(schema: Schema.Schema<A, I, never>) =>
  (input: unknown): Either.Either<A, ParseResult.ParseError> =>
    Schema.decodeUnknownEither(schema, decodeOptions)(input)

export const encode =
  <A, I, R>(schema: Schema.Schema<A, I, R>) =>
  (value: A): Effect.Effect<I, ParseResult.ParseError, R> =>
    Schema.encode(schema, decodeOptions)(value)

export const encodeEither =
  <A, I>(schema: Schema.Schema<A, I, never>) =>
  (value: A): Either.Either<I, ParseResult.ParseError> =>
    Schema.encodeEither(schema, decodeOptions)(value)

export type IssuePath = ReadonlyArray<string | number>

/** One failed field: where it is and what was wrong. */
export interface FormattedIssue {
  readonly path: IssuePath
  readonly message: string
}

const EXPECTED_ACTUAL = /^Expected ([\s\S]*), actual ([\s\S]*)$/

/** The kind of a value from its printed form, so messages do not echo input values. */
const kindOf = (printed: string): string => {
  if (printed === "null" || printed === "undefined" || printed === "true" || printed === "false") {
    return printed === "true" || printed === "false" ? "boolean" : printed
  }
  const c = printed.charAt(0)
  if (c === '"') return "string"
  if (c === "[") return "array"
  if (c === "{") return "object"
  if (/^-?(\d|Infinity|NaN)/.test(printed)) return "number"
  return printed.length > 40 ? `${printed.slice(0, 40)}...` : printed
}

const toPath = (path: ReadonlyArray<PropertyKey>): IssuePath =>
  path.map((k) => (typeof k === "number" ? k : String(k)))

const pathKey = (path: IssuePath): string => JSON.stringify(path)

/**
 * Every issue of a parse error, one per path. The alternatives of a union at the same
 * path are merged ("expected string or null, got number").
 */
export const formatIssues = (error: ParseResult.ParseError): Array<FormattedIssue> => {
  const raw = ParseResult.ArrayFormatter.formatErrorSync(error)
  const byPath = new Map<string, { path: IssuePath; expected: Array<string>; got: string | null; other: Array<string> }>()
  for (const issue of raw) {
    const path = toPath(issue.path)
    const key = pathKey(path)
    let entry = byPath.get(key)
    if (entry === undefined) {
      entry = { path, expected: [], got: null, other: [] }
      byPath.set(key, entry)
    }
    const m = issue._tag === "Type" ? EXPECTED_ACTUAL.exec(issue.message) : null
    if (m !== null) {
      if (!entry.expected.includes(m[1]!)) entry.expected.push(m[1]!)
      entry.got = kindOf(m[2]!)
    } else if (issue._tag === "Missing") {
      entry.other.push("is missing")
    } else if (issue._tag === "Unexpected") {
      entry.other.push("is not allowed")
    } else {
      entry.other.push(issue.message)
    }
  }
  const entries = [...byPath.values()]
  // A union that failed in one member deep down also reports "expected null" (or another
  // member) at the union's own path; the deeper issue says more, so that one is kept.
  const isPrefix = (a: IssuePath, b: IssuePath) => a.length < b.length && a.every((k, i) => b[i] === k)
  const kept = entries.filter(
    (e) => e.other.length > 0 || !entries.some((o) => o !== e && isPrefix(e.path, o.path))
  )
  return kept.map((e) => ({
    path: e.path,
    message:
      e.other.length > 0
        ? e.other.join("; ")
        : `expected ${e.expected.join(" or ")}, got ${e.got ?? "another value"}`
  }))
}

/** `items[3].users[0].email`; the empty path is `(root)`. */
export const formatPath = (path: IssuePath): string => {
  let out = ""
  for (const k of path) {
    if (typeof k === "number") out += `[${k}]`
    else if (/^[A-Za-z_$][\w$]*$/.test(k)) out += out === "" ? k : `.${k}`
    else out += `[${JSON.stringify(k)}]`
  }
  return out === "" ? "(root)" : out
}

/** One line naming the first bad field, e.g. `items[3].users[0].email: expected string, got number`. */
export const describeParseError = (error: ParseResult.ParseError): string => {
  const issues = formatIssues(error)
  const first = issues[0]
  if (first === undefined) return "invalid value"
  const more = issues.length > 1 ? ` (and ${issues.length - 1} more)` : ""
  return `${formatPath(first.path)}: ${first.message}${more}`
}
