/**
 * The local emulator of the work-management service: REST under `/rest`, GraphQL and app
 * routes at the root, storage on its own port, SQLite state. Start it with
 * `startEmulator(options)` (Promise) or `emulatorScoped(options)` / `EmulatorLive` (Effect).
 */
import { Context, Effect, Layer } from "effect"
import { makeAdmin, type EmulatorAdmin } from "./admin.ts"
import { areas } from "./areas.ts"
import { makeClock } from "./clock.ts"
import type { EmulatorContext, RequestStats, RestOperation } from "./context.ts"
import { ALT_ORDER_INDEXES } from "./core/ddl.ts"
import { createTables, isSeeded, openDatabase } from "./db.ts"
import { makeEventBus } from "./events.ts"
import { attachFaults, FaultController } from "./faults.ts"
import { makeIds } from "./ids.ts"
import { createObjectStore, objectDirForDb } from "./uploads/object-store.ts"
import { openApiDocument } from "./openapi.ts"
import { parseSeed, resolveVariant, type EmulatorOptions, type EmulatorVariant } from "./options.ts"
import { readingOf } from "./readings.ts"
import { readSeeded, seed } from "./seed.ts"
import { startServers } from "./server.ts"
import { StatsRecorder } from "./stats.ts"
import { DEFAULT_HEADER_PREFIX } from "../schema/assumptions.ts"

export type { EmulatorOptions, EmulatorVariant, FaultOptions, SeedOption, ChurnOptions, LimitOptions } from "./options.ts"
export type { FaultInjection, FaultKind } from "./faults.ts"
export type { EmulatorAdmin, CreateUserOptions } from "./admin.ts"
export type { EmulatorContext } from "./context.ts"
export { FaultController } from "./faults.ts"
export { EMULATOR_VARIANTS, parseSeed, resolveVariant, VARIANT_ENV } from "./options.ts"

export interface EmulatorHandle {
  /** `http://127.0.0.1:P/rest` */
  readonly restUrl: string
  /** `http://127.0.0.1:P` */
  readonly baseUrl: string
  /** `http://127.0.0.1:S` (presigned PUT targets, signed downloads) */
  readonly storageUrl: string
  /** The OWNER's REST bearer token. */
  readonly token: string
  /** The OWNER's GraphQL token id and secret (the same personal access token). */
  readonly tokenId: string
  readonly tokenSecret: string
  /** Organization id. */
  readonly org: string
  /** The reading of the documents this emulator serves. */
  readonly variant: EmulatorVariant
  readonly orgSlug: string
  /** Workspace ids, in seed order. */
  readonly workspaces: ReadonlyArray<string>
  readonly ownerUserId: string
  /** The emulator's internals (database, ids, clock, events) for direct access in tests. */
  readonly ctx: EmulatorContext
  readonly admin: EmulatorAdmin
  readonly faults: FaultController
  /** Names of every REST operation. */
  readonly operations: ReadonlyArray<string>
  stats(): RequestStats & { readonly byRouteStatus: Readonly<Record<string, number>> }
  resetStats(): void
  /** Stops background work and both servers, closes the database. Idempotent. */
  close(): Promise<void>
}

/** The JSON line the CLI prints once the emulator listens (the CLI contract). */
export const describe = (handle: EmulatorHandle) => ({
  restUrl: handle.restUrl,
  baseUrl: handle.baseUrl,
  token: handle.token,
  tokenId: handle.tokenId,
  tokenSecret: handle.tokenSecret,
  org: handle.org,
  workspaces: [...handle.workspaces]
})

const collectOperations = (): Map<string, RestOperation> => {
  const operations = new Map<string, RestOperation>()
  for (const area of areas) {
    for (const op of area.operations ?? []) {
      if (operations.has(op.name)) throw new Error(`Operation ${op.name} is registered twice (area ${area.name})`)
      operations.set(op.name, op)
    }
  }
  return operations
}

export const startEmulator = async (options: EmulatorOptions = {}): Promise<EmulatorHandle> => {
  const shape = parseSeed(options.seed)
  const variant = resolveVariant(options.variant)
  const plan = readingOf({ variant }).planLimits
  const host = options.host ?? "127.0.0.1"
  const db = openDatabase(options.dbFile)
  const reopened = (() => {
    createTables(db, areas)
    // The alt variant lists records newest first (RECORD_ORDER): give that order its indexes.
    if (variant === "alt") db.exec(ALT_ORDER_INDEXES)
    return isSeeded(db)
  })()
  // A reopened database already holds ids from the default sequence: start elsewhere.
  const idSeed = reopened ? ((options.idSeed ?? 1) ^ Date.now()) >>> 0 : (options.idSeed ?? 1)
  const urls = { restUrl: "", baseUrl: "", storageUrl: "" }
  // Objects of a database file live beside it (kept); otherwise in a temporary directory.
  const objects = createObjectStore(
    options.dbFile === undefined || options.dbFile === ":memory:" ? undefined : objectDirForDb(options.dbFile)
  )
  const ctx: EmulatorContext = {
    db,
    ids: makeIds(idSeed),
    clock: makeClock(options.clockStart),
    events: makeEventBus(),
    prefix: options.headerPrefix ?? DEFAULT_HEADER_PREFIX,
    variant,
    timeScale: options.timeScale ?? 1,
    urls,
    objects,
    // Without an option, the variant's plan (PLAN_LIMITS_DEFAULT); null is unlimited.
    limits: {
      storageBytes: options.limits?.storageBytes === undefined ? plan.storageBytes : options.limits.storageBytes,
      perFileBytes: options.limits?.perFileBytes === undefined ? plan.perFileBytes : options.limits.perFileBytes,
      seats: options.limits?.seats === undefined ? plan.seats : options.limits.seats
    }
  }
  const faults = new FaultController(options.faults, variant === "alt" ? "http-date" : "seconds")
  attachFaults(ctx, faults)
  const stats = new StatsRecorder()
  const operations = collectOperations()
  const operationList = [...operations.values()]
  let openapi: unknown
  let servers
  try {
    servers = await startServers(
      { ctx, areas, operations, faults, stats, openapi: () => (openapi ??= openApiDocument(urls.restUrl, operationList)) },
      host,
      options.port ?? 0,
      options.storagePort ?? 0
    )
  } catch (error) {
    db.close()
    objects.close()
    throw error
  }
  const hostInUrl = host.includes(":") ? `[${host}]` : host
  urls.baseUrl = `http://${hostInUrl}:${servers.mainPort}`
  urls.restUrl = `${urls.baseUrl}/rest`
  urls.storageUrl = `http://${hostInUrl}:${servers.storagePort}`
  let seeded
  try {
    seeded = reopened ? readSeeded(ctx) : seed(ctx, shape, areas)
  } catch (error) {
    await servers.close()
    db.close()
    objects.close()
    throw error
  }
  const stops = areas.flatMap((area) => (area.start === undefined ? [] : [area.start(ctx)]))
  if (options.limits?.seats !== undefined) {
    db.prepare("UPDATE organizations SET seat_limit = ? WHERE id = ?").run(options.limits.seats, seeded.orgId)
  }
  let closing: Promise<void> | undefined
  return {
    restUrl: urls.restUrl,
    baseUrl: urls.baseUrl,
    storageUrl: urls.storageUrl,
    token: seeded.owner.token,
    tokenId: seeded.owner.tokenId,
    tokenSecret: seeded.owner.tokenSecret,
    org: seeded.orgId,
    variant,
    orgSlug: seeded.orgSlug,
    workspaces: seeded.workspaceIds,
    ownerUserId: seeded.owner.userId,
    ctx,
    admin: makeAdmin(ctx, { orgId: seeded.orgId, workspaceIds: seeded.workspaceIds }),
    faults,
    operations: operationList.map((o) => o.name).sort(),
    stats: () => stats.snapshot(),
    resetStats: () => stats.reset(),
    close: () =>
      (closing ??= (async () => {
        for (const stop of stops) {
          try {
            stop()
          } catch {
            /* a failing stopper must not keep the servers open */
          }
        }
        await servers.close()
        db.close()
        objects.close()
      })())
  }
}

/** An emulator for the lifetime of a scope (Effect users, @effect/vitest). */
export const emulatorScoped = (options: EmulatorOptions = {}) =>
  Effect.acquireRelease(
    Effect.promise(() => startEmulator(options)),
    (handle) => Effect.promise(() => handle.close())
  )

/** The running emulator as a service. */
export class Emulator extends Context.Service<Emulator, EmulatorHandle>()("worksync/Emulator") {}

/** A layer that starts an emulator and stops it when the layer is released. */
export const EmulatorLive = (options: EmulatorOptions = {}): Layer.Layer<Emulator> =>
  Layer.effect(Emulator, emulatorScoped(options))
