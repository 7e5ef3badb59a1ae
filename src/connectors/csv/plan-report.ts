/**
 * `--plan`: what the run would do, and what it would meet on the target that the journal
 * cannot know (records of the same title already in a row's list), read before anything
 * is written so the user can stop.
 */
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import type { RestClientApi, RestError } from "../../client/rest-client.ts"
import { PAGE_MAX_LIMIT } from "../../schema/limits.ts"
import type { PlanOp } from "../../store/journal.ts"
import { scratchRecords } from "../../store/scratch-records.ts"
import type { StoreOpenError } from "../../store/sqlite.ts"
import type { Kept, Mappings, PlanReport } from "../../sync/pass-plan.ts"
import { PACKED_CREATE_INDEX as P } from "../../sync/plan.ts"
import type { ReferenceCounts } from "../../sync/references.ts"
import type { Census } from "../presets/model.ts"

/** The records already on the target, by `listId NUL title` (see `targetTitles`). */
export interface TitlesOnTarget {
  readonly get: (listAndTitle: string) => { readonly recordId: string; readonly list: string } | undefined
}

/**
 * `--plan`: the records of the workspace by list and title, those of this journal's rows
 * (`ours`) left out: a row created with the same title in the same list is a conflict.
 * Kept in a scratch file for the scope (store/scratch-records.ts), not in the heap: one
 * entry a record of the workspace, a page of them a transaction.
 */
export const targetTitles = (
  client: RestClientApi,
  workspaceId: string,
  ours: (recordId: string) => boolean
): Effect.Effect<TitlesOnTarget, RestError | StoreOpenError, Scope.Scope> =>
  Effect.gen(function*() {
    const file = yield* scratchRecords("import-titles")
    for (let skip = 0;; skip += PAGE_MAX_LIMIT) {
      const page = yield* client.listRecords({ workspaceId, skip, limit: PAGE_MAX_LIMIT })
      // The last record of a list and title is kept, as a map's last set.
      file.putAll(
        page.items.filter((r) => !ours(r.id)).map((r) => ({ id: `${r.todoList.id}\u0000${r.title}`, recordId: r.id, list: r.todoList.title }))
      )
      if (!page.pageInfo.hasNextPage || page.items.length < PAGE_MAX_LIMIT) break
    }
    return {
      get: (listAndTitle) => {
        const text = file.get(listAndTitle)
        return text === undefined ? undefined : (JSON.parse(text) as { recordId: string; list: string })
      }
    }
  })

/** The conflict of a row to create whose title a record of its list already has. */
export const titleConflict = (existing: TitlesOnTarget, create: PlanOp, title: string, firstListId: string | undefined): Kept | undefined => {
  const packed = create.payload as ReadonlyArray<unknown>
  // A list still to be made holds nothing yet.
  if (typeof packed[P.listTitle] === "string") return undefined
  const listId = typeof packed[P.listId] === "string" ? packed[P.listId] as string : firstListId
  const found = listId === undefined ? undefined : existing.get(`${listId}\u0000${title}`)
  return found === undefined
    ? undefined
    : { what: "record", item: title, why: `a record of this title is already in list ${JSON.stringify(found.list)} (record ${found.recordId}); the run adds another` }
}

/** A pass's plan, as counted while planning it. */
export interface PlanFigures {
  readonly rows: number
  readonly rejected: number
  readonly toCreate: number
  readonly updated: number
  readonly deletes: number
  readonly missing: number
  readonly tagsChanged: number
  readonly newLists: ReadonlyArray<string>
  readonly newTags: ReadonlyArray<string>
  readonly unresolved: ReadonlyArray<string>
  readonly notCarried: Census["notCarried"]
  readonly references: ReferenceCounts | undefined
  /** Lists an earlier pass could not make that rows of this one are in. */
  readonly listsNotMade: ReadonlyArray<string>
  readonly conflicts: ReadonlyArray<Kept>
  readonly kept: ReadonlyArray<Kept>
  readonly mappings: Mappings | undefined
}

export const planReportOf = (f: PlanFigures): PlanReport => ({
  create: f.toCreate,
  update: f.updated,
  unchanged: f.rows - f.rejected - f.toCreate - f.updated,
  delete: f.deletes,
  lists: f.newLists,
  tags: f.newTags,
  // import-csv invites nobody: people the workspace does not know are reported.
  invite: [],
  unresolved: f.unresolved,
  ...(f.references !== undefined ? { references: f.references } : {}),
  notCarried: [
    ...f.notCarried.map((c) => ({ what: `column ${c.column}`, count: c.count, why: c.reason })),
    ...(f.rejected > 0 ? [{ what: "rows", count: f.rejected, why: "rejected: they fail validation (the run writes them to the rejects file)" }] : []),
    ...(f.tagsChanged > 0
      ? [{ what: "tag changes", count: f.tagsChanged, why: "update-record takes no tags: records already imported keep their tags" }]
      : []),
    ...(f.missing > 0
      ? [{ what: "rows gone from the export", count: f.missing, why: "their records stay on the target (--delete-missing deletes them)" }]
      : [])
  ],
  conflicts: [
    ...f.listsNotMade.map((t) => ({
      what: "list",
      item: t,
      why: "this service could not create it on an earlier pass: its records go to the first list"
    })),
    ...f.conflicts,
    ...f.kept
  ],
  ...(f.mappings !== undefined ? { mappings: f.mappings } : {})
})
