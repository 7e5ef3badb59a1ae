/**
 * `verify`'s integrity check: the backend's own check of its storage (SQLite's
 * `PRAGMA integrity_check`; on PostgreSQL the data checksum failures the server counted),
 * then the snapshot's own consistency rules (the store's consistencyProblems,
 * snapshot-consistency.ts): each rule is one item, and each row that breaks it fails.
 */
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import type { SnapshotError, SnapshotStoreService } from "../store/snapshot.ts"
import { type CheckResult, Tally } from "./verify-check.ts"

/** The `integrity` check: one item per rule (the backend's check is the first); each problem found fails. */
export const checkIntegrity = (store: SnapshotStoreService): Effect.Effect<CheckResult, SnapshotError> =>
  Effect.gen(function*() {
    const tally = new Tally("integrity")
    const problems = yield* store.integrityCheck
    if (problems.length === 0) tally.pass()
    for (const p of problems) tally.fail(p)
    yield* store.consistencyProblems.pipe(Stream.runForEach((lines) =>
      Effect.sync(() => {
        if (lines.length === 0) tally.pass()
        for (const line of lines) tally.fail(line)
      })
    ))
    return tally.result()
  })
