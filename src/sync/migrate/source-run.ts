/**
 * A migration's source run, read a batch of records at a time: the record details (a list
 * at a time by position, as the ordered creates, the file values and the verification
 * take them), the record ids, and the comments of a batch of records (the comment plan,
 * step 6 of migrate.ts, and the verification's comment counts). No step holds the
 * details or the comments of the whole run.
 *
 * A reply names its parent only when the parent is one of the comments carried on its
 * record: the comment executor sends a record's comments one at a time in this order
 * (replay-extras.ts, its group), so a parent on the same record is created first.
 */
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import type { UidLookup } from "../../connectors/files/relink.ts"
import { relinkCommentHtml } from "../../connectors/files/relink.ts"
import type { PlanOp } from "../../store/journal.ts"
import type { SnapshotError, SnapshotStoreService } from "../../store/snapshot.ts"
import { EXTRA_KINDS } from "../plan-extras.ts"
import type { Reference } from "../references.ts"
import { runDetails, type StoredDetail } from "../restore-source.ts"

export interface SourceComment {
  readonly id: string
  readonly recordId: string
  readonly html: string
  readonly author: string
  readonly createdAt: string
  readonly parentId: string | undefined
}

/**
 * Source records read, planned and compared at once by every step of a migration (also
 * the ids of one read of their comments: well under every backend's parameter limit).
 */
export const RECORDS_PER_BATCH = 500

const str = (v: unknown): string | undefined => (typeof v === "string" && v !== "" ? v : undefined)

/** A reply's parent where the service shows one (not in the documents: `parentId` or `parent.id`). */
const parentOf = (item: Record<string, unknown>): string | undefined =>
  str(item.parentId) ?? str((item.parent as { id?: unknown } | null | undefined)?.id)

/** "Originally by Ada Lovelace on 2026-01-05 14:03 UTC" */
export const attributionOf = (author: string, createdAt: string): string => {
  const d = new Date(createdAt)
  const when = Number.isNaN(d.getTime()) ? createdAt : `${d.toISOString().slice(0, 16).replace("T", " ")} UTC`
  return `Originally by ${author} on ${when}`
}

/** An activity item that is a comment a migration carries: by a user, not deleted, with html. */
const commentOf = (recordId: string, item: Record<string, unknown>): SourceComment | undefined => {
  const user = item.commentUser as { fullName?: unknown } | null | undefined
  const html = str(item.html)
  if (user === null || user === undefined || item.deletedAt !== null && item.deletedAt !== undefined || html === undefined) return undefined
  return {
    id: String(item.id),
    recordId,
    html,
    author: str(user.fullName) ?? "someone",
    createdAt: str(item.createdAt) ?? "",
    parentId: parentOf(item)
  }
}

const oldestFirst = (a: SourceComment, b: SourceComment) => a.createdAt.localeCompare(b.createdAt) || a.id.localeCompare(b.id)

/** The run's record details of the workspace, a list at a time by position, in batches of RECORDS_PER_BATCH. */
export const detailBatches = (
  store: SnapshotStoreService,
  runId: number,
  workspaceId: string
): Stream.Stream<ReadonlyArray<StoredDetail>, SnapshotError> => Stream.grouped(runDetails(store, runId, workspaceId), RECORDS_PER_BATCH)

/** The run's record ids of the workspace, in id order, in batches of RECORDS_PER_BATCH. */
export const recordIdBatches = (
  store: SnapshotStoreService,
  runId: number,
  workspaceId: string
): Stream.Stream<ReadonlyArray<string>, SnapshotError> =>
  store.workspaceRecordIds(runId, workspaceId).pipe(Stream.grouped(RECORDS_PER_BATCH))

/** The comments carried of these source records (at most RECORDS_PER_BATCH), per record, oldest first. */
export const commentsOf = (
  store: SnapshotStoreService,
  runId: number,
  workspaceId: string,
  recordIds: ReadonlyArray<string>
): Effect.Effect<Map<string, Array<SourceComment>>, SnapshotError> =>
  recordIds.length === 0 ? Effect.succeed(new Map()) : Effect.map(
    store.activityOfRecords(runId, workspaceId, recordIds),
    (rows) => {
      const byRecord = new Map<string, Array<SourceComment>>()
      for (const row of rows) {
        const c = commentOf(row.recordId, JSON.parse(row.item) as Record<string, unknown>)
        if (c === undefined) continue
        const all = byRecord.get(c.recordId)
        if (all === undefined) byRecord.set(c.recordId, [c])
        else all.push(c)
      }
      for (const all of byRecord.values()) all.sort(oldestFirst)
      return byRecord
    }
  )

/**
 * The ops of one record's comments, oldest first: re-linked to the target's files (the
 * attachment elements whose file was not copied are counted in `unlinked`), opened by an
 * attribution line unless it is off, a reply under its parent when the parent is carried.
 */
export const planRecordComments = (
  comments: ReadonlyArray<SourceComment>,
  options: {
    readonly target: string
    readonly attribution: boolean
    readonly uids: UidLookup
    /** The other source records a comment names (references.ts), resolved as it is sent. */
    readonly refsOf?: (html: string, recordId: string) => ReadonlyArray<Reference>
  }
): { readonly ops: Array<PlanOp>; readonly unlinked: number } => {
  const carried = new Set(comments.map((c) => c.id))
  let unlinked = 0
  const ops = comments.map((c): PlanOp => {
    const relinked = relinkCommentHtml(c.html, options.uids)
    unlinked += relinked.missing.length
    const refs = options.refsOf?.(c.html, c.recordId) ?? []
    return {
      key: `migrate:${options.target}:comment:${c.id}`,
      kind: EXTRA_KINDS.commentCreate,
      payload: {
        workspaceId: options.target,
        recordRef: c.recordId,
        text: options.attribution ? attributionOf(c.author, c.createdAt) : "",
        html: relinked.value,
        sourceKey: c.id,
        ...(c.parentId !== undefined && carried.has(c.parentId) ? { parentRef: c.parentId } : {}),
        ...(refs.length > 0 ? { refs } : {})
      }
    }
  })
  return { ops, unlinked }
}
