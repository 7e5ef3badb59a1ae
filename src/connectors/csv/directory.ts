/**
 * The workspace's lists, tags and users, read once per import: rows name them by title and
 * e-mail, and asking the service per row would cost a request a row.
 */
import * as Effect from "effect/Effect"
import { notAvailableLine } from "../../client/errors.ts"
import type { RestClientApi } from "../../client/rest-client.ts"
import { PAGE_MAX_LIMIT } from "../../schema/limits.ts"
import { restUserEmail } from "../../schema/users.ts"
import type { PlanOp } from "../../store/journal.ts"
import { allPages, Paging } from "../../streams/paging.ts"
import { nameKey } from "../presets/people.ts"

export interface Directory {
  readonly lists: Map<string, string>
  /** Null when the service has no tags (list-tags is not available): rows are planned without them. */
  readonly tags: Map<string, string> | null
  readonly users: Map<string, string>
  /** Folded full name -> e-mail (null when several users share it), for tool presets. */
  readonly names: Map<string, string | null>
  readonly notices: ReadonlyArray<string>
}

export const loadDirectory = (
  client: RestClientApi,
  workspaceId: string,
  need: { lists: boolean; tags: boolean; users: boolean }
) =>
  Effect.gen(function*() {
    const lists = new Map<string, string>()
    let tags: Map<string, string> | null = new Map<string, string>()
    const users = new Map<string, string>()
    const names = new Map<string, string | null>()
    const notices: Array<string> = []
    if (need.lists) for (const l of yield* client.listLists({ workspaceId })) if (!lists.has(l.title)) lists.set(l.title, l.id)
    if (need.tags) {
      const found = yield* client.listTags({ workspaceId }).pipe(
        Effect.catchTag("NotAvailable", (e) => {
          notices.push(`${notAvailableLine("tags", e)}; records are imported without their tags`)
          return Effect.succeed(null)
        })
      )
      if (found === null) tags = null
      else for (const t of found) if (!tags.has(t.title)) tags.set(t.title, t.id)
    }
    if (need.users) {
      const listed = yield* allPages(
        (skip, limit) => Effect.map(client.listUsers({ workspaceId, skip, limit }), (p) => Paging.totalCount(p.users, p.totalCount, skip)),
        PAGE_MAX_LIMIT
      )
      for (const u of listed) {
        // A user the service lists without an e-mail cannot be matched by one.
        const email = restUserEmail(u)
        if (email !== undefined) {
          users.set(email, u.id)
          const full = typeof u.fullName === "string" ? nameKey(u.fullName) : ""
          if (full !== "") names.set(full, names.has(full) ? null : email)
        }
      }
    }
    return { lists, tags, users, names, notices } satisfies Directory
  })

/** Finds a title exactly, else case-insensitively (one match only). */
const byTitle = (map: Map<string, string>, title: string): string | undefined => {
  const exact = map.get(title)
  if (exact !== undefined) return exact
  const lower = title.toLowerCase()
  let found: string | undefined
  for (const [t, id] of map) {
    if (t.toLowerCase() === lower) {
      if (found !== undefined) return undefined
      found = id
    }
  }
  return found
}

/** A list or tag title resolved: its id on the service, or the op that ensures it. */
export type Resolved = { readonly id: string; readonly ensure?: undefined } | { readonly id?: undefined; readonly ensure: PlanOp }

/**
 * Title resolution, remembered per title: rows repeat a few lists and tags, and a miss in
 * `byTitle` scans the whole directory. Bounded, so a file of distinct titles cannot grow it.
 */
export const titleResolver = (
  map: Map<string, string>,
  ensure: (title: string) => PlanOp
) => {
  const memo = new Map<string, Resolved>()
  return (title: string): Resolved => {
    let r = memo.get(title)
    if (r === undefined) {
      const id = byTitle(map, title)
      r = id !== undefined ? { id } : { ensure: ensure(title) }
      if (memo.size < 10_000) memo.set(title, r)
    }
    return r
  }
}

