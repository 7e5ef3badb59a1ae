/**
 * Planning on a second thread: the journal's inserts run on a worker thread while the
 * calling thread reads, validates and builds the next batches. On two cores this takes
 * the journal's share (about a third of planning a large CSV) off the critical path.
 *
 * The worker opens its own connection to the journal file and joins the plan run the
 * caller began (`JournalDb.joinPlanRun`); it applies `planOps` to each batch in the order
 * sent, so the journal ends up exactly as one thread would leave it. The caller ends the
 * run (`endPlanRun`) after `close()`, once the worker's connection is closed.
 *
 * Only strings and bytes cross between the threads (structured cloning of a million op
 * objects would cost more than the inserts): ops go as parallel arrays with payloads
 * already JSON, answers as one byte per op plus the few keys that changed.
 *
 * The worker's code is `plan-writer.worker.cjs` next to this module in a build, or the
 * TypeScript source (loaded through tsx) when running from the sources. When neither is
 * there (worksync bundled into someone else's build), or no thread can be started,
 * `openPlanWriter` returns undefined and the caller plans on its own thread.
 */
import { Worker } from "node:worker_threads"
// Not the ./journal.ts barrel: the planning thread loads this module, and the barrel
// brings the PostgreSQL journal (effect/sql, @effect/sql-pg) into its start.
import { JsonText } from "./journal/schema.ts"
import type { OpState, PlannedOp, PlanOp } from "./journal/types.ts"
import { workerEntry } from "./worker-entry.ts"

/** A batch of ops as it crosses to the worker. */
export interface OpsMessage {
  readonly keys: Array<string>
  readonly kinds: Array<string>
  readonly payloads: Array<string>
  /** Null when no op of the batch depends on another. */
  readonly dependsOn: Array<string | null> | null
  /** 1 where the op asks for an occurrence key. */
  readonly occurrence: Uint8Array
}

/** A batch's outcome as it crosses back: `codes[i]` per op, and keys that differ from the op's. */
export interface PlannedMessage {
  readonly codes: Uint8Array
  readonly renamed: Array<[number, string]>
}

const STATES: ReadonlyArray<OpState> = ["pending", "in_flight", "done", "failed"]
const IS_NEW = 1
const DUPLICATE = 2

export const encodeOps = (ops: ReadonlyArray<PlanOp>): OpsMessage => {
  const n = ops.length
  const keys = new Array<string>(n)
  const kinds = new Array<string>(n)
  const payloads = new Array<string>(n)
  const occurrence = new Uint8Array(n)
  let dependsOn: Array<string | null> | null = null
  for (let i = 0; i < n; i++) {
    const op = ops[i]!
    keys[i] = op.key
    kinds[i] = op.kind
    payloads[i] = JSON.stringify(op.payload === undefined ? null : op.payload)
    if (op.occurrence === true) occurrence[i] = 1
    if (op.dependsOn != null) (dependsOn ??= new Array<string | null>(n).fill(null))[i] = op.dependsOn
  }
  return { keys, kinds, payloads, dependsOn, occurrence }
}

export const decodeOps = (m: OpsMessage): Array<PlanOp> =>
  m.keys.map((key, i) => ({
    key,
    kind: m.kinds[i]!,
    payload: new JsonText(m.payloads[i]!),
    dependsOn: m.dependsOn?.[i] ?? null,
    occurrence: m.occurrence[i] === 1
  }))

export const encodePlanned = (keys: ReadonlyArray<string>, planned: ReadonlyArray<PlannedOp>): PlannedMessage => {
  const codes = new Uint8Array(planned.length)
  const renamed: Array<[number, string]> = []
  planned.forEach((p, i) => {
    codes[i] = (p.isNew ? IS_NEW : 0) | (p.duplicate ? DUPLICATE : 0) | (STATES.indexOf(p.state) << 2)
    if (p.key !== keys[i]) renamed.push([i, p.key])
  })
  return { codes, renamed }
}

export const decodePlanned = (keys: ReadonlyArray<string>, m: PlannedMessage): Array<PlannedOp> => {
  const out = new Array<PlannedOp>(m.codes.length)
  for (let i = 0; i < m.codes.length; i++) {
    const c = m.codes[i]!
    out[i] = { key: keys[i]!, isNew: (c & IS_NEW) !== 0, duplicate: (c & DUPLICATE) !== 0, state: STATES[c >> 2]! }
  }
  for (const [i, key] of m.renamed) out[i] = { ...out[i]!, key }
  return out
}

/** What the caller sends: a batch to plan, or the request to close the connection. */
export type ToWorker = { readonly ops: OpsMessage } | { readonly close: true }
/** What the worker answers, one message per request, in order. */
export type FromWorker = { readonly planned: PlannedMessage } | { readonly closed: true } | { readonly error: string }

export interface WorkerStart {
  readonly file: string
  readonly run: number
}

export interface PlanWriter {
  /** Plans `ops` in the run (in the order of calls), resolving with what `planOps` returns. */
  readonly plan: (ops: ReadonlyArray<PlanOp>) => Promise<Array<PlannedOp>>
  /** Closes the worker's connection after every batch sent (never fails); then the run may be ended. */
  readonly close: () => Promise<void>
}

/**
 * Starts the planning thread on `file` for plan run `run` (begun by the caller), or returns
 * undefined when the worker's code is not available here.
 */
export const openPlanWriter = (file: string, run: number): PlanWriter | undefined => {
  const entry = workerEntry(import.meta.url, "plan-writer.worker")
  if (entry === undefined) return undefined
  let worker: Worker
  try {
    worker = new Worker(entry.source, { eval: entry.eval, workerData: { file, run } satisfies WorkerStart })
  } catch {
    // No thread to be had (resource limits): planning stays on the caller's thread.
    return undefined
  }
  // Answers come in the order of requests: one waiter per request, oldest first.
  const waiting: Array<{ resolve: (m: FromWorker) => void; reject: (e: Error) => void }> = []
  // The thread is gone (no answer will come), or refused a batch (so it refuses the rest).
  let gone: Error | undefined
  let refused: Error | undefined
  const goneWith = (e: Error) => {
    gone ??= e
    for (const w of waiting.splice(0)) w.reject(gone)
  }
  worker.on("message", (m: FromWorker) => {
    const w = waiting.shift()
    if (!("error" in m)) return w?.resolve(m)
    const e = new Error(m.error)
    refused ??= e
    w?.reject(e)
  })
  worker.on("error", goneWith)
  worker.on("exit", (code) => goneWith(new Error(`the planning thread stopped (exit code ${code})`)))
  const request = (m: ToWorker): Promise<FromWorker> =>
    gone !== undefined
      ? Promise.reject(gone)
      : new Promise((resolve, reject) => {
          waiting.push({ resolve, reject })
          worker.postMessage(m)
        })
  return {
    plan: async (ops) => {
      if (refused !== undefined) throw refused
      if (ops.length === 0) return []
      const m = encodeOps(ops)
      const answer = await request({ ops: m })
      return decodePlanned(m.keys, (answer as { planned: PlannedMessage }).planned)
    },
    close: async () => {
      // Asked, not terminated: the thread ends only once every batch sent is answered
      // (ending it inside a SQLite call can abort the whole process) and its connection
      // is closed. A thread already gone has nothing left to close.
      if (gone === undefined) await request({ close: true }).catch(() => undefined)
      await worker.terminate()
    }
  }
}
