/**
 * The mirror's run: a complete run of the snapshot that the mirror keeps current.
 *
 * After each reconciliation (an incremental backup, run R) the mirror opens a run M with
 * R's scope, copies R's membership into it, marks it complete (noted `mirror` of R), and
 * from then on changes M's membership as deliveries arrive: a new version of a record
 * replaces the old one in M, a deleted record leaves M. `export`, `diff` and a later
 * backup read M as the latest complete run, like any other. The versions it writes are
 * the snapshot's own rows (same hashing), so a record mirrored and later backed up is one
 * stored version, not two.
 */
import * as Effect from "effect/Effect"
import { type RecordDetail, RECORD_SUMMARY_FIELDS } from "../../schema/records.ts"
import type { ActivityItem } from "../../schema/activity.ts"
import type { RecordEntry, RunRow, SnapshotStoreService } from "../../store/snapshot.ts"

/** Opens the mirror's run as a copy of `from`. */
export const openMirrorRun = (store: SnapshotStoreService, from: RunRow) =>
  Effect.gen(function*() {
    const id = yield* store.beginRun(from.scope, false)
    yield* store.copyMembership(from.id, id)
    yield* store.note(id, { workspaceId: null, kind: "mirror", subject: String(from.id), detail: "kept current from webhook deliveries" })
    yield* store.completeRun(id, { mirrorOf: from.id })
    return id
  })

/** The list-records summary of a detail (the detail holds every summary field). */
export const summaryOf = (detail: Record<string, unknown>): { readonly id: string; readonly updatedAt?: string } =>
  Object.fromEntries(RECORD_SUMMARY_FIELDS.filter((k) => k in detail).map((k) => [k, detail[k]])) as { id: string; updatedAt?: string }

/** A record's new state as the run holds it: its detail, and its activity as read (or the stored one). */
export const versionEntry = (
  workspaceId: string,
  detail: RecordDetail | Record<string, unknown>,
  activity: ReadonlyArray<ActivityItem | object> | { readonly reuseFrom: number }
): RecordEntry => ({
  kind: "version",
  workspaceId,
  summary: summaryOf(detail as Record<string, unknown>),
  detail: detail as object,
  activity
})

/** Writes a record's new state into the run. */
export const writeVersion = (
  store: SnapshotStoreService,
  runId: number,
  workspaceId: string,
  detail: RecordDetail | Record<string, unknown>,
  activity: ReadonlyArray<ActivityItem | object> | { readonly reuseFrom: number }
) => store.putRecords(runId, [versionEntry(workspaceId, detail, activity)])
