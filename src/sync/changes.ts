/**
 * The change stream between two runs, for pipelines that consume changes directly:
 * one `Change` per created, updated or deleted record or file, with the stored
 * content before and after. Read from the store in id-ordered pages (keyset paging: the
 * store's changesPage), so memory stays flat whatever the size of the diff.
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import { type ChangeRow, type RunNotFound, type SnapshotError, SnapshotStore, type SnapshotStoreService } from "../store/snapshot.ts"
import { type DiffEntity, selectRuns } from "./diff.ts"

export type ChangeKind = "created" | "updated" | "deleted"

export interface Change {
  readonly entity: "record" | "file"
  readonly kind: ChangeKind
  readonly id: string
  readonly workspaceId: string
  /** Stored content in the `from` run (record detail plus workspaceId, or the file item); null when created. */
  readonly before: Record<string, unknown> | null
  /** Stored content in the `to` run; null when deleted. */
  readonly after: Record<string, unknown> | null
}

const PAGE = 1000

const toChange = (entity: DiffEntity, r: ChangeRow): Change => ({
  entity: entity === "records" ? "record" : "file",
  kind: r.from_vid === null ? "created" : r.to_vid === null ? "deleted" : "updated",
  id: r.id,
  workspaceId: r.workspace_id,
  before: r.before === null ? null : JSON.parse(r.before) as Record<string, unknown>,
  after: r.after === null ? null : JSON.parse(r.after) as Record<string, unknown>
})

/** Changes of one entity between two runs, ordered by id. `fromId` 0 means no earlier run. */
export const changeStream = (
  store: SnapshotStoreService,
  entity: DiffEntity,
  fromId: number,
  toId: number
): Stream.Stream<Change, SnapshotError> =>
  Stream.paginate(
    "",
    (after: string) =>
      store.changesPage(entity, fromId, toId, after, PAGE)
        .pipe(Effect.map((rows) => {
          const last = rows[rows.length - 1]
          return [
            rows.map((r) => toChange(entity, r)),
            rows.length === PAGE && last !== undefined ? Option.some(last.id) : Option.none<string>()
          ] as const
        }))
  )

/** Record changes then file changes between two runs, with the store from the context. */
export const changes = (fromId: number | undefined, toId: number): Stream.Stream<Change, SnapshotError, SnapshotStore> =>
  Stream.unwrap(
    Effect.map(SnapshotStore, (store) =>
      Stream.concat(changeStream(store, "records", fromId ?? 0, toId), changeStream(store, "files", fromId ?? 0, toId))
    )
  )

/**
 * The change stream with the diff's defaults: `to` the latest complete run, `from` the
 * complete run of the same scope before it. Empty when the snapshot has no complete run.
 */
export const changesBetween = (
  options: { readonly from?: string | undefined; readonly to?: string | undefined } = {}
): Stream.Stream<Change, SnapshotError | RunNotFound, SnapshotStore> =>
  Stream.unwrap(
    Effect.gen(function*() {
      const store = yield* SnapshotStore
      const selection = yield* selectRuns(store, options)
      if (selection === undefined) return Stream.empty
      const from = selection.from?.id ?? 0
      return Stream.concat(
        changeStream(store, "records", from, selection.to.id),
        changeStream(store, "files", from, selection.to.id)
      )
    })
  )
