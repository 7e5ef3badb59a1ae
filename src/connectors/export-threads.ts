/**
 * An export on threads: the threads read ranges of the run's members from the SQLite
 * snapshot file (each on a read-only connection of its own, store/snapshot-export.ts) and
 * make their lines, while the calling thread writes the answers in the order of the
 * ranges. On two cores, reading and JSON.parse, most of an export's CPU, run side by side.
 * Every thread reads in one read transaction, begun with the others' (`begin`, see
 * snapshot-export.ts `holdWrites`), so all read one state of the file.
 *
 * Few ranges are asked for at once (DEPTH per thread), each of a batch of members at most,
 * so what waits to be written stays a few megabytes whatever the size of the run; each
 * range goes to the thread with the fewest waiting. Only bytes cross back, transferred, not copied; once
 * written, their memory goes back to the thread that made them, to be written into again:
 * buffers left to the writing thread's collector, which seldom runs as it makes little
 * garbage of its own, held some 60 MB.
 *
 * The threads' code is `export.worker.cjs` next to this module in a build, or its source
 * through tsx (store/worker-entry.ts); without it, or without a thread to be had,
 * `openExportThreads` returns undefined and the caller exports on its own thread.
 */
import { Worker } from "node:worker_threads"
import type { IdRange, RangeEntity } from "../store/snapshot-export.ts"
import { workerEntry } from "../store/worker-entry.ts"
import type { ExportFormat } from "./export-columns.ts"

export interface ThreadStart {
  readonly file: string
  readonly runId: number
  readonly format: ExportFormat
  readonly guard: boolean
}

/**
 * A range to read and format, or the request to close the connection (each answered);
 * or the memory of an answer written, handed back for the next ones (not answered).
 */
export type ToThread =
  | { readonly entity: RangeEntity; readonly range: IdRange }
  | { readonly ready: true }
  | { readonly begin: true }
  | { readonly close: true }
  | { readonly spare: ArrayBuffer }

/** One answer per request, in order: a range's lines as UTF-8 bytes, what failed, or done (ready, begun, closed). */
export type FromThread =
  | { readonly rows: number; readonly bytes: Uint8Array }
  | { readonly failed: "read" | "format"; readonly detail: string }
  | { readonly done: true }

/**
 * Why an export on threads failed: reading the snapshot (`read`), making the lines
 * (`format`), writing them (`write`), or a thread that stopped (`thread`).
 */
export class ThreadFailure extends Error {
  constructor(readonly stage: "read" | "format" | "write" | "thread", message: string) {
    super(message)
  }
}

export interface ExportThreads {
  /** Resolves once every thread has started and opened the file. */
  readonly ready: () => Promise<void>
  /** Begins every thread's read transaction (snapshot-export.ts `begin`). */
  readonly begin: () => Promise<void>
  /**
   * Reads and formats `ranges` of the entity on the threads, calling `sink` with each
   * range's bytes and rows in the order of the ranges. Rejects with a ThreadFailure; stops
   * asking for ranges once `signal` is aborted.
   */
  readonly write: (
    entity: RangeEntity,
    ranges: Iterator<IdRange, void>,
    sink: (bytes: Uint8Array, rows: number) => void,
    signal: AbortSignal
  ) => Promise<void>
  /** Closes the threads' connections once every range asked for is answered (never fails). */
  readonly close: () => Promise<void>
}

/** Ranges asked for per thread at once: one in the work, one queued behind it. */
const DEPTH = 2

/**
 * Each thread's heap is kept small: its garbage (the rows of a range, their objects and
 * lines) dies young, and a young generation of 16 MB is collected before it grows (left to
 * itself it grew the process's peak by some 100 MB). The old generation's bound is far
 * above what a range needs, there only so that a runaway thread fails its export instead
 * of the machine.
 */
const RESOURCE_LIMITS = { maxYoungGenerationSizeMb: 16, maxOldGenerationSizeMb: 256 }

interface Thread {
  readonly worker: Worker
  /** Requests sent and not yet answered, oldest first. */
  readonly waiting: Array<{ resolve: (m: FromThread) => void; reject: (e: Error) => void }>
  gone: Error | undefined
}

const startThread = (source: string, evaluate: boolean, start: ThreadStart): Thread => {
  const worker = new Worker(source, { eval: evaluate, workerData: start, resourceLimits: RESOURCE_LIMITS })
  const thread: Thread = { worker, waiting: [], gone: undefined }
  const goneWith = (e: Error) => {
    thread.gone ??= new ThreadFailure("thread", `the export thread stopped: ${e.message}`)
    for (const w of thread.waiting.splice(0)) w.reject(thread.gone)
  }
  worker.on("message", (m: FromThread) => thread.waiting.shift()?.resolve(m))
  worker.on("error", goneWith)
  worker.on("exit", (code) => goneWith(new Error(`exit code ${code}`)))
  return thread
}

const request = (thread: Thread, m: ToThread): Promise<FromThread> =>
  thread.gone !== undefined
    ? Promise.reject(thread.gone)
    : new Promise((resolve, reject) => {
        thread.waiting.push({ resolve, reject })
        thread.worker.postMessage(m)
      })

/** Starts `count` export threads over the snapshot file, or returns undefined when none can be. */
export const openExportThreads = (start: ThreadStart, count: number): ExportThreads | undefined => {
  const entry = workerEntry(import.meta.url, "export.worker")
  if (entry === undefined) return undefined
  const threads: Array<Thread> = []
  try {
    for (let i = 0; i < count; i++) threads.push(startThread(entry.source, entry.eval, start))
  } catch {
    // No thread to be had (resource limits): the export stays on the caller's thread.
    for (const t of threads) void t.worker.terminate()
    return undefined
  }
  const leastBusy = () => threads.reduce((a, b) => (b.waiting.length < a.waiting.length ? b : a))
  const all = async (m: ToThread) => {
    for (const answer of await Promise.all(threads.map((t) => request(t, m)))) {
      if ("failed" in answer) throw new ThreadFailure(answer.failed, answer.detail)
    }
  }
  return {
    ready: () => all({ ready: true }),
    begin: () => all({ begin: true }),
    write: async (entity, ranges, sink, signal) => {
      const window = threads.length * DEPTH
      const asked: Array<{ readonly thread: Thread; readonly range: IdRange; readonly answer: Promise<FromThread> }> = []
      let more = true
      for (;;) {
        while (more && asked.length < window) {
          let next: IteratorResult<IdRange, void>
          try {
            next = ranges.next()
          } catch (e) {
            throw new ThreadFailure("read", e instanceof Error ? e.message : String(e))
          }
          if (next.done === true) {
            more = false
            break
          }
          const thread = leastBusy()
          const answer = request(thread, { entity, range: next.value })
          // Answers left unread when the export stops early must not be unhandled rejections.
          answer.catch(() => undefined)
          asked.push({ thread, range: next.value, answer })
        }
        const first = asked.shift()
        if (first === undefined) return
        const { thread, range } = first
        const answer = await first.answer
        if (signal.aborted) throw new ThreadFailure("thread", "interrupted")
        if ("failed" in answer) throw new ThreadFailure(answer.failed, answer.detail)
        if (!("rows" in answer)) throw new ThreadFailure("thread", "the export thread answered out of turn")
        const expected = range.rows
        if (answer.rows !== expected) {
          throw new ThreadFailure("read", `the run changed while it was exported (${answer.rows} rows read where ${expected} were counted)`)
        }
        try {
          sink(answer.bytes, answer.rows)
        } catch (e) {
          throw new ThreadFailure("write", e instanceof Error ? e.message : String(e))
        }
        const spare = answer.bytes.buffer as ArrayBuffer
        if (thread.gone === undefined) thread.worker.postMessage({ spare } satisfies ToThread, [spare])
      }
    },
    close: async () => {
      // Asked, not terminated: a thread ends only once the ranges it was asked for are
      // answered (ending it inside a SQLite call can abort the whole process).
      await Promise.all(threads.map(async (t) => {
        if (t.gone === undefined) await request(t, { close: true }).catch(() => undefined)
        await t.worker.terminate()
      }))
    }
  }
}
