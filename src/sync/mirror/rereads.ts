/**
 * The mirror's queue of records to read again, and what makes it lose nothing.
 *
 * - Durable: a delivery that needs a read is kept in the snapshot (`mirror_rereads`)
 *   before it is answered 2xx (`keep`), and its rows go only once a read of its record is
 *   in the snapshot. A mirror stopped or killed in between reads them at its next start
 *   (`resume`), not at the next reconciliation.
 * - Merged: a read waits `delayMs` after it is asked for, so a burst of changes to one
 *   record costs one read; a read asked while one of the same record is in flight is
 *   another read, after it (the first may have read the service before the change).
 * - Told when true: a delivery's `applied` line is printed once the read that covers it
 *   is in the snapshot, never when it is only queued.
 * - Stopping (`stop`): what is queued is read at once, for a bounded time, so a stuck
 *   service cannot hold the exit; what is left stays in the snapshot and is named.
 * - A read that fails is not retried in a loop: its rows stay, and it is asked again
 *   after the next reconciliation (`retryFailed`) or at the next start.
 */
import * as Cause from "effect/Cause"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Queue from "effect/Queue"
import type * as Scope from "effect/Scope"
import type { SnapshotError, SnapshotStoreService } from "../../store/snapshot.ts"
import type { MirrorEvent } from "./mirror.ts"

/** A read asked for: of the whole record, or of its activity only; the rows it covers; the lines waiting for it. */
interface Ask {
  activityOnly: boolean
  /**
   * The workspace the run held the record in when a delivery wrote it: a read of the
   * activity alone goes there without looking the record up first. Undefined: looked up.
   */
  workspaceId?: string | undefined
  /** The newest row of `mirror_rereads` this read covers. */
  seq: number
  readonly events: Array<string>
}

export interface RereadQueue {
  /** Keeps asks in the snapshot (before their delivery is answered); their seqs, in order. */
  readonly keep: (asks: ReadonlyArray<{ readonly recordId: string; readonly event: string | null }>) => Effect.Effect<Array<number>, SnapshotError>
  /** Queues a read of the record covering its rows up to `seq`; `events` are printed applied once it is in. */
  readonly ask: (
    recordId: string,
    ask: { readonly activityOnly: boolean; readonly workspaceId?: string | undefined; readonly seq: number; readonly events: ReadonlyArray<string> }
  ) => Effect.Effect<void>
  /** Queues the reads a stopped or killed mirror left in the snapshot (read before serving). */
  readonly resume: (left: ReadonlyArray<{ readonly seq: number; readonly recordId: string; readonly event: string | null }>) => Effect.Effect<void>
  /** Asks again for the reads that failed (after a reconciliation). */
  readonly retryFailed: Effect.Effect<void>
  /** Reads everything queued now, for at most `withinMs`; then the records still to read (kept in the snapshot). */
  readonly stop: (withinMs: number) => Effect.Effect<number, SnapshotError>
}

export interface RereadQueueOptions {
  readonly store: SnapshotStoreService
  /**
   * Reads one record again into the mirror's run (read-again.ts) and, in the same
   * write, removes the record's rows up to `seq` (`changeMembers`' `rereadDone`).
   */
  readonly read: (recordId: string, activityOnly: boolean, seq: number, workspaceId: string | undefined) => Effect.Effect<unknown, unknown>
  readonly told: (e: MirrorEvent) => void
  readonly log: (line: string) => void
  readonly delayMs: number
  readonly concurrency: number
}

const messageOf = (e: unknown): string =>
  typeof e === "object" && e !== null && "message" in e ? String((e as { message: unknown }).message) : String(e)

/** The queue, its workers running for the scope. */
export const makeRereadQueue = (options: RereadQueueOptions): Effect.Effect<RereadQueue, never, Scope.Scope> =>
  Effect.gen(function*() {
    const { store } = options
    /** Asked and not taken by a worker yet, by record. */
    const pending = new Map<string, Ask>()
    /** Being read now, by record; `done` once the read ended. */
    const inFlight = new Map<string, { readonly ask: Ask; readonly done: Deferred.Deferred<void> }>()
    /** Failed reads, asked again after the next reconciliation. */
    const failed = new Map<string, Ask>()
    const due = yield* Effect.acquireRelease(Queue.unbounded<{ readonly id: string; readonly at: number }>(), Queue.shutdown)
    /** Opened by `stop`: nothing waits for its delay any more. */
    const now = yield* Deferred.make<void>()
    /** Completed once stopping and nothing is left to read. */
    const idle = yield* Deferred.make<void>()
    let stopping = false
    const checkIdle = () => {
      if (stopping && pending.size === 0 && inFlight.size === 0) Deferred.doneUnsafe(idle, Effect.void)
    }

    const merge = (id: string, ask: Ask) => {
      const waiting = pending.get(id)
      if (waiting !== undefined) {
        // A whole read also brings the activity: the stronger ask wins.
        waiting.activityOnly = waiting.activityOnly && ask.activityOnly
        // Two writes that saw the record in different workspaces: look it up.
        if (waiting.workspaceId !== ask.workspaceId) waiting.workspaceId = undefined
        waiting.seq = Math.max(waiting.seq, ask.seq)
        waiting.events.push(...ask.events)
        return Effect.void
      }
      pending.set(id, ask)
      return Queue.offer(due, { id, at: Date.now() + options.delayMs })
    }

    const readOne = (id: string) =>
      Effect.gen(function*() {
        // One read of a record at a time: an earlier read finishing last could write the
        // state from before the change this one is for.
        const running = inFlight.get(id)
        if (running !== undefined) yield* Deferred.await(running.done)
        const ask = pending.get(id)
        if (ask === undefined) return
        pending.delete(id)
        const done = yield* Deferred.make<void>()
        inFlight.set(id, { ask, done })
        const exit = yield* Effect.exit(options.read(id, ask.activityOnly, ask.seq, ask.workspaceId)).pipe(
          Effect.ensuring(Effect.sync(() => {
            inFlight.delete(id)
            Deferred.doneUnsafe(done, Effect.void)
          }))
        )
        if (exit._tag === "Success") {
          for (const event of ask.events) options.told({ event, recordId: id, applied: true })
        } else if (!stopping) {
          options.log(`reading record ${id} again failed (${messageOf(Cause.squash(exit.cause))}); ` +
            "it stays queued in the snapshot and is read after the next reconciliation")
          const before = failed.get(id)
          failed.set(id, before === undefined ? ask : {
            activityOnly: before.activityOnly && ask.activityOnly,
            workspaceId: before.workspaceId === ask.workspaceId ? ask.workspaceId : undefined,
            seq: Math.max(before.seq, ask.seq),
            events: [...before.events, ...ask.events]
          })
        }
        checkIdle()
      })

    const worker = Effect.forever(
      Effect.gen(function*() {
        const { at, id } = yield* Queue.take(due)
        const wait = at - Date.now()
        if (wait > 0 && !stopping) yield* Effect.raceFirst(Effect.sleep(wait), Deferred.await(now))
        yield* readOne(id)
      })
    )
    yield* Effect.forkScoped(Effect.all(Array.from({ length: options.concurrency }, () => worker), { concurrency: "unbounded", discard: true }))

    return {
      keep: (asks) => store.addMirrorRereads(asks),
      ask: (recordId, ask) => Effect.suspend(() => merge(recordId, { ...ask, events: [...ask.events] })),
      resume: (left) =>
        Effect.suspend(() => {
          const byRecord = new Map<string, Ask>()
          for (const row of left) {
            // Read whole: a write applied before the stop may not have been.
            const ask = byRecord.get(row.recordId) ?? { activityOnly: false, seq: row.seq, events: [] }
            ask.seq = Math.max(ask.seq, row.seq)
            if (row.event !== null) ask.events.push(row.event)
            byRecord.set(row.recordId, ask)
          }
          return Effect.forEach(byRecord, ([id, ask]) => merge(id, ask), { discard: true })
        }),
      retryFailed: Effect.suspend(() => {
        const again = [...failed]
        failed.clear()
        return Effect.forEach(again, ([id, ask]) => merge(id, ask), { discard: true })
      }),
      stop: (withinMs) =>
        Effect.gen(function*() {
          stopping = true
          yield* Deferred.succeed(now, undefined)
          const asked = new Set([...pending.keys(), ...inFlight.keys()]).size
          if (asked > 0) options.log(`stopping: reading ${asked} record(s) again first (at most ${Math.ceil(withinMs / 1000)} s)`)
          checkIdle()
          yield* Deferred.await(idle).pipe(Effect.timeoutOption(withinMs))
          return new Set((yield* store.mirrorRereads).map((r) => r.recordId)).size
        })
    } satisfies RereadQueue
  })
