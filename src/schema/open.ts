/**
 * Structs that keep keys they do not declare. The service's documents say clients
 * tolerate extra keys; keeping them (instead of stripping) lets a snapshot or an
 * export hold exactly what the service sent.
 */
import { Effect, Option, Schema, SchemaAST, SchemaTransformation } from "effect"

/** The index signature that makes a struct open: any other string key, any value. */
const OtherKeys = Schema.Record(Schema.String, Schema.Unknown)

/**
 * `Schema.Struct` whose decode and encode keep undeclared keys, at any depth below it.
 * Effect's Schema has no `onExcessProperty: "preserve"`: the struct carries an index signature
 * (`[key: string]: unknown`) instead, so it keeps extra keys whatever the parse options.
 * The schema stays a `Schema.Struct` (its `fields`, its type without the index signature);
 * only its AST is the open one. Declared keys come first in a decoded value, then the
 * extra keys. Without fields it is the plain `Schema.Struct({})`, which already keeps the
 * value as sent (and accepts any value but null and undefined).
 */
export const openStruct = <const Fields extends Schema.Struct.Fields>(fields: Fields): Schema.Struct<Fields> => {
  const struct = Schema.Struct(fields)
  if (Object.keys(fields).length === 0) return struct
  return struct.rebuild(Schema.StructWithRest(struct, [OtherKeys]).ast)
}

const OPEN_INDEX: SchemaAST.IndexSignature = new SchemaAST.IndexSignature(SchemaAST.string, SchemaAST.unknown)

const openedAsts = new WeakMap<SchemaAST.AST, SchemaAST.AST>()

const openLinks = (encoding: SchemaAST.Encoding | undefined): SchemaAST.Encoding | undefined => {
  if (encoding === undefined) return undefined
  const openLink = (link: SchemaAST.Link): SchemaAST.Link => {
    const to = openAst(link.to)
    return to === link.to ? link : new SchemaAST.Link(to, link.transformation)
  }
  const [first, ...rest] = encoding
  return [openLink(first), ...rest.map(openLink)]
}

const sameAll = <A>(as: ReadonlyArray<A>, bs: ReadonlyArray<A>): boolean => as.every((a, i) => a === bs[i])

/** The AST with every struct below it open (see `openSchema`); unchanged nodes are kept as they are. */
const openAst = (ast: SchemaAST.AST): SchemaAST.AST => {
  const cached = openedAsts.get(ast)
  if (cached !== undefined) return cached
  let out: SchemaAST.AST = ast
  switch (ast._tag) {
    case "Objects": {
      const props = ast.propertySignatures.map((ps) => {
        const type = openAst(ps.type)
        return type === ps.type ? ps : new SchemaAST.PropertySignature(ps.name, type)
      })
      const indexes = ast.indexSignatures.map((is) => {
        const type = openAst(is.type)
        return type === is.type ? is : new SchemaAST.IndexSignature(is.parameter, type)
      })
      // An empty struct already keeps the value as sent; one with a plain string index keeps every key.
      const closed =
        ast.propertySignatures.length > 0 &&
        !ast.indexSignatures.some((is) => SchemaAST.isString(is.parameter) && is.parameter.checks === undefined)
      const encoding = openLinks(ast.encoding)
      if (closed || !sameAll(props, ast.propertySignatures) || !sameAll(indexes, ast.indexSignatures) || encoding !== ast.encoding) {
        out = new SchemaAST.Objects(
          props,
          closed ? [...indexes, OPEN_INDEX] : indexes,
          ast.annotations,
          ast.checks,
          encoding,
          ast.context,
          ast.encodingChecks
        )
      }
      break
    }
    case "Arrays": {
      const elements = ast.elements.map(openAst)
      const rest = ast.rest.map(openAst)
      const encoding = openLinks(ast.encoding)
      if (!sameAll(elements, ast.elements) || !sameAll(rest, ast.rest) || encoding !== ast.encoding) {
        out = new SchemaAST.Arrays(ast.isMutable, elements, rest, ast.annotations, ast.checks, encoding, ast.context, ast.encodingChecks)
      }
      break
    }
    case "Union": {
      const types = ast.types.map(openAst)
      const encoding = openLinks(ast.encoding)
      if (!sameAll(types, ast.types) || encoding !== ast.encoding) {
        out = new SchemaAST.Union(types, ast.options, ast.annotations, ast.checks, encoding, ast.context, ast.encodingChecks)
      }
      break
    }
    case "Suspend": {
      const thunk = ast.thunk
      out = new SchemaAST.Suspend(() => openAst(thunk()), ast.annotations, ast.checks, openLinks(ast.encoding), ast.context)
      break
    }
    // Other nodes (keywords, literals, declarations such as Option) are kept as they are.
  }
  openedAsts.set(ast, out)
  return out
}

/**
 * The schema with every struct below it keeping undeclared keys (Effect's Schema has no
 * `onExcessProperty: "preserve"` parse option): what the decode helpers of decode.ts use,
 * so a plain `Schema.Struct` keeps extra keys there as well.
 */
export const openSchema = <S extends Schema.Constraint>(schema: S): S => {
  const ast = openAst(schema.ast)
  return ast === schema.ast ? schema : Schema.make<S>(ast)
}

/**
 * A required field of any value that may still be absent: a missing key reads as
 * `undefined`, where Effect's Schema fails a plain `Schema.Unknown` field "is missing".
 */
export const anyValue = <S extends Schema.Top>(schema: S) =>
  schema.pipe(Schema.withDecodingDefaultKey(Effect.succeed(undefined as S["Encoded"])))

/** `Schema.Unknown` as a required field; see `anyValue`. */
export const UnknownValue = anyValue(Schema.Unknown)

/**
 * A field the service's documents do not name (one of the choices of assumptions.ts).
 * Optional, and tolerant of type: a value of the expected type decodes as such, any
 * other value is kept as sent, so an implementation that reads the documents otherwise
 * never fails a decode. The field's type is therefore `unknown`: read it with the
 * guards below, and never require it (docs/architecture.md, "Decoding policy").
 */
export const undocumented = <S extends Schema.Top>(expected: S) =>
  Schema.optional(Schema.Union([expected, Schema.Unknown]))

/**
 * A value the documents name but whose type they do not give: any value kept (the
 * expected type first, then anything). A missing key reads as `undefined`, see `anyValue`.
 */
export const tolerant = <S extends Schema.Top>(expected: S) => anyValue(Schema.Union([expected, Schema.Unknown]))

/** The value when it is a string. */
export const stringOf = (u: unknown): string | undefined => (typeof u === "string" ? u : undefined)

/** The value when it is a finite number. */
export const numberOf = (u: unknown): number | undefined => (typeof u === "number" && Number.isFinite(u) ? u : undefined)

/** The `id` of a reference object (`{id, ...}`), when it has a string one. */
export const refIdOf = (u: unknown): string | undefined =>
  typeof u === "object" && u !== null ? stringOf((u as { readonly id?: unknown }).id) : undefined

/** The `title` of a reference object, when it has a string one. */
export const refTitleOf = (u: unknown): string | undefined =>
  typeof u === "object" && u !== null ? stringOf((u as { readonly title?: unknown }).title) : undefined

/**
 * An answer the documents do not show, read for what it offers: some value when it has
 * the expected shape, none otherwise. It never fails: a 2xx was the success.
 */
export const answerIfShaped = <S extends Schema.Codec<any, any, never, never>>(expected: S) =>
  Schema.Unknown.pipe(
    Schema.decodeTo(
      Schema.Option(Schema.toType(expected)),
      SchemaTransformation.transform<Option.Option<S["Type"]>, unknown>({
        decode: (u) => Schema.decodeUnknownOption(expected)(u),
        encode: (a) => Option.match(a, { onNone: () => ({}), onSome: (v) => Schema.encodeSync(expected)(v) })
      })
    )
  )
