/**
 * Structs that keep keys they do not declare. The service's documents say clients
 * tolerate extra keys; keeping them (instead of stripping) lets a snapshot or an
 * export hold exactly what the service sent.
 */
import { Option, Schema } from "effect"

const preserve = { parseOptions: { onExcessProperty: "preserve" } } as const

/** `Schema.Struct` whose decode and encode keep undeclared keys, at any depth below it. */
export const openStruct = <Fields extends Schema.Struct.Fields>(fields: Fields): Schema.Struct<Fields> =>
  Schema.Struct(fields).annotations(preserve)

/**
 * A field the service's documents do not name (one of the choices of assumptions.ts).
 * Optional, and tolerant of type: a value of the expected type decodes as such, any
 * other value is kept as sent, so an implementation that reads the documents otherwise
 * never fails a decode. The field's type is therefore `unknown`: read it with the
 * guards below, and never require it (docs/architecture.md, "Decoding policy").
 */
export const undocumented = <A, I, R>(expected: Schema.Schema<A, I, R>) => Schema.optional(tolerant(expected))

/**
 * A value the documents name but whose type they do not give: present, any value kept
 * (the expected type first, then anything).
 */
export const tolerant = <A, I, R>(expected: Schema.Schema<A, I, R>) => Schema.Union(expected, Schema.Unknown)

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
export const answerIfShaped = <A, I>(expected: Schema.Schema<A, I, never>) =>
  Schema.transform(Schema.Unknown, Schema.OptionFromSelf(Schema.typeSchema(expected)), {
    strict: true,
    decode: (u) => Schema.decodeUnknownOption(expected, { onExcessProperty: "preserve" })(u),
    encode: (a): unknown => Option.match(a, { onNone: () => ({}), onSome: (v) => Schema.encodeSync(expected)(v) })
  })
