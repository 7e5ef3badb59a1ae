/** What a caller may choose when starting the emulator. Everything is optional. */

/**
 * Data to start with:
 * - "empty" (default): one organization, one OWNER user with tokens, one workspace with one list;
 * - "demo": a readable organization (Acme Studio) with users, workspaces and ~60 records;
 * - N: 3 workspaces of N records; "WxN": W workspaces of N records;
 * - { workspaces, recordsPerWorkspace }.
 */
export type SeedOption =
  | "demo"
  | "empty"
  | number
  | `${number}x${number}`
  | { readonly workspaces: number; readonly recordsPerWorkspace: number }

export interface ChurnOptions {
  /** Records inserted before the first record on each list-records call. */
  readonly insertsPerPage: number
  /** Records deleted from the front on each list-records call. */
  readonly deletesPerPage: number
  /**
   * Records moved on each list-records call from the back of the order into another list,
   * before the page just served (core/moves.ts). Default 0.
   */
  readonly movesPerPage?: number | undefined
  /**
   * List calls the churn follows, then it stops (every call when omitted): churn driven
   * by the reading's progress, so a test can let a scan's later passes read a still list.
   */
  readonly pages?: number | undefined
  /**
   * Each new record or file takes a createdAt earlier than every item of the listing, as
   * an import of old items does: a file lands at the head of the oldest-first order (the
   * tail of the newest-first one); a record at the front of the position order (the tail
   * of the newest-first one). By its timestamps it looks as if it had been there all along.
   */
  readonly backdated?: boolean | undefined
}

/** Fault injection; all off by default. */
export interface FaultOptions {
  /** Requests per second per token (token bucket, burst of the same size); 429 beyond. */
  readonly rateLimit?: number | undefined
  /** Form of Retry-After on 429: whole seconds (default) or an HTTP-date. */
  readonly retryAfterForm?: "seconds" | "http-date" | undefined
  /**
   * Retry-After of the rate limit's 429s instead of the time until a token is free:
   * seconds (e.g. 10800, three hours), or a raw header value (a far-future HTTP date).
   */
  readonly retryAfter?: number | string | undefined
  /**
   * Fraction of read answers (GETs, storage downloads, REST reads) that send their headers
   * and half their body, then stall until the client gives up.
   */
  readonly stallRate?: number | undefined
  /**
   * Fraction of requests answered 429 whatever the rate limit: another client of the same
   * token used up the limit, or a gateway sheds load. Retry-After as `retryAfter` (1 s when
   * unset). Seeded like the other fractions, so a test meets 429s however fast it runs.
   */
  readonly throttleRate?: number | undefined
  /** Added before answering every request. */
  readonly latencyMs?: number | undefined
  /** Fraction of requests answered 500. */
  readonly failRate?: number | undefined
  /** Fraction of connections destroyed without an answer. */
  readonly dropRate?: number | undefined
  /** Fraction of writes that commit and then lose their answer (socket destroyed). */
  readonly ambiguousWriteRate?: number | undefined
  /** Records inserted and deleted at the front on each list-records call (offset drift). */
  readonly churn?: ChurnOptions | undefined
  /** Files deleted from the front of the listing and added on each list-files call (uploads/file-churn.ts). */
  readonly fileChurn?: ChurnOptions | undefined
  /**
   * Webhook deliveries as real senders make them: each sent twice (an at-least-once
   * sender retrying an answer it did not see), and each delayed by a random extra up to
   * `jitterMs` (scaled like the documented delays), so they arrive out of order.
   */
  readonly webhookDeliveries?: { readonly duplicate?: boolean; readonly jitterMs?: number } | undefined
  /** Seed of the PRNG behind the fractions. */
  readonly seed?: number | undefined
}

export interface LimitOptions {
  /** Organization storage allowance in bytes. */
  readonly storageBytes?: number | null
  /** Per-file tier cap in bytes. */
  readonly perFileBytes?: number | null
  /** Seat limit of the organization. */
  readonly seats?: number | null
}

/**
 * Which reading of the service's documents the emulator serves where they are silent
 * (src/schema/assumptions.ts):
 * - "reference": our chosen reading, every shape with the extra fields we chose;
 * - "alt": the other plausible reading of every choice, and only documented fields in
 *   every shape, so a client proves it does not depend on our choices.
 */
export type EmulatorVariant = "reference" | "alt"

export const EMULATOR_VARIANTS: ReadonlyArray<EmulatorVariant> = ["reference", "alt"]

/** The environment variable that picks the variant when the option is not given. */
export const VARIANT_ENV = "WORKSYNC_EMULATOR_VARIANT"

/**
 * The variant to serve: the option, else the environment variable (so a whole test
 * suite, child processes included, reruns against the other reading unchanged), else
 * "reference". An unknown value is an error naming the accepted ones.
 */
export const resolveVariant = (
  option: EmulatorVariant | undefined,
  env: Readonly<Record<string, string | undefined>> = process.env
): EmulatorVariant => {
  const fromEnv = env[VARIANT_ENV]
  const value: string = option ?? (fromEnv === undefined || fromEnv.trim() === "" ? "reference" : fromEnv.trim())
  if ((EMULATOR_VARIANTS as ReadonlyArray<string>).includes(value)) return value as EmulatorVariant
  const source = option === undefined ? `${VARIANT_ENV}=${value}` : `variant "${value}"`
  throw new Error(`Invalid emulator ${source}: use ${EMULATOR_VARIANTS.join(" or ")}`)
}

export interface EmulatorOptions {
  /** Default 127.0.0.1. */
  readonly host?: string
  /** Main port; 0 (default) picks a free one. */
  readonly port?: number
  /** Storage port; 0 (default) picks a free one. */
  readonly storagePort?: number
  /** A SeedOption, or its CLI spelling ("empty", "demo", "500", "3x20000"). */
  readonly seed?: SeedOption | string
  /** SQLite file; default in memory. An existing seeded file is reused as is. */
  readonly dbFile?: string
  /** Header prefix, default "svc". */
  readonly headerPrefix?: string
  /** Multiplies every documented delay (webhook delays, reconciliation); default 1. */
  readonly timeScale?: number
  readonly faults?: FaultOptions
  readonly limits?: LimitOptions
  /**
   * Start of the emulator's clock (ms since the epoch); default: real time. Its answers'
   * Date header follows this clock, so a start apart from real time is a service whose
   * clock is skewed from the client's.
   */
  readonly clockStart?: number
  /** Seed of the id generator; default 1. */
  readonly idSeed?: number
  /**
   * Which reading of the documents to serve (EmulatorVariant): "reference" (default) or
   * "alt". When not given, the environment variable WORKSYNC_EMULATOR_VARIANT decides;
   * an unknown value makes the start fail.
   */
  readonly variant?: EmulatorVariant
}

export interface SeedShape {
  readonly kind: "empty" | "demo" | "sized"
  readonly workspaces: number
  readonly recordsPerWorkspace: number
}

const positiveInt = (n: number, what: string): number => {
  if (!Number.isInteger(n) || n < 0) throw new Error(`Invalid seed: ${what} must be a whole number >= 0`)
  return n
}

/** Reads a seed option (also a CLI string such as "demo", "500" or "3x20000"). */
export const parseSeed = (seed: SeedOption | string | undefined): SeedShape => {
  if (seed === undefined || seed === "empty") return { kind: "empty", workspaces: 1, recordsPerWorkspace: 0 }
  if (seed === "demo") return { kind: "demo", workspaces: 2, recordsPerWorkspace: 30 }
  if (typeof seed === "number") {
    return { kind: "sized", workspaces: 3, recordsPerWorkspace: positiveInt(seed, "record count") }
  }
  if (typeof seed === "object") {
    return {
      kind: "sized",
      workspaces: Math.max(1, positiveInt(seed.workspaces, "workspaces")),
      recordsPerWorkspace: positiveInt(seed.recordsPerWorkspace, "recordsPerWorkspace")
    }
  }
  const sized = /^(\d+)x(\d+)$/.exec(seed.trim())
  if (sized !== null) {
    return {
      kind: "sized",
      workspaces: Math.max(1, Number(sized[1])),
      recordsPerWorkspace: Number(sized[2])
    }
  }
  if (/^\d+$/.test(seed.trim())) return { kind: "sized", workspaces: 3, recordsPerWorkspace: Number(seed.trim()) }
  throw new Error(`Invalid seed "${seed}": use empty, demo, N or WxN`)
}
