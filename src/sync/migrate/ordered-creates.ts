/**
 * The records of a migration that the target does not hold yet, created in each list's
 * source order before the restore step carries everything else. No documented write sets
 * a record's position: the target's order is where the service puts each new record, so
 * a list's records are sent one at a time in the source's order (`inListOrder`, plan.ts)
 * and the target's order follows wherever the service appends. A restore does the same
 * from a snapshot run (restore-source.ts `runDetails`), and so does this, from the run
 * the migration just read of the source.
 *
 * The ops are the restore's own (restore-plan.ts: the same keys, payloads, state updates
 * and versions), so the restore that follows finds these records created and the same,
 * and a create that did not finish is resumed by it like any of its own.
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import type { RestClientApi } from "../../client/rest-client.ts"
import type { JournalApi, PlanOp } from "../../store/journal.ts"
import type { SnapshotStoreService } from "../../store/snapshot.ts"
import { listsNotMade } from "../capabilities.ts"
import { OP_KINDS, PHASES, type RecordCreatePayload, recordNamespace } from "../plan.ts"
import { replay, type ReplayReport } from "../replay.ts"
import { makeRecordExecutors } from "../replay-records.ts"
import { makeRecordPlanner, type RecordPlanner } from "../restore-plan.ts"
import { readSource, type SourceRecord } from "../restore-source.ts"
import { readTarget } from "../restore-target.ts"
import { detailBatches } from "./source-run.ts"

/**
 * A create in its list's order: grouped by the list (one at a time, in plan order). A
 * list the target could not make is its first list, where the service puts those records.
 */
const inListOrder = (op: PlanOp, notMade: ReadonlySet<string>, firstList: string | undefined): PlanOp => {
  if (op.kind !== OP_KINDS.recordCreate) return op
  const p = op.payload as RecordCreatePayload
  if (p.listId !== undefined) return { ...op, payload: { ...p, inListOrder: true } }
  if (p.listTitle !== undefined && notMade.has(p.listTitle) && firstList !== undefined) {
    const { listTitle: _, ...rest } = p
    return { ...op, payload: { ...rest, listId: firstList, inListOrder: true } }
  }
  return op
}

/**
 * Plans and replays the creates of the source records no earlier run created on the
 * target; the replay's report, or undefined when there was none to create. The source is
 * read a list at a time by position (the store's `runRecordDetails`, restore-source.ts
 * `runDetails`) and planned a batch at a time, each batch written to the journal before
 * the next is read (`addPlan` keeps a key planned before: a rerun plans nothing twice),
 * so neither the source nor the plan is ever whole in memory. What the service turns out
 * to lack is kept in the journal (capabilities.ts) for the report.
 */
export const createInSourceOrder = (options: {
  readonly client: RestClientApi
  readonly journal: JournalApi
  readonly target: string
  readonly store: SnapshotStoreService
  readonly runId: number
  readonly sourceWorkspaceId: string
  readonly concurrency: number
  /** Delta passes (restore-plan.ts `delta`): each create's marker keeps what it wrote. */
  readonly delta?: { readonly overwriteTargetEdits: boolean }
  /** The mapping files' view of a source record (mapped-source.ts), as the restore step reads it. */
  readonly mapSource?: ((r: SourceRecord) => SourceRecord) | undefined
}) =>
  // Scoped: the target's records read for the planner (a scratch file, restore-target.ts)
  // go when the creates are done, not with the whole migration.
  Effect.scoped(Effect.gen(function*() {
    const { client, journal, target } = options
    const namespace = recordNamespace(target)
    /** The target and the planner, made at the first record to create (none: no read). */
    let planning:
      | { readonly planner: RecordPlanner; readonly notMade: ReadonlySet<string>; readonly firstList: string | undefined }
      | undefined
    yield* Stream.runForEach(detailBatches(options.store, options.runId, options.sourceWorkspaceId), (batch) =>
      Effect.gen(function*() {
        for (const d of batch) {
          // Mapped by an earlier run: the restore compares it (and, if it is gone, keeps it deleted or makes it again: restore-plan.ts).
          if (Option.isSome(yield* journal.lookup(namespace, String(d.id)))) continue
          if (planning === undefined) {
            const now = yield* readTarget(client, target)
            planning = {
              planner: makeRecordPlanner({ client, journal, target, now, archivedSettable: true, dryRun: false, delta: options.delta }),
              notMade: new Set(yield* listsNotMade(journal, target)),
              firstList: now.lists.values().next().value
            }
          }
          yield* planning.planner.plan(options.mapSource === undefined ? readSource(d) : options.mapSource(readSource(d)))
        }
        if (planning === undefined) return
        const { firstList, notMade, planner } = planning
        const plan = planner.takeBatch()
        if (plan.ops.length + plan.mappings.length === 0) return
        yield* journal.addPlan({ ...plan, ops: plan.ops.map((op) => inListOrder(op, notMade, firstList)) })
      }))
    if (planning === undefined) return undefined
    // Also when every create was planned by an earlier run and not finished: they resume here.
    const report: ReplayReport = yield* replay(journal, makeRecordExecutors(client), { phases: PHASES, concurrency: options.concurrency })
    return report
  }))
