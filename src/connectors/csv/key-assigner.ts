import { JournalError, type PlannedOp, type Planner, type PlanOp } from "../../store/journal.ts"
import { openPlanWriter } from "../../store/plan-writer.ts"

/**
 * Assigns journal keys: the real journal, or (dry run, dry-run.ts) a count over a
 * read-only view of it. Answers come in the order of the calls.
 */
export interface KeyAssigner {
  readonly plan: (ops: ReadonlyArray<PlanOp>) => Promise<Array<PlannedOp>>
  readonly close: () => Promise<void>
}

/**
 * CSV files from this size on are planned with the journal's inserts on a second thread
 * (plan-writer.ts); for smaller ones, starting the thread costs more than it saves.
 */
export const PLAN_THREAD_MIN_BYTES = 4 * 1024 * 1024

export const journalAssigner = (planner: Planner, thread: boolean): KeyAssigner => {
  // The thread opens the journal file a second time: a SQLite journal only.
  const writer = thread && planner.backend === "sqlite" ? openPlanWriter(planner.file, planner.run) : undefined
  // A failure to store the plan is the journal's, whichever thread met it.
  const journalError = (e: unknown) =>
    new JournalError({ file: planner.file, operation: "planning", detail: e instanceof Error ? e.message : String(e) })
  // Ending the run makes it durable; with a thread, only once the thread's connection is closed.
  const close = async () => {
    try {
      await writer?.close()
      await planner.end()
    } catch (e) {
      throw journalError(e)
    }
  }
  if (writer === undefined) {
    return {
      plan: async (ops) => {
        try {
          return await planner.planOps(ops)
        } catch (e) {
          throw journalError(e)
        }
      },
      close
    }
  }
  return {
    plan: (ops) =>
      writer.plan(ops).catch((e: unknown) => {
        throw journalError(e)
      }),
    close
  }
}
