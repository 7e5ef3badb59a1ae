/**
 * The presigned upload flow: step 1 query and answer, step 3 answer.
 */
import { Schema } from "effect"
import { openStruct } from "./open.ts"

/** `GET /uploads` query (all values arrive as strings). */
export const PresignQuery = openStruct({
  filename: Schema.String,
  size: Schema.optional(Schema.NumberFromString.pipe(Schema.int(), Schema.nonNegative())),
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
