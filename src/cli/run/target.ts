/**
 * The target end of the commands that write to a workspace of maybe another account
 * (copy-files, restore, migrate): `workspace:ID` and the names the target's flags go by.
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type { ConnectionFlags } from "../common-options.ts"
import { type CliExit, usageError } from "../exit.ts"

/** Whether any target connection setting is given (flag, `--to-profile`, or `WORKSYNC_TARGET_*`). */
export const hasOwnTarget = (flags: ConnectionFlags): boolean =>
  Object.values(flags).some((v) => Option.isOption(v) && Option.isSome(v))

/** How messages name the target's settings: `--to-*` when it has its own, else the source's. */
export const targetPrefix = (flags: ConnectionFlags): { readonly prefix: string; readonly envPrefix: string } =>
  hasOwnTarget(flags) ? { prefix: "to-", envPrefix: "WORKSYNC_TARGET_" } : { prefix: "", envPrefix: "WORKSYNC_" }

/** `workspace:ID` (an id or a slug) of a flag. */
export const parseWorkspaceEnd = (flag: string, value: string): Effect.Effect<string, CliExit> => {
  const m = /^workspace:(.+)$/.exec(value.trim())
  return m === null
    ? Effect.fail(usageError(`${flag} ${value}: expected workspace:ID (a workspace id or slug)`))
    : Effect.succeed(m[1]!.trim())
}
