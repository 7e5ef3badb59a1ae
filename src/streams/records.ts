/**
 * Record streams: list-records (offset `skip`, at most 100 a page, end signal
 * `pageInfo.hasNextPage`) and search-records (one bare array of at most 100; the
 * operation has no offset, so it is a single request).
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import { type ListRecordsInput, RestClient, type SearchRecordsInput } from "../client/rest-client.ts"
import { PAGE_MAX_LIMIT, SEARCH_MAX_LIMIT } from "../schema/limits.ts"
import type { RecordSummary, SearchResult } from "../schema/records.ts"
import {
  clampLimit,
  fanOutWithTotal,
  type FetchPage,
  type PageError,
  Paging,
  sequentialPages,
  targeted
} from "./paging.ts"

export interface StreamOptions {
  /** Page size to ask for; clamped to the documented maximum. Default: the maximum. */
  readonly limit?: number | undefined
  /** Pages in flight at once when the total is known. Default 4; 1 reads sequentially. */
  readonly concurrency?: number | undefined
}

export const DEFAULT_PAGE_CONCURRENCY = 4

type RecordFilter = Omit<ListRecordsInput, "skip" | "limit">

/** list-records pages of one filter, as `Page`s. */
export const recordsFetch = (
  filter: RecordFilter
): Effect.Effect<FetchPage<RecordSummary, PageError, never>, never, RestClient> =>
  Effect.map(RestClient, (client) =>
    targeted(
      { operation: "list-records", workspaceId: filter.workspaceId ?? null },
      (skip, limit) =>
        Effect.map(client.listRecords({ ...filter, skip, limit }), (page) => Paging.hasNextPage(page.items, page.pageInfo.hasNextPage))
    ))

/** count-records covers only these filters; other filters page sequentially. */
const countable = (filter: RecordFilter): boolean =>
  Object.entries(filter).every(([k, v]) => v === undefined || k === "workspaceId" || k === "done" || k === "archived")

/**
 * count-records for a filter it supports; null when the answer carries no count (its
 * shape is not shown by the documents), and callers then page without a total.
 */
export const countRecords = (
  filter: Pick<ListRecordsInput, "workspaceId" | "done" | "archived">
): Effect.Effect<number | null, PageError, RestClient> =>
  Effect.flatMap(RestClient, (client) =>
    targeted({ operation: "count-records", workspaceId: filter.workspaceId ?? null }, () =>
      Effect.map(client.countRecords(filter), (count) => ({
        items: [] as Array<never>,
        more: false,
        total: Option.getOrNull(count)
      })))(0, 0)
  ).pipe(Effect.map((p) => p.total))

/**
 * Every record summary matching `filter`, in the service's order. When count-records
 * can count the filter (and answers a count), pages are read concurrently; otherwise
 * one after another.
 * This is the plain stream: it does not guard against data changing during the scan
 * (see stable-scan.ts for that).
 */
export const listRecordsStream = (
  filter: RecordFilter = {},
  options: StreamOptions = {}
): Stream.Stream<RecordSummary, PageError, RestClient> =>
  Stream.unwrap(
    Effect.gen(function*() {
      const fetch = yield* recordsFetch(filter)
      const limit = clampLimit(options.limit, PAGE_MAX_LIMIT)
      const concurrency = options.concurrency ?? DEFAULT_PAGE_CONCURRENCY
      if (concurrency <= 1 || !countable(filter)) return sequentialPages(fetch, limit)
      const total = yield* countRecords({
        ...(filter.workspaceId !== undefined ? { workspaceId: filter.workspaceId } : {}),
        ...(filter.done !== undefined ? { done: filter.done } : {}),
        ...(filter.archived !== undefined ? { archived: filter.archived } : {})
      })
      return total === null ? sequentialPages(fetch, limit) : fanOutWithTotal(fetch, total, { limit, concurrency })
    })
  )

/**
 * search-records: one request (the operation has no offset), `limit` clamped to 100.
 */
export const searchRecordsStream = (
  input: Omit<SearchRecordsInput, "limit">,
  options: { readonly limit?: number | undefined } = {}
): Stream.Stream<SearchResult, PageError, RestClient> =>
  Stream.unwrap(
    Effect.map(RestClient, (client) => {
      const limit = clampLimit(options.limit, SEARCH_MAX_LIMIT)
      const fetch = targeted({ operation: "search-records", workspaceId: input.workspaceId }, (_skip, limit) =>
        Effect.map(client.searchRecords({ ...input, limit }), (items) => Paging.singleRequest(items)))
      return Stream.flatMap(Stream.fromEffect(fetch(0, limit)), (page) => Stream.fromIterable(page.items))
    })
  )

/**
 * Several workspaces at once: each workspace's stream keeps its order, workspaces are
 * read concurrently (their pages interleave), all under the one shared limiter.
 */
export const listRecordsAcrossWorkspaces = (
  workspaceIds: ReadonlyArray<string>,
  options: StreamOptions & { readonly workspaceConcurrency?: number | undefined } = {}
): Stream.Stream<RecordSummary & { readonly workspaceId: string }, PageError, RestClient> =>
  Stream.flatMap(
    Stream.fromIterable(workspaceIds),
    (workspaceId) => Stream.map(listRecordsStream({ workspaceId }, options), (r) => ({ ...r, workspaceId })),
    { concurrency: options.workspaceConcurrency ?? 3 }
  )
