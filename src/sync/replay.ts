/**
 * Replay: runs a journal's pending operations against the service, exactly once.
 *
 * Per op (see docs/journal.md for the full argument):
 * 1. An op marked `uncertain` (a previous attempt may have been applied: the process died
 *    while it was in flight, or its answer was lost) is first reconciled: the executor
 *    looks on the service for what the op would have produced. Found: the op is done with
 *    that result and mapping, nothing is sent. Not found: the flag is cleared.
 * 2. `claim` makes the op in_flight with attempted_at, committed before the request leaves.
 *    Stopped (interrupted) before any write of it can have been applied (still waiting
 *    for the limiter or a 429's Retry-After: client/write-witness.ts), it is released
 *    back to pending; otherwise it stays in flight for the next run to reconcile.
 * 3. Success: `complete` (done + id mappings in one transaction). A definite failure (the
 *    service refused: 400/403/422, or retries ran out on 429): `fail`. An unknown outcome
 *    (5xx, timeout, dropped connection after sending): the op becomes uncertain, with the
 *    time its request left (`sent_at`: the client dates the send past its limiter's waits
 *    and 429 retries, which may outlast the window), and is reconciled, looking again and
 *    again until the settle window after that send has passed (a write the service
 *    commits late is found); only then is it sent again, a bounded number of times.
 *    Between looks the op is parked: it holds no concurrency slot, other ops go on. A 2xx
 *    whose answer could not be read (DecodeError) was applied: the op is reconciled the
 *    same way and never sent again.
 *
 * Ops of one executor `group` (e.g. creates with the same title) never run at the same
 * time, so a reconciliation can tell whose record it found: the ops behind a parked op of
 * their group wait for it, no other op does. Phases run in order (lists and tags before
 * the records that use them); inside a phase ops start in plan order with bounded
 * concurrency, dependencies (`depends_on`) done first. Every request goes through the
 * client's shared limiter and retry policy (429 waits as the service says).
 */
import * as Clock from "effect/Clock"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Predicate from "effect/Predicate"
import { DEFAULT_REQUEST_TIMEOUT_MS } from "../client/config.ts"
import { ABORT_TAGS, writeOutcome } from "../client/predicates.ts"
import { countingWitness, WriteWitness } from "../client/write-witness.ts"
import { isApplied, type JournalApi, type JournalError, type JournalStateError, type Mapping, type NewOp, type Op } from "../store/journal.ts"
import { type Deferred, runPhase, type Step } from "./replay-schedule.ts"

/** What an executed or reconciled op produced. */
export interface OpOutcome {
  readonly result: unknown
  readonly mappings: ReadonlyArray<Mapping>
  /** Ops that exist only once this one is done (added in the same transaction). */
  readonly followUps?: ReadonlyArray<NewOp>
}

/** Anything an executor can fail with: client errors carry `_tag` and `message`. */
export interface ExecFailure {
  readonly _tag: string
  readonly message: string
  readonly sent?: boolean
}

export interface Executor<R = never> {
  readonly kind: string
  /** Ops with the same group never run concurrently (undefined: no constraint). */
  readonly group?: (op: Op) => string | undefined
  readonly execute: (op: Op, journal: JournalApi) => Effect.Effect<OpOutcome, ExecFailure, R>
  /**
   * Looks on the service for what `op` would have produced. Only kinds whose repetition
   * could duplicate something (creates) need it; without it an uncertain op is re-sent.
   */
  readonly reconcile?: (op: Op, journal: JournalApi) => Effect.Effect<Option.Option<OpOutcome>, ExecFailure, R>
  /**
   * Whether sending `op` again would repeat nothing already applied (its first step is
   * recorded done, e.g. a create mapped before its follow-up update): then an op the
   * service applied but reconciliation did not settle may still be sent.
   */
  readonly resumable?: (op: Op, journal: JournalApi) => Effect.Effect<boolean, ExecFailure, R>
}

/** A failure that stops the whole replay (e.g. the token is refused): no point going on. */
export class ReplayAborted extends Data.TaggedError("ReplayAborted")<{
  readonly key: string
  readonly reason: string
}> {
  override get message(): string {
    return this.reason
  }
}

export interface ReplayOptions {
  /** Groups of kinds run one after another; default: every kind the executors know, in one phase. */
  readonly phases?: ReadonlyArray<ReadonlyArray<string>>
  /**
   * Ops worked on at once (an op parked between looks counts for none); the client's
   * limiter still bounds the request rate.
   */
  readonly concurrency?: number
  /** Ops read from the journal at a time (see replay-schedule.ts). */
  readonly batchSize?: number
  /** Ops one executor group queues at most; more are read again when it is down to half (replay-schedule.ts). */
  readonly holdPerGroup?: number
  /** Ops a phase holds (ready, queued, waiting) past which it reads no further until some end. */
  readonly holdLimit?: number
  /** Resends of an op whose outcome stays unknown after reconciliation, within one run. */
  readonly maxUnknownRounds?: number
  /** Wait before the first look at an unknown outcome; later looks come at doubling gaps. */
  readonly settleMs?: number
  /**
   * How long after its send an op of unknown outcome is looked for before it is sent
   * again: a write the service commits within this window is found, never duplicated.
   * Default: the client's default request timeout (a request the client gave up on may
   * still be running at the service that long); set it to the connection's own timeout.
   */
  readonly settleWindowMs?: number
  /** Called after each op ends (done, failed or left uncertain). */
  readonly onOpEnd?: (op: Op, end: OpEnd) => Effect.Effect<void>
  /** Tags of failures that abort the replay instead of failing one op. */
  readonly abortOn?: ReadonlyArray<string>
}

export type OpEnd = "sent" | "reconciled" | "failed" | "unknown"

/** How an op ended, for the phase's scheduler: and whether it added follow-ups. */
interface Ended {
  readonly end: OpEnd
  readonly grew: boolean
}

export interface ReplayReport {
  /** Ops done by a request of this run. */
  readonly sent: number
  /** Uncertain ops found already applied (no request sent). */
  readonly reconciled: number
  readonly failed: number
  /** Ops whose outcome is still unknown (failed with outcomeUnknown). */
  readonly unknown: number
  /** Ops left pending for the next run behind an unknown op of their group. */
  readonly deferred: number
  /** Per kind: ops done in this run (sent + reconciled). */
  readonly doneByKind: Readonly<Record<string, number>>
}

type ReplayError = JournalError | JournalStateError | ReplayAborted

/** The token refused, a wait asked for beyond --max-retry-wait: no other op would get through. */
const DEFAULT_ABORT = ABORT_TAGS

/** An op taken from the journal for this run, and where its run stands. */
interface Task<R> {
  readonly executor: Executor<R>
  /** The op as last claimed (first: as read from the journal). */
  op: Op
  /** Sends of unknown outcome in this run. */
  rounds: number
  /** Reconcile before sending (a send may have been applied). */
  uncertain: boolean
  /** The service answered a send 2xx (unreadable): applied, so never sent again. */
  applied: boolean
  /** When its latest send of unknown outcome left (epoch ms): the settle window runs from it. */
  sentAt: number
  /** The wait before its next look. */
  gap: number
}

const parseTime = (iso: string | null): number | undefined => {
  if (iso === null) return undefined
  const ms = Date.parse(iso)
  return Number.isNaN(ms) ? undefined : ms
}

/**
 * When the request of unknown outcome behind `error` left: as the client dated it (an
 * `OutcomeUnknown` carries its attempt's send), else `now` (it cannot have left later).
 */
const sentAtOf = (error: ExecFailure, now: number): number => {
  const dated: unknown = (error as { readonly attemptedAt?: unknown }).attemptedAt
  const at = Predicate.isTagged(error, "OutcomeUnknown") && typeof dated === "string" ? parseTime(dated) : undefined
  return at !== undefined && at <= now ? at : now
}

/** Runs every pending op of the journal with the executors. */
export const replay = <R>(
  journal: JournalApi,
  executors: ReadonlyArray<Executor<R>>,
  options: ReplayOptions = {}
): Effect.Effect<ReplayReport, ReplayError, R> =>
  Effect.gen(function*() {
    const byKind = new Map(executors.map((e) => [e.kind, e]))
    const phases = options.phases ?? [executors.map((e) => e.kind)]
    const concurrency = Math.max(1, options.concurrency ?? 8)
    const batchSize = options.batchSize ?? 500
    const holdPerGroup = Math.max(1, options.holdPerGroup ?? 500)
    const holdLimit = Math.max(1, options.holdLimit ?? 10_000)
    const maxRounds = options.maxUnknownRounds ?? 3
    const settleMs = options.settleMs ?? 250
    const windowMs = options.settleWindowMs ?? DEFAULT_REQUEST_TIMEOUT_MS
    const abortOn = new Set(options.abortOn ?? DEFAULT_ABORT)
    const report = { sent: 0, reconciled: 0, failed: 0, unknown: 0, deferred: 0, doneByKind: {} as Record<string, number> }
    /** `grew`: its completion added follow-ups to the journal. */
    const ended = (op: Op, end: OpEnd, grew = false) =>
      Effect.suspend(() => {
        if (end === "sent") report.sent++
        else if (end === "reconciled") report.reconciled++
        else if (end === "failed") report.failed++
        else report.unknown++
        if (end === "sent" || end === "reconciled") {
          report.doneByKind[op.kind] = (report.doneByKind[op.kind] ?? 0) + 1
        }
        return Effect.as(options.onOpEnd ? options.onOpEnd(op, end) : Effect.void, { _tag: "ended", end: { end, grew } } satisfies Step<Ended>)
      })

    // Ops a dead run left in flight may have been applied: reconcile before resending.
    yield* journal.resetInFlight()
    // Transitions of concurrent ops share commits (one fsync per event-loop turn); so do
    // the mappings executors write before their op ends.
    const tx = journal.transitions
    const executorJournal: JournalApi = {
      ...journal,
      setMapping: tx.setMapping,
      recordAdoption: tx.recordAdoption,
      recordBefore: tx.recordBefore
    }

    const isResumable = (op: Op, executor: Executor<R>) =>
      executor.resumable === undefined
        ? Effect.succeed(false)
        : Effect.orElseSucceed(executor.resumable(op, executorJournal), () => false)

    const taskOf = (op: Op, executor: Executor<R>): Task<R> => ({
      executor,
      op,
      rounds: 0,
      uncertain: op.uncertain,
      applied: isApplied(op),
      // A journal written before sends were dated: the claim is the best left.
      sentAt: parseTime(op.sentAt) ?? parseTime(op.attemptedAt) ?? 0,
      gap: settleMs
    })

    /**
     * Runs `t` until its op ends or must wait. An op of unknown outcome is looked for
     * (reconciled) until the settle window after its latest send has passed, at gaps of
     * settleMs, 2 settleMs, ...; between looks it is parked. Not found by then, it is
     * sent again, at most `maxRounds` sends per run.
     */
    const advance = (t: Task<R>): Effect.Effect<Step<Ended>, ReplayError, R> =>
      Effect.gen(function*() {
        const { executor } = t
        const key = t.op.key
        for (;;) {
          if (t.uncertain && executor.reconcile) {
            const found = yield* Effect.result(executor.reconcile(t.op, executorJournal))
            if (found._tag === "Failure") {
              // Cannot tell whether it was applied: keep it uncertain for the next run.
              yield* tx.fail(key, `could not check whether it was applied: ${found.failure.message}`, { outcomeUnknown: true })
              return yield* ended(t.op, "unknown")
            }
            if (Option.isSome(found.success)) {
              const o = found.success.value
              yield* tx.complete(key, o.result, o.mappings, o.followUps)
              return yield* ended(t.op, "reconciled", (o.followUps?.length ?? 0) > 0)
            }
            // Found and recorded as a first step (see `resumable`): nothing left to look for.
            const resumable = yield* isResumable(t.op, executor)
            if (!resumable) {
              const now = yield* Clock.currentTimeMillis
              const left = t.sentAt + windowMs - now
              if (left > 0) {
                const wait = Math.min(t.gap, left)
                t.gap *= 2
                return { _tag: "parked", untilMs: now + wait } satisfies Step<Ended>
              }
            }
            if (t.applied && !resumable) {
              // Applied, yet not found (renamed or deleted since?): sending it again could
              // only duplicate it. It stays for the next run to look again.
              yield* tx.fail(key, "the service answered success but the answer was unreadable, and the result was not found: not sent again", {
                outcomeUnknown: true
              })
              return yield* ended(t.op, "unknown")
            }
            yield* tx.markResolved(key)
            t.uncertain = false
          }
          const witness = countingWitness()
          const exit = yield* Effect.gen(function*() {
            t.op = yield* tx.claim(key)
            return yield* Effect.result(Effect.provideService(executor.execute(t.op, executorJournal), WriteWitness, witness))
          }).pipe(
            // Stopped before any write of it can have been applied: back to pending, so the
            // next run sends it at once instead of looking for it a whole settle window.
            Effect.onInterrupt(() => witness.mayHaveApplied() ? Effect.void : Effect.ignore(tx.release(key)))
          )
          if (exit._tag === "Success") {
            yield* tx.complete(key, exit.success.result, exit.success.mappings, exit.success.followUps)
            return yield* ended(t.op, "sent", (exit.success.followUps?.length ?? 0) > 0)
          }
          const error = exit.failure
          if (abortOn.has(error._tag)) {
            yield* tx.release(key, error.message)
            return yield* Effect.fail(new ReplayAborted({ key, reason: error.message }))
          }
          // A 2xx whose answer could not be read is "applied, details unknown".
          const unreadable = Predicate.isTagged(error, "DecodeError")
          if (writeOutcome(error) === "not-applied") {
            yield* tx.fail(key, error.message)
            return yield* ended(t.op, "failed")
          }
          if (!executor.reconcile) {
            // Safe to repeat (updates, moves): the client already retried; leave it for a rerun.
            yield* tx.fail(key, error.message)
            return yield* ended(t.op, "failed")
          }
          const now = yield* Clock.currentTimeMillis
          const sentAt = sentAtOf(error, now)
          const sentIso = new Date(sentAt).toISOString()
          if (t.rounds + 1 >= maxRounds && !unreadable) {
            yield* tx.fail(key, error.message, { outcomeUnknown: true, sentAt: sentIso })
            return yield* ended(t.op, "unknown")
          }
          // Dated in the journal, so a rerun after a crash waits out the same window.
          yield* tx.markUncertain(key, error.message, { applied: unreadable, sentAt: sentIso })
          t.rounds++
          t.uncertain = true
          t.applied = t.applied || unreadable
          t.sentAt = sentAt
          t.gap = settleMs
          t.op = { ...t.op, uncertain: true, sentAt: sentIso }
          return { _tag: "parked", untilMs: now + settleMs } satisfies Step<Ended>
        }
      })

    // A group whose op ended with its outcome unknown waits for the next run: while that
    // op is unresolved, a later op of the group could take its record for its own.
    const deferred: Deferred = { groups: new Set(), ops: new Set() }
    for (const kinds of phases) {
      const known = kinds.filter((k) => byKind.has(k))
      if (known.length === 0) continue
      yield* runPhase<Task<R>, Ended, ReplayError, R>({
        concurrency,
        batchSize,
        holdPerGroup,
        holdLimit,
        read: (afterSeq, limit) => journal.pendingPage({ kinds: known, afterSeq, limit }),
        groupOf: (op) => byKind.get(op.kind)!.group?.(op),
        start: (op) => taskOf(op, byKind.get(op.kind)!),
        advance,
        unsettled: (e) => e.end === "unknown",
        done: (e) => e.end === "sent" || e.end === "reconciled",
        grew: (e) => e.grew,
        deferred
      })
    }
    report.deferred = deferred.ops.size
    return report
  })

/** Milliseconds now (for reconcile windows); exported for executors. */
export const nowMillis = Clock.currentTimeMillis
