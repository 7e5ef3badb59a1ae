/**
 * GraphQL errors carry their code in `errors[i].extensions.code`
 * (assumptions.ts GRAPHQL_ERROR_CODE_PATH).
 */
import { GraphQLError } from "graphql"

/** The documented codes (GraphQL document, Errors) and our own for what it leaves open. */
export type GqlCode =
  | "BAD_USER_INPUT"
  | "PLAN_LIMIT_REACHED"
  | "FILES_DISABLED_FOR_ROLE"
  | "PROJECT_NOT_FOUND"
  | "COMPANY_NOT_FOUND"
  | "FORBIDDEN"
  | "USER_ALREADY_IN_THE_PROJECT"
  | "ADD_SELF"
  | "USER_NOT_FOUND"
  | "PROJECT_USER_ROLE_NOT_FOUND"
  | "COMPANY_BANNED"
  | "UNAUTHENTICATED"
  | "NOT_FOUND"
  | "WEBHOOK_NOT_FOUND"
  | "INVITATION_NOT_FOUND"
  | "INTERNAL_SERVER_ERROR"

export const gqlError = (code: GqlCode, message: string): GraphQLError =>
  new GraphQLError(message, { extensions: { code } })

export const badInput = (message: string) => gqlError("BAD_USER_INPUT", message)
export const forbidden = (message: string) => gqlError("FORBIDDEN", message)
export const companyNotFound = (message = "Organization not found") => gqlError("COMPANY_NOT_FOUND", message)
export const projectNotFound = (message = "Workspace not found") => gqlError("PROJECT_NOT_FOUND", message)
export const companyBanned = () => gqlError("COMPANY_BANNED", "The organization account is suspended")
export const notFound = (what: string) => gqlError("NOT_FOUND", `${what} not found`)
