/**
 * A dry run plans as a run would, against the journal as it is, so that what it counts is
 * what the run would do; it writes nothing, neither to the service nor to the journal (one
 * that does not exist is not created), so it can be asked at any time.
 */
import Database from "better-sqlite3"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import * as fs from "node:fs"
import { JournalError, openPostgresJournalStates, type OpState, type PlannedOp, type PlanOp } from "../../store/journal.ts"
import { toPromise } from "../../store/journal/postgres.ts"
import { isPostgresUrl } from "../../store/postgres.ts"
import { openScratch } from "../../store/scratch.ts"
import type { KeyAssigner } from "./key-assigner.ts"

/**
 * The journal a dry run plans against, read only: a key's state, or nothing when the key
 * (or the whole journal) does not exist. A SQLite file answers key by key, synchronously;
 * a PostgreSQL journal answers a batch's keys in one query.
 */
export interface DryJournal {
  readonly stateOf?: (key: string) => OpState | undefined
  readonly statesOf?: (keys: ReadonlyArray<string>) => Promise<ReadonlyMap<string, OpState>>
}

/**
 * Opens the journal at `location` for a dry run (for the scope): nothing is created, so a
 * journal that does not exist yet is planned against as empty.
 */
export const openDryJournal = (location: string | undefined): Effect.Effect<DryJournal, JournalError, Scope.Scope> => {
  if (location === undefined) return Effect.succeed({})
  if (isPostgresUrl(location)) {
    return Effect.gen(function*() {
      const states = yield* openPostgresJournalStates(location)
      if (states === undefined) return {}
      const services = yield* Effect.context<never>()
      return {
        statesOf: (keys) => toPromise(services, states(keys))
      } satisfies DryJournal
    })
  }
  if (!fs.existsSync(location)) return Effect.succeed({})
  return Effect.map(
    Effect.acquireRelease(
      Effect.try({
        try: () => new Database(location, { readonly: true, fileMustExist: true }),
        catch: (e) => new JournalError({ file: location, operation: "open", detail: e instanceof Error ? e.message : String(e) })
      }),
      (db) => Effect.sync(() => db.close())
    ),
    (db) => {
      const stateOf = db.prepare<[string], { state: OpState }>("SELECT state FROM ops WHERE key = ?")
      return { stateOf: (key) => stateOf.get(key)?.state } satisfies DryJournal
    }
  )
}

/**
 * The dry run's key assigner: what planning would do, against a read-only view of the
 * journal (if there is one). The keys seen so far are kept in a scratch SQLite file, not
 * in memory, so a dry run of any file runs in constant memory like the plan itself; the
 * file is removed at the end.
 */
export const dryAssigner = (journal: DryJournal): KeyAssigner => {
  const stateOf = journal.stateOf
  const { db: scratch, remove } = openScratch("dry-run")
  scratch.exec("CREATE TABLE seen (key TEXT PRIMARY KEY) WITHOUT ROWID")
  const see = scratch.prepare<[string]>("INSERT OR IGNORE INTO seen (key) VALUES (?)")
  /** Keys first seen in this file whose state the journal tells later (PostgreSQL), by index. */
  let toLookUp: Array<number> = []
  const planBatch = scratch.transaction((ops: ReadonlyArray<PlanOp>): Array<PlannedOp> =>
    ops.map((op, i) => {
      for (let n = 0;; n++) {
        const key = n === 0 ? op.key : `${op.key}#${n}`
        // Seen before in this file: the next occurrence key, or a duplicate.
        if (see.run(key).changes === 0) {
          if (op.occurrence === true) continue
          return { key, isNew: false, duplicate: true, state: "pending" as const }
        }
        if (stateOf === undefined && journal.statesOf !== undefined) toLookUp.push(i)
        const state = stateOf?.(key)
        return state === undefined
          ? { key, isNew: true, duplicate: false, state: "pending" as const }
          : { key, isNew: false, duplicate: false, state }
      }
    })
  )
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
    close: async () => remove()
  }
}
