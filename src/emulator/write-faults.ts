/**
 * Faults of a write whose answer does not tell what the service did:
 *
 * - "garble": the write commits and its 2xx answer arrives unreadable (a truncated JSON
 *   body). A client must take the 2xx as "applied, details unknown".
 * - "late-commit": the write is answered 504 at once and commits later: when the test
 *   calls `LateCommits.releaseAll()`, or when the `releaseOn.count`-th request of
 *   `releaseOn.route` arrives (that request is handled only after the commit). Tests so
 *   place the commit after a given number of the client's looks, with no wall-clock
 *   window.
 * - "not-applied": the write is answered as usual (2xx) and nothing of it stays
 *   (`discarded`).
 */
import type Database from "better-sqlite3"
import type * as http from "node:http"
import type { EventBus } from "./context.ts"
import { HttpError, readBody, sendError } from "./http.ts"
import type { EmulatorVariant } from "./options.ts"

/** When a held write commits on its own: on the `count`-th later request of `route`. */
export interface ReleaseOn {
  readonly route: string | RegExp
  readonly count: number
}

interface Held {
  readonly releaseOn: ReleaseOn | undefined
  seen: number
  /** Lets the held write run; resolves once it committed (or failed). */
  readonly release: () => Promise<void>
}

/** A write held back by "late-commit": `gate` opens when it may commit, `committed` is called after. */
export interface HeldWrite {
  readonly gate: Promise<void>
  readonly committed: () => void
}

export class LateCommits {
  private held: Array<Held> = []

  get size(): number {
    return this.held.length
  }

  hold(releaseOn: ReleaseOn | undefined): HeldWrite {
    let open!: () => void
    let committed!: () => void
    const gate = new Promise<void>((resolve) => (open = resolve))
    const done = new Promise<void>((resolve) => (committed = resolve))
    this.held.push({
      releaseOn,
      seen: 0,
      release: () => {
        open()
        return done
      }
    })
    return { gate, committed }
  }

  /** Commits every held write; resolves once all did. */
  releaseAll(): Promise<void> {
    const all = this.held
    this.held = []
    return Promise.all(all.map((h) => h.release())).then(() => undefined)
  }

  /** Counts a request; the writes it releases have committed when the promise resolves. */
  onRequest(route: string): Promise<void> | undefined {
    if (this.held.length === 0) return undefined
    const due: Array<Held> = []
    this.held = this.held.filter((h) => {
      const r = h.releaseOn
      if (r === undefined || !(typeof r.route === "string" ? r.route === route : r.route.test(route))) return true
      h.seen++
      if (h.seen < r.count) return true
      due.push(h)
      return false
    })
    return due.length === 0 ? undefined : Promise.all(due.map((h) => h.release())).then(() => undefined)
  }
}

/** Replaces a committed 2xx answer by an unreadable body with the same status. */
export const garbleAnswer = (res: http.ServerResponse): void => {
  const writeHead = res.writeHead.bind(res) as (status: number, headers?: http.OutgoingHttpHeaders) => http.ServerResponse
  const end = res.end.bind(res) as (chunk?: unknown) => http.ServerResponse
  const r = res as unknown as Record<string, unknown>
  let status = 200
  let headers: http.OutgoingHttpHeaders = {}
  r["writeHead"] = (s: number, h?: http.OutgoingHttpHeaders) => {
    status = s
    headers = h ?? {}
    return res
  }
  r["write"] = () => true
  r["end"] = (chunk?: unknown) => {
    if (status < 200 || status >= 300) {
      // An error answer passes as it is: only an applied write is garbled.
      writeHead(status, headers)
      return end(chunk)
    }
    const body = "{\"id\": \"" // cut short: no JSON reader can take it
    writeHead(status, { "content-type": "application/json; charset=utf-8", "content-length": Buffer.byteLength(body) })
    return end(body)
  }
}

/**
 * Answers 504 now, then lets the request's handler run (and commit) once `held.gate`
 * opens; whatever the handler answers then is dropped. The body is read first, because
 * Node discards an unread body once the answer ends, and given to the handler again.
 */
export const answerThenCommitLate = async (
  req: http.IncomingMessage,
  res: http.ServerResponse,
  variant: EmulatorVariant,
  held: HeldWrite
): Promise<void> => {
  const body = await readBody(req)
  sendError(res, new HttpError(504, "GATEWAY_TIMEOUT", "The service did not answer in time (injected)"), variant)
  const r = res as unknown as Record<string, unknown>
  r["writeHead"] = () => res
  r["setHeader"] = () => res
  r["write"] = () => true
  r["end"] = () => {
    held.committed()
    return res
  }
  r["destroy"] = () => {
    held.committed()
    return res
  }
  // The handler reads the body through "data" and "end" listeners: hand it the bytes again.
  const q = req as unknown as Record<string, unknown>
  const on = req.on.bind(req)
  q["on"] = (event: string, listener: (...args: Array<unknown>) => void) => {
    if (event === "data") queueMicrotask(() => listener(body))
    else if (event === "end") queueMicrotask(() => listener())
    else on(event, listener)
    return req
  }
  await held.gate
}

/**
 * "not-applied": runs a write's handler and gives back its answer, then undoes everything
 * it wrote (a savepoint rolled back) and sends none of its webhook events: the service
 * said yes and kept nothing. The handler is synchronous (REST operations), so nothing
 * else runs in between; a handler that throws is undone as well and its error passes.
 */
export const discarded = <A>(db: Database.Database, events: EventBus, handle: () => A): A => {
  db.exec("SAVEPOINT not_applied")
  const bus = events as { emit: EventBus["emit"] }
  const emit = bus.emit
  bus.emit = () => undefined
  try {
    return handle()
  } finally {
    bus.emit = emit
    db.exec("ROLLBACK TO not_applied")
    db.exec("RELEASE not_applied")
  }
}
