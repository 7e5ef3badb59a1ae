/**
 * Fault injection, all off by default: a per-token rate limit (token bucket), a share of
 * requests throttled whatever the rate, latency,
 * random 500s, dropped connections, ambiguous writes (committed, answer lost), writes
 * answered 2xx and not applied (scripted "not-applied"), churn under list-records and
 * list-files (after every page, or the first `pages` pages),
 * answers whose body stalls after the headers (stall-body.ts), files deleted as a client
 * downloads them (file-deletes.ts), requests held unanswered until released (a service
 * that stops answering), and scripted one-shot faults for deterministic tests.
 */
import type { EmulatorContext } from "./context.ts"
import { Prng } from "./ids.ts"
import type { ChurnOptions, FaultOptions } from "./options.ts"
import { FileDeletes } from "./file-deletes.ts"
import { type HeldWrite, LateCommits, type ReleaseOn } from "./write-faults.ts"

/**
 * "401": the request is refused as unauthenticated although the token is good (a token
 * being rotated, a proxy in between), before anything is done.
 * "hold": the request gets no answer until `heldRequests.releaseAll()` (or `reset()`),
 * then is served as usual: a service that stops answering, for as long as a test needs,
 * with no clock involved. `heldRequests.size` says how many wait.
 * "not-applied": a REST write is answered as the service answers it (2xx, its usual body)
 * and nothing of it stays, no webhook event either (write-faults.ts, `discarded`): a
 * service that acknowledges a write it then loses or ignores, which only a read-back
 * tells. REST operations only; other requests pass through untouched.
 */
export type FaultKind =
  | "429"
  | "500"
  | "401"
  | "drop"
  | "ambiguous"
  | "latency"
  | "stall-body"
  | "garble"
  | "late-commit"
  | "hold"
  | "not-applied"

/** A scripted fault: the next `times` (default 1) requests on `route` get `kind`. */
export interface FaultInjection {
  /**
   * RPC operation name for REST (a resource-style call maps to its operation), the request
   * path for raw routes (`/graphql`, `/uploads/...`, `/rest/uploads/...`) and for the
   * storage server (its own path).
   */
  readonly route: string | RegExp
  readonly kind: FaultKind
  readonly times?: number
  /** Retry-After on a scripted 429: seconds (number) or the raw header value (string). */
  readonly retryAfter?: number | string
  /** Delay of a scripted "latency" fault. */
  readonly latencyMs?: number
  /** "late-commit": commit on the `count`-th later request of `route` (else on `lateCommits.releaseAll()`). */
  readonly releaseOn?: ReleaseOn
}

export interface FaultDecision {
  readonly latencyMs: number
  readonly action: "none" | "429" | "500" | "401" | "drop" | "ambiguous" | "stall-body" | "garble" | "late-commit" | "hold" | "not-applied"
  readonly retryAfter?: string
  /** "hold": opens when the request may be served. */
  readonly gate?: Promise<void>
  /** "late-commit": the held write (see write-faults.ts). */
  readonly held?: HeldWrite
  /** Writes this request releases ("late-commit"); the request waits until they committed. */
  readonly before?: Promise<void>
}

interface Bucket {
  tokens: number
  last: number
}

interface Scripted {
  readonly injection: FaultInjection
  remaining: number
}

const NONE: FaultDecision = { latencyMs: 0, action: "none" }

/** Requests held by the "hold" fault, each waiting on its gate. */
export class HeldRequests {
  private gates: Array<() => void> = []

  /** Requests waiting now. */
  get size(): number {
    return this.gates.length
  }

  hold(): Promise<void> {
    return new Promise<void>((resolve) => this.gates.push(resolve))
  }

  /** Lets every held request be served. */
  releaseAll(): void {
    const gates = this.gates
    this.gates = []
    for (const open of gates) open()
  }
}

export class FaultController {
  private options: FaultOptions
  private prng: Prng
  private scripted: Array<Scripted> = []
  private buckets = new Map<string, Bucket>()
  /** Writes answered 504 and not committed yet ("late-commit"). */
  readonly lateCommits = new LateCommits()
  /** Files deleted when a given download request arrives (file-deletes.ts). */
  readonly fileDeletes = new FileDeletes()
  /** Requests held unanswered ("hold"). */
  readonly heldRequests = new HeldRequests()
  /** List pages the record churn and the file churn have followed (their `pages` bound). */
  private churnPages = { records: 0, files: 0 }
  /** Retry-After form when the options name none (the alt variant: an HTTP date, RATE_LIMIT_MODEL). */
  private readonly retryAfterDefault: "seconds" | "http-date"

  constructor(options: FaultOptions = {}, retryAfterDefault: "seconds" | "http-date" = "seconds") {
    this.options = { ...options }
    this.retryAfterDefault = retryAfterDefault
    this.prng = new Prng(options.seed ?? 7)
  }

  /** Current settings. */
  get settings(): FaultOptions {
    return this.options
  }

  /** Changes settings (merged over the current ones); `undefined` values turn a fault off. */
  configure(options: FaultOptions): void {
    this.options = { ...this.options, ...options }
    if (options.seed !== undefined) this.prng = new Prng(options.seed)
    if (options.rateLimit !== undefined) this.buckets.clear()
    if ("churn" in options) this.churnPages.records = 0
    if ("fileChurn" in options) this.churnPages.files = 0
  }

  /** Turns every fault off and forgets scripted ones. */
  reset(): void {
    this.options = {}
    this.scripted = []
    this.buckets.clear()
    this.churnPages = { records: 0, files: 0 }
    this.fileDeletes.clear()
    // Held writes commit now rather than never; held requests are answered.
    void this.lateCommits.releaseAll()
    this.heldRequests.releaseAll()
  }

  /** Scripts a one-shot (or `times`-shot) fault. */
  inject(injection: FaultInjection): void {
    this.scripted.push({ injection, remaining: injection.times ?? 1 })
  }

  /** Scripted faults not yet used up. */
  pending(): number {
    return this.scripted.reduce((n, s) => n + s.remaining, 0)
  }

  /** Whether deciding needs the caller's token key (only the rate limit does). */
  get needsTokenKey(): boolean {
    return (this.options.rateLimit ?? 0) > 0
  }

  /** True when nothing at all is configured (the hot path skips everything). */
  get idle(): boolean {
    const o = this.options
    return (
      this.scripted.length === 0 &&
      this.lateCommits.size === 0 &&
      !(o.rateLimit && o.rateLimit > 0) &&
      !(o.latencyMs && o.latencyMs > 0) &&
      !(o.failRate && o.failRate > 0) &&
      !(o.throttleRate && o.throttleRate > 0) &&
      !(o.dropRate && o.dropRate > 0) &&
      !(o.stallRate && o.stallRate > 0) &&
      !(o.ambiguousWriteRate && o.ambiguousWriteRate > 0)
    )
  }

  churn(): ChurnOptions | null {
    const churn = this.options.churn
    return churn !== undefined && (churn.insertsPerPage > 0 || churn.deletesPerPage > 0 || (churn.movesPerPage ?? 0) > 0)
      ? churn
      : null
  }

  /**
   * The churn that follows one page of a listing (list-records: `churn`, list-files:
   * `fileChurn`), counted against its `pages`; null when none is set or they are used up.
   */
  churnPage(listing: "records" | "files"): ChurnOptions | null {
    const churn = listing === "records" ? this.churn() : (this.options.fileChurn ?? null)
    if (churn === null) return null
    if (churn.pages !== undefined && this.churnPages[listing] >= churn.pages) return null
    this.churnPages[listing]++
    return churn
  }

  /** Decides the fault (if any) of one request. */
  decide(route: string, tokenKey: string | null, isWrite: boolean): FaultDecision {
    if (this.idle) return NONE
    const before = this.lateCommits.onRequest(route)
    if (before !== undefined) return { ...this.decideNow(route, tokenKey, isWrite), before }
    return this.decideNow(route, tokenKey, isWrite)
  }

  private decideNow(route: string, tokenKey: string | null, isWrite: boolean): FaultDecision {
    let latencyMs = this.options.latencyMs ?? 0
    const script = this.takeScripted(route, isWrite)
    if (script !== undefined) {
      const { injection } = script
      if (injection.kind === "late-commit") {
        return { latencyMs, action: "late-commit", held: this.lateCommits.hold(injection.releaseOn) }
      } else if (injection.kind === "hold") {
        return { latencyMs, action: "hold", gate: this.heldRequests.hold() }
      } else if (injection.kind === "latency") {
        latencyMs += injection.latencyMs ?? 1000
      } else if (injection.kind === "429") {
        const retryAfter =
          typeof injection.retryAfter === "string" ? injection.retryAfter : this.retryAfterValue(injection.retryAfter ?? 1)
        return { latencyMs, action: "429", retryAfter }
      } else {
        return { latencyMs, action: injection.kind }
      }
    }
    const rate = this.options.rateLimit ?? 0
    if (rate > 0 && tokenKey !== null) {
      const wait = this.takeToken(tokenKey, rate)
      if (wait > 0) {
        const chosen = this.options.retryAfter
        const retryAfter = typeof chosen === "string"
          ? chosen
          : this.retryAfterValue(chosen ?? Math.max(1, Math.ceil(wait)))
        return { latencyMs, action: "429", retryAfter }
      }
    }
    if ((this.options.throttleRate ?? 0) > 0 && this.prng.float() < this.options.throttleRate!) {
      const chosen = this.options.retryAfter
      return { latencyMs, action: "429", retryAfter: typeof chosen === "string" ? chosen : this.retryAfterValue(chosen ?? 1) }
    }
    if ((this.options.dropRate ?? 0) > 0 && this.prng.float() < this.options.dropRate!) return { latencyMs, action: "drop" }
    if ((this.options.failRate ?? 0) > 0 && this.prng.float() < this.options.failRate!) return { latencyMs, action: "500" }
    if (!isWrite && (this.options.stallRate ?? 0) > 0 && this.prng.float() < this.options.stallRate!) {
      return { latencyMs, action: "stall-body" }
    }
    if (isWrite && (this.options.ambiguousWriteRate ?? 0) > 0 && this.prng.float() < this.options.ambiguousWriteRate!) {
      return { latencyMs, action: "ambiguous" }
    }
    return latencyMs > 0 ? { latencyMs, action: "none" } : NONE
  }

  private takeScripted(route: string, isWrite: boolean): Scripted | undefined {
    const index = this.scripted.findIndex((s) => {
      const r = s.injection.route
      const matches = typeof r === "string" ? r === route : r.test(route)
      // An ambiguous write only makes sense on a write, a stalled body on a read (a
      // download); other requests pass through untouched.
      const writeOnly = s.injection.kind === "ambiguous" || s.injection.kind === "garble" || s.injection.kind === "late-commit" ||
        s.injection.kind === "not-applied"
      return matches && (!writeOnly || isWrite) && (s.injection.kind !== "stall-body" || !isWrite)
    })
    if (index < 0) return undefined
    const script = this.scripted[index]!
    script.remaining--
    if (script.remaining <= 0) this.scripted.splice(index, 1)
    return script
  }

  /** Takes one token; returns 0 when allowed, else seconds until a token is available. */
  private takeToken(key: string, rate: number): number {
    const now = Date.now()
    let bucket = this.buckets.get(key)
    if (bucket === undefined) {
      bucket = { tokens: rate, last: now }
      this.buckets.set(key, bucket)
    }
    bucket.tokens = Math.min(rate, bucket.tokens + ((now - bucket.last) / 1000) * rate)
    bucket.last = now
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1
      return 0
    }
    return (1 - bucket.tokens) / rate
  }

  private retryAfterValue(seconds: number): string {
    // An HTTP date has whole seconds: round up, so waiting until it is never too early.
    return (this.options.retryAfterForm ?? this.retryAfterDefault) === "http-date"
      ? new Date(Math.ceil((Date.now() + seconds * 1000) / 1000) * 1000).toUTCString()
      : String(seconds)
  }
}

/** The fault controller of a running emulator, for handlers that apply churn. */
const controllers = new WeakMap<EmulatorContext, FaultController>()

export const attachFaults = (ctx: EmulatorContext, faults: FaultController): void => {
  controllers.set(ctx, faults)
}

/** The churn after one list-records page of a running emulator (FaultOptions.churn), if any. */
export const churnPageOf = (ctx: EmulatorContext): ChurnOptions | null => controllers.get(ctx)?.churnPage("records") ?? null

/** The webhook delivery faults of a running emulator (FaultOptions.webhookDeliveries), if any. */
export const deliveryFaultsOf = (ctx: EmulatorContext): { readonly duplicate: boolean; readonly jitterMs: number } => {
  const f = controllers.get(ctx)?.settings.webhookDeliveries
  return { duplicate: f?.duplicate === true, jitterMs: Math.max(0, f?.jitterMs ?? 0) }
}

/** The churn after one list-files page of a running emulator (FaultOptions.fileChurn), if any. */
export const fileChurnPageOf = (ctx: EmulatorContext): ChurnOptions | null => controllers.get(ctx)?.churnPage("files") ?? null

/** The scripted file deletions of a running emulator (file-deletes.ts), if any. */
export const fileDeletesOf = (ctx: EmulatorContext): FileDeletes | null => controllers.get(ctx)?.fileDeletes ?? null
