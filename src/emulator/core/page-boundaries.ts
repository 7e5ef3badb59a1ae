/**
 * Offset paging made cheap: after serving a page, the key of its last row in the
 * listing's order (position and id; in the alt variant's order, creation time and id) is
 * remembered for the next offset, so a later page seeks to the nearest remembered key at
 * or before its offset and walks only the rest, instead of walking past `skip` rows. Any
 * write anywhere (SQLite's total_changes()) forgets every key, so answers are exactly
 * those of plain OFFSET paging, drift included.
 */
import type { EmulatorContext } from "../context.ts"
import { writeCount } from "./until-write.ts"

/** A row's place in a listing's order: its sort value, then its id. */
export interface Key {
  readonly sort: number | string
  readonly id: string
}

/** Where to start a page: after `key`, skipping `offset` more rows. */
export interface Seek extends Key {
  readonly offset: number
}

interface Cache {
  version: number
  size: number
  /** By filter: offset -> key of the last row before that offset. */
  readonly filters: Map<string, Map<number, Key>>
}

const MAX_ENTRIES = 20_000
const caches = new WeakMap<EmulatorContext, Cache>()

const cacheOf = (ctx: EmulatorContext): Cache => {
  const version = writeCount(ctx.db)
  let cache = caches.get(ctx)
  if (cache === undefined) {
    cache = { version, size: 0, filters: new Map() }
    caches.set(ctx, cache)
  } else if (cache.version !== version) {
    cache.version = version
    cache.size = 0
    cache.filters.clear()
  }
  return cache
}

const filterKey = (condition: string, params: ReadonlyArray<unknown>) => `${condition}\u0000${JSON.stringify(params)}`

/** The nearest remembered key at or before offset `skip` under this filter, if any. */
export const pageBoundary = (
  ctx: EmulatorContext,
  condition: string,
  params: ReadonlyArray<unknown>,
  skip: number
): Seek | undefined => {
  if (skip === 0) return undefined
  const known = cacheOf(ctx).filters.get(filterKey(condition, params))
  if (known === undefined) return undefined
  const exact = known.get(skip)
  if (exact !== undefined) return { ...exact, offset: 0 }
  let best = -1
  for (const offset of known.keys()) if (offset < skip && offset > best) best = offset
  return best < 0 ? undefined : { ...known.get(best)!, offset: skip - best }
}

/** Remembers the key of the last row before offset `skip`. */
export const rememberBoundary = (
  ctx: EmulatorContext,
  condition: string,
  params: ReadonlyArray<unknown>,
  skip: number,
  key: Key
): void => {
  const cache = cacheOf(ctx)
  if (cache.size >= MAX_ENTRIES) {
    cache.filters.clear()
    cache.size = 0
  }
  const k = filterKey(condition, params)
  let known = cache.filters.get(k)
  if (known === undefined) {
    known = new Map()
    cache.filters.set(k, known)
  }
  if (!known.has(skip)) cache.size++
  known.set(skip, key)
}
