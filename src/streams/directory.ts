/**
 * Workspaces, users and lists. list-workspaces answers `{items, totalCount}` and
 * list-users `{users, totalCount}` (both paged by `skip`/`limit`, at most 100 a
 * page, ending when `skip` reaches `totalCount`); list-lists is not paged.
 */
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import { RestClient } from "../client/rest-client.ts"
import { PAGE_MAX_LIMIT } from "../schema/limits.ts"
import type { RestUser } from "../schema/users.ts"
import { type List, type Workspace, WorkspacesPage } from "../schema/workspaces.ts"
import { clampLimit, dedupeById, fanOutPages, type PageError, Paging, targeted } from "./paging.ts"
import { DEFAULT_PAGE_CONCURRENCY, type StreamOptions } from "./records.ts"

/**
 * Every workspace. The documented call sends body `{}`; a service that pages it
 * would report a `totalCount` above the items received, which is followed with
 * `skip` like the other `{items, totalCount}` shapes.
 */
export const workspacesStream = (options: StreamOptions = {}): Stream.Stream<Workspace, PageError, RestClient> =>
  Stream.unwrap(
    Effect.map(RestClient, (client) => {
      const fetch = targeted({ operation: "list-workspaces", workspaceId: null }, (skip, limit) =>
        Effect.map(
          skip === 0
            ? client.listWorkspaces()
            : client.call("list-workspaces", { skip, limit }, WorkspacesPage, { idempotent: true }),
          (page) => Paging.totalCount(page.items, page.totalCount, skip)
        ))
      return dedupeById(fanOutPages(fetch, { limit: clampLimit(options.limit, PAGE_MAX_LIMIT), concurrency: 1 }))
    })
  )

/** Users of the organization (or of one workspace). */
export const usersStream = (
  filter: { readonly workspaceId?: string | undefined } = {},
  options: StreamOptions = {}
): Stream.Stream<RestUser, PageError, RestClient> =>
  Stream.unwrap(
    Effect.map(RestClient, (client) => {
      const fetch = targeted({ operation: "list-users", workspaceId: filter.workspaceId ?? null }, (skip, limit) =>
        Effect.map(
          client.listUsers({ ...(filter.workspaceId !== undefined ? { workspaceId: filter.workspaceId } : {}), skip, limit }),
          (page) => Paging.totalCount(page.users, page.totalCount, skip)
        ))
      return dedupeById(
        fanOutPages(fetch, {
          limit: clampLimit(options.limit, PAGE_MAX_LIMIT),
          concurrency: options.concurrency ?? DEFAULT_PAGE_CONCURRENCY
        })
      )
    })
  )

/** Every list of a workspace (one request: list-lists is not paged). */
export const listsStream = (workspaceId: string): Stream.Stream<List, PageError, RestClient> =>
  Stream.unwrap(
    Effect.map(RestClient, (client) => {
      const fetch = targeted({ operation: "list-lists", workspaceId }, () =>
        Effect.map(client.listLists({ workspaceId }), (items) => Paging.bareArray(items)))
      return Stream.flatMap(Stream.fromEffect(fetch(0, 0)), (page) => Stream.fromIterable(page.items))
    })
  )
