/**
 * The two ends of a copy: `workspace:ID` or `dir:PATH` (the command-line contract).
 */
import * as path from "node:path"
import * as Result from "effect/Result"
import { CopySpecInvalid } from "./errors.ts"

export type Endpoint =
  | { readonly kind: "workspace"; readonly workspaceId: string }
  | { readonly kind: "dir"; readonly path: string }

/** Parses `workspace:ID` or `dir:PATH`; a dir path is made absolute against `cwd`. */
export const parseEndpoint = (
  flag: string,
  value: string,
  cwd: string = process.cwd()
): Result.Result<Endpoint, CopySpecInvalid> => {
  const colon = value.indexOf(":")
  const scheme = colon < 0 ? "" : value.slice(0, colon)
  const rest = colon < 0 ? "" : value.slice(colon + 1)
  if (scheme === "workspace" || scheme === "ws") {
    if (rest.trim() === "") return Result.fail(new CopySpecInvalid({ flag, value, reason: "missing workspace id" }))
    return Result.succeed({ kind: "workspace", workspaceId: rest.trim() })
  }
  if (scheme === "dir") {
    if (rest === "") return Result.fail(new CopySpecInvalid({ flag, value, reason: "missing directory path" }))
    return Result.succeed({ kind: "dir", path: path.resolve(cwd, rest) })
  }
  return Result.fail(new CopySpecInvalid({ flag, value, reason: "unknown kind" }))
}

export const describeEndpoint = (e: Endpoint): string =>
  e.kind === "workspace" ? `workspace:${e.workspaceId}` : `dir:${e.path}`
