/**
 * `worksync prune`: forgets the complete runs no retention rule keeps (retention.ts),
 * removes what only they referenced, and compacts the snapshot.
 *
 * Order, so that a prune killed at any point loses nothing a kept run holds:
 *
 * 1. Under the snapshot's writer lock (a backup and a prune never interleave) and, with
 *    `--files`, the lock of DIR.
 * 2. One transaction removes the forgotten runs' rows and every version, activity item,
 *    file row and `file_objects` row no remaining run references. A crash before the
 *    commit leaves every run as it was; after it, at most objects nothing references.
 * 3. Only then are the objects under DIR that no remaining run references removed (those
 *    of the forgotten runs, and any a killed backup or prune left), with unfinished writes.
 * 4. The snapshot is compacted (SQLite: VACUUM, itself transactional).
 *
 * A dry run takes no lock and changes nothing: it reports the decision and the size now.
 */
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import type { StoreBusy, StoreLockError } from "../store/file-lock.ts"
import type { ObjectStoreApi, ObjectStoreError } from "../store/object-store.ts"
import { type SnapshotError, SnapshotStore } from "../store/snapshot.ts"
import { decideRetention, isEmptyPolicy, type RetentionDecision, type RetentionPolicy } from "./retention.ts"

export interface PruneOptions {
  readonly policy: RetentionPolicy
  /** Report what would be forgotten; change nothing. */
  readonly dryRun?: boolean | undefined
  /** The files directory of `backup --files`: its objects no remaining run holds are removed, and its size counted. */
  readonly files?: ObjectStoreApi | undefined
  /** The caller already holds the snapshot's lock. */
  readonly lockHeld?: boolean | undefined
}

export interface PruneReport {
  /** Every run, in id order, with keep or forget and why. */
  readonly runs: ReadonlyArray<RetentionDecision>
  readonly forgotten: number
  /** Runs that stay: kept by a rule, the newest complete one, and running or failed runs left alone. */
  readonly kept: number
  /** The snapshot's bytes (with `files`: plus the objects under DIR) before and after. */
  readonly bytesBefore: number
  readonly bytesAfter: number
  /** Stored versions of records, files, lists, users and workspaces removed. */
  readonly removedVersions: number
  /** Objects removed from DIR. */
  readonly removedObjects: number
  readonly dryRun: boolean
}

/** No rule of at least 1 was given: a prune would keep everything, or (restic's worry) mean something else. */
export class EmptyPolicy extends Data.TaggedError("EmptyPolicy")<{}> {
  override get message(): string {
    return "prune needs at least one rule: --keep-last N, --keep-daily N, --keep-weekly N or --keep-monthly N (N at least 1)"
  }
}

export type PruneError = EmptyPolicy | SnapshotError | ObjectStoreError | StoreBusy | StoreLockError

const objectBytes = (files: ObjectStoreApi | undefined) =>
  files === undefined ? Effect.succeed(0) : Effect.map(files.list, (all) => all.reduce((n, o) => n + o.size, 0))

/** Removes the objects under DIR that no run of the snapshot references; returns how many. */
const sweepObjects = (files: ObjectStoreApi) =>
  Effect.gen(function*() {
    const store = yield* SnapshotStore
    const referenced = new Set(yield* store.heldObjects)
    let removed = 0
    for (const object of yield* files.list) {
      if (referenced.has(object.sha256)) continue
      if (yield* files.remove(object.sha256)) removed++
    }
    yield* files.clearTemp
    return removed
  })

export const prune = (options: PruneOptions): Effect.Effect<PruneReport, PruneError, SnapshotStore> =>
  Effect.scoped(Effect.gen(function*() {
    if (isEmptyPolicy(options.policy)) return yield* new EmptyPolicy()
    const store = yield* SnapshotStore
    const dryRun = options.dryRun === true
    if (!dryRun) {
      if (options.lockHeld !== true) yield* store.lockWriter
      if (options.files !== undefined) yield* options.files.lock
    }
    const runs = yield* store.listRuns
    const decisions = decideRetention(runs, options.policy)
    const forget = decisions.filter((d) => !d.keep).map((d) => d.runId)
    const bytesBefore = (yield* store.storageBytes) + (yield* objectBytes(options.files))
    const report = { runs: decisions, forgotten: forget.length, kept: decisions.length - forget.length, bytesBefore, dryRun }
    if (dryRun) return { ...report, bytesAfter: bytesBefore, removedVersions: 0, removedObjects: 0 }

    const forgotten = yield* store.forgetRuns(forget)
    // After the commit: a crash here leaves only objects nothing references, which the next prune removes.
    const removedObjects = options.files === undefined ? 0 : yield* sweepObjects(options.files)
    if (forget.length > 0) yield* store.compact
    const bytesAfter = (yield* store.storageBytes) + (yield* objectBytes(options.files))
    return { ...report, bytesAfter, removedVersions: forgotten.removedVersions, removedObjects }
  }))
