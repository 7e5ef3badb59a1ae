/**
 * Planning: ops inserted many at a time, in numbered plan runs whose commits skip the
 * fsync (nothing is sent while planning; a plan lost to a power cut is planned again by
 * the rerun), made durable at the end of the run.
 */
import type Database from "better-sqlite3"
import { INSERT_CHUNK, json, PLAN_WAL_AUTOCHECKPOINT, DEFAULT_WAL_AUTOCHECKPOINT } from "./schema.ts"
import type { NewOp, OpState, PlannedOp, PlanOp } from "./types.ts"

/**
 * The page cache while planning (8 MB; negative: KiB), not the store's 64 MB: planning
 * appends, and every commit scans the whole page cache (SQLite's truncate of its page
 * hash) while the cache's growth faults in fresh memory. With 64 MB the inserts of a
 * million ops took a quarter to a half longer (3.8 against 4.8-6.0 us per op).
 */
const PLAN_CACHE_SIZE = -8192

/**
 * Whether the keys of `ops[from, to)` are distinct and none holds `#`. Checked on a sorted
 * copy, not with a Set: a Set lookup enters each new key in the engine's string table.
 */
const plainAndDistinct = (ops: ReadonlyArray<PlanOp>, from: number, to: number): boolean => {
  const keys = new Array<string>(to - from)
  for (let i = from; i < to; i++) {
    const key = ops[i]!.key
    if (key.includes("#")) return false
    keys[i - from] = key
  }
  keys.sort()
  for (let i = 1; i < keys.length; i++) if (keys[i] === keys[i - 1]) return false
  return true
}

export class Planning {
  /** The plan run in progress (commits skip the fsync until it ends), or null. */
  private planning: number | null = null
  /** The page cache size before the plan run (restored at its end). */
  private cacheBefore: number | null = null

  private readonly st: ReturnType<Planning["prepare"]>

  constructor(
    private readonly db: Database.Database,
    private readonly now: () => string,
    private readonly meta: { readonly get: (key: string) => string | undefined; readonly set: (key: string, value: string) => void }
  ) {
    this.st = this.prepare()
  }

  /** The statements planning uses, prepared once per connection. */
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
      setPlanRunMany: db.prepare(`UPDATE ops SET plan_run = ? WHERE key IN (SELECT value FROM json_each(?))`)
    }
  }

  private transaction<A>(f: () => A): A {
    return this.db.transaction(f)()
  }

  /** Multi-row inserts by row count (powers of two up to INSERT_CHUNK), prepared on first use. */
  private readonly multiInsert = new Map<number, Database.Statement>()

  /** `INSERT OR IGNORE` of `rows` ops in one statement. */
  private insertStatement(rows: number): Database.Statement {
    let st = this.multiInsert.get(rows)
    if (st === undefined) {
      st = this.db.prepare(
        `INSERT OR IGNORE INTO ops (key, kind, payload, depends_on, plan_run, updated_at) VALUES ${
          Array.from({ length: rows }, () => "(?, ?, ?, ?, @run, @now)").join(", ")
        }`
      )
      this.multiInsert.set(rows, st)
    }
    return st
  }

  /**
   * Inserts `ops[from, to)` (keys as given) with as few statements as possible: chunks of
   * INSERT_CHUNK rows, the rest by powers of two, so at most log2(INSERT_CHUNK) + 1
   * statement shapes exist. With `inserted` (indexed from `from`), the ops actually
   * inserted are marked 1 in it.
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
    inserted?: Uint8Array
  ): number {
    let changes = 0
    let i = from
    // The highest seq so far; kept current from each statement's last insert.
    let top = inserted === undefined ? 0 : this.st.topSeq.get() ?? 0
    while (i < to) {
      let rows = INSERT_CHUNK
      while (rows > to - i) rows >>= 1
      const args = new Array<unknown>(rows * 4)
      for (let r = 0; r < rows; r++) {
        const op = ops[i + r]!
        const b = r * 4
        args[b] = op.key
        args[b + 1] = op.kind
        args[b + 2] = json(op.payload)
        args[b + 3] = op.dependsOn ?? null
      }
      // The run and the time are the same for every row: bound once, not once a row.
      const info = this.insertStatement(rows).run(args, { run, now })
      if (inserted !== undefined && info.changes > 0) {
        if (info.changes === rows) inserted.fill(1, i - from, i - from + rows)
        else {
          const above = new Set(this.st.keysAbove.all(top))
          for (let r = 0; r < rows; r++) if (above.has(ops[i + r]!.key)) inserted[i - from + r] = 1
        }
        top = Number(info.lastInsertRowid)
      }
      changes += info.changes
      i += rows
    }
    return changes
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
      const current = Number(this.meta.get("plan_run") ?? "0")
      const next = current + 1
      this.meta.set("plan_run", String(next))
      return next
    })
    this.db.pragma("synchronous = NORMAL")
    // Fewer checkpoints while planning: each one fsyncs (NORMAL still syncs the WAL before
    // copying it into the database, and the database before the WAL is reused), and pages
    // written many times between two checkpoints are copied once.
    this.db.pragma(`wal_autocheckpoint = ${PLAN_WAL_AUTOCHECKPOINT}`)
    this.cacheBefore = this.db.pragma("cache_size", { simple: true }) as number
    this.db.pragma(`cache_size = ${PLAN_CACHE_SIZE}`)
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
    this.db.pragma(`cache_size = ${PLAN_CACHE_SIZE}`)
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
    if (this.cacheBefore !== null) this.db.pragma(`cache_size = ${this.cacheBefore}`)
    this.cacheBefore = null
    this.db.pragma("wal_checkpoint(TRUNCATE)")
    this.meta.set("plan_run_complete", String(run))
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
      // Which ops of the chunk were inserted, by index: no Set of keys (a Set lookup enters
      // a key in the engine's string table, a tenth of the planning thread's time).
      const inserted = new Uint8Array(INSERT_CHUNK)
      for (let from = 0; from < ops.length; from += INSERT_CHUNK) {
        const to = Math.min(ops.length, from + INSERT_CHUNK)
        // Fast path: one multi-row insert for the chunk, then only the ops whose key was
        // not inserted (planned before, or a repeat) take the one-by-one path below. It
        // needs the chunk's keys distinct and free of `#` (so no op's key can be another's
        // occurrence key): otherwise an op could take a key meant for an earlier one.
        const distinct = plainAndDistinct(ops, from, to)
        inserted.fill(0)
        const count = distinct ? this.insertRange(ops, from, to, run, now, inserted) : 0
        const earlier = distinct && count < to - from ? this.claimEarlier(run, ops, from, to, inserted) : undefined
        for (let i = from; i < to; i++) {
          const op = ops[i]!
          if (inserted[i - from] === 1) out.push({ key: op.key, isNew: true, duplicate: false, state: "pending" })
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
    inserted: Uint8Array
  ): Map<string, PlannedOp> {
    const rest: Array<string> = []
    for (let i = from; i < to; i++) if (inserted[i - from] !== 1) rest.push(ops[i]!.key)
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
}
