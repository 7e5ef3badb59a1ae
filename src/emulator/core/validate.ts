/** Decoding of operation inputs: a failure is a 400 with the issues (R-REST-ERR-02). */
import { Result, type Schema } from "effect"
import { decodeUnknownEither } from "../../schema/decode.ts"
import { badRequest, issuesOf } from "../http.ts"

export const decodeInput = <A>(schema: Schema.Decoder<A>, body: unknown): A => {
  const result = decodeUnknownEither(schema)(body)
  if (Result.isFailure(result)) {
    const issues = issuesOf(result.failure)
    const first = issues[0]
    const where = first === undefined || first.path.length === 0 ? "" : `${first.path.join(".")}: `
    throw badRequest(`Invalid input: ${where}${first?.message ?? "invalid value"}`, issues)
  }
  return result.success
}

/** The page size for a requested limit: default when omitted, silently capped (R-REST-PAGE-02/03). */
export const pageLimit = (limit: number | undefined, defaultLimit: number, maxLimit: number): number =>
  limit === undefined ? defaultLimit : Math.min(limit, maxLimit)
