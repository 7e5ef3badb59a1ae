/**
 * Reads one record again from the service into the mirror's run: the exact state, whatever
 * order deliveries came in. The caller queues and retries these reads (rereads.ts).
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { isNotFound } from "../../client/predicates.ts"
import { RestClient, type RestClientApi } from "../../client/rest-client.ts"
import type { ActivityItem } from "../../schema/activity.ts"
import type { MemberChangeAsk, SnapshotStoreService } from "../../store/snapshot.ts"
import { recordActivity } from "../../streams/activity.ts"
import { type MemberBatches, unbatched } from "./member-batches.ts"
import { versionEntry } from "./run.ts"

export interface ReadAgainContext {
  readonly store: SnapshotStoreService
  readonly rest: RestClientApi
  /** The mirror's run now (a reconciliation replaces it). */
  readonly run: Effect.Effect<number>
  /** Workspace ids mirrored; empty: every workspace the token reads. */
  readonly workspaces: ReadonlyArray<string>
  /** How a read looks up and writes the run (member-batches.ts: with the other reads of its turn). Default: a transaction each. */
  readonly members?: MemberBatches
}

/**
 * Reads a record again, in the workspace the snapshot has it in (or each mirrored one
 * for a record it has not seen). Written only when not older than what the snapshot
 * holds by then: a delivery applied meanwhile may have brought a newer state. After a
 * delivery that carried the whole record, only its activity is read (`activityOnly`).
 * A record the service no longer has leaves the run.
 *
 * What the run holds is compared and the outcome written in one transaction
 * (`changeMembers`), which also removes the record's `mirror_rereads` rows up to
 * `rereadDone` when given: on SQLite each statement on its own would take and release
 * the file's locks, ten times the statement's own cost.
 *
 * `workspaceId`: where a delivery's write found the record, for a read of its activity
 * alone: the activity is read there without looking the record up first (a lookup of its
 * own per delivery). Should the run no longer hold the record there when the activity is
 * compared (deleted, or a reconciliation since), nothing is written and the record is read
 * as when the lookup finds it elsewhere or not at all, its rows kept until then.
 */
export const readAgain = (ctx: ReadAgainContext, recordId: string, activityOnly: boolean, rereadDone?: number, workspaceId?: string) =>
  Effect.gen(function*() {
    const { rest, store } = ctx
    const { change, version } = ctx.members ?? unbatched(store)
    /** Reads the activity in `at` and compares it with the run's; false when the run holds the record elsewhere than `expected`. */
    const readActivity = (at: string, expected: boolean) =>
      Effect.gen(function*() {
        const activity = yield* recordActivity({ workspaceId: at, recordId }).pipe(
          Effect.map((c) => Option.some<Array<ActivityItem>>(c)),
          Effect.catchIf((e) => isNotFound(e.cause), () => Effect.succeed(Option.none<Array<ActivityItem>>()))
        )
        let elsewhere = false
        const ask: MemberChangeAsk = { id: recordId, rereadDone, change: (held) => {
          if (expected && held?.workspaceId !== at) {
            // Not where the write found it: read as the lookup would have, the rows kept for that read.
            elsewhere = true
            ask.rereadDone = undefined
            return undefined
          }
          if (Option.isNone(activity)) return "remove"
          if (held === undefined) return undefined
          // The activity the version holds already (as stored: with its record's id): the
          // write would be the same version again, so none is made.
          if (
            held.activity.length === activity.value.length &&
            held.activity.every((h, i) => h === JSON.stringify({ ...activity.value[i], recordId }))
          ) return undefined
          return versionEntry(held.workspaceId, JSON.parse(held.detail) as Record<string, unknown>, activity.value)
        } }
        yield* change(yield* ctx.run, ask)
        return !elsewhere
      })
    if (activityOnly && workspaceId !== undefined && (yield* readActivity(workspaceId, true))) return
    const known = yield* version(yield* ctx.run, recordId)
    if (activityOnly && known !== undefined) {
      yield* readActivity(known.workspaceId, false)
      return
    }
    const candidates = known !== undefined
      ? [known.workspaceId]
      : ctx.workspaces.length > 0
      ? ctx.workspaces
      : (yield* rest.listWorkspaces()).items.map((w) => w.id)
    for (const workspaceId of candidates) {
      const detail = yield* rest.getRecord({ workspaceId, recordId }).pipe(
        Effect.map(Option.some),
        Effect.catchIf(isNotFound, () => Effect.succeed(Option.none()))
      )
      if (Option.isNone(detail)) continue
      const activity: Array<ActivityItem> = yield* recordActivity({ workspaceId, recordId })
      return yield* change(yield* ctx.run, {
        id: recordId,
        rereadDone,
        change: (held) =>
          held?.updatedAt != null && held.updatedAt > detail.value.updatedAt ? undefined : versionEntry(workspaceId, detail.value, activity)
      })
    }
    // Gone from the service: gone from the mirror.
    yield* change(yield* ctx.run, { id: recordId, rereadDone, change: () => "remove" })
  }).pipe(Effect.provideService(RestClient, ctx.rest))
