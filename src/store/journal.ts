/**
 * The write journal: a SQLite file holding a plan of write operations and what became
 * of each, so a write run can stop at any moment (even SIGKILL) and resume without
 * sending anything twice or losing anything planned.
 *
 * Tables
 * - `ops`: one row per operation, `key` UNIQUE (the caller's stable identity of the
 *   operation), `kind` ("record.create", "record.update", "record.move", "record.delete",
 *   "list.ensure", "file.copy", ...), `payload` JSON, `depends_on` (the key of an op that
 *   must be done first), `state` pending | in_flight | done | failed, `attempts`,
 *   `attempted_at` (ISO time of the latest claim), `result` JSON, `error` text,
 *   `uncertain` (1 when a request may have been applied without us learning it).
 * - `id_map`: (namespace, source_key) -> target_id, UNIQUE(namespace, source_key): what the
 *   service created for a source item, kept across runs so later runs are incremental.
 * - `meta`: free key/value pairs (target workspace, plan fingerprint, plan run counter).
 *
 * The protocol an executor follows for one op:
 *   claim(key)      pending -> in_flight, attempts+1, attempted_at = now; durable BEFORE
 *                   the request is sent, so a crash after sending leaves evidence.
 *   complete(...)   in_flight -> done, with the result and any id mappings, in one
 *                   transaction (the op is never done without its mapping).
 *   fail(...)       in_flight -> failed with the error; `outcomeUnknown` keeps `uncertain`.
 *   markUncertain   in_flight -> pending + uncertain: sent, answer lost, check before resending.
 *   release(key)    in_flight -> pending: definitely not applied (refused before sending).
 * On start, `resetInFlight()` turns every op left in_flight by a dead process into
 * pending + uncertain. An executor must reconcile an uncertain op (look on the service
 * for what it would have produced) before sending it again.
 *
 * Durability: WAL with synchronous=FULL. A process crash (SIGKILL) loses nothing even
 * with NORMAL, but after a power cut NORMAL may roll back the latest commits, and a lost
 * claim would let a create be re-sent without the check that prevents a duplicate. FULL
 * costs one fsync per commit, so commits are grouped: planning (nothing is sent yet) runs
 * with NORMAL and rare checkpoints, and ends with a FULL checkpoint and commit
 * (`beginPlanRun` / `endPlanRun`); replay commits the transitions of concurrent ops
 * together (journal-batch.ts, `claimMany`). Planning inserts many rows per statement
 * (`INSERT OR IGNORE ... RETURNING key`): per-statement overhead, not SQLite's b-tree
 * work, is what bounded it at one insert per op.
 *
 * Files are created owner-only (0600); SQLite gives the -wal and -shm files the database
 * file's mode. No credential is ever written here: payloads hold ids and field values.
 * One process at a time: `openJournal` holds the store lock of file-lock.ts, which the
 * operating system releases when its holder dies.
 */
import Database from "better-sqlite3"
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as fs from "node:fs"
import * as path from "node:path"
import { lockStore, StoreBusy, StoreLockError } from "./file-lock.ts"

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
  /** ISO time of the latest claim (just before the latest send), or null if never claimed. */
  readonly attemptedAt: string | null
  readonly result: unknown
  readonly error: string | null
  /** A request may have been applied without our learning it: reconcile before resending. */
  readonly uncertain: boolean
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

export class JournalError extends Data.TaggedError("JournalError")<{
  readonly file: string
  readonly action: string
  readonly detail: string
}> {
  override get message(): string {
    return `journal ${this.file}: ${this.action} failed: ${this.detail}`
  }
}

/** A state transition that does not apply (e.g. claiming an op that is not pending). */
export class JournalStateError extends Data.TaggedError("JournalStateError")<{
  readonly key: string
  readonly expected: string
  readonly actual: OpState | "missing"
}> {
  override get message(): string {
    return `journal op ${this.key}: expected ${this.expected}, found ${this.actual}`
  }
}

const DDL = `
CREATE TABLE IF NOT EXISTS ops (
  seq          INTEGER PRIMARY KEY AUTOINCREMENT,
  key          TEXT NOT NULL UNIQUE,
  kind         TEXT NOT NULL,
  payload      TEXT NOT NULL,
  depends_on   TEXT,
  state        TEXT NOT NULL DEFAULT 'pending' CHECK (state IN ('pending','in_flight','done','failed')),
  attempts     INTEGER NOT NULL DEFAULT 0,
  attempted_at TEXT,
  result       TEXT,
  error        TEXT,
  uncertain    INTEGER NOT NULL DEFAULT 0,
  plan_run     INTEGER,
  updated_at   TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS ops_state_seq ON ops(state, seq);
CREATE TABLE IF NOT EXISTS id_map (
  namespace  TEXT NOT NULL,
  source_key TEXT NOT NULL,
  target_id  TEXT NOT NULL,
  op_key     TEXT,
  created_at TEXT NOT NULL,
  UNIQUE (namespace, source_key)
);
CREATE INDEX IF NOT EXISTS id_map_target ON id_map(namespace, target_id);
CREATE TABLE IF NOT EXISTS meta (
  key   TEXT PRIMARY KEY,
  value TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS adoptions (
  id         INTEGER PRIMARY KEY AUTOINCREMENT,
  op_key     TEXT NOT NULL,
  namespace  TEXT NOT NULL,
  source_key TEXT NOT NULL,
  target_id  TEXT NOT NULL,
  detail     TEXT NOT NULL,
  adopted_at TEXT NOT NULL
);
`

interface OpRow {
  seq: number
  key: string
  kind: string
  payload: string
  depends_on: string | null
  state: OpState
  attempts: number
  attempted_at: string | null
  result: string | null
  error: string | null
  uncertain: number
}

const parse = (text: string | null): unknown => (text === null ? null : JSON.parse(text))

const toOp = (r: OpRow): Op => ({
  seq: r.seq,
  key: r.key,
  kind: r.kind,
  payload: parse(r.payload),
  dependsOn: r.depends_on,
  state: r.state,
  attempts: r.attempts,
  attemptedAt: r.attempted_at,
  result: parse(r.result),
  error: r.error,
  uncertain: r.uncertain === 1
})

/**
 * A payload already serialised to JSON (by another thread, see plan-writer.ts): stored as
 * it is instead of being serialised again.
 */
export class JsonText {
  constructor(readonly text: string) {}
}

const json = (value: unknown): string =>
  value instanceof JsonText ? value.text : JSON.stringify(value === undefined ? null : value)

/**
 * The journal's format (SQLite `user_version`). 1 (or 0, unset): every payload a JSON
 * object. 2: `record.create` payloads may be packed arrays without `workspaceId`
 * (import-csv, see src/sync/plan.ts). A file of a newer format is refused at open.
 */
export const JOURNAL_FORMAT = 2

/** Rows per planning INSERT: large enough that per-statement overhead vanishes (measured). */
const INSERT_CHUNK = 256
/** WAL pages between checkpoints while planning (64 MB at 4 KiB pages); SQLite's default otherwise. */
const PLAN_WAL_AUTOCHECKPOINT = 16384
const DEFAULT_WAL_AUTOCHECKPOINT = 1000

/**
 * The synchronous core over one open database. The Effect service wraps it; hot loops
 * (planning a million rows) may use it directly through `Journal.sync`.
 */
export class JournalDb {
  readonly db: Database.Database
  private readonly now: () => string
  private readonly st: ReturnType<JournalDb["prepare"]>
  /** The plan run in progress (commits skip the fsync until it ends), or null. */
  private planning: number | null = null

  constructor(readonly file: string, options: { readonly now?: () => string } = {}) {
    this.now = options.now ?? (() => new Date().toISOString())
    const dir = path.dirname(path.resolve(file))
    fs.mkdirSync(dir, { recursive: true })
    // Create owner-only before SQLite opens it; SQLite copies this mode to -wal/-shm.
    fs.closeSync(fs.openSync(file, "a", 0o600))
    fs.chmodSync(file, 0o600)
    this.db = new Database(file)
    this.db.pragma("journal_mode = WAL")
    this.db.pragma("synchronous = FULL")
    this.db.pragma("busy_timeout = 5000")
    // Planning a large file inserts into two indexes; a bigger page cache keeps them in memory.
    this.db.pragma("cache_size = -65536")
    this.db.exec(DDL)
    const format = this.db.pragma("user_version", { simple: true }) as number
    if (format > JOURNAL_FORMAT) {
      this.db.close()
      throw new Error(
        `written by a newer worksync (journal format ${format}; this version reads formats up to ${JOURNAL_FORMAT}): upgrade worksync or use another journal file`
      )
    }
    // Older formats are read as they are; the file is marked with the format it may now hold.
    if (format < JOURNAL_FORMAT) this.db.pragma(`user_version = ${JOURNAL_FORMAT}`)
    this.st = this.prepare()
  }

  /** Multi-row inserts by row count (powers of two up to INSERT_CHUNK), prepared on first use. */
  private readonly multiInsert = new Map<number, Database.Statement>()

  /** `INSERT OR IGNORE` of `rows` ops in one statement. */
  private insertStatement(rows: number): Database.Statement {
    let st = this.multiInsert.get(rows)
    if (st === undefined) {
      st = this.db.prepare(
        `INSERT OR IGNORE INTO ops (key, kind, payload, depends_on, plan_run, updated_at) VALUES ${
          Array.from({ length: rows }, () => "(?, ?, ?, ?, ?, ?)").join(", ")
        }`
      )
      this.multiInsert.set(rows, st)
    }
    return st
  }

  /**
   * Inserts `ops[from, to)` (keys as given) with as few statements as possible: chunks of
   * INSERT_CHUNK rows, the rest by powers of two, so at most log2(INSERT_CHUNK) + 1
   * statement shapes exist. With `inserted`, the keys actually inserted are added to it.
   *
   * Which rows of a statement were inserted is known without `RETURNING` (which cost a
   * fifth of the journal's planning time): all when `changes` is the row count, none when
   * it is 0, and otherwise the rows above the highest seq before the statement. (Not "the
   * `changes` seqs ending at the last insert's": an ignored row still uses up a seq.)
   */
  private insertRange(
    ops: ReadonlyArray<NewOp>,
    from: number,
    to: number,
    run: number | null,
    now: string,
    inserted?: Set<string>
  ): number {
    let changes = 0
    let i = from
    // The highest seq so far; kept current from each statement's last insert.
    let top = inserted === undefined ? 0 : this.st.topSeq.get() ?? 0
    while (i < to) {
      let rows = INSERT_CHUNK
      while (rows > to - i) rows >>= 1
      const args = new Array<unknown>(rows * 6)
      for (let r = 0; r < rows; r++) {
        const op = ops[i + r]!
        const b = r * 6
        args[b] = op.key
        args[b + 1] = op.kind
        args[b + 2] = json(op.payload)
        args[b + 3] = op.dependsOn ?? null
        args[b + 4] = run
        args[b + 5] = now
      }
      const info = this.insertStatement(rows).run(args)
      if (inserted !== undefined && info.changes > 0) {
        if (info.changes === rows) {
          for (let r = 0; r < rows; r++) inserted.add(ops[i + r]!.key)
        } else {
          for (const k of this.st.keysAbove.all(top)) inserted.add(k)
        }
        top = Number(info.lastInsertRowid)
      }
      changes += info.changes
      i += rows
    }
    return changes
  }

  private prepare() {
    const db = this.db
    return {
      insert: db.prepare(
        `INSERT OR IGNORE INTO ops (key, kind, payload, depends_on, plan_run, updated_at)
         VALUES (?, ?, ?, ?, ?, ?)`
      ),
      topSeq: db.prepare<[], number | null>(`SELECT max(seq) FROM ops`).pluck(true),
      keysAbove: db.prepare<[number], string>(`SELECT key FROM ops WHERE seq > ?`).pluck(true),
      planInfo: db.prepare<[string], { plan_run: number | null; state: OpState }>(
        `SELECT plan_run, state FROM ops WHERE key = ?`
      ),
      setPlanRun: db.prepare(`UPDATE ops SET plan_run = ? WHERE key = ?`),
      // The same for many keys at once, given as one JSON array.
      planInfoMany: db.prepare<[string], { key: string; plan_run: number | null; state: OpState }>(
        `SELECT key, plan_run, state FROM ops WHERE key IN (SELECT value FROM json_each(?))`
      ),
      setPlanRunMany: db.prepare(`UPDATE ops SET plan_run = ? WHERE key IN (SELECT value FROM json_each(?))`),
      get: db.prepare<[string], OpRow>(`SELECT * FROM ops WHERE key = ?`),
      claim: db.prepare(
        `UPDATE ops SET state = 'in_flight', attempts = attempts + 1, attempted_at = ?, updated_at = ?
         WHERE key = ? AND state = 'pending'`
      ),
      complete: db.prepare(
        `UPDATE ops SET state = 'done', result = ?, error = NULL, uncertain = 0, updated_at = ?
         WHERE key = ? AND state IN ('in_flight', 'pending')`
      ),
      fail: db.prepare(
        `UPDATE ops SET state = 'failed', error = ?, uncertain = ?, updated_at = ?
         WHERE key = ? AND state IN ('in_flight', 'pending')`
      ),
      markUncertain: db.prepare(
        `UPDATE ops SET state = 'pending', uncertain = 1, error = ?, updated_at = ?
         WHERE key = ? AND state = 'in_flight'`
      ),
      markApplied: db.prepare(
        `UPDATE ops SET state = 'pending', uncertain = 1, error = ?, result = ?, updated_at = ?
         WHERE key = ? AND state = 'in_flight'`
      ),
      adopt: db.prepare(
        `INSERT INTO adoptions (op_key, namespace, source_key, target_id, detail, adopted_at) VALUES (?, ?, ?, ?, ?, ?)`
      ),
      adoptionsAfter: db.prepare<[number], {
        id: number
        op_key: string
        namespace: string
        source_key: string
        target_id: string
        detail: string
        adopted_at: string
      }>(`SELECT * FROM adoptions WHERE id > ? ORDER BY id`),
      lastAdoption: db.prepare<[], number | null>(`SELECT max(id) FROM adoptions`).pluck(true),
      release: db.prepare(
        `UPDATE ops SET state = 'pending', error = ?, updated_at = ? WHERE key = ? AND state = 'in_flight'`
      ),
      resolved: db.prepare(
        `UPDATE ops SET uncertain = 0, updated_at = ? WHERE key = ? AND state = 'pending'`
      ),
      resetInFlight: db.prepare(
        `UPDATE ops SET state = 'pending', uncertain = 1, updated_at = ? WHERE state = 'in_flight'`
      ),
      map: db.prepare(
        `INSERT INTO id_map (namespace, source_key, target_id, op_key, created_at) VALUES (?, ?, ?, ?, ?)
         ON CONFLICT (namespace, source_key) DO UPDATE SET target_id = excluded.target_id, op_key = excluded.op_key`
      ),
      lookup: db.prepare<[string, string], { target_id: string }>(
        `SELECT target_id FROM id_map WHERE namespace = ? AND source_key = ?`
      ),
      mappingsOf: db.prepare<[string], { source_key: string; target_id: string }>(
        `SELECT source_key, target_id FROM id_map WHERE namespace = ? ORDER BY source_key`
      ),
      isMapped: db.prepare<[string, string], { one: number }>(
        `SELECT 1 AS one FROM id_map WHERE namespace = ? AND target_id = ? LIMIT 1`
      ),
      getMeta: db.prepare<[string], { value: string }>(`SELECT value FROM meta WHERE key = ?`),
      setMeta: db.prepare(
        `INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value`
      ),
      counts: db.prepare<[], { kind: string; state: OpState; n: number; u: number }>(
        `SELECT kind, state, COUNT(*) AS n, SUM(uncertain) AS u FROM ops GROUP BY kind, state`
      )
    }
  }

  close(): void {
    if (this.db.open) this.db.close()
  }

  /** Runs `f` in one transaction (all or nothing). */
  transaction<A>(f: () => A): A {
    return this.db.transaction(f)()
  }

  addOps(ops: Iterable<NewOp>): number {
    const now = this.now()
    const list = Array.isArray(ops) ? (ops as ReadonlyArray<NewOp>) : [...ops]
    // Rows of one statement are inserted in order, so a key repeated in `list` keeps its
    // first op, as one insert per op would.
    return this.transaction(() => this.insertRange(list, 0, list.length, null, now))
  }

  /**
   * Starts a new plan run and returns its number (see `planOps`). Until `endPlanRun`,
   * commits skip the fsync (synchronous=NORMAL): nothing is sent while planning, and a
   * plan lost to a power cut is simply planned again by the rerun.
   */
  beginPlanRun(): number {
    const run = this.transaction(() => {
      const current = Number(this.getMeta("plan_run") ?? "0")
      const next = current + 1
      this.setMeta("plan_run", String(next))
      return next
    })
    this.db.pragma("synchronous = NORMAL")
    // Fewer checkpoints while planning: each one fsyncs (NORMAL still syncs the WAL before
    // copying it into the database, and the database before the WAL is reused), and pages
    // written many times between two checkpoints are copied once.
    this.db.pragma(`wal_autocheckpoint = ${PLAN_WAL_AUTOCHECKPOINT}`)
    this.planning = run
    return run
  }

  /**
   * Joins the plan run another connection to this file began (a planning thread, see
   * plan-writer.ts): this connection's commits skip the fsync as well. It only plans; the
   * run is ended (made durable) by the connection that began it, after this one closes.
   */
  joinPlanRun(): void {
    this.db.pragma("synchronous = NORMAL")
    this.db.pragma(`wal_autocheckpoint = ${PLAN_WAL_AUTOCHECKPOINT}`)
  }

  /**
   * The first claim ends an open plan run (a caller that never called `endPlanRun`):
   * nothing may be sent while commits skip the fsync. Called outside transactions.
   */
  ensureDurable(): void {
    if (this.planning !== null && !this.db.inTransaction) this.endPlanRun(this.planning)
  }

  /**
   * Ends planning: back to synchronous=FULL; a checkpoint that copies the whole WAL into
   * the database and fsyncs it (and empties the WAL), then one FULL commit: every frame
   * written while planning is durable before the first op is claimed.
   */
  endPlanRun(run: number): void {
    this.planning = null
    this.db.pragma("synchronous = FULL")
    this.db.pragma(`wal_autocheckpoint = ${DEFAULT_WAL_AUTOCHECKPOINT}`)
    this.db.pragma("wal_checkpoint(TRUNCATE)")
    this.setMeta("plan_run_complete", String(run))
  }

  /**
   * Plans ops in run `run` (from `beginPlanRun`), in one transaction: a key not yet in the
   * journal is inserted; a key planned by an earlier run is kept as it is (its state tells
   * whether it is done). With `occurrence`, a key already planned in THIS run means a
   * duplicate source item, which gets the next free `key#n`. Ops are inserted (and get
   * their `seq`) in the order given, except that one taking a `key#n` comes after the
   * rest of its INSERT_CHUNK-op chunk; identical items keep their order among themselves.
   */
  planOps(run: number, ops: ReadonlyArray<PlanOp>): Array<PlannedOp> {
    const now = this.now()
    return this.transaction(() => {
      const out: Array<PlannedOp> = []
      const chunkKeys = new Set<string>()
      const inserted = new Set<string>()
      for (let from = 0; from < ops.length; from += INSERT_CHUNK) {
        const to = Math.min(ops.length, from + INSERT_CHUNK)
        // Fast path: one multi-row insert for the chunk, then only the ops whose key was
        // not inserted (planned before, or a repeat) take the one-by-one path below. It
        // needs the chunk's keys distinct and free of `#` (so no op's key can be another's
        // occurrence key): otherwise an op could take a key meant for an earlier one.
        chunkKeys.clear()
        let distinct = true
        for (let i = from; i < to; i++) {
          const key = ops[i]!.key
          if (chunkKeys.has(key) || key.includes("#")) {
            distinct = false
            break
          }
          chunkKeys.add(key)
        }
        inserted.clear()
        if (distinct) this.insertRange(ops, from, to, run, now, inserted)
        const earlier = distinct && inserted.size < to - from ? this.claimEarlier(run, ops, from, to, inserted) : undefined
        for (let i = from; i < to; i++) {
          const op = ops[i]!
          if (inserted.has(op.key)) out.push({ key: op.key, isNew: true, duplicate: false, state: "pending" })
          else out.push(earlier?.get(op.key) ?? this.planOne(run, op, now))
        }
      }
      return out
    })
  }

  /**
   * The ops of a distinct chunk that were not inserted because an EARLIER run planned
   * their key: taken into this run with one statement for all of them (what `planOne`
   * does one by one, three statements each, which halved the speed of planning a file
   * again). Keys planned earlier in this run are left out: `planOne` settles those.
   */
  private claimEarlier(
    run: number,
    ops: ReadonlyArray<PlanOp>,
    from: number,
    to: number,
    inserted: ReadonlySet<string>
  ): Map<string, PlannedOp> {
    const rest: Array<string> = []
    for (let i = from; i < to; i++) if (!inserted.has(ops[i]!.key)) rest.push(ops[i]!.key)
    const out = new Map<string, PlannedOp>()
    const claimed: Array<string> = []
    for (const row of this.st.planInfoMany.all(JSON.stringify(rest))) {
      if (row.plan_run === run) continue
      out.set(row.key, { key: row.key, isNew: false, duplicate: false, state: row.state })
      claimed.push(row.key)
    }
    if (claimed.length > 0) this.st.setPlanRunMany.run(run, JSON.stringify(claimed))
    return out
  }

  /** Plans one op (inside `planOps`' transaction): insert, or settle why its key exists. */
  private planOne(run: number, op: PlanOp, now: string): PlannedOp {
    const payload = json(op.payload)
    for (let n = 0;; n++) {
      const key = n === 0 ? op.key : `${op.key}#${n}`
      if (this.st.insert.run(key, op.kind, payload, op.dependsOn ?? null, run, now).changes === 1) {
        return { key, isNew: true, duplicate: false, state: "pending" }
      }
      const info = this.st.planInfo.get(key)
      // Ignored without a row holding the key: a NOT NULL column (kind) was missing.
      if (info === undefined) throw new Error(`journal op ${key}: not stored (kind ${JSON.stringify(op.kind)})`)
      if (info.plan_run === run && op.occurrence === true) continue
      if (info.plan_run === run) return { key, isNew: false, duplicate: true, state: info.state }
      this.st.setPlanRun.run(run, key)
      return { key, isNew: false, duplicate: false, state: info.state }
    }
  }

  get(key: string): Op | undefined {
    const row = this.st.get.get(key)
    return row === undefined ? undefined : toOp(row)
  }

  private stateOf(key: string): OpState | "missing" {
    return this.st.get.get(key)?.state ?? "missing"
  }

  claim(key: string): Op {
    this.ensureDurable()
    const now = this.now()
    const changed = this.st.claim.run(now, now, key).changes
    if (changed === 0) throw new JournalStateError({ key, expected: "pending", actual: this.stateOf(key) })
    return this.get(key)!
  }

  /** Claims several pending ops in one transaction (one fsync); returns the ops claimed. */
  claimMany(keys: ReadonlyArray<string>): Array<Op> {
    this.ensureDurable()
    const now = this.now()
    return this.transaction(() => {
      const out: Array<Op> = []
      for (const key of keys) {
        if (this.st.claim.run(now, now, key).changes === 1) out.push(this.get(key)!)
      }
      return out
    })
  }

  /**
   * Done, with the id mappings and any follow-up ops (work that only exists once this op
   * is done, e.g. setting `done` on a record just created), all in one transaction.
   */
  complete(key: string, result: unknown, mappings: ReadonlyArray<Mapping> = [], followUps: ReadonlyArray<NewOp> = []): void {
    const now = this.now()
    this.transaction(() => {
      const changed = this.st.complete.run(json(result), now, key).changes
      if (changed === 0) throw new JournalStateError({ key, expected: "in_flight or pending", actual: this.stateOf(key) })
      for (const m of mappings) this.st.map.run(m.namespace, m.sourceKey, m.targetId, key, now)
      for (const op of followUps) this.st.insert.run(op.key, op.kind, json(op.payload), op.dependsOn ?? null, null, now)
    })
  }

  fail(key: string, error: string, options: { readonly outcomeUnknown?: boolean } = {}): void {
    const now = this.now()
    const changed = this.st.fail.run(error, options.outcomeUnknown === true ? 1 : 0, now, key).changes
    if (changed === 0) throw new JournalStateError({ key, expected: "in_flight or pending", actual: this.stateOf(key) })
  }

  /**
   * in_flight -> pending + uncertain. With `applied` (the service answered 2xx, the answer
   * was unreadable) the op keeps APPLIED_RESULT: reconciled by every run, never sent again.
   */
  markUncertain(key: string, error: string, options: { readonly applied?: boolean } = {}): void {
    const changed = options.applied === true
      ? this.st.markApplied.run(error, JSON.stringify(APPLIED_RESULT), this.now(), key).changes
      : this.st.markUncertain.run(error, this.now(), key).changes
    if (changed === 0) throw new JournalStateError({ key, expected: "in_flight", actual: this.stateOf(key) })
  }

  /**
   * Ends ops that a newer plan made pointless (an older version's update of a record whose
   * newer version is planned) without sending them: not-done ones become done with
   * `{superseded: by}`. Returns how many.
   */
  supersede(keys: ReadonlyArray<string>, by: string): number {
    if (keys.length === 0) return 0
    return this.db
      .prepare(
        `UPDATE ops SET state = 'done', result = ?, error = NULL, uncertain = 0, updated_at = ?
         WHERE state <> 'done' AND key IN (SELECT value FROM json_each(?))`
      )
      .run(JSON.stringify({ superseded: by }), this.now(), JSON.stringify(keys)).changes
  }

  /** Records that a reconciliation took an item found on the service for an op (see Adoption). */
  recordAdoption(a: Adoption): void {
    this.st.adopt.run(a.opKey, a.namespace, a.sourceKey, a.targetId, a.detail, this.now())
  }

  /** Adoptions recorded after row `afterId` (0: all), oldest first. */
  adoptions(afterId = 0): Array<StoredAdoption> {
    return this.st.adoptionsAfter.all(afterId).map((r) => ({
      id: r.id,
      opKey: r.op_key,
      namespace: r.namespace,
      sourceKey: r.source_key,
      targetId: r.target_id,
      detail: r.detail,
      adoptedAt: r.adopted_at
    }))
  }

  /** The id of the latest adoption (0 when none): a run's own adoptions are those after it. */
  lastAdoptionId(): number {
    return this.st.lastAdoption.get() ?? 0
  }

  release(key: string, error: string | null = null): void {
    const changed = this.st.release.run(error, this.now(), key).changes
    if (changed === 0) throw new JournalStateError({ key, expected: "in_flight", actual: this.stateOf(key) })
  }

  /** A reconciliation found the uncertain op was NOT applied: it may be sent plainly. */
  markResolved(key: string): void {
    this.st.resolved.run(this.now(), key)
  }

  resetInFlight(): number {
    return this.st.resetInFlight.run(this.now()).changes
  }

  retryFailed(kinds?: ReadonlyArray<string>): number {
    const now = this.now()
    if (kinds === undefined) {
      return this.db.prepare(`UPDATE ops SET state = 'pending', updated_at = ? WHERE state = 'failed'`).run(now).changes
    }
    const marks = kinds.map(() => "?").join(",")
    return this.db
      .prepare(`UPDATE ops SET state = 'pending', updated_at = ? WHERE state = 'failed' AND kind IN (${marks})`)
      .run(now, ...kinds).changes
  }

  /**
   * Pending ops in plan order whose dependency (if any) is done, after `afterSeq`.
   * Ops whose dependency failed stay pending; `blocked()` lists them.
   */
  pending(options: { readonly kinds?: ReadonlyArray<string>; readonly limit: number; readonly afterSeq?: number }): Array<Op> {
    const kinds = options.kinds ?? []
    const kindClause = kinds.length > 0 ? `AND o.kind IN (${kinds.map(() => "?").join(",")})` : ""
    const rows = this.db
      .prepare<Array<unknown>, OpRow>(
        `SELECT o.* FROM ops o
         WHERE o.state = 'pending' AND o.seq > ? ${kindClause}
           AND (o.depends_on IS NULL OR EXISTS (SELECT 1 FROM ops d WHERE d.key = o.depends_on AND d.state = 'done'))
         ORDER BY o.seq LIMIT ?`
      )
      .all(options.afterSeq ?? 0, ...kinds, options.limit)
    return rows.map(toOp)
  }

  /** Pending ops that cannot run because their dependency is not done (failed or missing). */
  blocked(limit = 100): Array<Op> {
    return this.db
      .prepare<[number], OpRow>(
        `SELECT o.* FROM ops o WHERE o.state = 'pending' AND o.depends_on IS NOT NULL
           AND NOT EXISTS (SELECT 1 FROM ops d WHERE d.key = o.depends_on AND d.state = 'done')
         ORDER BY o.seq LIMIT ?`
      )
      .all(limit)
      .map(toOp)
  }

  /** Failed ops in plan order (for reports). */
  failed(limit = 100): Array<Op> {
    return this.db
      .prepare<[number], OpRow>(`SELECT * FROM ops WHERE state = 'failed' ORDER BY seq LIMIT ?`)
      .all(limit)
      .map(toOp)
  }

  setMapping(mapping: Mapping): void {
    this.st.map.run(mapping.namespace, mapping.sourceKey, mapping.targetId, null, this.now())
  }

  lookup(namespace: string, sourceKey: string): string | undefined {
    return this.st.lookup.get(namespace, sourceKey)?.target_id
  }

  /** Every source item of `namespace` with its counterpart, in source-key order. */
  mappings(namespace: string): Array<Mapping> {
    return this.st.mappingsOf.all(namespace).map((r) => ({ namespace, sourceKey: r.source_key, targetId: r.target_id }))
  }

  /** Which of `targetIds` already stand for some source item in `namespace`. */
  mappedTargets(namespace: string, targetIds: ReadonlyArray<string>): Set<string> {
    const out = new Set<string>()
    for (const id of targetIds) if (this.st.isMapped.get(namespace, id) !== undefined) out.add(id)
    return out
  }

  getMeta(key: string): string | undefined {
    return this.st.getMeta.get(key)?.value
  }

  setMeta(key: string, value: string): void {
    this.st.setMeta.run(key, value)
  }

  counts(): JournalCounts {
    const zero = (): { pending: number; in_flight: number; done: number; failed: number } => ({
      pending: 0,
      in_flight: 0,
      done: 0,
      failed: 0
    })
    const all = zero()
    const byKind: Record<string, ReturnType<typeof zero>> = {}
    let uncertain = 0
    let total = 0
    for (const r of this.st.counts.all()) {
      const k = (byKind[r.kind] ??= zero())
      k[r.state] += r.n
      all[r.state] += r.n
      total += r.n
      if (r.state !== "done") uncertain += r.u ?? 0
    }
    return { ...all, total, uncertain, byKind }
  }
}

/** The journal as an Effect service; every method is a thin wrapper over `JournalDb`. */
export interface JournalApi {
  readonly file: string
  /** The synchronous core, for hot loops. */
  readonly sync: JournalDb
  /** Inserts ops not yet present (by key) in one transaction; returns how many were new. */
  readonly addOps: (ops: Iterable<NewOp>) => Effect.Effect<number, JournalError>
  readonly beginPlanRun: () => Effect.Effect<number, JournalError>
  readonly endPlanRun: (run: number) => Effect.Effect<void, JournalError>
  readonly planOps: (run: number, ops: ReadonlyArray<PlanOp>) => Effect.Effect<Array<PlannedOp>, JournalError>
  readonly get: (key: string) => Effect.Effect<Option.Option<Op>, JournalError>
  /** pending -> in_flight, attempts+1, attempted_at = now, committed before returning. */
  readonly claim: (key: string) => Effect.Effect<Op, JournalError | JournalStateError>
  readonly claimMany: (keys: ReadonlyArray<string>) => Effect.Effect<Array<Op>, JournalError>
  /** -> done with the result, plus id mappings and follow-up ops, in one transaction. */
  readonly complete: (
    key: string,
    result: unknown,
    mappings?: ReadonlyArray<Mapping>,
    followUps?: ReadonlyArray<NewOp>
  ) => Effect.Effect<void, JournalError | JournalStateError>
  /** -> failed with the error; `outcomeUnknown` marks it uncertain (reconcile before resending). */
  readonly fail: (
    key: string,
    error: string,
    options?: { readonly outcomeUnknown?: boolean }
  ) => Effect.Effect<void, JournalError | JournalStateError>
  /** in_flight -> pending + uncertain: sent, answer lost (or unreadable: `applied`). */
  readonly markUncertain: (
    key: string,
    error: string,
    options?: { readonly applied?: boolean }
  ) => Effect.Effect<void, JournalError | JournalStateError>
  /** Records an adoption (see Adoption). */
  readonly recordAdoption: (adoption: Adoption) => Effect.Effect<void, JournalError>
  /** in_flight -> pending: definitely not applied. */
  readonly release: (key: string, error?: string | null) => Effect.Effect<void, JournalError | JournalStateError>
  /** Clears `uncertain` on a pending op after a reconciliation found nothing. */
  readonly markResolved: (key: string) => Effect.Effect<void, JournalError>
  /** in_flight (left by a dead process) -> pending + uncertain; returns how many. */
  readonly resetInFlight: () => Effect.Effect<number, JournalError>
  /** failed -> pending (uncertain kept), for a rerun; returns how many. */
  readonly retryFailed: (kinds?: ReadonlyArray<string>) => Effect.Effect<number, JournalError>
  readonly pending: (options: {
    readonly kinds?: ReadonlyArray<string>
    readonly limit: number
    readonly afterSeq?: number
  }) => Effect.Effect<Array<Op>, JournalError>
  readonly blocked: (limit?: number) => Effect.Effect<Array<Op>, JournalError>
  readonly failed: (limit?: number) => Effect.Effect<Array<Op>, JournalError>
  readonly setMapping: (mapping: Mapping) => Effect.Effect<void, JournalError>
  readonly lookup: (namespace: string, sourceKey: string) => Effect.Effect<Option.Option<string>, JournalError>
  readonly mappedTargets: (namespace: string, targetIds: ReadonlyArray<string>) => Effect.Effect<Set<string>, JournalError>
  readonly getMeta: (key: string) => Effect.Effect<Option.Option<string>, JournalError>
  readonly setMeta: (key: string, value: string) => Effect.Effect<void, JournalError>
  readonly counts: () => Effect.Effect<JournalCounts, JournalError>
}

export class Journal extends Context.Tag("worksync/Journal")<Journal, JournalApi>() {}

const errorText = (e: unknown): string => (e instanceof Error ? e.message : String(e))

/** Wraps a synchronous journal call; state errors stay typed, anything else is a JournalError. */
const lift = <A>(file: string, action: string, f: () => A): Effect.Effect<A, JournalError> =>
  Effect.try({ try: f, catch: (e) => new JournalError({ file, action, detail: errorText(e) }) })

const liftState = <A>(file: string, action: string, f: () => A): Effect.Effect<A, JournalError | JournalStateError> =>
  Effect.try({
    try: f,
    catch: (e) => (e instanceof JournalStateError ? e : new JournalError({ file, action, detail: errorText(e) }))
  })

/** Builds the service over an open core. */
export const makeJournalApi = (core: JournalDb): JournalApi => {
  const file = core.file
  return {
    file,
    sync: core,
    addOps: (ops) => lift(file, "addOps", () => core.addOps(ops)),
    beginPlanRun: () => lift(file, "beginPlanRun", () => core.beginPlanRun()),
    endPlanRun: (run) => lift(file, "endPlanRun", () => core.endPlanRun(run)),
    planOps: (run, ops) => lift(file, "planOps", () => core.planOps(run, ops)),
    get: (key) => lift(file, "get", () => Option.fromNullable(core.get(key))),
    claim: (key) => liftState(file, "claim", () => core.claim(key)),
    claimMany: (keys) => lift(file, "claimMany", () => core.claimMany(keys)),
    complete: (key, result, mappings, followUps) =>
      liftState(file, "complete", () => core.complete(key, result, mappings, followUps)),
    fail: (key, error, options) => liftState(file, "fail", () => core.fail(key, error, options)),
    markUncertain: (key, error, options) => liftState(file, "markUncertain", () => core.markUncertain(key, error, options)),
    recordAdoption: (adoption) => lift(file, "recordAdoption", () => core.recordAdoption(adoption)),
    release: (key, error) => liftState(file, "release", () => core.release(key, error ?? null)),
    markResolved: (key) => lift(file, "markResolved", () => core.markResolved(key)),
    resetInFlight: () => lift(file, "resetInFlight", () => core.resetInFlight()),
    retryFailed: (kinds) => lift(file, "retryFailed", () => core.retryFailed(kinds)),
    pending: (options) => lift(file, "pending", () => core.pending(options)),
    blocked: (limit) => lift(file, "blocked", () => core.blocked(limit)),
    failed: (limit) => lift(file, "failed", () => core.failed(limit)),
    setMapping: (mapping) => lift(file, "setMapping", () => core.setMapping(mapping)),
    lookup: (ns, key) => lift(file, "lookup", () => Option.fromNullable(core.lookup(ns, key))),
    mappedTargets: (ns, ids) => lift(file, "mappedTargets", () => core.mappedTargets(ns, ids)),
    getMeta: (key) => lift(file, "getMeta", () => Option.fromNullable(core.getMeta(key))),
    setMeta: (key, value) => lift(file, "setMeta", () => core.setMeta(key, value)),
    counts: () => lift(file, "counts", () => core.counts())
  }
}

/** Opens the journal for the scope: lock, open, and on close, close the database and unlock. */
export const openJournal = (
  file: string,
  options: { readonly now?: () => string } = {}
): Effect.Effect<JournalApi, JournalError | StoreBusy | StoreLockError, import("effect/Scope").Scope> =>
  Effect.gen(function*() {
    yield* lockStore("journal", file)
    const core = yield* Effect.acquireRelease(
      lift(file, "open", () => new JournalDb(file, options)),
      (c) => Effect.sync(() => c.close())
    )
    return makeJournalApi(core)
  })

/** The Journal service over `file` (created if missing), closed with the layer's scope. */
export const journalLayer = (
  file: string,
  options: { readonly now?: () => string } = {}
): Layer.Layer<Journal, JournalError | StoreBusy | StoreLockError> => Layer.scoped(Journal, openJournal(file, options))

/** One-line descriptions for the CLI. */
export const describeJournalError = (e: unknown): string | undefined =>
  e instanceof JournalError || e instanceof StoreBusy || e instanceof StoreLockError || e instanceof JournalStateError
    ? e.message
    : undefined
