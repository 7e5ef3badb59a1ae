/**
 * list-record-activity: at most 24 items a page, `{items, totalCount}`; paging ends
 * when `skip` reaches `totalCount`. After the first page the rest are read
 * concurrently.
 */
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import { RestClient, type RestClientApi } from "../client/rest-client.ts"
import type { ActivityItem, ActivityKind } from "../schema/activity.ts"
import { ACTIVITY_MAX_LIMIT } from "../schema/limits.ts"
import { clampLimit, collectFannedOut, dedupeById, fanOutPages, type PageError, Paging, targeted } from "./paging.ts"
import { DEFAULT_PAGE_CONCURRENCY, type StreamOptions } from "./records.ts"

export interface ActivityTarget {
  readonly workspaceId: string
  readonly recordId: string
  readonly type?: ActivityKind | undefined
}

/** list-record-activity a page at a time, its errors named by page. */
const activityPages = (client: RestClientApi, target: ActivityTarget) =>
  targeted(
    { operation: "list-record-activity", workspaceId: target.workspaceId, recordId: target.recordId },
    (skip, limit) =>
      Effect.map(
        client.listRecordActivity({
          workspaceId: target.workspaceId,
          recordId: target.recordId,
          ...(target.type !== undefined ? { type: target.type } : {}),
          skip,
          limit
        }),
        (page) => Paging.totalCount(page.items, page.totalCount, skip)
      )
  )

const fanOut = (options: StreamOptions) => ({
  limit: clampLimit(options.limit, ACTIVITY_MAX_LIMIT),
  concurrency: options.concurrency ?? DEFAULT_PAGE_CONCURRENCY
})

export const recordActivityStream = (
  target: ActivityTarget,
  options: StreamOptions = {}
): Stream.Stream<ActivityItem, PageError, RestClient> =>
  Stream.unwrap(
    // New activity arriving during the read shifts items by one; an id read twice is kept once.
    Effect.map(RestClient, (client) => dedupeById(fanOutPages(activityPages(client, target), fanOut(options))))
  )

/** A record's whole activity, as `recordActivityStream` emits it, collected; one page is one request and no stream. */
export const recordActivity = (
  target: ActivityTarget,
  options: StreamOptions = {}
): Effect.Effect<Array<ActivityItem>, PageError, RestClient> =>
  Effect.flatMap(RestClient, (client) => collectFannedOut(activityPages(client, target), fanOut(options)))
