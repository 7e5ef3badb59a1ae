/**
 * `mirror`: keeps a snapshot current between backups from the service's signed webhook
 * deliveries.
 *
 * - The receiver answers 2xx as soon as a delivery verifies (the service times out at 7 s
 *   and disables a webhook after 5 failed attempts), queues it and applies it after. A
 *   delivery that needs its record read is first kept in the snapshot (rereads.ts), so
 *   neither a stop nor a kill loses it; other deliveries acknowledged but not applied
 *   before a kill (a delete, a list change) are caught by the reconciliation every start
 *   runs. Stopping (SIGINT/SIGTERM) applies the deliveries at hand and reads what is
 *   queued, for at most `stopWithinMs`, refusing new deliveries meanwhile (the service
 *   sends them again).
 * - `onEvent` says `applied` only once the change is in the snapshot; a delivery whose
 *   record is still to be read is told `queued` at once and `applied` after the read.
 * - Deliveries carry no id, so a duplicate is recognised by its verified signature (the
 *   HMAC of its exact body: the same body under the same secret) within a window; one the
 *   snapshot is already newer than is left (apply.ts).
 * - Reconciling is an incremental backup (run R), after which the mirror's run is a copy
 *   of R kept current (run.ts). It happens on start, every `reconcileEveryMs`, and
 *   whenever a gap shows: an event that cannot be applied exactly, the webhook found
 *   disabled or UNHEALTHY (re-enabled first).
 * - The snapshot's lock is held for the whole run: one writer per snapshot.
 * - The webhook's secret is kept in a file (webhook.ts): beside a snapshot file, or where
 *   `secretFile` says; a snapshot in PostgreSQL needs `secretFile`.
 */
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Queue from "effect/Queue"
import * as Ref from "effect/Ref"
import type { GraphqlClientApi } from "../../client/graphql-client.ts"
import { RestClient, type RestClientApi } from "../../client/rest-client.ts"
import { SnapshotStore, type SnapshotStoreService } from "../../store/snapshot.ts"
import { serveWebhookBatches, type ReceivedDelivery } from "../../webhooks/receiver.ts"
import { backup } from "../backup.ts"
import { actionOf, type MirrorAction } from "./apply.ts"
import { makeMemberBatches } from "./member-batches.ts"
import { readAgain } from "./read-again.ts"
import { makeRereadQueue } from "./rereads.ts"
import { openMirrorRun, versionEntry } from "./run.ts"
import { checkWebhook, ensureWebhook, mirrorSecretFile } from "./webhook.ts"

export interface MirrorEvent {
  readonly event: string
  readonly recordId: string | null
  /** The change is in the snapshot (false: left, or not yet when `queued`). */
  readonly applied: boolean
  /** Received and kept; its record is still to be read. A line `applied` follows once it is in. */
  readonly queued?: true
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
  /**
   * How long stopping may spend reading the records still queued. Default 5 s: within the
   * grace period of the usual process managers; what is left is read at the next start.
   */
  readonly stopWithinMs?: number
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
/** How long stopping reads what is queued, by default. */
const STOP_WITHIN_MS = 5_000

/**
 * Remembers deliveries' signatures for a while, oldest first out. A signature is the HMAC
 * of the body, computed to verify it: a hash of the body of its own would cost as much again.
 */
const makeSeen = (windowMs: number) => {
  const seen = new Map<string, number>()
  return {
    /** Remembers the delivery; its signature, or undefined when it was seen within the window. */
    check: (received: ReceivedDelivery): string | undefined => {
      const now = Date.now()
      for (const [h, at] of seen) {
        if (now - at <= windowMs) break
        seen.delete(h)
      }
      const hash = received.signature
      if (seen.has(hash)) return undefined
      seen.set(hash, now)
      return hash
    },
    /** A delivery refused: the service sends it again, and that copy is no duplicate. */
    forget: (hash: string) => void seen.delete(hash)
  }
}

/** A delivery verified and kept, with what it means and the `mirror_rereads` row it added (0: none). */
interface Kept {
  readonly received: ReceivedDelivery
  readonly action: MirrorAction
  seq: number
}

/** The mirror is stopping: a delivery now is refused (500), and the service sends it again. */
class MirrorStopping extends Data.TaggedError("MirrorStopping")<{}> {}

const messageOf = (e: unknown): string =>
  typeof e === "object" && e !== null && "message" in e ? String((e as { message: unknown }).message) : String(e)

export const mirror = (options: MirrorOptions) =>
  Effect.gen(function*() {
    const { graphql, rest, store } = options
    const log = options.log ?? (() => undefined)
    const told = (e: MirrorEvent) => options.onEvent?.(e)
    const secretFile = mirrorSecretFile(store.file, options.secretFile)
    if (secretFile === undefined) {
      return yield* new MirrorError({
        message: `snapshot ${store.file} is in PostgreSQL: mirror keeps its webhook secret in a file beside the snapshot, ` +
          "and a database has none; name the file with `secretFile`"
      })
    }
    yield* store.lockWriter
    // What a stopped or killed mirror kept and did not read; read after the first reconciliation.
    const left = yield* store.mirrorRereads
    const register = ensureWebhook(graphql, { url: options.publicUrl, workspaces: options.workspaces, secretFile, log })
    let hook = yield* register
    const runRef = yield* Ref.make(0)
    const gap = yield* Ref.make<string | undefined>(undefined)
    const members = makeMemberBatches(store)
    const rereads = yield* makeRereadQueue({
      store,
      read: (recordId, activityOnly, seq, workspaceId) =>
        readAgain({ store, rest, run: Ref.get(runRef), workspaces: options.workspaces, members }, recordId, activityOnly, seq, workspaceId),
      told,
      log,
      delayMs: REREAD_DELAY_MS,
      concurrency: REREAD_CONCURRENCY
    })
    const queue = yield* Effect.acquireRelease(Queue.unbounded<Kept>(), Queue.shutdown)
    const seen = makeSeen(options.duplicateWindowMs ?? 10 * 60_000)
    let stopping = false
    const receiver = yield* serveWebhookBatches(
      // Read on every delivery: a webhook registered again brings its own secret.
      { secret: () => hook.secrets(), host: options.host, port: options.port },
      // The deliveries that arrived together are kept in one transaction, then answered.
      (batch) =>
        Effect.gen(function*() {
          if (stopping) return yield* new MirrorStopping()
          const fresh: Array<{ readonly kept: Kept; readonly hash: string }> = []
          const asks: Array<{ readonly recordId: string; readonly event: string | null }> = []
          const asking: Array<{ seq: number }> = []
          for (const received of batch) {
            const hash = seen.check(received)
            if (hash === undefined) {
              told({ event: received.delivery.event, recordId: null, applied: false })
              continue
            }
            const action = actionOf(received.delivery)
            const kept = { received, action, seq: 0 }
            fresh.push({ kept, hash })
            // Kept before the answer: once the service has its 2xx, the read is owed even across a kill.
            if (action._tag === "Write") asks.push({ recordId: action.recordId, event: null })
            else if (action._tag === "Reread") asks.push({ recordId: action.recordId, event: received.delivery.event })
            else continue
            asking.push(kept)
          }
          if (asks.length > 0) {
            const seqs = yield* rereads.keep(asks).pipe(
              Effect.tapError(() => Effect.sync(() => fresh.forEach(({ hash }) => seen.forget(hash))))
            )
            asking.forEach((kept, i) => (kept.seq = seqs[i]!))
          }
          if (fresh.length > 0) yield* Queue.offerAll(queue, fresh.map(({ kept }) => kept))
        })
    )

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
        yield* rereads.retryFailed
        return mirrorRun
      })

    /** Applies a batch of deliveries to the mirror's run, its writes in one transaction. */
    const applyBatch = (runId: number, batch: ReadonlyArray<Kept>) =>
      Effect.gen(function*() {
        const writes = new Map<string, { workspaceId: string; detail: Record<string, unknown>; vid: number; at: string }>()
        const asks: Array<[string, { activityOnly: boolean; workspaceId?: string | undefined; seq: number; events: Array<string> }]> = []
        /** Deliveries whose line now waits for a read, kept so that a restart prints it, and the read's ask. */
        const waiting: Array<{ recordId: string; event: string; ask: { seq: number } }> = []
        const lines: Array<MirrorEvent> = []
        // The versions the run holds of the batch's written records, looked up together.
        const versions = yield* store.memberVersions(runId, batch.flatMap(({ action }) => action._tag === "Write" ? [action.recordId] : []))
        /** Records the batch deleted before a write of theirs: the run holds them no more. */
        const deleted = new Set<string>()
        for (const { action, received: { delivery }, seq } of batch) {
          switch (action._tag) {
            case "Write": {
              const at = action.detail.updatedAt as string
              const known = deleted.has(action.recordId) ? undefined : versions.get(action.recordId)
              const pending = writes.get(action.recordId)
              const newest = pending?.at ?? known?.updatedAt ?? null
              if (newest !== null && newest >= at) {
                // The snapshot already holds this state or a newer one: an overtaken delivery.
                // Its kept row is covered by a read of the activity, as for any write.
                lines.push({ event: delivery.event, recordId: action.recordId, applied: false })
                asks.push([action.recordId, { activityOnly: true, workspaceId: pending?.workspaceId ?? known?.workspaceId, seq, events: [] }])
              } else if (known === undefined) {
                // A record the run does not hold yet: read whole (its workspace, its activity).
                const ask = { activityOnly: false, seq, events: [delivery.event] }
                waiting.push({ recordId: action.recordId, event: delivery.event, ask })
                lines.push({ event: delivery.event, recordId: action.recordId, applied: false, queued: true })
                asks.push([action.recordId, ask])
              } else {
                writes.set(action.recordId, { workspaceId: known.workspaceId, detail: action.detail, vid: known.vid, at })
                lines.push({ event: delivery.event, recordId: action.recordId, applied: true })
                // The event's value holds no activity (an action item was added): read that again,
                // in the workspace the run holds the record in (no lookup before the read).
                asks.push([action.recordId, { activityOnly: true, workspaceId: known.workspaceId, seq, events: [] }])
              }
              break
            }
            case "Reread":
              lines.push({ event: delivery.event, recordId: action.recordId, applied: false, queued: true })
              asks.push([action.recordId, { activityOnly: false, seq, events: [delivery.event] }])
              break
            case "Delete":
              // A read asked before stays: it finds the record gone, and removes its rows.
              writes.delete(action.recordId)
              deleted.add(action.recordId)
              yield* store.removeMembers("records", runId, [action.recordId])
              lines.push({ event: delivery.event, recordId: action.recordId, applied: true })
              break
            case "List": {
              if (action.deleted) yield* store.removeMembers("lists", runId, [action.list.id])
              else yield* Ref.set(gap, `${delivery.event} of list ${action.list.id}`)
              lines.push({ event: delivery.event, recordId: null, applied: action.deleted })
              break
            }
            case "Gap":
              yield* Ref.set(gap, action.reason)
              lines.push({ event: delivery.event, recordId: null, applied: false })
              break
            case "Ignore":
              lines.push({ event: delivery.event, recordId: null, applied: false })
              break
          }
        }
        // Rows of their own, after the delivery's: the read that covers them removes both.
        const seqs = yield* rereads.keep(waiting.map(({ event, recordId }) => ({ recordId, event })))
        waiting.forEach(({ ask }, i) => (ask.seq = seqs[i]!))
        yield* store.putRecords(runId, [...writes.values()].map((w) =>
          versionEntry(w.workspaceId, w.detail, { reuseFrom: w.vid })))
        for (const e of lines) told(e)
        yield* Effect.forEach(asks, ([id, ask]) => rereads.ask(id, ask), { discard: true })
      })

    let runId = yield* reconcile(hook.missed ? "start; the webhook had been disabled" : "start")
    if (left.length > 0) log(`reading ${new Set(left.map((r) => r.recordId)).size} record(s) again that the last run left queued`)
    yield* rereads.resume(left)
    // Stopping: the deliveries at hand are applied and the reads queued done (bounded)
    // before the readers and the receiver go; what is left stays in the snapshot.
    yield* Effect.addFinalizer(() =>
      Effect.gen(function*() {
        stopping = true
        const last = yield* Queue.clear(queue)
        if (last.length > 0) yield* applyBatch(yield* Ref.get(runRef), last)
        const unread = yield* rereads.stop(options.stopWithinMs ?? STOP_WITHIN_MS)
        log(unread === 0
          ? "stopped; every change received is in the snapshot"
          : `stopped with ${unread} record(s) still to read again: kept in the snapshot, read at the next start`)
      }).pipe(Effect.catch((e) => Effect.sync(() => log(`stopping: ${messageOf(e)}; what was received is kept in the snapshot, read at the next start`))))
    )
    options.onReady?.({ url: receiver.url, runId })
    let lastReconcile = Date.now()
    let lastHealth = Date.now()
    const healthEvery = options.healthEveryMs ?? Math.min(60_000, options.reconcileEveryMs)
    for (;;) {
      const batch = yield* Queue.takeBetween(queue, 1, BATCH).pipe(
        Effect.timeoutOrElse({ duration: "200 millis", orElse: () => Effect.succeed<Array<Kept>>([]) })
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
