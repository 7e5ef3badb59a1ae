/**
 * Error bodies: REST `{error: ...}` and GraphQL `errors[]` entries. Reads are
 * tolerant; the emulator writes the one form chosen in assumptions.ts
 * (REST_ERROR_SHAPE, GRAPHQL_ERROR_CODE_PATH).
 */
import { Schema } from "effect"
import { openStruct } from "./open.ts"

export const IssuePathSegment = Schema.Union([Schema.String, Schema.Number])

/** One entry of a 400 issues array, as the emulator writes it. */
export const ValidationIssue = Schema.Struct({
  path: Schema.Array(IssuePathSegment),
  message: Schema.String
})
export type ValidationIssue = typeof ValidationIssue.Type

/** An issue as the client reads it: any of its parts may be missing or shaped differently. */
export const TolerantIssue = openStruct({
  path: Schema.optional(Schema.Union([Schema.Array(IssuePathSegment), Schema.String, Schema.Null])),
  message: Schema.optional(Schema.NullOr(Schema.String))
})
export type TolerantIssue = typeof TolerantIssue.Type

export const RestErrorDetail = openStruct({
  code: Schema.optional(Schema.NullOr(Schema.String)),
  message: Schema.optional(Schema.NullOr(Schema.String)),
  issues: Schema.optional(Schema.Array(TolerantIssue))
})
export type RestErrorDetail = typeof RestErrorDetail.Type

/** A REST error body; `error` may be an object or a bare string, `issues` may sit beside it. */
export const RestErrorBody = openStruct({
  error: Schema.Union([RestErrorDetail, Schema.String]),
  issues: Schema.optional(Schema.Array(TolerantIssue))
})
export type RestErrorBody = typeof RestErrorBody.Type

/** The code, message and issues of a REST error body, wherever they were. */
export const restErrorParts = (
  body: RestErrorBody
): { code: string | null; message: string | null; issues: ReadonlyArray<TolerantIssue> } => {
  if (typeof body.error === "string") {
    return { code: null, message: body.error, issues: body.issues ?? [] }
  }
  return {
    code: body.error.code ?? null,
    message: body.error.message ?? null,
    issues: body.error.issues ?? body.issues ?? []
  }
}

export const GraphqlErrorEntry = openStruct({
  message: Schema.String,
  path: Schema.optional(Schema.NullOr(Schema.Array(IssuePathSegment))),
  extensions: Schema.optional(Schema.NullOr(openStruct({ code: Schema.optional(Schema.NullOr(Schema.String)) }))),
  code: Schema.optional(Schema.NullOr(Schema.String))
})
export type GraphqlErrorEntry = typeof GraphqlErrorEntry.Type

/** `extensions.code`, else a top-level `code`, else null. */
export const graphqlErrorCode = (entry: GraphqlErrorEntry): string | null =>
  entry.extensions?.code ?? entry.code ?? null

/** A GraphQL JSON result around a `data` schema. */
export const GraphqlResponse = <S extends Schema.Top>(data: S) =>
  openStruct({
    data: Schema.optional(Schema.NullOr(data)),
    errors: Schema.optional(Schema.Array(GraphqlErrorEntry))
  })
