/**
 * Test plumbing for the paging streams: a client layer pointed at the emulator, with fast
 * retries so fault tests stay quick, and what the emulator's database says should be listed.
 */
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import type { ConnectionInput } from "../../src/client/config.ts"
import { type ClientServices, clientLayer } from "../../src/client/layer.ts"
import type { EmulatorHandle } from "../../src/emulator/index.ts"
import { type ReadingProxyOptions, startReadingProxy } from "../client/reading-proxy.ts"
import { Emulator } from "../support/effect.ts"

export const clientFor = (emu: EmulatorHandle, overrides: Partial<ConnectionInput> = {}): Layer.Layer<ClientServices> =>
  clientLayer({
    restUrl: emu.restUrl,
    baseUrl: emu.baseUrl,
    token: emu.token,
    tokenId: emu.tokenId,
    tokenSecret: emu.tokenSecret,
    org: emu.org,
    retry: { maxRetries: 6, baseDelayMs: 5, capDelayMs: 50 },
    limiter: { initialRps: 2000, maxInFlight: 8 },
    ...overrides
  })

/** Every item of `stream`, with a client built for this run alone. */
export const collect = <A, E>(layer: Layer.Layer<ClientServices>, stream: Stream.Stream<A, E, ClientServices>) =>
  Effect.provide(Stream.runCollect(stream), layer)

export const runWith = <A, E>(layer: Layer.Layer<ClientServices>, effect: Effect.Effect<A, E, ClientServices>) =>
  Effect.provide(effect, layer)

/**
 * The file's emulator, its faults reset when the test ends, passed or failed: a fault
 * configured by one test must not reach the next one sharing the emulator.
 */
export const emulatorWithFaultReset = Effect.tap(Emulator, (emu) => Effect.addFinalizer(() => Effect.sync(() => emu.faults.reset())))

/** A reading proxy in front of `target` (an origin), closed when the scope closes. */
export const readingProxy = (target: string, options: ReadingProxyOptions = {}) =>
  Effect.acquireRelease(
    Effect.promise(() => startReadingProxy(target, options)),
    (proxy) => Effect.promise(() => proxy.close())
  )

/** The order list-records gives (assumptions.ts RECORD_ORDER): position then id, or newest first in the alt reading. */
const recordOrder = (emu: EmulatorHandle): string => (emu.variant === "alt" ? "created_at DESC, id DESC" : "position, id")

/** Live record ids of a workspace (archived ones included) straight from the emulator's database, in list order. */
export const liveIds = (emu: EmulatorHandle, workspaceId: string): Array<string> =>
  (emu.ctx.db.prepare(`SELECT id FROM records WHERE workspace_id = ? AND deleted_at IS NULL ORDER BY ${recordOrder(emu)}`)
    .pluck().all(workspaceId) as Array<string>)

/**
 * What list-records lists without an `archived` filter, in its order: every live record
 * (the reference reading), or only those not archived (the alt reading; the documents
 * leave it open).
 */
export const listedIds = (emu: EmulatorHandle, workspaceId?: string): Array<string> =>
  (emu.ctx.db.prepare(
    `SELECT id FROM records WHERE deleted_at IS NULL${workspaceId === undefined ? "" : " AND workspace_id = @ws"}
     ${emu.variant === "alt" ? " AND archived = 0" : ""} ORDER BY ${recordOrder(emu)}`
  ).pluck().all(workspaceId === undefined ? {} : { ws: workspaceId }) as Array<string>)

export const countBy = (ids: ReadonlyArray<string>): Map<string, number> => {
  const m = new Map<string, number>()
  for (const id of ids) m.set(id, (m.get(id) ?? 0) + 1)
  return m
}
