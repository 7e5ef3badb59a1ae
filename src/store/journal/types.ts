/** The journal's data: operations, their states, mappings, adoptions, counts. */
export type OpState = "pending" | "in_flight" | "done" | "failed"

/** An operation to plan. `payload` and results are JSON-serialisable values. */
export interface NewOp {
  readonly key: string
  readonly kind: string
  readonly payload: unknown
  /** Key of the op that must be done before this one may run. */
  readonly dependsOn?: string | null | undefined
}

/** An operation as stored. */
export interface Op {
  readonly seq: number
  readonly key: string
  readonly kind: string
  readonly payload: unknown
  readonly dependsOn: string | null
  readonly state: OpState
  readonly attempts: number
  /**
   * ISO time of the latest claim, or null if never claimed. The claim precedes the send
   * (limiter waits and 429 retries come between): a record the op made is created no
   * earlier than this.
   */
  readonly attemptedAt: string | null
  readonly result: unknown
  readonly error: string | null
  /** A request may have been applied without our learning it: reconcile before resending. */
  readonly uncertain: boolean
  /**
   * ISO time of the latest send whose outcome is unknown (its answer lost, or the process
   * died with the op in flight: then the restart's time, a send can only have been
   * earlier); null when there was none. The settle window runs from it: nothing is sent
   * again before the window has passed since this send.
   */
  readonly sentAt: string | null
  /**
   * What the target held before this op changed it (an update's fields, a move's list),
   * read and recorded before its first send (`recordBefore`); null when none was recorded
   * (not an update, or written by a version before journal format 4); absent where an op
   * is built without it (a read-only view).
   */
  readonly before?: unknown
}

/**
 * A pending op as replay reads a phase: with the dependency it still waits for, so one
 * read tells what may run now and what must wait, and each op is read once.
 */
export interface PendingOp {
  readonly op: Op
  /** Its dependency's key while that op is not done (it may not run yet); null: it may run. */
  readonly waitsFor: string | null
}

/**
 * A reconciliation took an item found on the service as what an op of unknown outcome
 * made (found by content: it may be someone else's; docs/journal.md, "Limits"). Kept in
 * the journal (table `adoptions`, created in files of any earlier version when opened)
 * and reported.
 */
export interface Adoption {
  readonly opKey: string
  readonly namespace: string
  readonly sourceKey: string
  readonly targetId: string
  /** What it was found by, for the report ("title \"X\" in list L, created at T"). */
  readonly detail: string
}

/** An adoption as stored, with its row id (ids grow: a run's adoptions are those above its start). */
export interface StoredAdoption extends Adoption {
  readonly id: number
  readonly adoptedAt: string
}

/**
 * The `result` an op keeps while failed or pending when the service answered its request
 * 2xx but the answer could not be read: it was applied, so it is reconciled, never sent
 * again.
 */
export const APPLIED_RESULT = { applied: true } as const

/** Whether the service is known to have applied `op` (see APPLIED_RESULT). */
export const isApplied = (op: Op): boolean =>
  typeof op.result === "object" && op.result !== null && (op.result as { applied?: unknown }).applied === true && op.state !== "done"

/** A source item's counterpart on the service. */
export interface Mapping {
  readonly namespace: string
  readonly sourceKey: string
  readonly targetId: string
}

/** A page of a namespace's mappings: at most `limit`, the source keys after `after` (byte order). */
export interface MappingsPage {
  readonly after?: string | undefined
  readonly limit: number
}

export interface StateCounts {
  readonly pending: number
  readonly in_flight: number
  readonly done: number
  readonly failed: number
}

export interface JournalCounts extends StateCounts {
  readonly total: number
  /** Pending or failed ops that must be reconciled before they are sent again. */
  readonly uncertain: number
  readonly byKind: Readonly<Record<string, StateCounts>>
}

/** Outcome of planning one op with `planOps`. */
export interface PlannedOp {
  /** The key the op got (with an occurrence suffix when asked for). */
  readonly key: string
  /** False when an earlier run had already planned it. */
  readonly isNew: boolean
  /** The same key (without `occurrence`) was already planned in this very run. */
  readonly duplicate: boolean
  readonly state: OpState
}

/** An op to plan in a numbered plan run; see `planOps`. */
export interface PlanOp extends NewOp {
  /**
   * Identical source items (same content, no explicit key) must stay distinct: with
   * `occurrence`, the n-th op of this run with the same key gets `key#n` (n >= 1), and
   * the same file planned again maps its n-th duplicate to the same key.
   */
  readonly occurrence?: boolean
}

/** Which ops `list` reads: every op in plan order (seq) after `afterSeq`, at most `limit`. */
export interface ListOptions {
  readonly afterSeq?: number
  /** Only ops planned before this seq (undo pages backwards with it). */
  readonly beforeSeq?: number
  /** Newest first (reverse plan order), as undo reverses them. */
  readonly descending?: boolean
  readonly limit: number
  /** Only these kinds (all when omitted). */
  readonly kinds?: ReadonlyArray<string>
  /** Only these states (all when omitted). */
  readonly states?: ReadonlyArray<OpState>
}

/** Which pending ops `pendingPage` reads: in plan order (seq) after `afterSeq`, at most `limit`. */
export interface PendingPageOptions {
  readonly afterSeq?: number
  readonly limit: number
  /** Only these kinds (all when omitted). */
  readonly kinds?: ReadonlyArray<string>
}

/** Which op `claimNext` takes: the first pending one (by seq) of these kinds and key prefix. */
export interface ClaimNextOptions {
  readonly kinds: ReadonlyArray<string>
  readonly keyPrefix: string
  /** From the last op planned backwards (another process works forwards). */
  readonly descending?: boolean
  /** Only ops never claimed before (attempts 0): settling an earlier attempt needs what the planner read. */
  readonly untried?: boolean
}

/** How an op fails (`fail`). */
export interface FailOptions {
  /** It may have been applied: reconcile before sending it again (keeps `uncertain`). */
  readonly outcomeUnknown?: boolean
  /** With `outcomeUnknown`: when the request of unknown outcome left (ISO); else the recorded send stays. */
  readonly sentAt?: string
}

/** How an op becomes uncertain (`markUncertain`). */
export interface MarkUncertainOptions {
  /** The service answered 2xx, unreadably: applied, so never sent again (APPLIED_RESULT). */
  readonly applied?: boolean
  /** When the request of unknown outcome left (ISO); default: now, it cannot have left later. */
  readonly sentAt?: string
}
