/**
 * Offset paging as Effect streams, independent of any one operation: each operation
 * adapts its answer to a `Page` (items, whether more follow by its own end signal,
 * the total when the shape carries one).
 *
 * Rules every stream here keeps:
 * - `skip` advances by the number of items actually received, never by the limit
 *   asked for, so a page the server silently capped loses nothing;
 * - a short page is never taken as the end by itself; only the shape's end signal
 *   (`hasNextPage`, `totalCount`/`totalItems`) ends paging;
 * - with a known total, the remaining pages are fetched concurrently (ordered output,
 *   bounded buffer), every request still passing the client's shared limiter.
 */
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import * as Stream from "effect/Stream"

/** One answer, in the terms paging needs. */
export interface Page<A> {
  readonly items: ReadonlyArray<A>
  /** The shape's end signal says more items follow this page. */
  readonly more: boolean
  /** Total number of items when the shape reports one. */
  readonly total: number | null
}

export type FetchPage<A, E, R> = (skip: number, limit: number) => Effect.Effect<Page<A>, E, R>

/**
 * The paging strategies of the service's answers, by name: how one answer becomes a
 * `Page`. Every paged read builds its pages with one of these, and pages with the
 * streams below; none stops on a short page by itself.
 */
export const Paging = {
  /** `{items, totalCount}` (list-workspaces, list-users as `users`, list-record-activity): more while `skip` + received < total. */
  totalCount: <A>(items: ReadonlyArray<A>, totalCount: number, skip: number): Page<A> => ({
    items,
    more: skip + items.length < totalCount,
    total: totalCount
  }),
  /** `{items, pageInfo: {hasNextPage, totalItems?}}` (list-records, list-files): the end signal decides. */
  hasNextPage: <A>(items: ReadonlyArray<A>, hasNextPage: boolean, total: number | null = null): Page<A> => ({
    items,
    more: hasNextPage,
    total
  }),
  /** A bare array (list-lists, list-tags): the whole set in one answer. */
  bareArray: <A>(items: ReadonlyArray<A>): Page<A> => ({ items, more: false, total: items.length }),
  /** One request that is not paged at all (search-records, count-records): nothing follows. */
  singleRequest: <A>(items: ReadonlyArray<A>): Page<A> => ({ items, more: false, total: null })
} as const

/** Where a page request was aimed, for error messages. */
export interface PageTarget {
  readonly operation: string
  readonly workspaceId: string | null
  readonly recordId?: string | null | undefined
}

/**
 * A page could not be read (after the client's own retries). Names the operation,
 * the workspace (and record) and the page.
 */
export class PageError extends Data.TaggedError("PageError")<{
  readonly operation: string
  readonly workspaceId: string | null
  readonly recordId: string | null
  readonly skip: number
  readonly limit: number
  readonly cause: unknown
}> {
  override get message(): string {
    const where = [
      this.workspaceId !== null ? `workspace ${this.workspaceId}` : null,
      this.recordId !== null ? `record ${this.recordId}` : null
    ].filter((s) => s !== null).join(", ")
    const text = typeof this.cause === "object" && this.cause !== null && "message" in this.cause
      ? String((this.cause as { message: unknown }).message)
      : String(this.cause)
    // Client errors already start with the operation name.
    const cause = text.startsWith(`${this.operation}: `) ? text.slice(this.operation.length + 2) : text
    // limit 0: a single request that is not a page (get-record).
    const page = this.limit > 0 ? `, page ${Math.floor(this.skip / this.limit) + 1} (skip ${this.skip})` : ""
    return `${this.operation}${where ? ` (${where})` : ""}${page}: ${cause}`
  }
}

/** Wraps a fetch so its failures become PageError naming the target and page. */
export const targeted = <A, E, R>(target: PageTarget, fetch: FetchPage<A, E, R>): FetchPage<A, PageError, R> =>
(skip, limit) =>
  Effect.mapError(fetch(skip, limit), (cause) =>
    new PageError({
      operation: target.operation,
      workspaceId: target.workspaceId,
      recordId: target.recordId ?? null,
      skip,
      limit,
      cause
    }))

/** The page size to ask for: the caller's wish clamped to the documented maximum. */
export const clampLimit = (requested: number | undefined, max: number): number =>
  Math.max(1, Math.min(requested ?? max, max))

/** Pages one after another from `start`, until the end signal. */
export const sequentialPages = <A, E, R>(fetch: FetchPage<A, E, R>, limit: number, start = 0): Stream.Stream<A, E, R> =>
  Stream.paginate(start, (skip: number) =>
    Effect.map(fetch(skip, limit), (page) => [
      page.items,
      // An empty page ends paging even if it claims more: nothing to advance by.
      page.more && page.items.length > 0 ? Option.some(skip + page.items.length) : Option.none<number>()
    ] as const))

/**
 * Every item of a listing, one page after another (`sequentialPages`), collected; the
 * fetch's own errors pass through unchanged. For the small listings a job reads whole
 * (users, workspaces).
 */
export const allPages = <A, E, R>(fetch: FetchPage<A, E, R>, limit: number): Effect.Effect<Array<A>, E, R> =>
  Stream.runCollect(sequentialPages(fetch, limit))

/** Items read from `skip`, and whether the listing goes on after them. */
export interface Window<A> {
  readonly skip: number
  readonly items: ReadonlyArray<A>
  readonly more: boolean
}

/**
 * Reads `size` items from `skip`: one request, plus follow-ups if the server answered
 * with fewer items than asked while its end signal says more follow (a silent cap
 * below the documented maximum).
 */
export const readWindow = <A, E, R>(fetch: FetchPage<A, E, R>, skip: number, size: number): Effect.Effect<Window<A>, E, R> =>
  Effect.gen(function*() {
    const items: Array<A> = []
    let more = true
    while (items.length < size && more) {
      const page = yield* fetch(skip + items.length, size - items.length)
      items.push(...page.items)
      more = page.more
      if (page.items.length === 0) break
    }
    return { skip, items, more }
  })

export interface FanOutOptions {
  /** Page size to ask for (already clamped). */
  readonly limit: number
  /** Pages in flight at once for this stream (the shared limiter still applies). */
  readonly concurrency: number
}

/**
 * Windows of `size` items from `start` up to `total`, read concurrently (ordered
 * output), then sequential pages past the total if the last window says more follow.
 */
const windowsFrom = <A, E, R>(
  fetch: FetchPage<A, E, R>,
  start: number,
  total: number,
  size: number,
  concurrency: number,
  previous: Window<A>
): Stream.Stream<A, E, R> =>
  Stream.unwrap(
    Effect.gen(function*() {
      const skips: Array<number> = []
      for (let s = start; s < total; s += size) skips.push(s)
      const last = yield* Ref.make<Window<A>>(previous)
      const windows = Stream.fromIterable(skips).pipe(
        Stream.mapEffect((skip) => readWindow(fetch, skip, size), { concurrency }),
        Stream.tap((w) => Ref.set(last, w)),
        Stream.map((w) => w.items),
        Stream.flattenIterable
      )
      const tail = Stream.unwrap(
        Effect.map(Ref.get(last), (w) =>
          w.more && w.items.length > 0 ? sequentialPages(fetch, size, w.skip + w.items.length) : Stream.empty)
      )
      return Stream.concat(windows, tail)
    })
  )

/**
 * Reads the first page, then, when it reports a total, every remaining page
 * concurrently (ordered output); pages past the total (it grew meanwhile) follow
 * sequentially. Without a total it pages sequentially.
 */
export const fanOutPages = <A, E, R>(fetch: FetchPage<A, E, R>, options: FanOutOptions): Stream.Stream<A, E, R> =>
  Stream.unwrap(
    Effect.map(fetch(0, options.limit), (first) => {
      const head = Stream.fromIterable(first.items)
      return hasMore(first) ? Stream.concat(head, pagesAfter(fetch, first, options)) : head
    })
  )

const hasMore = <A>(first: Page<A>): boolean => first.more && first.items.length > 0

/** What `fanOutPages` reads after its first page, `first`, when more follow. */
const pagesAfter = <A, E, R>(fetch: FetchPage<A, E, R>, first: Page<A>, options: FanOutOptions): Stream.Stream<A, E, R> => {
  // The server's real page size: what it gave while more items followed.
  const size = first.items.length
  if (first.total === null || options.concurrency <= 1) return sequentialPages(fetch, size, size)
  return windowsFrom(fetch, size, first.total, size, options.concurrency, { skip: 0, items: first.items, more: true })
}

/**
 * Every item `dedupeById(fanOutPages(...))` emits, collected. A listing of one page (most
 * of a record's activity) is its one request and no stream: the mirror reads the activity
 * of every record it writes, and a stream to carry one page cost about as much CPU as the
 * request.
 */
export const collectFannedOut = <A extends { readonly id: string }, E, R>(
  fetch: FetchPage<A, E, R>,
  options: FanOutOptions
): Effect.Effect<Array<A>, E, R> =>
  Effect.flatMap(fetch(0, options.limit), (first) => {
    if (hasMore(first)) {
      return Stream.runCollect(dedupeById(Stream.concat(Stream.fromIterable(first.items), pagesAfter(fetch, first, options))))
    }
    const seen = new Set<string>()
    return Effect.succeed(first.items.filter((a) => {
      if (seen.has(a.id)) return false
      seen.add(a.id)
      return true
    }))
  })

/**
 * Like `fanOutPages` when the total is known before the first request (a count
 * operation): every window, the first included, is read concurrently.
 */
export const fanOutWithTotal = <A, E, R>(
  fetch: FetchPage<A, E, R>,
  total: number,
  options: FanOutOptions
): Stream.Stream<A, E, R> =>
  options.concurrency <= 1
    ? sequentialPages(fetch, options.limit)
    : windowsFrom(fetch, 0, Math.max(total, 1), options.limit, options.concurrency, { skip: 0, items: [], more: false })

/** Drops items whose id was already emitted by this stream. */
export const dedupeById = <A extends { readonly id: string }, E, R>(stream: Stream.Stream<A, E, R>): Stream.Stream<A, E, R> =>
  Stream.suspend(() => {
    const seen = new Set<string>()
    return Stream.filter(stream, (a) => {
      if (seen.has(a.id)) return false
      seen.add(a.id)
      return true
    })
  })
