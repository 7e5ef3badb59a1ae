/**
 * `mirror`: keeps a snapshot current between backups from the service's signed webhook
 * deliveries.
 *
 * - The receiver answers 2xx as soon as a delivery verifies (the service times out at 7 s
 *   and disables a webhook after 5 failed attempts), queues it and applies it after.
 *   A delivery acknowledged but not applied before a crash is not lost for good: every
 *   start reconciles.
 * - Deliveries carry no id, so a duplicate is recognised by the hash of its body within a
 *   window; one the snapshot is already newer than is left (apply.ts).
 * - Reconciling is an incremental backup (run R), after which the mirror's run is a copy
 *   of R kept current (run.ts). It happens on start, every `reconcileEveryMs`, and
 *   whenever a gap shows: an event that cannot be applied exactly, the webhook found
 *   disabled or UNHEALTHY (re-enabled first).
 * - The snapshot's lock is held for the whole run: one writer per snapshot.
 * - The webhook's secret is kept in a file (webhook.ts): beside a snapshot file, or where
 *   `secretFile` says; a snapshot in PostgreSQL needs `secretFile`.
 */
import { createHash } from "node:crypto"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import * as Ref from "effect/Ref"
import * as Stream from "effect/Stream"
import type { GraphqlClientApi } from "../../client/graphql-client.ts"
import { isNotFound } from "../../client/predicates.ts"
import { RestClient, type RestClientApi } from "../../client/rest-client.ts"
import type { ActivityItem } from "../../schema/activity.ts"
import { SnapshotStore, type SnapshotStoreService } from "../../store/snapshot.ts"
import { recordActivityStream } from "../../streams/activity.ts"
import { serveWebhooks, type ReceivedDelivery } from "../../webhooks/receiver.ts"
import { backup } from "../backup.ts"
import { actionOf } from "./apply.ts"
import { openMirrorRun, summaryOf, writeVersion } from "./run.ts"
import { checkWebhook, ensureWebhook, mirrorSecretFile } from "./webhook.ts"

export interface MirrorEvent {
  readonly event: string
  readonly recordId: string | null
  readonly applied: boolean
}

export interface MirrorOptions {
  readonly store: SnapshotStoreService
  readonly rest: RestClientApi
  readonly graphql: GraphqlClientApi
  /** Workspace ids mirrored; empty: every workspace the token reads. */
  readonly workspaces: ReadonlyArray<string>
  readonly host: string
  readonly port: number
  /** The URL the service delivers to (it reaches the receiver through it). */
  readonly publicUrl: string
  readonly reconcileEveryMs: number
  /** How often the webhook's health is looked at. Default: a minute, or `reconcileEveryMs` if shorter. */
  readonly healthEveryMs?: number
  /** How long a delivery's body is remembered to recognise its duplicates. Default 10 minutes. */
  readonly duplicateWindowMs?: number
  readonly onEvent?: (e: MirrorEvent) => void
  readonly log?: (line: string) => void
  /** Told once the receiver listens and the first reconciliation is done. */
  readonly onReady?: (info: { readonly url: string; readonly runId: number }) => void
  /**
   * The file that keeps the webhook's secret (owner-only). Default: beside a snapshot
   * file, `<snapshot>.webhook.json`, as `worksync mirror` keeps it. Required for a
   * snapshot in PostgreSQL, which has no "beside".
   */
  readonly secretFile?: string
}

/** The mirror cannot start as asked (nothing was registered or written). */
export class MirrorError extends Data.TaggedError("MirrorError")<{ readonly message: string }> {}

/** Deliveries applied per transaction at most. */
const BATCH = 500
/** Records read again at once. */
const REREAD_CONCURRENCY = 8
/** How long a reread waits for more changes to the same record. */
const REREAD_DELAY_MS = 1_000

/** Remembers body hashes for a while, oldest first out. */
const makeSeen = (windowMs: number) => {
  const seen = new Map<string, number>()
  return (body: Uint8Array): boolean => {
    const now = Date.now()
    for (const [h, at] of seen) {
      if (now - at <= windowMs) break
      seen.delete(h)
    }
    const hash = createHash("sha256").update(body).digest("hex")
    if (seen.has(hash)) return true
    seen.set(hash, now)
    return false
  }
}

export const mirror = (options: MirrorOptions) =>
  Effect.gen(function*() {
    const { graphql, rest, store } = options
    const log = options.log ?? (() => undefined)
    const secretFile = mirrorSecretFile(store.file, options.secretFile)
    if (secretFile === undefined) {
      return yield* new MirrorError({
        message: `snapshot ${store.file} is in PostgreSQL: mirror keeps its webhook secret in a file beside the snapshot, ` +
          "and a database has none; name the file with `secretFile`"
      })
    }
    yield* store.lockWriter
    const register = ensureWebhook(graphql, { url: options.publicUrl, workspaces: options.workspaces, secretFile, log })
    let hook = yield* register
    const queue = yield* Effect.acquireRelease(Queue.unbounded<ReceivedDelivery>(), Queue.shutdown)
    const isDuplicate = makeSeen(options.duplicateWindowMs ?? 10 * 60_000)
    const receiver = yield* serveWebhooks(
      // Read on every delivery: a webhook registered again brings its own secret.
      { secret: () => hook.secrets(), host: options.host, port: options.port },
      (received) =>
        Effect.suspend(() => {
          if (isDuplicate(received.rawBody)) {
            options.onEvent?.({ event: received.delivery.event, recordId: null, applied: false })
            return Effect.void
          }
          return Queue.offer(queue, received)
        })
    )

    /** The workspace of each mirrored record, for the reads that need it. */
    const workspaceIds = options.workspaces
    const runRef = yield* Ref.make(0)
    const gap = yield* Ref.make<string | undefined>(undefined)

    const reconcile = (why: string) =>
      Effect.gen(function*() {
        log(`reconciling (${why})`)
        const result = yield* backup({ workspaces: options.workspaces, lockHeld: true }).pipe(
          Effect.provideService(RestClient, rest),
          Effect.provideService(SnapshotStore, store)
        )
        const run = (yield* store.getRun(Number(result.runId)))!
        const mirrorRun = yield* openMirrorRun(store, run)
        const previous = yield* Ref.getAndSet(runRef, mirrorRun)
        // The backup just made holds what the previous mirror run held, and more: one run
        // per reconciliation, not two, so a snapshot mirrored for months stays its size.
        if (previous !== 0) yield* store.dropRun(previous)
        log(`run ${result.runId} complete (${result.records} records); mirroring into run ${mirrorRun}`)
        return mirrorRun
      })

    /**
     * Reads a record again, in the workspace the snapshot has it in (or each mirrored one
     * for a record it has not seen). Written only when not older than what the snapshot
     * holds by then: a delivery applied meanwhile may have brought a newer state. After a
     * delivery that carried the whole record, only its activity is read (`activityOnly`).
     */
    const reread = (recordId: string, activityOnly: boolean) =>
      Effect.gen(function*() {
        const runId = yield* Ref.get(runRef)
        const known = yield* store.memberVersion(runId, recordId)
        if (activityOnly && known !== undefined) {
          const activity = yield* Stream.runCollect(recordActivityStream({ workspaceId: known.workspaceId, recordId })).pipe(
            Effect.map((c) => Option.some<Array<ActivityItem>>(c)),
            Effect.catchIf((e) => isNotFound(e.cause), () => Effect.succeed(Option.none<Array<ActivityItem>>()))
          )
          if (Option.isNone(activity)) return yield* store.removeMembers("records", yield* Ref.get(runRef), [recordId])
          const now = yield* Ref.get(runRef)
          const stored = yield* store.memberVersion(now, recordId)
          if (stored === undefined) return
          const [row] = yield* store.select<{ detail: string }>("read a stored detail", {
            sql: "SELECT detail FROM records WHERE vid = ?",
            params: [stored.vid]
          })
          if (row === undefined) return
          const detail = JSON.parse(row.detail) as Record<string, unknown>
          return yield* writeVersion(store, now, stored.workspaceId, detail, activity.value)
        }
        const candidates = known !== undefined ? [known.workspaceId] : workspaceIds.length > 0 ? workspaceIds : yield* allWorkspaces
        for (const workspaceId of candidates) {
          const detail = yield* rest.getRecord({ workspaceId, recordId }).pipe(
            Effect.map(Option.some),
            Effect.catchIf(isNotFound, () => Effect.succeed(Option.none()))
          )
          if (Option.isNone(detail)) continue
          const activity: Array<ActivityItem> = [...yield* Stream.runCollect(recordActivityStream({ workspaceId, recordId }))]
          const now = yield* Ref.get(runRef)
          const stored = yield* store.memberVersion(now, recordId)
          if (stored?.updatedAt != null && stored.updatedAt > detail.value.updatedAt) return
          yield* writeVersion(store, now, workspaceId, detail.value, activity)
          return
        }
        // Gone from the service: gone from the mirror.
        yield* store.removeMembers("records", yield* Ref.get(runRef), [recordId])
      }).pipe(Effect.provideService(RestClient, rest))
    const allWorkspaces = Effect.map(rest.listWorkspaces(), (page) => page.items.map((w) => w.id))

    /**
     * Records to read again, each once however many deliveries named it meanwhile: a read
     * waits REREAD_DELAY_MS after it is asked for, so a burst of changes to one record
     * costs one read, and applying deliveries is not slowed by reads it could merge.
     */
    const pendingRereads = new Map<string, { activityOnly: boolean }>()
    const rereadQueue = yield* Effect.acquireRelease(Queue.unbounded<{ id: string; due: number }>(), Queue.shutdown)
    const askReread = (id: string, activityOnly: boolean) =>
      Effect.suspend(() => {
        const pending = pendingRereads.get(id)
        if (pending !== undefined) {
          // A full read also brings the activity: the stronger ask wins.
          pending.activityOnly = pending.activityOnly && activityOnly
          return Effect.void
        }
        pendingRereads.set(id, { activityOnly })
        return Queue.offer(rereadQueue, { id, due: Date.now() + REREAD_DELAY_MS })
      })
    const rereadWorker = Effect.forever(
      Effect.gen(function*() {
        const { due, id } = yield* Queue.take(rereadQueue)
        const wait = due - Date.now()
        if (wait > 0) yield* Effect.sleep(wait)
        const ask = pendingRereads.get(id)
        pendingRereads.delete(id)
        yield* Effect.uninterruptible(reread(id, ask?.activityOnly ?? false))
      })
    )
    yield* Effect.forkScoped(Effect.all(Array.from({ length: REREAD_CONCURRENCY }, () => rereadWorker), { concurrency: "unbounded", discard: true }))

    /** Applies a batch of deliveries to the mirror's run, its writes in one transaction. */
    const applyBatch = (runId: number, batch: ReadonlyArray<ReceivedDelivery>) =>
      Effect.gen(function*() {
        const writes = new Map<string, { workspaceId: string; detail: Record<string, unknown>; vid: number; at: string }>()
        // Record id -> whether only its activity needs reading.
        const rereads = new Map<string, boolean>()
        const ask = (id: string, activityOnly: boolean) => rereads.set(id, (rereads.get(id) ?? true) && activityOnly)
        const told: Array<MirrorEvent> = []
        for (const { delivery } of batch) {
          const action = actionOf(delivery)
          switch (action._tag) {
            case "Write": {
              const at = action.detail.updatedAt as string
              const known = yield* store.memberVersion(runId, action.recordId)
              const pending = writes.get(action.recordId)
              const newest = pending?.at ?? known?.updatedAt ?? null
              // The snapshot already holds this state or a newer one: a duplicate or an overtaken delivery.
              if (newest !== null && newest >= at) {
                told.push({ event: delivery.event, recordId: action.recordId, applied: false })
                break
              }
              if (known === undefined) ask(action.recordId, false)
              else {
                writes.set(action.recordId, { workspaceId: known.workspaceId, detail: action.detail, vid: known.vid, at })
                // The event's value holds no activity (an action item was added): read that again.
                ask(action.recordId, true)
              }
              told.push({ event: delivery.event, recordId: action.recordId, applied: true })
              break
            }
            case "Reread":
              ask(action.recordId, false)
              told.push({ event: delivery.event, recordId: action.recordId, applied: true })
              break
            case "Delete":
              writes.delete(action.recordId)
              rereads.delete(action.recordId)
              yield* store.removeMembers("records", runId, [action.recordId])
              told.push({ event: delivery.event, recordId: action.recordId, applied: true })
              break
            case "List": {
              if (action.deleted) yield* store.removeMembers("lists", runId, [action.list.id])
              else yield* Ref.set(gap, `${delivery.event} of list ${action.list.id}`)
              told.push({ event: delivery.event, recordId: null, applied: action.deleted })
              break
            }
            case "Gap":
              yield* Ref.set(gap, action.reason)
              told.push({ event: delivery.event, recordId: null, applied: false })
              break
            case "Ignore":
              told.push({ event: delivery.event, recordId: null, applied: false })
              break
          }
        }
        yield* store.putRecords(runId, [...writes.entries()].map(([id, w]) => ({
          kind: "version" as const,
          workspaceId: w.workspaceId,
          summary: summaryOf({ ...w.detail, id }),
          detail: w.detail,
          activity: { reuseFrom: w.vid }
        })))
        for (const e of told) options.onEvent?.(e)
        yield* Effect.forEach(rereads, ([id, activityOnly]) => askReread(id, activityOnly), { discard: true })
      })

    let runId = yield* reconcile(hook.missed ? "start; the webhook had been disabled" : "start")
    options.onReady?.({ url: receiver.url, runId })
    let lastReconcile = Date.now()
    let lastHealth = Date.now()
    const healthEvery = options.healthEveryMs ?? Math.min(60_000, options.reconcileEveryMs)
    for (;;) {
      const batch = yield* Queue.takeBetween(queue, 1, BATCH).pipe(
        Effect.timeoutOrElse({ duration: "200 millis", orElse: () => Effect.succeed<Array<ReceivedDelivery>>([]) })
      )
      // One batch at a time, whole: an interruption (SIGINT) waits for the batch at hand.
      yield* Effect.uninterruptible(
        Effect.gen(function*() {
          if (batch.length > 0) yield* applyBatch(runId, batch)
        })
      )
      const now = Date.now()
      if (now - lastHealth >= healthEvery) {
        lastHealth = now
        const state = yield* checkWebhook(graphql, hook.id, log)
        if (state === "gone") hook = yield* register
        if (state !== "ok") yield* Ref.set(gap, state === "gone" ? "the webhook was gone (registered again)" : "the webhook had been disabled")
      }
      const why = yield* Ref.getAndSet(gap, undefined)
      if (why !== undefined || now - lastReconcile >= options.reconcileEveryMs) {
        runId = yield* Effect.uninterruptible(reconcile(why ?? "scheduled"))
        lastReconcile = Date.now()
      }
    }
  })
