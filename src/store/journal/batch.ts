/**
 * Group commit for the journal's per-op transitions. With synchronous=FULL every commit
 * is an fsync, and better-sqlite3 runs it on the event loop: one fsync per claim and per
 * completion would cap replay at a few hundred ops per second and stall every request in
 * flight meanwhile. Here transitions asked for in the same turn of the event loop are
 * committed together in one transaction, and each caller resumes only after that commit,
 * so a claim is still durable before its request is sent.
 */
import * as Effect from "effect/Effect"
import type { JournalDb } from "./db.ts"
import { JournalError, JournalStateError } from "./errors.ts"
import type { Adoption, FailOptions, Mapping, MarkUncertainOptions, NewOp, Op } from "./types.ts"

type Outcome<A> = { readonly ok: true; readonly value: A } | { readonly ok: false; readonly error: JournalError | JournalStateError }

interface Pending {
  readonly run: () => unknown
  readonly resume: (o: Outcome<unknown>) => void
  readonly action: string
}

export interface BatchedTransitions {
  readonly claim: (key: string) => Effect.Effect<Op, JournalError | JournalStateError>
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
}

export const batchedTransitions = (core: JournalDb): BatchedTransitions => {
  let queue: Array<Pending> = []
  let scheduled = false

  const flush = () => {
    scheduled = false
    const batch = queue
    queue = []
    const outcomes: Array<Outcome<unknown>> = []
    try {
      // A claim is only durable once planning's fsync-free commits are over.
      core.ensureDurable()
      core.transaction(() => {
        for (const p of batch) {
          try {
            outcomes.push({ ok: true, value: p.run() })
          } catch (e) {
            // A state error concerns one op only; anything else aborts the whole batch.
            if (e instanceof JournalStateError) outcomes.push({ ok: false, error: e })
            else throw e
          }
        }
      })
    } catch (e) {
      const error = new JournalError({ file: core.file, operation: "commit", detail: e instanceof Error ? e.message : String(e) })
      for (const p of batch) p.resume({ ok: false, error })
      return
    }
    batch.forEach((p, i) => p.resume(outcomes[i]!))
  }

  const enqueue = <A>(action: string, run: () => A): Effect.Effect<A, JournalError | JournalStateError> =>
    Effect.callback<A, JournalError | JournalStateError>((resume) => {
      queue.push({
        action,
        run,
        resume: (o) => resume(o.ok ? Effect.succeed(o.value as A) : Effect.fail(o.error))
      })
      if (!scheduled) {
        scheduled = true
        setImmediate(flush)
      }
    })

  return {
    claim: (key) => enqueue("claim", () => core.claim(key)),
    complete: (key, result, mappings, followUps) => enqueue("complete", () => core.complete(key, result, mappings, followUps)),
    fail: (key, error, options) => enqueue("fail", () => core.fail(key, error, options)),
    markUncertain: (key, error, options) => enqueue("markUncertain", () => core.markUncertain(key, error, options)),
    markResolved: (key) => enqueue("markResolved", () => core.markResolved(key)),
    release: (key, error) => enqueue("release", () => core.release(key, error ?? null)),
    // Writing a mapping checks no op state, so a JournalStateError cannot come of it.
    setMapping: (mapping) => enqueue("setMapping", () => core.setMapping(mapping)) as Effect.Effect<void, JournalError>,
    recordAdoption: (adoption) =>
      enqueue("recordAdoption", () => core.recordAdoption(adoption)) as Effect.Effect<void, JournalError>,
    recordBefore: (key, before) => enqueue("recordBefore", () => core.recordBefore(key, before))
  }
}
