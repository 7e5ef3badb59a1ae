/**
 * The presigned upload flow: step 1 query and answer, step 3 answer.
 */
import { Effect, Number as Num, Option, Schema, SchemaGetter, SchemaIssue } from "effect"
import { openStruct } from "./open.ts"

/**
 * A number sent as a string. Effect's `Schema.NumberFromString` coerces with `Number(s)`,
 * which reads "" and "  " as 0; this one refuses them, so a blank value is an error, not 0
 * ("NaN" and "Infinity" are numbers, the integer check refuses them).
 */
const NumberFromString = Schema.String.pipe(
  Schema.decodeTo(Schema.Number, {
    decode: SchemaGetter.transformEffect((s: string) =>
      Option.match(Num.parse(s), {
        onNone: () =>
          Effect.fail(new SchemaIssue.InvalidValue({ message: `Unable to decode ${JSON.stringify(s)} into a number` }, s)),
        onSome: (n) => Effect.succeed(n)
      })
    ),
    encode: SchemaGetter.String()
  })
)

/** `GET /uploads` query (all values arrive as strings). */
export const PresignQuery = openStruct({
  filename: Schema.String,
  size: Schema.optional(
    NumberFromString.check(
      Schema.isInt({ title: "int" }),
      Schema.isGreaterThanOrEqualTo(0, { expected: "a non-negative number", title: "nonNegative" })
    )
  ),
  key: Schema.optional(Schema.String),
  formId: Schema.optional(Schema.String)
})
export type PresignQuery = typeof PresignQuery.Type

/** Step 1 answer (R-UPLOAD-PRESIGN-06..10, 30). */
export const PresignResponse = openStruct({
  url: Schema.String,
  method: Schema.Literal("PUT"),
  headers: openStruct({ "Content-Type": Schema.String }),
  fields: openStruct({
    "Content-Type": Schema.String,
    Key: Schema.String,
    "X-Key": Schema.String
  })
})
export type PresignResponse = typeof PresignResponse.Type

/** Step 3 answer (R-UPLOAD-PRESIGN-16). */
export const ConfirmResponse = openStruct({
  message: Schema.String,
  status: Schema.Literal("CONFIRMED")
})
export type ConfirmResponse = typeof ConfirmResponse.Type
