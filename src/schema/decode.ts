/**
 * Decoding with the project's options (keep extra keys, report every issue) and readable
 * failures that name the path of the bad field.
 */
import { Effect, Result, Schema, SchemaAST, SchemaIssue } from "effect"
import { openSchema } from "./open.ts"

/**
 * Every issue is collected; the rejected values are reported so `formatIssues` can name
 * their kind (never the value itself). Extra keys are kept by the helpers below through
 * `openSchema` (open.ts): Effect's Schema has no `onExcessProperty: "preserve"` option.
 */
export const decodeOptions = { errors: "all", reportInput: true } as const

export const decodeUnknown =
  <S extends Schema.Constraint>(schema: S) =>
  (input: unknown): Effect.Effect<S["Type"], Schema.SchemaError, S["DecodingServices"]> =>
    Schema.decodeUnknownEffect(openSchema(schema), decodeOptions)(input)

export const decodeUnknownEither =
  <S extends Schema.ConstraintDecoder<unknown>>(schema: S) =>
  (input: unknown): Result.Result<S["Type"], Schema.SchemaError> =>
    Schema.decodeUnknownResult(openSchema(schema), decodeOptions)(input)

export const encode =
  <S extends Schema.Constraint>(schema: S) =>
  (value: S["Type"]): Effect.Effect<S["Encoded"], Schema.SchemaError, S["EncodingServices"]> =>
    Schema.encodeEffect(openSchema(schema), decodeOptions)(value)

export const encodeEither =
  <S extends Schema.ConstraintEncoder<unknown>>(schema: S) =>
  (value: S["Type"]): Result.Result<S["Encoded"], Schema.SchemaError> =>
    Schema.encodeResult(openSchema(schema), decodeOptions)(value)

export type IssuePath = ReadonlyArray<string | number>

/** One failed field: where it is and what was wrong. */
export interface FormattedIssue {
  readonly path: IssuePath
  readonly message: string
}

/** The kind of a value, so messages do not echo input values (a bigint reads "number", like any number). */
const kindOf = (u: unknown): string => {
  if (u === null) return "null"
  if (Array.isArray(u)) return "array"
  return typeof u === "bigint" ? "number" : typeof u
}

const toPath = (path: ReadonlyArray<PropertyKey>): IssuePath =>
  path.map((k) => (typeof k === "number" ? k : String(k)))

const pathKey = (path: IssuePath): string => JSON.stringify(path)

const defaultFormatter = SchemaIssue.makeFormatterDefault()

/** The open-struct marker (`[key: string]: unknown`, open.ts) is not part of a shape's description. */
const isOpenMarker = (is: SchemaAST.IndexSignature): boolean =>
  SchemaAST.isString(is.parameter) && SchemaAST.isUnknown(is.type)

const KEYWORDS: Readonly<Record<string, string>> = {
  String: "string",
  Number: "number",
  Boolean: "boolean",
  BigInt: "bigint",
  Symbol: "symbol",
  Null: "null",
  Undefined: "undefined",
  Void: "void",
  Unknown: "unknown",
  Any: "any",
  Never: "never",
  ObjectKeyword: "object"
}

/**
 * A schema as the messages print it (`string`, `"PUT"`, `{ readonly id: string }`,
 * `ReadonlyArray<string>`, `string | null`): the wording tests and users depend on
 * (`expected string or null, got number`), not Effect's default.
 * `nested` names a refined schema by its identifier (a field's type), the top level
 * describes the base type (the value failed before any check ran).
 */
const describe = (ast: SchemaAST.AST, nested: boolean): string => {
  if (nested && ast.checks !== undefined) {
    const last = ast.checks[ast.checks.length - 1]
    const id = last?.annotations?.identifier ?? ast.annotations?.identifier
    if (typeof id === "string") return id
    // A chain of titled checks reads `int & nonNegative`, one with an untitled check `{ number | filter }`.
    const titles = ast.checks.map((c) => c.annotations?.title)
    return titles.every((t) => typeof t === "string") ? titles.join(" & ") : `{ ${describeBase(ast)} | filter }`
  }
  return describeBase(ast)
}

/** A schema as `describe` prints it, its checks left out. */
const describeBase = (ast: SchemaAST.AST): string => {
  const id = ast.annotations?.identifier
  if (typeof id === "string") return id
  const keyword = KEYWORDS[ast._tag]
  if (keyword !== undefined) return keyword
  switch (ast._tag) {
    case "Literal":
      return typeof ast.literal === "string"
        ? JSON.stringify(ast.literal)
        : typeof ast.literal === "bigint"
          ? `${ast.literal}n`
          : String(ast.literal)
    case "Union":
      return ast.types.map((t) => describe(t, true)).join(" | ")
    case "Objects": {
      const parts = [
        ...ast.propertySignatures.map(
          (ps) =>
            `${ps.type.context?.isMutable === true ? "" : "readonly "}${String(ps.name)}${
              SchemaAST.isOptional(ps.type) ? "?" : ""
            }: ${describe(ps.type, true)}`
        ),
        ...ast.indexSignatures
          .filter((is) => !isOpenMarker(is))
          .map((is) => `readonly [x: ${describe(is.parameter, true)}]: ${describe(is.type, true)}`)
      ]
      return parts.length === 0 ? "{}" : `{ ${parts.join("; ")} }`
    }
    case "Arrays": {
      const ro = ast.isMutable ? "" : "Readonly"
      if (ast.elements.length === 0 && ast.rest.length === 1) return `${ro}Array<${describe(ast.rest[0]!, true)}>`
      const elements = ast.elements.map((e) => describe(e, true))
      const rest = ast.rest.map((r, i) => (i === 0 ? `...${describe(r, true)}[]` : describe(r, true)))
      return `${ast.isMutable ? "" : "readonly "}[${[...elements, ...rest].join(", ")}]`
    }
    default:
      return defaultFormatter(new SchemaIssue.InvalidType(ast)).replace(/^Expected /, "")
  }
}

/** A plain union (no checks, no name of its own), whose members a message lists one by one. */
const isPlainUnion = (ast: SchemaAST.AST): ast is SchemaAST.Union =>
  SchemaAST.isUnion(ast) && ast.checks === undefined && ast.annotations?.identifier === undefined

/**
 * What a union member expects of a value it did not take: its encoded form when it
 * transforms (the value failed before the transformation).
 */
const memberExpects = (ast: SchemaAST.AST): Array<string> =>
  isPlainUnion(ast)
    ? ast.types.flatMap(memberExpects)
    : [describe(ast.encoding !== undefined ? SchemaAST.toEncoded(ast) : ast, false)]

/** A rejected value as a check's message prints it (`Expected an integer, actual 7.5`). */
const formatActual = (u: unknown): string => {
  if (typeof u === "string") return JSON.stringify(u)
  if (typeof u === "number" || typeof u === "boolean" || u === null || u === undefined) return String(u)
  if (typeof u === "bigint") return `${u}n`
  try {
    return JSON.stringify(u) ?? String(u)
  } catch {
    return String(u)
  }
}

interface Entry {
  readonly path: IssuePath
  readonly expected: Array<string>
  got: string | null
  readonly other: Array<string>
}

const inputOf = (issue: SchemaIssue.Issue): { readonly input: unknown } | undefined =>
  SchemaIssue.hasInput(issue) ? { input: issue.input } : undefined

/**
 * Every issue of a schema error, one per path. The alternatives of a union at the same
 * path are merged ("expected string or null, got number"). The kind of a bad value is
 * named when the decode reported its input (`decodeOptions`), else "another value".
 */
export const formatIssues = (error: Schema.SchemaError): Array<FormattedIssue> => {
  const byPath = new Map<string, Entry>()
  const entryAt = (path: IssuePath): Entry => {
    const key = pathKey(path)
    let entry = byPath.get(key)
    if (entry === undefined) {
      entry = { path, expected: [], got: null, other: [] }
      byPath.set(key, entry)
    }
    return entry
  }
  const expected = (path: IssuePath, what: string, issue: SchemaIssue.Issue) => {
    const entry = entryAt(path)
    if (!entry.expected.includes(what)) entry.expected.push(what)
    const reported = inputOf(issue)
    if (reported !== undefined) entry.got = kindOf(reported.input)
  }
  const other = (path: IssuePath, message: string) => {
    entryAt(path).other.push(message)
  }

  const walk = (issue: SchemaIssue.Issue, path: IssuePath): void => {
    switch (issue._tag) {
      case "Pointer":
        return walk(issue.issue, [...path, ...toPath(issue.path)])
      case "Composite": {
        // A value failing several checks reports only the first: one message, the first rule broken.
        let filtered = false
        for (const inner of issue.issues) {
          if (inner._tag === "Filter") {
            if (filtered) continue
            filtered = true
          }
          walk(inner, path)
        }
        return
      }
      case "AnyOf": {
        // Every member reports, so the message names every alternative: the ones that tried the
        // value their issues, the others what they expect (merged at the union's path; deeper
        // issues win, see below).
        const tried = new Set<SchemaIssue.Issue>()
        for (const member of issue.ast.types) {
          const own = issue.issues.filter((i) => "ast" in i && i.ast === member)
          if (own.length > 0) {
            for (const inner of own) {
              tried.add(inner)
              walk(inner, path)
            }
          } else {
            for (const what of memberExpects(member)) expected(path, what, issue)
          }
        }
        for (const inner of issue.issues) if (!tried.has(inner)) walk(inner, path)
        return
      }
      case "Encoding":
        return walk(issue.issue, path)
      case "Filter": {
        const inner = issue.issue
        if (inner._tag !== "InvalidValue") return walk(inner, path)
        const message = inner.annotations?.message ?? issue.filter.annotations?.message
        if (typeof message === "string") return other(path, message)
        const what = issue.filter.annotations?.expected
        const reported = inputOf(issue)
        if (typeof what === "string" && reported !== undefined) {
          return other(path, `Expected ${what}, actual ${formatActual(reported.input)}`)
        }
        return other(path, defaultFormatter(issue))
      }
      case "InvalidType":
        return expected(path, describe(issue.ast, false), issue)
      case "MissingKey":
        return other(path, "is missing")
      case "UnexpectedKey":
        return other(path, "is not allowed")
      case "InvalidValue": {
        const message = issue.annotations?.message
        if (typeof message === "string") return other(path, message)
        const what = issue.annotations?.expected
        if (typeof what === "string") return expected(path, what, issue)
        return other(path, defaultFormatter(issue))
      }
      case "Forbidden":
      case "OneOf":
        return other(path, defaultFormatter(issue))
    }
  }
  walk(error.issue, [])

  const entries = [...byPath.values()]
  // A union that failed in one member deep down may also report another member at the
  // union's own path; the deeper issue says more, so that one is kept.
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
export const describeParseError = (error: Schema.SchemaError): string => {
  const issues = formatIssues(error)
  const first = issues[0]
  if (first === undefined) return "invalid value"
  const more = issues.length > 1 ? ` (and ${issues.length - 1} more)` : ""
  return `${formatPath(first.path)}: ${first.message}${more}`
}
