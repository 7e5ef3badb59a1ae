/**
 * Records gone from the source since the last pass of a migration (contract: "Delta
 * passes and plans"): a record an earlier pass read (the source snapshot beside the
 * journal keeps every run) that this pass's run lacks, and that an earlier pass carried
 * (the journal maps it). Its record on the target is deleted only with `deleteMissing`,
 * else counted as missing. Never the target's other records: a migration deletes only
 * what it made. Only from a complete run: a partial one would read as records deleted.
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import { isNotFound } from "../../client/errors.ts"
import type { RestClientApi } from "../../client/rest-client.ts"
import type { JournalApi, PlanOp } from "../../store/journal.ts"
import type { RunRow, SnapshotStoreService } from "../../store/snapshot.ts"
import { OP_KINDS, type RecordDeletePayload, recordNamespace } from "../plan.ts"
import { deleteKey } from "../restore-plan.ts"

export interface Gone {
  /** Deletions to send (with `deleteMissing`), including any an interrupted run left. */
  readonly ops: ReadonlyArray<PlanOp>
  /** Records gone from the source whose target record stays (no `deleteMissing`). */
  readonly missing: number
}

export const planGone = (options: {
  readonly store: SnapshotStoreService
  readonly run: RunRow
  readonly sourceWorkspaceId: string
  readonly journal: JournalApi
  readonly target: RestClientApi
  readonly targetWorkspaceId: string
  readonly deleteMissing: boolean
}): Effect.Effect<Gone, unknown> =>
  Effect.gen(function*() {
    const { journal, targetWorkspaceId: ws } = options
    const ops: Array<PlanOp> = []
    let missing = 0
    if (options.run.status !== "complete") return { ops, missing }
    // Source ids an earlier run of the snapshot holds and this run lacks, a page at a time.
    yield* Stream.runForEach(options.store.recordsGoneBy(options.run.id, options.sourceWorkspaceId), (id) =>
      Effect.gen(function*() {
        const mapped = yield* journal.lookup(recordNamespace(ws), id)
        if (Option.isNone(mapped)) return
        const key = deleteKey(ws, mapped.value)
        const earlier = yield* journal.get(key)
        if (Option.isSome(earlier) && earlier.value.state === "done") return
        // Not an earlier deletion: the record may be gone from the target already.
        const there = yield* options.target.getRecord({ workspaceId: ws, recordId: mapped.value }).pipe(
          Effect.as(true),
          Effect.catchIf(isNotFound, () => Effect.succeed(false))
        )
        if (!there) return
        if (!options.deleteMissing) {
          missing++
          return
        }
        const payload: RecordDeletePayload = { workspaceId: ws, recordId: mapped.value, origin: `source record ${id} (gone from the source)` }
        ops.push({ key, kind: OP_KINDS.recordDelete, payload })
      }))
    return { ops, missing }
  })
