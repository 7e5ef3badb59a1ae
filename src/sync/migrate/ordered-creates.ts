/**
 * The records of a migration that the target does not hold yet, created in each list's
 * source order before the restore step carries everything else. No documented write sets
 * a record's position: the target's order is where the service puts each new record, so
 * a list's records are sent one at a time in the source's order (`inListOrder`, plan.ts)
 * and the target's order follows wherever the service appends. A restore does the same
 * from a snapshot run (restore-source.ts `runDetails`); here the source is read live.
 *
 * The ops are the restore's own (restore-plan.ts: the same keys, payloads, state updates
 * and versions), so the restore that follows finds these records created and the same,
 * and a create that did not finish is resumed by it like any of its own.
 */
import * as Effect from "effect/Effect"
import type { RestClientApi } from "../../client/rest-client.ts"
import type { JournalApi, PlanOp } from "../../store/journal.ts"
import { listsNotMade } from "../capabilities.ts"
import { OP_KINDS, PHASES, type RecordCreatePayload, recordNamespace } from "../plan.ts"
import { replay, type ReplayReport } from "../replay.ts"
import { makeRecordExecutors } from "../replay-records.ts"
import { makeRecordPlanner } from "../restore-plan.ts"
import { readSource, type StoredDetail } from "../restore-source.ts"
import { byPosition, readTarget } from "../restore-target.ts"

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
 * target; the replay's report, or undefined when there was none to create. What the
 * service turns out to lack is kept in the journal (capabilities.ts) for the report.
 */
export const createInSourceOrder = (options: {
  readonly client: RestClientApi
  readonly journal: JournalApi
  readonly target: string
  readonly details: ReadonlyArray<StoredDetail>
  readonly concurrency: number
}) =>
  Effect.gen(function*() {
    const { client, details, journal, target } = options
    // Mapped by an earlier run: the restore compares it (and makes it again if it is gone).
    const mapped = new Set((yield* journal.mappings(recordNamespace(target))).map((m) => m.sourceKey))
    const fresh = details.filter((d) => !mapped.has(String(d.id)))
    if (fresh.length === 0) return undefined
    const now = yield* readTarget(client, target)
    const planner = makeRecordPlanner({ client, journal, target, now, archivedSettable: true, dryRun: false })
    for (const d of [...fresh].sort(byPosition)) yield* planner.plan(readSource(d))
    const batch = planner.takeBatch()
    const notMade = new Set(yield* listsNotMade(journal, target))
    const firstList = now.lists.values().next().value
    yield* journal.addPlan({ ...batch, ops: batch.ops.map((op) => inListOrder(op, notMade, firstList)) })
    const report: ReplayReport = yield* replay(journal, makeRecordExecutors(client), { phases: PHASES, concurrency: options.concurrency })
    return report
  })
