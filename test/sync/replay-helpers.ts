/** Shared set-up of the replay and import tests: an emulator, a client, temp files. */
import * as Effect from "effect/Effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { clientLayer } from "../../src/client/layer.ts"
import { RestClient } from "../../src/client/rest-client.ts"
import type { EmulatorHandle } from "../../src/emulator/index.ts"

export const tmpDir = (prefix = "ws-replay-") => fs.mkdtempSync(path.join(os.tmpdir(), prefix))

/** A client against the emulator, with retries fast enough for tests. */
export const testClient = (handle: EmulatorHandle, overrides: { maxRetries?: number; rps?: number } = {}) =>
  clientLayer({
    restUrl: handle.restUrl,
    baseUrl: handle.baseUrl,
    token: handle.token,
    tokenId: handle.tokenId,
    tokenSecret: handle.tokenSecret,
    org: handle.org,
    requestTimeoutMs: 5_000,
    limiter: { maxInFlight: 8, initialRps: overrides.rps ?? 500, adaptive: false },
    retry: { maxRetries: overrides.maxRetries ?? 8, baseDelayMs: 5, capDelayMs: 50 }
  })

export const withClient = <A, E>(handle: EmulatorHandle, f: (client: typeof RestClient.Service) => Effect.Effect<A, E>) =>
  Effect.runPromise(Effect.flatMap(RestClient, f).pipe(Effect.provide(testClient(handle))) as Effect.Effect<A, never>)

/** Live records of a workspace by title, straight from the emulator's database. */
export const titleCounts = (handle: EmulatorHandle, workspaceId: string): Map<string, number> => {
  const rows = handle.ctx.db
    .prepare("SELECT title, COUNT(*) AS n FROM records WHERE workspace_id = ? AND deleted_at IS NULL GROUP BY title")
    .all(workspaceId) as Array<{ title: string; n: number }>
  return new Map(rows.map((r) => [r.title, r.n]))
}

export const recordCount = (handle: EmulatorHandle, workspaceId: string): number =>
  (handle.ctx.db
    .prepare("SELECT COUNT(*) AS n FROM records WHERE workspace_id = ? AND deleted_at IS NULL")
    .get(workspaceId) as { n: number }).n
