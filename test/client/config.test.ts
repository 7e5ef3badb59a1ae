import { describe, expect, it } from "@effect/vitest"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { inspect } from "node:util"
import { connectionConfigFromEnv, makeConnectionConfig, redact } from "../../src/client/config.ts"
import { DEFAULT_HEADER_PREFIX } from "../../src/schema/assumptions.ts"

const fromEnv = (env: Record<string, string>) =>
  Effect.provideService(connectionConfigFromEnv, ConfigProvider.ConfigProvider, ConfigProvider.fromEnv({ env }))

describe("ConnectionConfig", () => {
  it.effect("reads the WORKSYNC_* variables of the CLI contract, secrets Redacted", () =>
    Effect.gen(function*() {
      const cfg = yield* fromEnv({
        WORKSYNC_REST_URL: "http://h/rest/",
        WORKSYNC_BASE_URL: "http://h",
        WORKSYNC_TOKEN: "env-token-abcdef",
        WORKSYNC_TOKEN_ID: "env-token-id",
        WORKSYNC_TOKEN_SECRET: "env-token-secret",
        WORKSYNC_ORG: "acme",
        WORKSYNC_HEADER_PREFIX: "zz"
      })
      expect(cfg.restUrl).toBe("http://h/rest")
      expect(Option.map(cfg.token, Redacted.value)).toEqual(Option.some("env-token-abcdef"))
      expect(Option.getOrNull(cfg.org)).toBe("acme")
      expect(cfg.headerPrefix).toBe("zz")
      expect(inspect(cfg, { depth: 5 })).not.toContain("env-token-abcdef")
      expect(JSON.stringify(cfg)).not.toContain("env-token-secret")
      expect(redact("leaked env-token-secret here")).toBe("leaked <redacted> here")
    }))

  it.effect("applies the defaults: header prefix, 30 s timeout, 8 in flight, 20 rps start unbounded, 6 retries", () =>
    Effect.gen(function*() {
      const cfg = yield* fromEnv({ WORKSYNC_REST_URL: "http://h/rest", WORKSYNC_BASE_URL: "http://h", WORKSYNC_TOKEN: "" })
      expect(cfg.headerPrefix).toBe(DEFAULT_HEADER_PREFIX)
      expect(Option.isNone(cfg.token)).toBe(true)
      expect(cfg.requestTimeoutMs).toBe(30_000)
      expect(cfg.limiter).toMatchObject({ maxInFlight: 8, initialRps: 20, maxRps: null, adaptive: true })
      expect(cfg.retry).toEqual({ maxRetries: 6, baseDelayMs: 200, capDelayMs: 30_000 })
    }))

  it("a user ceiling below the default start rate starts at the ceiling", () => {
    const cfg = makeConnectionConfig({ restUrl: "http://h", baseUrl: "http://h", limiter: { maxRps: 5 } })
    expect(cfg.limiter.initialRps).toBe(5)
  })

  it.effect("fails clearly when the URLs are missing", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(fromEnv({}))
      expect(String(error)).toMatch(/WORKSYNC_REST_URL/)
    }))
})
