/**
 * Retention of a snapshot: keep the last N complete runs of each scope, drop older runs,
 * then drop stored versions no remaining run refers to.
 *
 * What is never lost: the latest complete run of every scope (N is at least 1), so the
 * next backup still compares against it and `export` still has its state; runs newer
 * than the oldest kept complete run (a failed run after it keeps its notes for
 * diagnosis); and any run still marked running. Versions are shared between runs, so
 * only versions referenced by no remaining run are deleted, with their activity.
 */
import * as Effect from "effect/Effect"
import type { SnapshotError, SnapshotStoreService } from "../../src/store/snapshot.ts"

export interface PruneResult {
  /** Run ids removed, ascending. */
  readonly removedRuns: ReadonlyArray<number>
  /** Complete run ids kept, ascending. */
  readonly keptComplete: ReadonlyArray<number>
  /** Stored versions (records, files, lists, users, workspaces) no longer referenced, removed. */
  readonly removedVersions: number
}

const MEMBERSHIP = ["records", "files", "lists", "users", "workspaces"] as const

/** Prunes `store` to the last `keep` complete runs per scope (keep < 1 counts as 1). */
export const pruneRuns = (store: SnapshotStoreService, keep: number): Effect.Effect<PruneResult, SnapshotError> =>
  store.query("prune old runs", (db) =>
    db.transaction(() => {
      const n = Math.max(1, Math.floor(keep))
      const runs = db.prepare("SELECT id, scope, status FROM runs ORDER BY id").all() as Array<
        { id: number; scope: string; status: string }
      >
      const removed: Array<number> = []
      const kept: Array<number> = []
      for (const scope of new Set(runs.map((r) => r.scope))) {
        const ofScope = runs.filter((r) => r.scope === scope)
        const complete = ofScope.filter((r) => r.status === "complete").map((r) => r.id)
        const keepComplete = complete.slice(-n)
        kept.push(...keepComplete)
        const oldestKept = keepComplete[0]
        // A scope with no complete run keeps everything: there is no state to fall back to.
        if (oldestKept === undefined) continue
        for (const r of ofScope) if (r.id < oldestKept && r.status !== "running") removed.push(r.id)
      }
      removed.sort((a, b) => a - b)
      kept.sort((a, b) => a - b)

      const del = (table: string) => db.prepare(`DELETE FROM ${table} WHERE run_id = ?`)
      const deletes = [...MEMBERSHIP.map((t) => del(`run_${t}`)), del("run_notes")]
      const deleteRun = db.prepare("DELETE FROM runs WHERE id = ?")
      for (const id of removed) {
        for (const d of deletes) d.run(id)
        deleteRun.run(id)
      }

      let removedVersions = 0
      if (removed.length > 0) {
        db.prepare(
          "DELETE FROM activity WHERE vid IN (SELECT vid FROM records r WHERE NOT EXISTS (SELECT 1 FROM run_records m WHERE m.vid = r.vid))"
        ).run()
        for (const t of MEMBERSHIP) {
          removedVersions += db.prepare(
            `DELETE FROM ${t} WHERE NOT EXISTS (SELECT 1 FROM run_${t} m WHERE m.vid = ${t}.vid)`
          ).run().changes
        }
      }
      return { removedRuns: removed, keptComplete: kept, removedVersions } satisfies PruneResult
    })()
  )
