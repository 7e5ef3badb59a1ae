/**
 * Sequential offset paging made cheap: after serving a page, the key (position, id) of its
 * last row is remembered for the next offset, so the next page seeks to it instead of
 * walking past `skip` rows. Any write anywhere (SQLite's total_changes()) forgets every
 * boundary, so answers are exactly those of plain OFFSET paging, drift included.
 */
import type { EmulatorContext } from "../context.ts"
import { get } from "./sql.ts"

interface Boundary {
  readonly position: number
  readonly id: string
}

interface Cache {
  version: number
  readonly map: Map<string, Boundary>
}

const MAX_ENTRIES = 20_000
const caches = new WeakMap<EmulatorContext, Cache>()

const cacheOf = (ctx: EmulatorContext): Cache => {
  const version = get<{ v: number }>(ctx.db, "SELECT total_changes() AS v")!.v
  let cache = caches.get(ctx)
  if (cache === undefined) {
    cache = { version, map: new Map() }
    caches.set(ctx, cache)
  } else if (cache.version !== version) {
    cache.version = version
    cache.map.clear()
  }
  return cache
}

const keyOf = (condition: string, params: ReadonlyArray<unknown>, skip: number) =>
  `${condition}\u0000${JSON.stringify(params)}\u0000${skip}`

/** The last key before offset `skip` under this filter, when known and still valid. */
export const pageBoundary = (
  ctx: EmulatorContext,
  condition: string,
  params: ReadonlyArray<unknown>,
  skip: number
): Boundary | undefined => (skip === 0 ? undefined : cacheOf(ctx).map.get(keyOf(condition, params, skip)))

export const rememberBoundary = (
  ctx: EmulatorContext,
  condition: string,
  params: ReadonlyArray<unknown>,
  skip: number,
  boundary: Boundary
): void => {
  const cache = cacheOf(ctx)
  if (cache.map.size >= MAX_ENTRIES) cache.map.clear()
  cache.map.set(keyOf(condition, params, skip), boundary)
}
