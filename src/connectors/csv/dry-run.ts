/**
 * A dry run plans as a run would, against the journal as it is, so that what it counts is
 * what the run would do; it writes nothing, neither to the service nor to the journal (one
 * that does not exist is not created), so it can be asked at any time.
 */
import type { PlannedOp, PlanOp } from "../../store/journal.ts"
import type { JournalStates } from "../../store/journal/read-only.ts"
import { openScratchKeys } from "../../store/scratch-keys.ts"
import type { KeyAssigner } from "./key-assigner.ts"

/**
 * The dry run's key assigner: what planning would do, against a read-only view of the
 * journal if there is one (store/journal/read-only.ts openJournalStates). The keys seen
 * so far are kept in a scratch SQLite file (store/scratch-keys.ts), not in memory, so a
 * dry run of any file runs in constant memory like the plan itself; the file is removed
 * at the end.
 */
export const dryAssigner = (journal: JournalStates): KeyAssigner => {
  const stateOf = journal.stateOf
  const seen = openScratchKeys("dry-run")
  /** Keys first seen in this file whose state the journal tells later (PostgreSQL), by index. */
  let toLookUp: Array<number> = []
  const planBatch = (ops: ReadonlyArray<PlanOp>): Array<PlannedOp> =>
    seen.batch(() => ops.map((op, i) => {
      for (let n = 0;; n++) {
        const key = n === 0 ? op.key : `${op.key}#${n}`
        // Seen before in this file: the next occurrence key, or a duplicate.
        if (!seen.see(key)) {
          if (op.occurrence === true) continue
          return { key, isNew: false, duplicate: true, state: "pending" as const }
        }
        if (stateOf === undefined && journal.statesOf !== undefined) toLookUp.push(i)
        const state = stateOf?.(key)
        return state === undefined
          ? { key, isNew: true, duplicate: false, state: "pending" as const }
          : { key, isNew: false, duplicate: false, state }
      }
    }))
  return {
    plan: async (ops) => {
      // The keys are settled now, in the order of the calls; only the states are read later.
      toLookUp = []
      const out = planBatch(ops)
      const indices = toLookUp
      if (indices.length === 0 || journal.statesOf === undefined) return out
      const states = await journal.statesOf(indices.map((i) => out[i]!.key))
      for (const i of indices) {
        const key = out[i]!.key
        const state = states.get(key)
        if (state !== undefined) out[i] = { key, isNew: false, duplicate: false, state }
      }
      return out
    },
    close: async () => seen.remove()
  }
}
