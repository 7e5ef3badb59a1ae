/**
 * Reads one record again from the service into the mirror's run: the exact state, whatever
 * order deliveries came in. The caller queues and retries these reads (rereads.ts).
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import { isNotFound } from "../../client/predicates.ts"
import { RestClient, type RestClientApi } from "../../client/rest-client.ts"
import type { ActivityItem } from "../../schema/activity.ts"
import type { SnapshotStoreService } from "../../store/snapshot.ts"
import { recordActivityStream } from "../../streams/activity.ts"
import { writeVersion } from "./run.ts"

export interface ReadAgainContext {
  readonly store: SnapshotStoreService
  readonly rest: RestClientApi
  /** The mirror's run now (a reconciliation replaces it). */
  readonly run: Effect.Effect<number>
  /** Workspace ids mirrored; empty: every workspace the token reads. */
  readonly workspaces: ReadonlyArray<string>
}

/**
 * Reads a record again, in the workspace the snapshot has it in (or each mirrored one
 * for a record it has not seen). Written only when not older than what the snapshot
 * holds by then: a delivery applied meanwhile may have brought a newer state. After a
 * delivery that carried the whole record, only its activity is read (`activityOnly`).
 * A record the service no longer has leaves the run.
 */
export const readAgain = (ctx: ReadAgainContext, recordId: string, activityOnly: boolean) =>
  Effect.gen(function*() {
    const { rest, store } = ctx
    const known = yield* store.memberVersion(yield* ctx.run, recordId)
    if (activityOnly && known !== undefined) {
      const activity = yield* Stream.runCollect(recordActivityStream({ workspaceId: known.workspaceId, recordId })).pipe(
        Effect.map((c) => Option.some<Array<ActivityItem>>(c)),
        Effect.catchIf((e) => isNotFound(e.cause), () => Effect.succeed(Option.none<Array<ActivityItem>>()))
      )
      if (Option.isNone(activity)) return yield* store.removeMembers("records", yield* ctx.run, [recordId])
      const now = yield* ctx.run
      const stored = yield* store.memberVersion(now, recordId)
      if (stored === undefined) return
      // The activity the version holds already (as stored: with its record's id): the
      // write would be the same version again, so none is made.
      const held = yield* store.activityOfVersions(stored.vid - 1, stored.vid)
      if (held.length === activity.value.length && held.every((h, i) => h.item === JSON.stringify({ ...activity.value[i], recordId }))) return
      const text = yield* store.memberDetail(now, recordId)
      if (text === undefined) return
      const detail = JSON.parse(text) as Record<string, unknown>
      return yield* writeVersion(store, now, stored.workspaceId, detail, activity.value)
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
      const activity: Array<ActivityItem> = [...yield* Stream.runCollect(recordActivityStream({ workspaceId, recordId }))]
      const now = yield* ctx.run
      const stored = yield* store.memberVersion(now, recordId)
      if (stored?.updatedAt != null && stored.updatedAt > detail.value.updatedAt) return
      yield* writeVersion(store, now, workspaceId, detail.value, activity)
      return
    }
    // Gone from the service: gone from the mirror.
    yield* store.removeMembers("records", yield* ctx.run, [recordId])
  }).pipe(Effect.provideService(RestClient, ctx.rest))
