/**
 * Group commit for the journal's per-op transitions. Every commit of SQLite's own with
 * synchronous=FULL is an fsync run on the event loop (better-sqlite3 is synchronous): one
 * per claim and per completion capped replay at a few hundred ops per second and stalled
 * every response in flight meanwhile. Here transitions asked for in the same turn of the
 * event loop are committed together in one transaction, without SQLite's fsync
 * (synchronous=NORMAL for that commit), and the write-ahead log is then fsynced off the
 * event loop (libuv's threads) while the next transitions commit: those wait for the
 * fsync after it, so one fsync covers every commit made while the one before ran.
 *
 * Why this keeps replay exactly once (docs/journal.md):
 * - A caller resumes only once its transition is durable, except `complete`: a claim,
 *   the `before` of an update, a mapping or adoption written before the op's next
 *   request, an op made uncertain with its send's date, a failure: each is on disk before
 *   anything that depends on it is sent. The log is written in commit order and an fsync
 *   covers every frame written before it, so a durable transition has every earlier
 *   commit durable with it (a checkpoint with NORMAL fsyncs the log before copying it and
 *   the database after, so a frame copied out of the log is durable too).
 * - A completion is not waited for: the op's worker claims its next op at once. What a
 *   process crash (SIGKILL) leaves is unaffected: a commit is in the log file when the
 *   transaction returns, and the kernel keeps it. A power cut may lose the completions
 *   committed since the last fsync (never the log's consistency): their ops are then
 *   in flight as their durable claim left them, so the next run makes them uncertain and
 *   reconciles them, finding what their request made, exactly as after a crash with their
 *   request in flight. Nothing that depends on a completion is sent without an fsync
 *   after it: an op waiting on it is claimed (and fsynced) before its request leaves.
 * - `sync` waits until everything committed is durable: replay calls it before it
 *   reports its outcome.
 * The first fsync also fsyncs the log's directory (as SQLite does after creating a log),
 * so a log made since the journal was opened is found after a power cut. A journal not
 * in WAL mode commits every batch with FULL.
 */
import * as Effect from "effect/Effect"
import * as fs from "node:fs"
import { dirname } from "node:path"
import type { JournalDb } from "./db.ts"
import { JournalError, JournalStateError } from "./errors.ts"
import type { Adoption, FailOptions, Mapping, MarkUncertainOptions, NewOp, Op } from "./types.ts"

type Outcome<A> = { readonly ok: true; readonly value: A } | { readonly ok: false; readonly error: JournalError | JournalStateError }

interface Pending {
  readonly run: () => unknown
  readonly resume: (o: Outcome<unknown>) => void
  /** Resumed only once the commit is durable (see the module's comment). */
  readonly durable: boolean
}

export interface BatchedTransitions {
  readonly claim: (key: string) => Effect.Effect<Op, JournalError | JournalStateError>
  /** Resumes once committed; durable with the next fsync (see batch.ts). */
  readonly complete: (
    key: string,
    result: unknown,
    mappings?: ReadonlyArray<Mapping>,
    followUps?: ReadonlyArray<NewOp>
  ) => Effect.Effect<void, JournalError | JournalStateError>
  readonly fail: (key: string, error: string, options?: FailOptions) => Effect.Effect<void, JournalError | JournalStateError>
  readonly markUncertain: (key: string, error: string, options?: MarkUncertainOptions) => Effect.Effect<void, JournalError | JournalStateError>
  readonly markResolved: (key: string) => Effect.Effect<void, JournalError | JournalStateError>
  readonly release: (key: string, error?: string | null) => Effect.Effect<void, JournalError | JournalStateError>
  /** An id mapping written on its own, before the op ends (a create that sets `done`). */
  readonly setMapping: (mapping: Mapping) => Effect.Effect<void, JournalError>
  /** An adoption, committed with the op's other transitions. */
  readonly recordAdoption: (adoption: Adoption) => Effect.Effect<void, JournalError>
  /** What the target held before the in-flight op changes it, committed before its request is sent. */
  readonly recordBefore: (key: string, before: unknown) => Effect.Effect<void, JournalError | JournalStateError>
  /** Waits until every transition committed so far is durable. */
  readonly sync: () => Effect.Effect<void, JournalError>
}

export const batchedTransitions = (core: JournalDb): BatchedTransitions => {
  let queue: Array<Pending> = []
  let scheduled = false
  const deferSync = core.hasLog()
  /** The log's directory has been fsynced once. */
  let dirSynced = false
  /** Committed since the running fsync began (or since the last one ended). */
  let dirty = false
  let syncing = false
  /** Waiting for an fsync that begins after their commit. */
  let waiting: Array<(error: JournalError | null) => void> = []

  const failure = (operation: string, e: unknown) =>
    new JournalError({ file: core.file, operation, detail: e instanceof Error ? e.message : String(e) })

  const fsyncLog = (done: (e: unknown) => void) => {
    let fd: number
    try {
      fd = core.logDescriptor()
    } catch (e) {
      return done(e)
    }
    fs.fsync(fd, (e) => {
      if (e !== null || dirSynced) return done(e)
      // Systems where a directory cannot be opened or fsynced make its entries durable
      // otherwise: an error here is not one of the journal's.
      fs.open(dirname(core.file), "r", (e2, dir) => {
        const end = () => {
          dirSynced = true
          done(null)
        }
        if (e2 !== null) return end()
        fs.fsync(dir, () => fs.close(dir, end))
      })
    })
  }

  const startSync = () => {
    if (syncing || waiting.length === 0) return
    syncing = true
    dirty = false
    const batch = waiting
    waiting = []
    fsyncLog((e) => {
      syncing = false
      const error = e === null || e === undefined ? null : failure("fsync", e)
      for (const w of batch) w(error)
      startSync()
    })
  }

  /** Runs `then` once an fsync begun after now has ended. */
  const afterSync = (then: (error: JournalError | null) => void) => {
    waiting.push(then)
    startSync()
  }

  const flush = () => {
    scheduled = false
    const batch = queue
    queue = []
    const outcomes: Array<Outcome<unknown>> = []
    const runAll = () => {
      for (const p of batch) {
        try {
          outcomes.push({ ok: true, value: p.run() })
        } catch (e) {
          // A state error concerns one op only; anything else aborts the whole batch.
          if (e instanceof JournalStateError) outcomes.push({ ok: false, error: e })
          else throw e
        }
      }
    }
    try {
      // A claim is only durable once planning's fsync-free commits are over.
      core.ensureDurable()
      if (deferSync) core.transactionUnsynced(runAll)
      else core.transaction(runAll)
    } catch (e) {
      const error = failure("commit", e)
      for (const p of batch) p.resume({ ok: false, error })
      return
    }
    if (!deferSync) {
      batch.forEach((p, i) => p.resume(outcomes[i]!))
      return
    }
    dirty = true
    batch.forEach((p, i) => {
      const o = outcomes[i]!
      if (!p.durable || !o.ok) return p.resume(o)
      afterSync((error) => p.resume(error === null ? o : { ok: false, error }))
    })
  }

  const enqueue = <A>(run: () => A, durable = true): Effect.Effect<A, JournalError | JournalStateError> =>
    Effect.callback<A, JournalError | JournalStateError>((resume) => {
      queue.push({
        run,
        durable,
        resume: (o) => resume(o.ok ? Effect.succeed(o.value as A) : Effect.fail(o.error))
      })
      if (!scheduled) {
        scheduled = true
        setImmediate(flush)
      }
    })

  return {
    claim: (key) => enqueue(() => core.claim(key)),
    complete: (key, result, mappings, followUps) => enqueue(() => core.complete(key, result, mappings, followUps), false),
    fail: (key, error, options) => enqueue(() => core.fail(key, error, options)),
    markUncertain: (key, error, options) => enqueue(() => core.markUncertain(key, error, options)),
    markResolved: (key) => enqueue(() => core.markResolved(key)),
    release: (key, error) => enqueue(() => core.release(key, error ?? null)),
    // Writing a mapping checks no op state, so a JournalStateError cannot come of it.
    setMapping: (mapping) => enqueue(() => core.setMapping(mapping)) as Effect.Effect<void, JournalError>,
    recordAdoption: (adoption) => enqueue(() => core.recordAdoption(adoption)) as Effect.Effect<void, JournalError>,
    recordBefore: (key, before) => enqueue(() => core.recordBefore(key, before)),
    sync: () =>
      Effect.callback<void, JournalError>((resume) => {
        if (!deferSync) {
          // Every commit is SQLite's own FULL one: once the queued ones are in, all are durable.
          if (queue.length === 0) return resume(Effect.void)
          return void setImmediate(() => resume(Effect.void))
        }
        // Nothing committed without an fsync since the last one ended.
        if (!dirty && !syncing && queue.length === 0) return resume(Effect.void)
        const wait = () => afterSync((error) => resume(error === null ? Effect.void : Effect.fail(error)))
        // Transitions still queued commit first (in this turn's flush).
        if (queue.length > 0) setImmediate(wait)
        else wait()
      })
  }
}
