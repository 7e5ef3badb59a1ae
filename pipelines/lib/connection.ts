/**
 * Connections of the pipelines, from the environment: `WORKSYNC_*` as in the command-line
 * contract, and for a second account `WORKSYNC_TARGET_*` (each unset one falls back to
 * the source's). Tokens are wrapped as Redacted at once by the client.
 */
import type { ConnectionInput } from "../../src/client/config.ts"
import { PipelineUsage } from "./errors.ts"

type Env = Readonly<Record<string, string | undefined>>

const value = (env: Env, name: string): string | undefined => {
  const v = env[name]
  return v === undefined || v.trim() === "" ? undefined : v
}

const FIELDS = [
  ["restUrl", "REST_URL"],
  ["baseUrl", "BASE_URL"],
  ["token", "TOKEN"],
  ["tokenId", "TOKEN_ID"],
  ["tokenSecret", "TOKEN_SECRET"],
  ["org", "ORG"],
  ["headerPrefix", "HEADER_PREFIX"]
] as const

/**
 * The connection named by `<prefix>REST_URL`, ... ; `fallbackPrefix` fills what is unset.
 * The REST URL and token are required (every pipeline reads records); the app URL
 * defaults to the REST URL's origin.
 */
export const connectionFromEnv = (
  env: Env,
  prefix = "WORKSYNC_",
  fallbackPrefix?: string
): ConnectionInput | PipelineUsage => {
  const out: Record<string, string> = {}
  for (const [field, suffix] of FIELDS) {
    const v = value(env, `${prefix}${suffix}`) ?? (fallbackPrefix === undefined ? undefined : value(env, `${fallbackPrefix}${suffix}`))
    if (v !== undefined) out[field] = v
  }
  for (const [field, suffix] of [["restUrl", "REST_URL"], ["token", "TOKEN"]] as const) {
    if (out[field] === undefined) {
      return new PipelineUsage({ message: `missing ${prefix}${suffix}${fallbackPrefix ? ` (or ${fallbackPrefix}${suffix})` : ""} in the environment` })
    }
  }
  const restUrl = out.restUrl!
  return {
    restUrl,
    baseUrl: out.baseUrl ?? new URL(restUrl).origin,
    token: out.token,
    tokenId: out.tokenId,
    tokenSecret: out.tokenSecret,
    org: out.org,
    headerPrefix: out.headerPrefix
  }
}
