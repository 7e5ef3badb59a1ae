/** The journal as an Effect service and Layer, over the synchronous core (db.ts). */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import { lockStore, StoreBusy, StoreLockError } from "../file-lock.ts"
import { type BatchedTransitions, batchedTransitions } from "./batch.ts"
import { journalOnPostgres } from "../postgres-backends.ts"
import { isPostgresUrl } from "../postgres-url.ts"
import { JournalDb } from "./db.ts"
import { JournalError, JournalStateError } from "./errors.ts"
import type {
  Adoption,
  ClaimNextOptions,
  FailOptions,
  JournalCounts,
  ListOptions,
  Mapping,
  MappingsPage,
  MarkUncertainOptions,
  NewOp,
  Op,
  PendingOp,
  PendingPageOptions,
  PlannedOp,
  PlanOp,
  StoredAdoption
} from "./types.ts"

/**
 * A plan run in progress, for loops that plan many ops: a Promise per batch (an Effect per
 * batch of a million-row file costs more than the batch). On a SQLite journal the batch is
 * planned synchronously within the call and the Promise is already settled; on
 * PostgreSQL calls are answered in the order made. `planOps` rejects with what
 * `JournalDb.planOps` throws (or the PostgreSQL backend's JournalError); `end` makes the
 * run durable.
 */
export interface Planner {
  /** The journal's location, for messages (a PostgreSQL URL without its password). */
  readonly file: string
  readonly run: number
  /** Which backend plans: only a SQLite journal can be planned on a second thread (plan-writer.ts). */
  readonly backend: "sqlite" | "postgres"
  readonly planOps: (ops: ReadonlyArray<PlanOp>) => Promise<Array<PlannedOp>>
  readonly end: () => Promise<void>
}

/**
 * The journal as an Effect service, on a SQLite file (every method a thin wrapper over
 * `JournalDb`) or in a PostgreSQL schema (postgres.ts). Two narrow interfaces serve the
 * hot paths: `planner` (import planning a million rows, a batch per call) and
 * `transitions` (replay's group commit on SQLite).
 */
export interface JournalApi {
  /** The journal's location, for messages (a PostgreSQL URL without its password). */
  readonly file: string
  /** Starts a plan run: ops planned a batch at a time, made durable by `end`. */
  readonly planner: () => Effect.Effect<Planner, JournalError>
  /** Transitions committed together per turn of the event loop (batch.ts). */
  readonly transitions: BatchedTransitions
  /** Adds ops, marks older versions' ops superseded and writes mappings, in one transaction. */
  readonly addPlan: (plan: {
    readonly ops: ReadonlyArray<NewOp>
    readonly supersede?: ReadonlyArray<{ readonly keys: ReadonlyArray<string>; readonly by: string }>
    readonly mappings?: ReadonlyArray<Mapping>
  }) => Effect.Effect<number, JournalError>
  /**
   * Every source item of a namespace with its counterpart, in source-key order; with
   * `page`, only that page of them (a large id map read without holding it whole).
   */
  readonly mappings: (namespace: string, page?: MappingsPage) => Effect.Effect<Array<Mapping>, JournalError>
  /** Adoptions recorded after row `afterId` (0: all), oldest first. */
  readonly adoptions: (afterId?: number) => Effect.Effect<Array<StoredAdoption>, JournalError>
  /** The id of the latest adoption (0 when none). */
  readonly lastAdoptionId: () => Effect.Effect<number, JournalError>
  /** Inserts ops not yet present (by key) in one transaction; returns how many were new. */
  readonly addOps: (ops: Iterable<NewOp>) => Effect.Effect<number, JournalError>
  readonly beginPlanRun: () => Effect.Effect<number, JournalError>
  readonly endPlanRun: (run: number) => Effect.Effect<void, JournalError>
  readonly planOps: (run: number, ops: ReadonlyArray<PlanOp>) => Effect.Effect<Array<PlannedOp>, JournalError>
  readonly get: (key: string) => Effect.Effect<Option.Option<Op>, JournalError>
  /** The ops with these keys, in no particular order (a key without an op is left out). */
  readonly getMany: (keys: ReadonlyArray<string>) => Effect.Effect<Array<Op>, JournalError>
  /** pending -> in_flight, attempts+1, attempted_at = now, committed before returning. */
  readonly claim: (key: string) => Effect.Effect<Op, JournalError | JournalStateError>
  /**
   * Claims (as `claim`) the runnable pending op (its dependency done, as in `pending`) of
   * one of `kinds` whose key starts with `keyPrefix`: the first in plan order, the last
   * with `descending`; None when there is none. Sessions sharing a PostgreSQL journal
   * never claim the same op.
   */
  readonly claimNext: (options: ClaimNextOptions) => Effect.Effect<Option.Option<Op>, JournalError>
  readonly claimMany: (keys: ReadonlyArray<string>) => Effect.Effect<Array<Op>, JournalError>
  /** -> done with the result, plus id mappings and follow-up ops, in one transaction. */
  readonly complete: (
    key: string,
    result: unknown,
    mappings?: ReadonlyArray<Mapping>,
    followUps?: ReadonlyArray<NewOp>
  ) => Effect.Effect<void, JournalError | JournalStateError>
  /**
   * -> failed with the error; `outcomeUnknown` marks it uncertain (reconcile before
   * resending), `sentAt` records when its request of unknown outcome left.
   */
  readonly fail: (key: string, error: string, options?: FailOptions) => Effect.Effect<void, JournalError | JournalStateError>
  /**
   * in_flight -> pending + uncertain: sent at `sentAt` (default now), answer lost (or
   * unreadable: `applied`).
   */
  readonly markUncertain: (
    key: string,
    error: string,
    options?: MarkUncertainOptions
  ) => Effect.Effect<void, JournalError | JournalStateError>
  /** Records an adoption (see Adoption). */
  readonly recordAdoption: (adoption: Adoption) => Effect.Effect<void, JournalError>
  /** in_flight -> pending: definitely not applied. */
  readonly release: (key: string, error?: string | null) => Effect.Effect<void, JournalError | JournalStateError>
  /**
   * Records what the target held before the in-flight op `key` changes it (`Op.before`),
   * committed before returning, so before the op's request is sent; the first value
   * recorded for an op stays.
   */
  readonly recordBefore: (key: string, before: unknown) => Effect.Effect<void, JournalError | JournalStateError>
  /** Ops of any state in plan order (see ListOptions): how undo reads what the runs did. */
  readonly list: (options: ListOptions) => Effect.Effect<Array<Op>, JournalError>
  /** Clears `uncertain` on a pending op after a reconciliation found nothing. */
  readonly markResolved: (key: string) => Effect.Effect<void, JournalError>
  /**
   * in_flight (left by a dead process) -> pending + uncertain, sent at now (a request it
   * sent left before); returns how many. On PostgreSQL only the ops of sessions no longer
   * alive: a live helper keeps its claims.
   */
  readonly resetInFlight: () => Effect.Effect<number, JournalError>
  /** failed -> pending (uncertain kept), for a rerun; returns how many. */
  readonly retryFailed: (kinds?: ReadonlyArray<string>) => Effect.Effect<number, JournalError>
  readonly pending: (options: {
    readonly kinds?: ReadonlyArray<string>
    readonly limit: number
    readonly afterSeq?: number
  }) => Effect.Effect<Array<Op>, JournalError>
  /**
   * Pending ops in plan order after `afterSeq`, those waiting for a dependency included,
   * with what each waits for: replay reads a phase's ops once with it.
   */
  readonly pendingPage: (options: PendingPageOptions) => Effect.Effect<Array<PendingOp>, JournalError>
  readonly blocked: (limit?: number) => Effect.Effect<Array<Op>, JournalError>
  readonly failed: (limit?: number) => Effect.Effect<Array<Op>, JournalError>
  readonly setMapping: (mapping: Mapping) => Effect.Effect<void, JournalError>
  readonly lookup: (namespace: string, sourceKey: string) => Effect.Effect<Option.Option<string>, JournalError>
  readonly mappedTargets: (namespace: string, targetIds: ReadonlyArray<string>) => Effect.Effect<Set<string>, JournalError>
  readonly getMeta: (key: string) => Effect.Effect<Option.Option<string>, JournalError>
  readonly setMeta: (key: string, value: string) => Effect.Effect<void, JournalError>
  readonly counts: () => Effect.Effect<JournalCounts, JournalError>
}

/** How `openJournal` opens a journal. */
export interface OpenJournalOptions {
  /** The clock of `updated_at`, `attempted_at` and the like (tests). */
  readonly now?: () => string
  /**
   * A helper session: another process of a run whose main session planned into a shared
   * PostgreSQL journal, claiming and ending ops of that plan beside it. It opens only an
   * existing journal and takes no writer lock. A file has one writer: refused there.
   */
  readonly helper?: boolean
}

export class Journal extends Context.Service<Journal, JournalApi>()("worksync/Journal") {
  /**
   * The Journal service at `file` (a file, or a PostgreSQL URL `postgres://USER@HOST:PORT/DB`
   * with an optional `?schema=NAME`; created if missing), closed with the layer's scope.
   */
  static readonly layer = (
    file: string,
    options: OpenJournalOptions = {}
  ): Layer.Layer<Journal, JournalError | StoreBusy | StoreLockError> => Layer.effect(Journal, openJournal(file, options))
}

const errorText = (e: unknown): string => (e instanceof Error ? e.message : String(e))

/** Wraps a synchronous journal call; state errors stay typed, anything else is a JournalError. */
const lift = <A>(file: string, operation: string, f: () => A): Effect.Effect<A, JournalError> =>
  Effect.try({ try: f, catch: (e) => new JournalError({ file, operation, detail: errorText(e) }) })

const liftState = <A>(file: string, operation: string, f: () => A): Effect.Effect<A, JournalError | JournalStateError> =>
  Effect.try({
    try: f,
    catch: (e) => (e instanceof JournalStateError ? e : new JournalError({ file, operation, detail: errorText(e) }))
  })

/** Builds the service over an open core. */
export const makeJournalApi = (core: JournalDb): JournalApi => {
  const file = core.file
  return {
    file,
    planner: () =>
      lift(file, "beginPlanRun", () => {
        const run = core.beginPlanRun()
        // Settled within the call: a batch is stored before the next is read (SQLite's order).
        const settled = <A>(f: () => A): Promise<A> => {
          try {
            return Promise.resolve(f())
          } catch (e) {
            return Promise.reject(e)
          }
        }
        return {
          file,
          run,
          backend: "sqlite",
          planOps: (ops) => settled(() => core.planOps(run, ops)),
          end: () => settled(() => core.endPlanRun(run))
        } satisfies Planner
      }),
    transitions: batchedTransitions(core),
    addPlan: (plan) =>
      lift(file, "plan", () =>
        core.transaction(() => {
          const added = core.addOps(plan.ops)
          for (const s of plan.supersede ?? []) core.supersede(s.keys, s.by)
          for (const m of plan.mappings ?? []) core.setMapping(m)
          return added
        })),
    mappings: (ns, page) => lift(file, "mappings", () => core.mappings(ns, page)),
    adoptions: (afterId) => lift(file, "adoptions", () => core.adoptions(afterId)),
    lastAdoptionId: () => lift(file, "lastAdoptionId", () => core.lastAdoptionId()),
    addOps: (ops) => lift(file, "addOps", () => core.addOps(ops)),
    beginPlanRun: () => lift(file, "beginPlanRun", () => core.beginPlanRun()),
    endPlanRun: (run) => lift(file, "endPlanRun", () => core.endPlanRun(run)),
    planOps: (run, ops) => lift(file, "planOps", () => core.planOps(run, ops)),
    get: (key) => lift(file, "get", () => Option.fromNullishOr(core.get(key))),
    getMany: (keys) => lift(file, "getMany", () => core.getMany(keys)),
    claim: (key) => liftState(file, "claim", () => core.claim(key)),
    claimNext: (options) => lift(file, "claimNext", () => Option.fromNullishOr(core.claimNext(options))),
    claimMany: (keys) => lift(file, "claimMany", () => core.claimMany(keys)),
    complete: (key, result, mappings, followUps) =>
      liftState(file, "complete", () => core.complete(key, result, mappings, followUps)),
    fail: (key, error, options) => liftState(file, "fail", () => core.fail(key, error, options)),
    markUncertain: (key, error, options) => liftState(file, "markUncertain", () => core.markUncertain(key, error, options)),
    recordAdoption: (adoption) => lift(file, "recordAdoption", () => core.recordAdoption(adoption)),
    release: (key, error) => liftState(file, "release", () => core.release(key, error ?? null)),
    markResolved: (key) => lift(file, "markResolved", () => core.markResolved(key)),
    recordBefore: (key, before) => liftState(file, "recordBefore", () => core.recordBefore(key, before)),
    list: (options) => lift(file, "list", () => core.list(options)),
    resetInFlight: () => lift(file, "resetInFlight", () => core.resetInFlight()),
    retryFailed: (kinds) => lift(file, "retryFailed", () => core.retryFailed(kinds)),
    pending: (options) => lift(file, "pending", () => core.pending(options)),
    pendingPage: (options) => lift(file, "pendingPage", () => core.pendingPage(options)),
    blocked: (limit) => lift(file, "blocked", () => core.blocked(limit)),
    failed: (limit) => lift(file, "failed", () => core.failed(limit)),
    setMapping: (mapping) => lift(file, "setMapping", () => core.setMapping(mapping)),
    lookup: (ns, key) => lift(file, "lookup", () => Option.fromNullishOr(core.lookup(ns, key))),
    mappedTargets: (ns, ids) => lift(file, "mappedTargets", () => core.mappedTargets(ns, ids)),
    getMeta: (key) => lift(file, "getMeta", () => Option.fromNullishOr(core.getMeta(key))),
    setMeta: (key, value) => lift(file, "setMeta", () => core.setMeta(key, value)),
    counts: () => lift(file, "counts", () => core.counts())
  }
}

/**
 * Opens the journal for the scope: lock, open, and on close, close the database and
 * unlock. A PostgreSQL URL opens the PostgreSQL backend, whose lock is the server's
 * (an advisory lock per schema); anything else is a SQLite file with the file lock.
 */
export const openJournal = (
  file: string,
  options: OpenJournalOptions = {}
): Effect.Effect<JournalApi, JournalError | StoreBusy | StoreLockError, Scope.Scope> =>
  isPostgresUrl(file) ? Effect.flatMap(journalOnPostgres, (pg) => pg.openPostgresJournal(file, options)) : Effect.gen(function*() {
    if (options.helper === true) {
      return yield* new JournalError({
        file,
        operation: "open",
        detail: "a helper session cannot open a file: a journal shared by several processes must be on PostgreSQL"
      })
    }
    yield* lockStore("journal", file)
    const core = yield* Effect.acquireRelease(
      lift(file, "open", () => new JournalDb(file, options)),
      (c) => Effect.sync(() => c.close())
    )
    return makeJournalApi(core)
  })

/** One-line descriptions for the CLI. */
export const describeJournalError = (e: unknown): string | undefined =>
  e instanceof JournalError || e instanceof StoreBusy || e instanceof StoreLockError || e instanceof JournalStateError
    ? e.message
    : undefined
