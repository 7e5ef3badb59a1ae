/**
 * REST error answers of the alt variant (assumptions.ts REST_ERROR_SHAPE, NOT_FOUND_STATUS,
 * AUTH_401_VS_403): `issues` beside `error`, each issue's path a JSON Pointer string; an
 * id that does not resolve is a 404; a token without access to what it names is a 401.
 */
import type { HttpError, Issue } from "../http.ts"

/** `["items", 0, "title"]` as `/items/0/title` (RFC 6901 escaping). */
export const jsonPointer = (path: ReadonlyArray<string | number>): string =>
  path.map((p) => `/${String(p).replace(/~/g, "~0").replace(/\//g, "~1")}`).join("")

export const altIssues = (issues: ReadonlyArray<Issue>) => issues.map((i) => ({ path: jsonPointer(i.path), message: i.message }))

/** Status and body of an HttpError as the alt variant answers it. */
export const altErrorAnswer = (error: HttpError, noAccess: boolean): { status: number; body: unknown } => {
  let status = error.status
  let code = error.code
  if (status === 422 && code === "NOT_FOUND") status = 404
  if (noAccess) {
    status = 401
    code = "UNAUTHORIZED"
  }
  const body: Record<string, unknown> = { error: { code, message: error.message } }
  if (error.issues !== undefined) body["issues"] = altIssues(error.issues)
  return { status, body }
}
