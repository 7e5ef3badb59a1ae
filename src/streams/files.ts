/**
 * list-files: offset paging, at most 100 a page, `pageInfo {totalItems, hasNextPage}`.
 */
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import { RestClient } from "../client/rest-client.ts"
import type { FileItem } from "../schema/files.ts"
import { PAGE_MAX_LIMIT } from "../schema/limits.ts"
import { clampLimit, dedupeById, fanOutPages, type PageError, targeted } from "./paging.ts"
import { DEFAULT_PAGE_CONCURRENCY, type StreamOptions } from "./records.ts"

export const filesStream = (
  workspaceId: string,
  options: StreamOptions = {}
): Stream.Stream<FileItem, PageError, RestClient> =>
  Stream.unwrap(
    Effect.map(RestClient, (client) => {
      const fetch = targeted({ operation: "list-files", workspaceId }, (skip, limit) =>
        Effect.map(client.listFiles({ workspaceId, skip, limit }), (page) => ({
          items: page.items,
          more: page.pageInfo.hasNextPage,
          total: page.pageInfo.totalItems
        })))
      return dedupeById(
        fanOutPages(fetch, {
          limit: clampLimit(options.limit, PAGE_MAX_LIMIT),
          concurrency: options.concurrency ?? DEFAULT_PAGE_CONCURRENCY
        })
      )
    })
  )
