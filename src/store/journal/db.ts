/**
 * The synchronous core over one open journal file: op transitions, queries, the id map,
 * adoptions and meta; planning is planning.ts. The Effect service (service.ts) wraps it;
 * the planning thread (plan-writer.worker.ts) and the transition batcher
 * (batch.ts) use it directly.
 */
import type Database from "better-sqlite3"
import { statementCache } from "../sqlite.ts"
import { JournalStateError } from "./errors.ts"
import { Planning } from "./planning.ts"
import { idMapReader, json, openJournalDatabase, opsReader, type OpRow, toOp, WAITS_FOR } from "./schema.ts"
import {
  type Adoption,
  type ClaimNextOptions,
  APPLIED_RESULT,
  type FailOptions,
  type JournalCounts,
  type ListOptions,
  type Mapping,
  type MappingsPage,
  type MarkUncertainOptions,
  type NewOp,
  type Op,
  type OpState,
  type PendingOp,
  type PendingPageOptions,
  type PlannedOp,
  type PlanOp,
  type StoredAdoption
} from "./types.ts"

export class JournalDb {
  readonly db: Database.Database
  private readonly now: () => string
  private readonly st: ReturnType<JournalDb["prepare"]>
  private readonly plans: Planning
  private readonly readMappings: ReturnType<typeof idMapReader>
  private readonly readOps: ReturnType<typeof opsReader>
  /** Statements whose text is built at the call (a parameter per kind or state). */
  private readonly statement: ReturnType<typeof statementCache>

  constructor(readonly file: string, options: { readonly now?: () => string } = {}) {
    this.now = options.now ?? (() => new Date().toISOString())
    this.db = openJournalDatabase(file)
    this.st = this.prepare()
    this.readMappings = idMapReader(this.db)
    this.readOps = opsReader(this.db)
    this.statement = statementCache(this.db)
    this.plans = new Planning(this.db, this.now, {
      get: (key) => this.getMeta(key),
      set: (key, value) => this.setMeta(key, value)
    })
  }

  /** Inserts ops not yet present (by key) in one transaction; returns how many were new. */
  addOps(ops: Iterable<NewOp>): number {
    return this.plans.addOps(ops)
  }

  /** Starts a plan run (see planning.ts). */
  beginPlanRun(): number {
    return this.plans.beginPlanRun()
  }

  /** Joins the plan run another connection to this file began (a planning thread). */
  joinPlanRun(): void {
    this.plans.joinPlanRun()
  }

  /** Ends a plan run: everything planned is durable before the first op is claimed. */
  endPlanRun(run: number): void {
    this.plans.endPlanRun(run)
  }

  /** Ends an open plan run before anything is sent (the first claim calls it). */
  ensureDurable(): void {
    this.plans.ensureDurable()
  }

  /** Plans ops in run `run` (see planning.ts). */
  planOps(run: number, ops: ReadonlyArray<PlanOp>): Array<PlannedOp> {
    return this.plans.planOps(run, ops)
  }

  private prepare() {
    const db = this.db
    return {
      insert: db.prepare(
        `INSERT OR IGNORE INTO ops (key, kind, payload, depends_on, plan_run, updated_at)
         VALUES (?, ?, ?, ?, ?, ?)`
      ),
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
        `UPDATE ops SET state = 'failed', error = ?, uncertain = ?, sent_at = COALESCE(?, sent_at), updated_at = ?
         WHERE key = ? AND state IN ('in_flight', 'pending')`
      ),
      markUncertain: db.prepare(
        `UPDATE ops SET state = 'pending', uncertain = 1, error = ?, sent_at = ?, updated_at = ?
         WHERE key = ? AND state = 'in_flight'`
      ),
      markApplied: db.prepare(
        `UPDATE ops SET state = 'pending', uncertain = 1, error = ?, result = ?, sent_at = ?, updated_at = ?
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
      // The first recorded value stays: a later attempt may read what an earlier one wrote.
      before: db.prepare(
        `UPDATE ops SET before = COALESCE(before, ?), updated_at = ? WHERE key = ? AND state = 'in_flight'`
      ),
      resolved: db.prepare(
        `UPDATE ops SET uncertain = 0, updated_at = ? WHERE key = ? AND state = 'pending'`
      ),
      // A dead run's send, if any, was before now: the settle window runs from here.
      resetInFlight: db.prepare(
        `UPDATE ops SET state = 'pending', uncertain = 1, sent_at = ?, updated_at = ? WHERE state = 'in_flight'`
      ),
      map: db.prepare(
        `INSERT INTO id_map (namespace, source_key, target_id, op_key, created_at) VALUES (?, ?, ?, ?, ?)
         ON CONFLICT (namespace, source_key) DO UPDATE SET target_id = excluded.target_id, op_key = excluded.op_key`
      ),
      lookup: db.prepare<[string, string], { target_id: string }>(
        `SELECT target_id FROM id_map WHERE namespace = ? AND source_key = ?`
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

  get(key: string): Op | undefined {
    const row = this.st.get.get(key)
    return row === undefined ? undefined : toOp(row)
  }

  /** The ops with these keys, in no particular order (a key without an op is left out). */
  getMany(keys: ReadonlyArray<string>): Array<Op> {
    return this.readOps(keys)
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
   * Claims the first runnable pending op (the last with `descending`) of one of `kinds`
   * whose key starts with `keyPrefix`; undefined when there is none. See `pending`.
   */
  claimNext(options: ClaimNextOptions): Op | undefined {
    if (options.kinds.length === 0) return undefined
    this.ensureDurable()
    const now = this.now()
    return this.transaction(() => {
      // substr and length count the same characters (not LIKE: case-blind in SQLite).
      const row = this
        .statement<Array<string>, { key: string }>(
          `SELECT o.key FROM ops o
           WHERE o.state = 'pending' AND o.kind IN (${options.kinds.map(() => "?").join(",")})
             AND substr(o.key, 1, length(?)) = ? ${options.untried === true ? "AND o.attempts = 0" : ""}
             AND (o.depends_on IS NULL OR EXISTS (SELECT 1 FROM ops d WHERE d.key = o.depends_on AND d.state = 'done'))
           ORDER BY o.seq ${options.descending === true ? "DESC" : "ASC"} LIMIT 1`
        )
        .get(...options.kinds, options.keyPrefix, options.keyPrefix)
      if (row === undefined) return undefined
      this.st.claim.run(now, now, row.key)
      return this.get(row.key)
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

  /** -> failed; with `outcomeUnknown` and `sentAt`, that send is recorded (see `Op.sentAt`). */
  fail(key: string, error: string, options: FailOptions = {}): void {
    const now = this.now()
    const unknown = options.outcomeUnknown === true
    const changed = this.st.fail.run(error, unknown ? 1 : 0, unknown ? options.sentAt ?? null : null, now, key).changes
    if (changed === 0) throw new JournalStateError({ key, expected: "in_flight or pending", actual: this.stateOf(key) })
  }

  /**
   * in_flight -> pending + uncertain, recording when the request of unknown outcome left
   * (`sentAt`, default now: it cannot have left later). With `applied` (the service
   * answered 2xx, the answer was unreadable) the op keeps APPLIED_RESULT: reconciled by
   * every run, never sent again.
   */
  markUncertain(key: string, error: string, options: MarkUncertainOptions = {}): void {
    const now = this.now()
    const sentAt = options.sentAt ?? now
    const changed = options.applied === true
      ? this.st.markApplied.run(error, JSON.stringify(APPLIED_RESULT), sentAt, now, key).changes
      : this.st.markUncertain.run(error, sentAt, now, key).changes
    if (changed === 0) throw new JournalStateError({ key, expected: "in_flight", actual: this.stateOf(key) })
  }

  /**
   * Ends ops that a newer plan made pointless (an older version's update of a record whose
   * newer version is planned) without sending them: not-done ones become done with
   * `{superseded: by}`. Returns how many.
   */
  supersede(keys: ReadonlyArray<string>, by: string): number {
    if (keys.length === 0) return 0
    return this
      .statement(
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

  /**
   * Records what the target held before the in-flight op `key` changes it (see
   * `Op.before`), before its request is sent. Only the first value is kept: a later
   * attempt may find the values an earlier attempt's request set.
   */
  recordBefore(key: string, before: unknown): void {
    const changed = this.st.before.run(json(before), this.now(), key).changes
    if (changed === 0) throw new JournalStateError({ key, expected: "in_flight", actual: this.stateOf(key) })
  }

  /** Ops in plan order (or reversed) between `afterSeq` and `beforeSeq` (see ListOptions). */
  list(options: ListOptions): Array<Op> {
    const kinds = options.kinds ?? []
    const states = options.states ?? []
    const marks = (n: number) => Array.from({ length: n }, () => "?").join(",")
    return this
      .statement<Array<unknown>, OpRow>(
        `SELECT * FROM ops WHERE seq > ? ${options.beforeSeq !== undefined ? "AND seq < ?" : ""}
           ${kinds.length > 0 ? `AND kind IN (${marks(kinds.length)})` : ""}
           ${states.length > 0 ? `AND state IN (${marks(states.length)})` : ""}
         ORDER BY seq ${options.descending === true ? "DESC" : ""} LIMIT ?`
      )
      .all(options.afterSeq ?? 0, ...(options.beforeSeq !== undefined ? [options.beforeSeq] : []), ...kinds, ...states, options.limit)
      .map(toOp)
  }

  /** A reconciliation found the uncertain op was NOT applied: it may be sent plainly. */
  markResolved(key: string): void {
    this.st.resolved.run(this.now(), key)
  }

  resetInFlight(): number {
    const now = this.now()
    return this.st.resetInFlight.run(now, now).changes
  }

  retryFailed(kinds?: ReadonlyArray<string>): number {
    const now = this.now()
    if (kinds === undefined) {
      return this.statement(`UPDATE ops SET state = 'pending', updated_at = ? WHERE state = 'failed'`).run(now).changes
    }
    const marks = kinds.map(() => "?").join(",")
    return this
      .statement(`UPDATE ops SET state = 'pending', updated_at = ? WHERE state = 'failed' AND kind IN (${marks})`)
      .run(now, ...kinds).changes
  }

  /**
   * Pending ops in plan order whose dependency (if any) is done, after `afterSeq`.
   * Ops whose dependency failed stay pending; `blocked()` lists them.
   */
  pending(options: { readonly kinds?: ReadonlyArray<string>; readonly limit: number; readonly afterSeq?: number }): Array<Op> {
    const kinds = options.kinds ?? []
    const kindClause = kinds.length > 0 ? `AND o.kind IN (${kinds.map(() => "?").join(",")})` : ""
    const rows = this
      .statement<Array<unknown>, OpRow>(
        `SELECT o.* FROM ops o
         WHERE o.state = 'pending' AND o.seq > ? ${kindClause}
           AND (o.depends_on IS NULL OR EXISTS (SELECT 1 FROM ops d WHERE d.key = o.depends_on AND d.state = 'done'))
         ORDER BY o.seq LIMIT ?`
      )
      .all(options.afterSeq ?? 0, ...kinds, options.limit)
    return rows.map(toOp)
  }

  /**
   * Pending ops in plan order after `afterSeq`, those whose dependency is not done
   * included, each with the key it waits for (see PendingOp).
   */
  pendingPage(options: PendingPageOptions): Array<PendingOp> {
    const kinds = options.kinds ?? []
    const kindClause = kinds.length > 0 ? `AND o.kind IN (${kinds.map(() => "?").join(",")})` : ""
    const rows = this
      .statement<Array<unknown>, OpRow & { waits_for: string | null }>(
        `SELECT o.*, ${WAITS_FOR} AS waits_for FROM ops o
         WHERE o.state = 'pending' AND o.seq > ? ${kindClause}
         ORDER BY o.seq LIMIT ?`
      )
      .all(options.afterSeq ?? 0, ...kinds, options.limit)
    return rows.map((r) => ({ op: toOp(r), waitsFor: r.waits_for }))
  }

  /** Pending ops that cannot run because their dependency is not done (failed or missing). */
  blocked(limit = 100): Array<Op> {
    return this
      .statement<[number], OpRow>(
        `SELECT o.* FROM ops o WHERE o.state = 'pending' AND o.depends_on IS NOT NULL
           AND NOT EXISTS (SELECT 1 FROM ops d WHERE d.key = o.depends_on AND d.state = 'done')
         ORDER BY o.seq LIMIT ?`
      )
      .all(limit)
      .map(toOp)
  }

  /** Failed ops in plan order (for reports). */
  failed(limit = 100): Array<Op> {
    return this
      .statement<[number], OpRow>(`SELECT * FROM ops WHERE state = 'failed' ORDER BY seq LIMIT ?`)
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
  mappings(namespace: string, page?: MappingsPage): Array<Mapping> {
    return this.readMappings(namespace, page)
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
