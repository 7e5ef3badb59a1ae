/**
 * The JSON Schemas of openapi.json: request bodies from the operations' input schemas and
 * 200 answers of the shapes the service's documents show, both built from the schemas the
 * client decodes with. Where the documents do not show an answer, the description is
 * open and says so: it claims nothing our emulator merely chose (the document stays the
 * same whichever reading an emulator serves).
 */
import { Schema, SchemaAST } from "effect"
import {
  ActivityItem,
  FileItem,
  FilesPageInfo,
  ItemsWithTotal,
  ListRef,
  openStruct,
  RecordDetail,
  RecordSummary,
  RecordsPageInfo,
  SearchResult,
  SuccessResponse
} from "../schema/index.ts"

export type JsonSchema = { readonly [key: string]: unknown }

/** Where shared definitions live in the document (a `#/$defs/` ref is not resolvable there). */
const DEFINITIONS = "#/components/schemas/"

export const schemaRef = (name: string): JsonSchema => ({ $ref: `${DEFINITIONS}${name}` })

/**
 * The walk below marks `Unknown`, `Any`, `Never`, `void` and `object` with fixed `$id`s (the
 * marks tell those schemas apart inside unions); one document holding
 * several of them has duplicate ids, which validators refuse. The refs carry the naming.
 */
const withoutIds = (value: unknown): unknown => {
  if (Array.isArray(value)) return value.map(withoutIds)
  if (value === null || typeof value !== "object") return value
  const out: Record<string, unknown> = {}
  for (const [key, inner] of Object.entries(value)) if (key !== "$id") out[key] = withoutIds(inner)
  return out
}

type Out = Record<string, unknown>

const NEVER_ID = "/schemas/never"
const ANY_ID = "/schemas/any"
const UNKNOWN_ID = "/schemas/unknown"
const VOID_ID = "/schemas/void"

/**
 * The titles (and `object`'s description) the keyword schemas carry in openapi.json, so its
 * shapes stay as published.
 * Keyed by AST tag.
 */
const KEYWORD_ANNOTATIONS: Readonly<Record<string, { readonly title: string; readonly description?: string }>> = {
  Unknown: { title: "unknown" },
  Any: { title: "any" },
  Never: { title: "never" },
  Void: { title: "void" },
  ObjectKeyword: { title: "object", description: "an object in the TypeScript meaning, i.e. the `object` type" }
}

const stringAnnotation = (annotations: SchemaAST.AST["annotations"], key: string): string | undefined => {
  const value = annotations?.[key]
  return typeof value === "string" ? value : undefined
}

/** `description` and `title` of a node, in that order: the key order openapi.json publishes. */
const annotationsOf = (ast: SchemaAST.AST): Out | undefined => {
  const builtIn = KEYWORD_ANNOTATIONS[ast._tag]
  const description = stringAnnotation(ast.annotations, "description") ?? builtIn?.description
  const title = stringAnnotation(ast.annotations, "title") ?? builtIn?.title
  if (description === undefined && title === undefined) return undefined
  const out: Out = {}
  if (description !== undefined) out.description = description
  if (title !== undefined) out.title = title
  return out
}

const addAnnotations = (schema: Out, annotations: Out | undefined): Out => {
  if (annotations === undefined) return schema
  if ("$ref" in schema) return { allOf: [schema], ...annotations }
  return { ...schema, ...annotations }
}

const isRecord = (u: unknown): u is Readonly<Record<string, unknown>> =>
  typeof u === "object" && u !== null && !Array.isArray(u)

/**
 * The numeric bound checks, by the id of their representation: the JSON Schema keyword
 * that says each, and the title and description effect gives it (a bound of 0 has a name
 * of its own: `positive`, "a positive number").
 */
const BOUNDS: Readonly<Record<string, {
  readonly keyword: "minimum" | "exclusiveMinimum" | "maximum" | "exclusiveMaximum"
  readonly title: string
  readonly phrase: string
  readonly zero: { readonly title: string; readonly description: string }
}>> = {
  "effect/schema/isGreaterThanOrEqualTo": {
    keyword: "minimum",
    title: "greaterThanOrEqualTo",
    phrase: "greater than or equal to",
    zero: { title: "nonNegative", description: "a non-negative number" }
  },
  "effect/schema/isGreaterThan": {
    keyword: "exclusiveMinimum",
    title: "greaterThan",
    phrase: "greater than",
    zero: { title: "positive", description: "a positive number" }
  },
  "effect/schema/isLessThanOrEqualTo": {
    keyword: "maximum",
    title: "lessThanOrEqualTo",
    phrase: "less than or equal to",
    zero: { title: "nonPositive", description: "a non-positive number" }
  },
  "effect/schema/isLessThan": {
    keyword: "exclusiveMaximum",
    title: "lessThan",
    phrase: "less than",
    zero: { title: "negative", description: "a negative number" }
  }
}

/**
 * The JSON Schema keywords of the checks JSON Schema can say (integer and numeric bounds,
 * each with its title and description: `int`, "an integer"); a check it cannot say (a
 * predicate) adds nothing.
 */
const checkKeywords = (check: SchemaAST.Check<unknown>): Array<{ schema: Out; title: string; description: string }> => {
  if (check._tag === "FilterGroup") return check.checks.flatMap(checkKeywords)
  const representation = check.annotations?.representation
  const payload = representation?.payload
  const value = (key: string): number | undefined => {
    const n = isRecord(payload) ? payload[key] : undefined
    return typeof n === "number" ? n : undefined
  }
  const own = (title: string, description: string, schema: Out) => [
    {
      schema,
      title: stringAnnotation(check.annotations, "title") ?? title,
      description: stringAnnotation(check.annotations, "description") ?? description
    }
  ]
  switch (representation?.id) {
    case "effect/schema/isInt":
      return own("int", "an integer", { type: "integer" })
    default: {
      const bound = representation === undefined ? undefined : BOUNDS[representation.id]
      const n = bound === undefined ? undefined : value(bound.keyword)
      if (bound === undefined || n === undefined) return []
      return n === 0
        ? own(bound.zero.title, bound.zero.description, { [bound.keyword]: n })
        : own(`${bound.title}(${n})`, `a number ${bound.phrase} ${n}`, { [bound.keyword]: n })
    }
  }
}

/** A check's keywords over the schema so far; a bound already there moves to `allOf` unless the new one is tighter. */
const mergeCheck = (from: Out, keywords: { schema: Out; title: string; description: string }): Out => {
  const { schema } = keywords
  const out: Out = { ...from, description: keywords.description, title: keywords.title, ...schema }
  const allOf: Array<Out> = Array.isArray(from.allOf) ? [...(from.allOf as Array<Out>)] : []
  const tighter: Record<string, (a: number, b: number) => boolean> = {
    minimum: (kept, next) => kept > next,
    maximum: (kept, next) => kept < next,
    exclusiveMinimum: (kept, next) => kept > next,
    exclusiveMaximum: (kept, next) => kept < next
  }
  for (const [name, keep] of Object.entries(tighter)) {
    const previous = from[name]
    const next = schema[name]
    if (typeof previous === "number" && typeof next === "number") {
      allOf.unshift({ [name]: previous })
      for (let i = allOf.length - 1; i >= 0; i--) {
        const bound = allOf[i]![name]
        if (typeof bound === "number" && !keep(bound, next)) allOf.splice(i, 1)
      }
    }
  }
  if (allOf.length > 0) out.allOf = allOf
  else delete out.allOf
  return out
}

/** Where a transformation starts: what a JSON body holds (the encoded end). */
const encodedEnd = (ast: SchemaAST.AST): SchemaAST.AST =>
  ast.encoding === undefined ? ast : encodedEnd(ast.encoding[ast.encoding.length - 1]!.to)

const identifierOf = (ast: SchemaAST.AST): string | undefined =>
  SchemaAST.resolveIdentifier(ast) ?? (SchemaAST.isSuspend(ast) ? identifierOf(ast.thunk()) : undefined)

/** The schema without its `undefined` members (an optional field's `| undefined`); undefined when it has none. */
const pruneUndefined = (ast: SchemaAST.AST): SchemaAST.AST | undefined => {
  if (ast.encoding !== undefined) return pruneUndefined(encodedEnd(ast))
  if (SchemaAST.isUndefined(ast)) return SchemaAST.never
  if (SchemaAST.isSuspend(ast)) return pruneUndefined(ast.thunk())
  if (!SchemaAST.isUnion(ast)) return undefined
  const types: Array<SchemaAST.AST> = []
  let hasUndefined = false
  for (const type of ast.types) {
    const pruned = pruneUndefined(type)
    if (pruned === undefined) types.push(type)
    else {
      hasUndefined = true
      if (!SchemaAST.isNever(pruned)) types.push(pruned)
    }
  }
  if (!hasUndefined) return undefined
  return types.length === 0 ? SchemaAST.never : types.length === 1 ? types[0]! : new SchemaAST.Union(types)
}

const hasId = (schema: Out, id: string) => schema.$id === id

const isCompactableLiteral = (schema: Out | undefined): schema is Out & { enum: Array<unknown> } =>
  schema !== undefined && Array.isArray(schema.enum) && "type" in schema && Object.keys(schema).length === 2

/** Union members: `never` dropped, an `unknown` member swallows the rest, literals of one type merged into one enum. */
const compactUnion = (members: ReadonlyArray<Out>): Array<Out> => {
  const out: Array<Out> = []
  for (const m of members) {
    if (hasId(m, NEVER_ID) && Object.keys(m).length === 3 && m.title === "never") continue
    if (hasId(m, ANY_ID) || hasId(m, UNKNOWN_ID) || hasId(m, VOID_ID)) return [m]
    const last = out[out.length - 1]
    if (isCompactableLiteral(m) && isCompactableLiteral(last) && last.type === m.type) {
      out[out.length - 1] = { type: last.type, enum: [...last.enum, ...m.enum] }
      continue
    }
    out.push(m)
  }
  return out
}

const unsupported = (ast: SchemaAST.AST, path: ReadonlyArray<PropertyKey>): never => {
  throw new Error(`Missing JSON Schema for ${ast._tag} at [${path.map(String).join(", ")}]`)
}

/**
 * JSON Schema of the encoded side of a schema, for OpenAPI 3.1 (undeclared keys allowed):
 * what a request body or an answer really holds. Effect's own generator describes a
 * schema's canonical JSON codec instead (an optional field also accepts `null`, a number
 * also the strings "NaN" and "Infinity"), which our handlers do not accept. Named schemas
 * (an `identifier`) go to `definitions` once and are referenced.
 */
const toJsonSchema = (
  ast: SchemaAST.AST,
  definitions: Record<string, Out>,
  handleIdentifier: boolean,
  path: ReadonlyArray<PropertyKey>
): Out => {
  if (handleIdentifier) {
    const id = identifierOf(ast)
    if (id !== undefined) {
      const out = { $ref: `${DEFINITIONS}${id.replace(/~/g, "~0").replace(/\//g, "~1")}` }
      if (!Object.hasOwn(definitions, id)) {
        definitions[id] = out
        definitions[id] = toJsonSchema(ast, definitions, false, path)
      }
      return out
    }
  }
  // A transformation is described by what it decodes from; checks on its decoded side do not apply to JSON.
  if (ast.encoding !== undefined) {
    return addAnnotations(toJsonSchema(encodedEnd(ast), definitions, handleIdentifier, path), annotationsOf(ast))
  }
  const checks = ast.checks ?? []
  // A number built on `Schema.Int` refers to the document's shared `Int` definition, not an inline `integer`.
  const onInt = handleIdentifier && SchemaAST.isNumber(ast) && checks[0] !== undefined && checks[0] === INT_CHECK
  let out = onInt
    ? toJsonSchema(NamedInt.ast, definitions, true, path)
    : addAnnotations(base(ast, definitions, path), annotationsOf(ast))
  for (const check of onInt ? checks.slice(1) : checks) {
    for (const keywords of checkKeywords(check)) out = mergeCheck(out, keywords)
  }
  return out
}

const INT_CHECK = Schema.Int.ast.checks?.[0]
const NamedInt = Schema.Int.annotate({ identifier: "Int" })

const base = (ast: SchemaAST.AST, definitions: Record<string, Out>, path: ReadonlyArray<PropertyKey>): Out => {
  const go = (inner: SchemaAST.AST, at: ReadonlyArray<PropertyKey>) => toJsonSchema(inner, definitions, true, at)
  switch (ast._tag) {
    case "Declaration":
    case "Undefined":
    case "BigInt":
    case "UniqueSymbol":
    case "Symbol":
    case "TemplateLiteral":
      return unsupported(ast, path)
    case "Suspend":
      return toJsonSchema(ast.thunk(), definitions, false, path)
    case "Never":
      return { $id: NEVER_ID, not: {} }
    case "Void":
      return { $id: VOID_ID }
    case "Unknown":
      return { $id: UNKNOWN_ID }
    case "Any":
      return { $id: ANY_ID }
    case "ObjectKeyword":
      return { $id: "/schemas/object", anyOf: [{ type: "object" }, { type: "array" }] }
    case "Null":
      return { type: "null" }
    case "String":
      return { type: "string" }
    case "Number":
      return { type: "number" }
    case "Boolean":
      return { type: "boolean" }
    case "Literal": {
      const literal = ast.literal
      if (typeof literal === "string") return { type: "string", enum: [literal] }
      if (typeof literal === "number") return { type: "number", enum: [literal] }
      if (typeof literal === "boolean") return { type: "boolean", enum: [literal] }
      return unsupported(ast, path)
    }
    case "Enum": {
      const anyOf = ast.enums.map(([title, value]) => ({
        type: typeof value === "number" ? "number" : "string",
        title,
        enum: [value]
      }))
      return anyOf.length >= 1 ? { $comment: "/schemas/enums", anyOf } : { $id: NEVER_ID, not: {} }
    }
    case "Arrays": {
      const elements = ast.elements.map((e, i) => go(e, [...path, i]))
      const rest = ast.rest.map((r) => go(r, path))
      const out: Out = { type: "array" }
      const len = ast.elements.length
      if (len > 0) {
        out.minItems = len - ast.elements.filter(SchemaAST.isOptional).length
        out.prefixItems = elements
      }
      if (rest.length > 0) {
        if (rest.length > 1) return unsupported(ast, path)
        out.items = rest[0]
        if (ast.elements.every((e) => e === ast.rest[0])) delete out.prefixItems
      } else if (len > 0) out.items = false
      else out.maxItems = 0
      return out
    }
    case "Objects": {
      // `[key: string]: unknown` is what keeps a struct open (openStruct): undeclared keys stay allowed.
      const isOpenMarker = (is: SchemaAST.IndexSignature) => SchemaAST.isString(is.parameter) && SchemaAST.isUnknown(is.type)
      const indexSignatures = ast.indexSignatures.filter((is) => !isOpenMarker(is))
      if (ast.propertySignatures.length === 0 && indexSignatures.length === 0) {
        return { $id: "/schemas/%7B%7D", anyOf: [{ type: "object" }, { type: "array" }] }
      }
      const required: Array<string> = []
      const properties: Record<string, Out> = {}
      const out: Out = { type: "object", required, properties, additionalProperties: true }
      for (const is of indexSignatures) {
        if (!SchemaAST.isString(is.parameter) || is.parameter.checks !== undefined) return unsupported(ast, path)
        const additional = go(pruneUndefined(is.type) ?? is.type, path)
        out.additionalProperties = hasId(additional, NEVER_ID) && Object.keys(additional).length === 3 ? false : additional
      }
      for (const ps of ast.propertySignatures) {
        if (typeof ps.name !== "string") return unsupported(ast, [...path, ps.name])
        const pruned = pruneUndefined(ps.type)
        const context = ps.type.context?.annotations
        const contextAnnotations: Out = {}
        const description = stringAnnotation(context, "description")
        const title = stringAnnotation(context, "title")
        if (description !== undefined) contextAnnotations.description = description
        if (title !== undefined) contextAnnotations.title = title
        properties[ps.name] = addAnnotations(
          go(pruned ?? ps.type, [...path, ps.name]),
          Object.keys(contextAnnotations).length === 0 ? undefined : contextAnnotations
        )
        // Whether the key is required is read on the decoded side: a field that decodes a missing
        // key to a value (open.ts `anyValue`) stays listed, as the decoded type requires it.
        if (!SchemaAST.isOptional(ps.type) && pruned === undefined) required.push(ps.name)
      }
      return out
    }
    case "Union": {
      const anyOf = compactUnion(ast.types.map((t) => go(t, path)))
      if (anyOf.length === 0) return { $id: NEVER_ID, not: {} }
      if (anyOf.length === 1) return anyOf[0]!
      return { anyOf }
    }
  }
}

/**
 * Turns schemas into JSON Schema, collecting every named definition (a schema with an
 * `identifier`) once, for `components/schemas`.
 */
export class SchemaRegistry {
  private readonly definitions: Record<string, Out> = {}
  private readonly extra: Record<string, JsonSchema> = {}

  /** JSON Schema of a schema; undeclared keys are allowed (clients tolerate extra keys). */
  of(schema: Schema.Top): JsonSchema {
    return withoutIds(toJsonSchema(schema.ast, this.definitions, true, [])) as JsonSchema
  }

  /** Registers a hand-written definition and returns its ref. */
  define(name: string, schema: JsonSchema): JsonSchema {
    this.extra[name] = schema
    return schemaRef(name)
  }

  /** Every definition collected so far, sorted by name. */
  components(): Record<string, JsonSchema> {
    const all: Record<string, JsonSchema> = { ...(withoutIds(this.definitions) as Record<string, JsonSchema>), ...this.extra }
    return Object.fromEntries(Object.keys(all).sort().map((name) => [name, all[name]!]))
  }
}

/**
 * A struct's schema without some of its keys: the plain object shape, without the name and
 * checks of the whole, which belong to the full struct. Other schemas have no keys to drop.
 */
export const omitKeys = (schema: Schema.Top, keys: ReadonlyArray<string>): Schema.Top => {
  const ast = encodedEnd(schema.ast)
  if (!SchemaAST.isObjects(ast)) return schema
  return Schema.make<Schema.Top>(
    new SchemaAST.Objects(
      ast.propertySignatures.filter((ps) => typeof ps.name !== "string" || !keys.includes(ps.name)),
      ast.indexSignatures
    )
  )
}

const named = <S extends Schema.Top>(identifier: string, schema: S) => schema.annotate({ identifier })

const Summary = named("RecordSummary", RecordSummary)
const created = { id: Schema.String, uid: Schema.String, title: Schema.String }

/** The documented answers, each a named component (openapi-typescript names its types after them). */
const documented: Record<string, Schema.Top> = {
  // R-REST-RECORD-01, R-REST-PAGE-07
  "list-records": named(
    "RecordsPage",
    openStruct({ items: Schema.Array(Summary), pageInfo: named("RecordsPageInfo", RecordsPageInfo) })
  ),
  // R-REST-RECORD-19
  "get-record": named("RecordDetail", RecordDetail),
  // R-REST-RECORD-40/41: the documents show two examples of the created record, either may
  // come; the type of `rank` is not shown.
  "create-record": named(
    "CreateRecordResponse",
    Schema.Union([
      named("CreatedRecordWithList", openStruct({ ...created, rank: Schema.Unknown, list: ListRef })),
      named("CreatedRecordWithTodoList", openStruct({ ...created, position: Schema.Number, todoList: ListRef }))
    ])
  ),
  "move-record": named("SuccessResponse", SuccessResponse),
  "delete-record": named("SuccessResponse", SuccessResponse),
  "search-records": named("SearchResults", Schema.Array(named("SearchResult", SearchResult))),
  "list-record-activity": named("ActivityPage", ItemsWithTotal(named("ActivityItem", ActivityItem))),
  // R-REST-PAGE-08
  "list-files": named(
    "FilesPage",
    openStruct({ items: Schema.Array(named("FileItem", FileItem)), pageInfo: named("FilesPageInfo", FilesPageInfo) })
  )
}

const NOT_SHOWN = "The service's documents do not show this answer"
const notShownItem = { type: "object", additionalProperties: true, description: "Fields not shown by the service's documents" }

/**
 * Answers whose envelope the documents show but not their items, or that they do not
 * show at all: what is documented is required, the rest stays open.
 */
const partlyShown: Record<string, readonly [string, JsonSchema]> = {
  // R-REST-PAGE-09
  "list-workspaces": [
    "WorkspacesPage",
    {
      type: "object",
      required: ["items", "totalCount"],
      properties: { items: { type: "array", items: notShownItem }, totalCount: { type: "number" } },
      additionalProperties: true
    }
  ],
  // R-REST-PAGE-10
  "list-users": [
    "UsersPage",
    {
      type: "object",
      required: ["users", "totalCount"],
      properties: { users: { type: "array", items: notShownItem }, totalCount: { type: "number" } },
      additionalProperties: true
    }
  ],
  // R-REST-PAGE-11: not paged, the full set; whether bare or in an envelope is not shown.
  "list-lists": [
    "ListsResponse",
    {
      description: "Every list, not paged; whether as a bare array or in an object is not shown",
      anyOf: [{ type: "array", items: notShownItem }, { type: "object", additionalProperties: true }]
    }
  ],
  "update-record": ["UpdateRecordResponse", { type: "object", additionalProperties: true, description: NOT_SHOWN }],
  "count-records": [
    "CountRecordsResponse",
    {
      description: `${NOT_SHOWN}: an object holding the count (\`count\` or \`totalCount\`) or a bare number`,
      anyOf: [{ type: "object", additionalProperties: true }, { type: "number" }]
    }
  ]
}

/** The 200 answer of an operation (RPC name), as a ref into `components/schemas`. */
export const responseSchema = (registry: SchemaRegistry, operation: string): JsonSchema => {
  const schema = documented[operation]
  if (schema !== undefined) return registry.of(schema)
  const open = partlyShown[operation]
  if (open !== undefined) return registry.define(open[0], open[1])
  return notShownResponse(registry)
}

/** An answer the documents do not show at all (most operations beyond records, files and search). */
export const notShownResponse = (registry: SchemaRegistry): JsonSchema =>
  registry.define("NotShownResponse", { type: "object", additionalProperties: true, description: NOT_SHOWN })
