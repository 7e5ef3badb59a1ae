/**
 * The journal on PostgreSQL (`--journal postgres://...`): the same tables, transitions and
 * checks as the SQLite core (db.ts, planning.ts), statement for statement, so a journal
 * behaves the same on either backend. Every method is an Effect and every state change
 * one transaction, committed before the Effect returns: a claim is on the server before
 * its request is sent. One writer at a time: `openPostgresJournal` holds the journal's
 * session advisory lock (src/store/postgres.ts), which the server drops when the holder's
 * connection closes, however the holder dies.
 *
 * Helper sessions (`helper: true`, other processes of the same run) join the journal a
 * main session made: they take no writer lock and claim and end ops of its plan, each
 * claim a conditional update (`claimNext` skips rows another session is claiming).
 * Every session, main or helper, is an `owner`: a random number written into the ops it
 * claims and held as an advisory lock of its own for its lifetime. `resetInFlight` resets
 * only in-flight ops whose owner holds no lock any more (a dead session's) or that have
 * none (claimed before owners existed), never a live helper's.
 *
 * Planning mirrors planning.ts: many rows per INSERT, plan runs whose commits do not wait
 * for the server's WAL flush (`synchronous_commit` off for those transactions: nothing is
 * sent while planning, a plan lost to a server crash is planned again by the rerun), and
 * a normal commit at the end of the run (or at the first claim), which flushes everything
 * committed before it.
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import type { SqlError } from "effect/sql/SqlError"
import { randomInt } from "node:crypto"
import { type StoreBusy, StoreLockError } from "../file-lock.ts"
import {
  connectPostgres,
  dollarParams,
  lockPostgresWriter,
  openPostgres,
  parsePostgresUrl,
  pgErrorDetail,
  type PostgresStore,
  redactUrl
} from "../postgres.ts"
import { StoreOpenError } from "../sqlite.ts"
import type { BatchedTransitions } from "./batch.ts"
import { JournalError, JournalStateError } from "./errors.ts"
import { INSERT_CHUNK, json, type OpRow, toOp, WAITS_FOR } from "./schema.ts"
import { JOURNAL_PG_MIGRATIONS, JOURNAL_PG_VERSION } from "./schema-postgres.ts"
import { toPromise } from "./to-promise.ts"
import type { JournalApi, OpenJournalOptions, Planner } from "./service.ts"
import {
  type Adoption,
  APPLIED_RESULT,
  type FailOptions,
  type JournalCounts,
  type Mapping,
  type MarkUncertainOptions,
  type NewOp,
  type Op,
  type OpState,
  type PlannedOp,
  type PlanOp,
  type StoredAdoption
} from "./types.ts"

type Param = string | number | null | ReadonlyArray<string>

/** What a body may fail with before it is named: the driver, a refused transition, a bad op. */
type BodyError = SqlError | JournalStateError | Error

const detailOf = (e: SqlError | Error): string => pgErrorDetail(e)

/** A failure to open, in the journal's words (as the SQLite backend reports it). */
const openError = (e: StoreOpenError): JournalError =>
  new JournalError({
    file: e.file,
    operation: "open",
    detail: e.reason === "too-new"
      ? `written by a newer worksync (journal format ${
        e.detail.replace(/^schema version (\d+).*$/, "$1")
      }; this version reads formats up to ${JOURNAL_PG_VERSION}): upgrade worksync or use another journal`
      : e.detail
  })

/** Opens the journal's tables in a PostgreSQL schema (creating them unless `mustExist`). */
const openJournalStore = (location: string, options: { readonly mustExist?: boolean } = {}) =>
  openPostgres(location, "journal", JOURNAL_PG_MIGRATIONS, options).pipe(Effect.mapError(openError))

/** The first key of every owner lock; the second is the owner (see `holdOwnerLock`). */
const OWNER_LOCK = "hashtext('worksync-journal-owner')"

/**
 * Picks the session's owner and holds its lock for the scope on a connection of its own:
 * the server drops it when that connection closes, however the session dies. Random, so
 * sessions need no registry; a number a live session holds is drawn again.
 */
const holdOwnerLock = (pg: PostgresStore): Effect.Effect<number, StoreLockError, Scope.Scope> =>
  Effect.gen(function*() {
    const lockError = (e: SqlError) => new StoreLockError({ what: "journal", file: pg.location.display, detail: detailOf(e) })
    const connection = yield* pg.sql.reserve.pipe(Effect.mapError(lockError))
    for (;;) {
      const owner = randomInt(1, 2 ** 31)
      const rows = yield* connection.execute(`SELECT pg_try_advisory_lock(${OWNER_LOCK}, $1) AS held`, [owner], undefined).pipe(
        Effect.mapError(lockError)
      )
      if ((rows[0] as { held?: boolean } | undefined)?.held !== true) continue
      yield* Effect.addFinalizer(() =>
        Effect.ignore(connection.execute(`SELECT pg_advisory_unlock(${OWNER_LOCK}, $1)`, [owner], undefined))
      )
      return owner
    }
  })

/**
 * Opens the journal at a PostgreSQL location for the scope: its tables (created when
 * missing), its single-writer lock (StoreBusy when another process holds it), and the
 * session's owner lock. A helper session opens only an existing journal and takes only
 * its owner lock: it works beside the main session that holds the writer lock.
 */
export const openPostgresJournal = (
  location: string,
  options: OpenJournalOptions = {}
): Effect.Effect<JournalApi, JournalError | StoreBusy | StoreLockError, Scope.Scope> =>
  Effect.gen(function*() {
    const helper = options.helper === true
    const pg = yield* openJournalStore(location, { mustExist: helper })
    if (!helper) yield* lockPostgresWriter(pg, "journal")
    const owner = yield* holdOwnerLock(pg)
    return makePostgresJournalApi(pg, { ...options, owner })
  })

/**
 * The journal at `location` opened to be read only (a dry run's, a plan's), or undefined
 * when none is there. Nothing is created, and a journal of an older version is read as it
 * is, not migrated (its rows read as the store reads them: a column added later reads as
 * empty); one of a newer version is refused, as at open.
 */
const openJournalToRead = (location: string): Effect.Effect<PostgresStore | undefined, JournalError, Scope.Scope> =>
  Effect.gen(function*() {
    const where = yield* Effect.try({
      try: () => parsePostgresUrl(location),
      catch: (e) => e instanceof StoreOpenError ? e : new StoreOpenError({ file: redactUrl(location), reason: "io", detail: String(e) })
    })
    const sql = yield* connectPostgres(where, "journal", 2)
    const fail = (e: SqlError) => new StoreOpenError({ file: where.display, reason: "io", detail: detailOf(e) })
    // The schema is the search path: names not found there are no journal.
    const there = yield* sql.unsafe<{ found: boolean }>(
      "SELECT to_regclass('worksync_schema') IS NOT NULL AND to_regclass('ops') IS NOT NULL AS found"
    ).pipe(Effect.mapError(fail))
    if (there[0]?.found !== true) return undefined
    const rows = yield* sql.unsafe<{ version: number }>("SELECT version FROM worksync_schema WHERE store = 'journal'").pipe(Effect.mapError(fail))
    const version = rows[0]?.version
    if (version === undefined) return undefined
    if (version > JOURNAL_PG_VERSION) {
      return yield* new StoreOpenError({ file: where.display, reason: "too-new", detail: `schema version ${version}, this build knows ${JOURNAL_PG_VERSION}` })
    }
    return { sql, location: where, store: "journal" }
  }).pipe(Effect.mapError(openError))

/**
 * A read-only look at an existing journal (a dry run's): the state of each key, or
 * undefined when no journal exists at `location` (a dry run then plans against nothing).
 */
export const openPostgresJournalStates = (
  location: string
): Effect.Effect<
  ((keys: ReadonlyArray<string>) => Effect.Effect<Map<string, OpState>, JournalError>) | undefined,
  JournalError,
  Scope.Scope
> =>
  Effect.map(openJournalToRead(location), (pg) =>
    pg === undefined ? undefined : (keys: ReadonlyArray<string>) =>
      pg.sql.unsafe<{ key: string; state: OpState }>(
        "SELECT key, state FROM ops WHERE key = ANY($1::text[])",
        [keys]
      ).pipe(
        Effect.map((rows) => new Map(rows.map((r) => [r.key, r.state]))),
        Effect.mapError((e) => new JournalError({ file: pg.location.display, operation: "read", detail: detailOf(e) }))
      ))

/**
 * The journal at `location` read without writing (a plan's view of earlier passes, as
 * read-only.ts gives a file's): its ops, id map and meta, or undefined when no journal is
 * there.
 */
export const openPostgresJournalView = (
  location: string
): Effect.Effect<Pick<JournalApi, "getMany" | "mappings" | "getMeta"> | undefined, JournalError, Scope.Scope> =>
  Effect.map(openJournalToRead(location), (pg) => {
    if (pg === undefined) return undefined
    const api = makePostgresJournalApi(pg, { owner: 0 })
    return { getMany: api.getMany, mappings: api.mappings, getMeta: api.getMeta }
  })

/**
 * The journal service over an open PostgreSQL store, for a session whose owner lock (and,
 * unless it is a helper, writer lock) the caller holds.
 */
export const makePostgresJournalApi = (
  pg: PostgresStore,
  options: { readonly owner: number; readonly now?: () => string }
): JournalApi => {
  const { sql } = pg
  const { owner } = options
  const file = pg.location.display
  const now = options.now ?? (() => new Date().toISOString())

  const q = <A = Record<string, unknown>>(text: string, params: ReadonlyArray<Param> = []) =>
    sql.unsafe<A & object>(dollarParams(text), params)

  /** Names a failure; a refused transition stays typed. */
  const named = (operation: string) => (e: BodyError): JournalError | JournalStateError =>
    e instanceof JournalStateError ? e : new JournalError({ file, operation, detail: detailOf(e) })
  /** One statement (or a read), autocommitted. */
  const run = <A>(operation: string, body: Effect.Effect<A, BodyError>): Effect.Effect<A, JournalError | JournalStateError> =>
    Effect.mapError(body, named(operation))
  /** One state change: its statements in one transaction (all or nothing). */
  const tx = <A>(operation: string, body: Effect.Effect<A, BodyError>): Effect.Effect<A, JournalError | JournalStateError> =>
    sql.withTransaction(body).pipe(Effect.mapError(named(operation)))
  /** For methods that cannot refuse a transition. */
  const plain = <A>(e: Effect.Effect<A, JournalError | JournalStateError>): Effect.Effect<A, JournalError> =>
    e as Effect.Effect<A, JournalError>

  const getOp = (key: string) =>
    Effect.map(q<OpRow>("SELECT * FROM ops WHERE key = ?", [key]), (rows) => rows[0] === undefined ? undefined : toOp(rows[0]))
  const stateOf = (key: string) =>
    Effect.map(q<{ state: OpState }>("SELECT state FROM ops WHERE key = ?", [key]), (rows) => rows[0]?.state ?? "missing")
  /** Fails with the transition's JournalStateError when `rows` (the rows it changed) is empty. */
  const changedOrRefused = (key: string, expected: string) => (rows: ReadonlyArray<unknown>) =>
    rows.length > 0 ? Effect.void : Effect.flatMap(stateOf(key), (actual) => Effect.fail(new JournalStateError({ key, expected, actual })))

  // ---- planning (planning.ts) ----

  /** The plan run in progress (its commits do not wait for the WAL flush), or null. */
  let planning: number | null = null

  /** `INSERT ... ON CONFLICT DO NOTHING` of `ops[from, to)`, INSERT_CHUNK rows a statement; the keys inserted. */
  const insertRange = (ops: ReadonlyArray<NewOp>, from: number, to: number, planRun: number | null, at: string) =>
    Effect.gen(function*() {
      const inserted: Array<string> = []
      for (let i = from; i < to; i += INSERT_CHUNK) {
        const end = Math.min(to, i + INSERT_CHUNK)
        const params: Array<Param> = []
        for (let r = i; r < end; r++) {
          const op = ops[r]!
          params.push(op.key, op.kind, json(op.payload), op.dependsOn ?? null, planRun, at)
        }
        // Rows of one statement are inserted in order: a key repeated in `ops` keeps its
        // first op, and seqs follow the order given, as one insert per op would.
        const rows = yield* q<{ key: string }>(
          `INSERT INTO ops (key, kind, payload, depends_on, plan_run, updated_at) VALUES ${
            Array.from({ length: end - i }, () => "(?, ?, ?, ?, ?, ?)").join(", ")
          } ON CONFLICT (key) DO NOTHING RETURNING key`,
          params
        )
        for (const r of rows) inserted.push(r.key)
      }
      return inserted
    })

  /** The check SQLite makes by ignoring the row: an op without a kind is not stored. */
  const checkKinds = (ops: ReadonlyArray<NewOp>) => {
    for (const op of ops) {
      if (typeof op.kind !== "string") return Effect.fail(new Error(`journal op ${op.key}: not stored (kind ${JSON.stringify(op.kind)})`))
    }
    return Effect.void
  }

  /** Ops SQLite's `INSERT OR IGNORE` would store: one without a kind is skipped, not refused. */
  const storable = (ops: ReadonlyArray<NewOp>) => ops.every((op) => typeof op.kind === "string") ? ops : ops.filter((op) => typeof op.kind === "string")

  const addOpsBody = (ops: Iterable<NewOp>) => {
    const list = storable(Array.isArray(ops) ? (ops as ReadonlyArray<NewOp>) : [...ops])
    return Effect.map(insertRange(list, 0, list.length, null, now()), (keys) => keys.length)
  }

  const beginPlanRun = Effect.map(
    q<{ value: string }>(
      `INSERT INTO meta (key, value) VALUES ('plan_run', '1')
       ON CONFLICT (key) DO UPDATE SET value = (CAST(meta.value AS BIGINT) + 1)::text RETURNING value`
    ),
    (rows) => {
      const next = Number(rows[0]!.value)
      planning = next
      return next
    }
  )

  /** Ends a plan run with a commit that waits for the WAL flush, which covers every earlier commit. */
  const endPlanRun = (planRun: number) =>
    Effect.suspend(() => {
      planning = null
      return setMetaBody("plan_run_complete", String(planRun))
    })

  /** The first claim ends an open plan run: nothing may be sent while commits skip the flush. */
  const ensureDurable = Effect.suspend(() => planning === null ? Effect.void : endPlanRun(planning))

  /** Plans one op (inside `planOps`' transaction): insert, or settle why its key exists. */
  const planOne = (planRun: number, op: PlanOp, at: string) =>
    Effect.gen(function*() {
      const payload = json(op.payload)
      for (let n = 0;; n++) {
        const key = n === 0 ? op.key : `${op.key}#${n}`
        const added = yield* q(
          `INSERT INTO ops (key, kind, payload, depends_on, plan_run, updated_at) VALUES (?, ?, ?, ?, ?, ?)
           ON CONFLICT (key) DO NOTHING RETURNING seq`,
          [key, op.kind, payload, op.dependsOn ?? null, planRun, at]
        )
        if (added.length === 1) return { key, isNew: true, duplicate: false, state: "pending" } satisfies PlannedOp
        const info = (yield* q<{ plan_run: number | null; state: OpState }>("SELECT plan_run, state FROM ops WHERE key = ?", [key]))[0]!
        if (info.plan_run === planRun && op.occurrence === true) continue
        if (info.plan_run === planRun) return { key, isNew: false, duplicate: true, state: info.state } satisfies PlannedOp
        yield* q("UPDATE ops SET plan_run = ? WHERE key = ?", [planRun, key])
        return { key, isNew: false, duplicate: false, state: info.state } satisfies PlannedOp
      }
    })

  /** The ops of a distinct chunk an EARLIER run planned: taken into this run in one statement. */
  const claimEarlier = (planRun: number, rest: ReadonlyArray<string>) =>
    Effect.gen(function*() {
      const out = new Map<string, PlannedOp>()
      const claimed: Array<string> = []
      const rows = yield* q<{ key: string; plan_run: number | null; state: OpState }>(
        "SELECT key, plan_run, state FROM ops WHERE key = ANY(?::text[])",
        [rest]
      )
      for (const row of rows) {
        if (row.plan_run === planRun) continue
        out.set(row.key, { key: row.key, isNew: false, duplicate: false, state: row.state })
        claimed.push(row.key)
      }
      if (claimed.length > 0) yield* q("UPDATE ops SET plan_run = ? WHERE key = ANY(?::text[])", [planRun, claimed])
      return out
    })

  /** planning.ts's `planOps`, chunk for chunk: the same keys, states and order. */
  const planOpsBody = (planRun: number, ops: ReadonlyArray<PlanOp>) =>
    Effect.gen(function*() {
      yield* checkKinds(ops)
      // Nothing is sent while planning: this transaction need not wait for the WAL flush.
      yield* q("SELECT set_config('synchronous_commit', 'off', true)")
      const at = now()
      const out: Array<PlannedOp> = []
      const chunkKeys = new Set<string>()
      for (let from = 0; from < ops.length; from += INSERT_CHUNK) {
        const to = Math.min(ops.length, from + INSERT_CHUNK)
        // The fast path needs the chunk's keys distinct and free of `#` (see planning.ts).
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
        const inserted = new Set(distinct ? yield* insertRange(ops, from, to, planRun, at) : [])
        let earlier: Map<string, PlannedOp> | undefined
        if (distinct && inserted.size < to - from) {
          const rest: Array<string> = []
          for (let i = from; i < to; i++) if (!inserted.has(ops[i]!.key)) rest.push(ops[i]!.key)
          earlier = yield* claimEarlier(planRun, rest)
        }
        for (let i = from; i < to; i++) {
          const op = ops[i]!
          if (inserted.has(op.key)) out.push({ key: op.key, isNew: true, duplicate: false, state: "pending" })
          else out.push(earlier?.get(op.key) ?? (yield* planOne(planRun, op, at)))
        }
      }
      return out
    })

  // ---- transitions (db.ts) ----

  const claimBody = (key: string, at: string) =>
    q<OpRow>(
      `UPDATE ops SET state = 'in_flight', attempts = attempts + 1, attempted_at = ?, updated_at = ?, owner = ?
       WHERE key = ? AND state = 'pending' RETURNING *`,
      [at, at, owner, key]
    )

  const claim = (key: string) =>
    Effect.andThen(
      plain(run("claim", ensureDurable)),
      run(
        "claim",
        Effect.gen(function*() {
          const rows = yield* claimBody(key, now())
          yield* changedOrRefused(key, "pending")(rows)
          return toOp(rows[0]!)
        })
      )
    )

  /**
   * `claim` of the first (or last) runnable pending op of the kinds under the prefix, in
   * one statement. The candidate row is locked in the subselect, skipping rows another
   * session is claiming, so sessions never take the same op nor wait for one another.
   */
  const claimNext: JournalApi["claimNext"] = ({ descending, keyPrefix, kinds, untried }) =>
    Effect.andThen(
      plain(run("claimNext", ensureDurable)),
      plain(run(
        "claimNext",
        Effect.suspend(() => {
          const at = now()
          // The prefix as a LIKE pattern: its own `%`, `_` and `\` taken literally.
          const pattern = `${keyPrefix.replace(/[\\%_]/g, "\\$&")}%`
          return Effect.map(
            q<OpRow>(
              `UPDATE ops SET state = 'in_flight', attempts = attempts + 1, attempted_at = ?, updated_at = ?, owner = ?
               WHERE seq = (
                 SELECT o.seq FROM ops o
                 WHERE o.state = 'pending' AND o.kind = ANY(?::text[]) AND o.key LIKE ? ESCAPE '\\'
                   ${untried === true ? "AND o.attempts = 0" : ""}
                   AND (o.depends_on IS NULL OR EXISTS (SELECT 1 FROM ops d WHERE d.key = o.depends_on AND d.state = 'done'))
                 ORDER BY o.seq ${descending === true ? "DESC" : "ASC"} LIMIT 1
                 FOR UPDATE SKIP LOCKED
               ) RETURNING *`,
              [at, at, owner, kinds, pattern]
            ),
            (rows) => Option.map(Option.fromNullishOr(rows[0]), toOp)
          )
        })
      ))
    )

  const mapBody = (m: Mapping, opKey: string | null, at: string) =>
    q(
      `INSERT INTO id_map (namespace, source_key, target_id, op_key, created_at) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (namespace, source_key) DO UPDATE SET target_id = excluded.target_id, op_key = excluded.op_key`,
      [m.namespace, m.sourceKey, m.targetId, opKey, at]
    )

  const complete = (key: string, result: unknown, mappings: ReadonlyArray<Mapping> = [], followUps: ReadonlyArray<NewOp> = []) =>
    tx(
      "complete",
      Effect.gen(function*() {
        const at = now()
        yield* q(
          `UPDATE ops SET state = 'done', result = ?, error = NULL, uncertain = 0, updated_at = ?
           WHERE key = ? AND state IN ('in_flight', 'pending') RETURNING key`,
          [json(result), at, key]
        ).pipe(Effect.flatMap(changedOrRefused(key, "in_flight or pending")))
        for (const m of mappings) yield* mapBody(m, key, at)
        for (const op of storable(followUps)) {
          yield* q(
            `INSERT INTO ops (key, kind, payload, depends_on, plan_run, updated_at) VALUES (?, ?, ?, ?, NULL, ?)
             ON CONFLICT (key) DO NOTHING`,
            [op.key, op.kind, json(op.payload), op.dependsOn ?? null, at]
          )
        }
      })
    )

  const fail = (key: string, error: string, options: FailOptions = {}) =>
    Effect.suspend(() => {
      const unknown = options.outcomeUnknown === true
      return run(
        "fail",
        q(
          `UPDATE ops SET state = 'failed', error = ?, uncertain = ?, sent_at = COALESCE(?, sent_at), updated_at = ?
           WHERE key = ? AND state IN ('in_flight', 'pending') RETURNING key`,
          [error, unknown ? 1 : 0, unknown ? options.sentAt ?? null : null, now(), key]
        ).pipe(Effect.flatMap(changedOrRefused(key, "in_flight or pending")))
      )
    })

  const markUncertain = (key: string, error: string, options: MarkUncertainOptions = {}) =>
    Effect.suspend(() => {
      const at = now()
      const sentAt = options.sentAt ?? at
      return run(
        "markUncertain",
        (options.applied === true
          ? q(
            `UPDATE ops SET state = 'pending', uncertain = 1, error = ?, result = ?, sent_at = ?, updated_at = ?
             WHERE key = ? AND state = 'in_flight' RETURNING key`,
            [error, JSON.stringify(APPLIED_RESULT), sentAt, at, key]
          )
          : q(
            `UPDATE ops SET state = 'pending', uncertain = 1, error = ?, sent_at = ?, updated_at = ?
             WHERE key = ? AND state = 'in_flight' RETURNING key`,
            [error, sentAt, at, key]
          )).pipe(Effect.flatMap(changedOrRefused(key, "in_flight")))
      )
    })

  const release = (key: string, error: string | null = null) =>
    run(
      "release",
      q(`UPDATE ops SET state = 'pending', error = ?, updated_at = ? WHERE key = ? AND state = 'in_flight' RETURNING key`, [
        error,
        now(),
        key
      ]).pipe(Effect.flatMap(changedOrRefused(key, "in_flight")))
    )

  const markResolved = (key: string) =>
    plain(run("markResolved", Effect.asVoid(q(`UPDATE ops SET uncertain = 0, updated_at = ? WHERE key = ? AND state = 'pending'`, [now(), key]))))

  // The first recorded value stays (see JournalDb.recordBefore).
  const recordBefore = (key: string, before: unknown) =>
    run(
      "recordBefore",
      q(`UPDATE ops SET before = COALESCE(before, ?), updated_at = ? WHERE key = ? AND state = 'in_flight' RETURNING key`, [
        json(before),
        now(),
        key
      ]).pipe(Effect.flatMap(changedOrRefused(key, "in_flight")))
    )

  const supersedeBody = (keys: ReadonlyArray<string>, by: string) =>
    keys.length === 0 ? Effect.succeed(0) : Effect.map(
      q(
        `UPDATE ops SET state = 'done', result = ?, error = NULL, uncertain = 0, updated_at = ?
         WHERE state <> 'done' AND key = ANY(?::text[]) RETURNING key`,
        [JSON.stringify({ superseded: by }), now(), keys]
      ),
      (rows) => rows.length
    )

  const recordAdoption = (a: Adoption) =>
    plain(run(
      "recordAdoption",
      Effect.asVoid(q(
        `INSERT INTO adoptions (op_key, namespace, source_key, target_id, detail, adopted_at) VALUES (?, ?, ?, ?, ?, ?)`,
        [a.opKey, a.namespace, a.sourceKey, a.targetId, a.detail, now()]
      ))
    ))

  const setMapping = (m: Mapping) => plain(run("setMapping", Effect.asVoid(mapBody(m, null, now()))))

  const setMetaBody = (key: string, value: string) =>
    Effect.asVoid(q(`INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value`, [key, value]))

  const ops = (operation: string, text: string, params: ReadonlyArray<Param>) =>
    plain(run(operation, Effect.map(q<OpRow>(text, params), (rows) => rows.map(toOp))))

  const transitions: BatchedTransitions = {
    claim,
    complete,
    fail,
    markUncertain,
    markResolved,
    release,
    setMapping,
    recordAdoption,
    recordBefore
  }

  return {
    file,
    planner: () =>
      Effect.gen(function*() {
        const context = yield* Effect.context<never>()
        const planRun = yield* plain(run("beginPlanRun", beginPlanRun))
        // Calls are answered in the order made (the caller sends the next batch before the
        // last is stored): each waits for the one before it.
        let last: Promise<unknown> = Promise.resolve()
        const inOrder = <A>(effect: Effect.Effect<A, JournalError | JournalStateError>): Promise<A> => {
          const next = last.then(() => toPromise(context, effect))
          last = next.catch(() => undefined)
          return next
        }
        return {
          file,
          run: planRun,
          backend: "postgres",
          planOps: (batch) => inOrder(tx("planOps", planOpsBody(planRun, batch))),
          end: () => inOrder(run("endPlanRun", endPlanRun(planRun)))
        } satisfies Planner
      }),
    transitions,
    addPlan: (plan) =>
      plain(tx(
        "plan",
        Effect.gen(function*() {
          const added = yield* addOpsBody(plan.ops)
          for (const s of plan.supersede ?? []) yield* supersedeBody(s.keys, s.by)
          const at = now()
          for (const m of plan.mappings ?? []) yield* mapBody(m, null, at)
          return added
        })
      )),
    mappings: (namespace, page) =>
      plain(run(
        "mappings",
        Effect.map(
          q<{ source_key: string; target_id: string }>(
            `SELECT source_key, target_id FROM id_map WHERE namespace = ?${page?.after !== undefined ? " AND source_key > ?" : ""} ORDER BY source_key${page !== undefined ? " LIMIT ?" : ""}`,
            [namespace, ...(page?.after !== undefined ? [page.after] : []), ...(page !== undefined ? [page.limit] : [])]
          ),
          (rows) => rows.map((r): Mapping => ({ namespace, sourceKey: r.source_key, targetId: r.target_id }))
        )
      )),
    adoptions: (afterId = 0) =>
      plain(run(
        "adoptions",
        Effect.map(
          q<{
            id: number
            op_key: string
            namespace: string
            source_key: string
            target_id: string
            detail: string
            adopted_at: string
          }>(`SELECT * FROM adoptions WHERE id > ? ORDER BY id`, [afterId]),
          (rows) =>
            rows.map((r): StoredAdoption => ({
              id: r.id,
              opKey: r.op_key,
              namespace: r.namespace,
              sourceKey: r.source_key,
              targetId: r.target_id,
              detail: r.detail,
              adoptedAt: r.adopted_at
            }))
        )
      )),
    lastAdoptionId: () =>
      plain(run("lastAdoptionId", Effect.map(q<{ m: number | null }>(`SELECT max(id) AS m FROM adoptions`), (rows) => rows[0]?.m ?? 0))),
    addOps: (list) => plain(tx("addOps", addOpsBody(list))),
    beginPlanRun: () => plain(run("beginPlanRun", beginPlanRun)),
    endPlanRun: (planRun) => plain(run("endPlanRun", endPlanRun(planRun))),
    planOps: (planRun, list) => plain(tx("planOps", planOpsBody(planRun, list))),
    get: (key) => plain(run("get", Effect.map(getOp(key), Option.fromNullishOr))),
    getMany: (keys) => ops("getMany", `SELECT * FROM ops WHERE key = ANY(?::text[])`, [keys]),
    claim,
    claimNext,
    claimMany: (keys) =>
      Effect.andThen(
        plain(run("claimMany", ensureDurable)),
        plain(tx(
          "claimMany",
          Effect.gen(function*() {
            const at = now()
            const out: Array<Op> = []
            for (const key of keys) {
              const rows = yield* claimBody(key, at)
              if (rows.length === 1) out.push(toOp(rows[0]!))
            }
            return out
          })
        ))
      ),
    complete,
    fail,
    markUncertain,
    recordAdoption,
    release,
    markResolved,
    // Only a dead session's claims: a live one (a helper) holds its owner lock. In
    // pg_locks a two-key advisory lock shows its keys as oids: the first, an int4 that may
    // be negative, as its unsigned value. A dead session's send, if any, was before now:
    // the settle window runs from here.
    resetInFlight: () =>
      plain(run(
        "resetInFlight",
        Effect.map(
          Effect.suspend(() => {
            const at = now()
            return q(
              `WITH live AS (
                 SELECT l.objid::bigint AS id FROM pg_locks l
                 WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 2
                   AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
                   AND l.classid::bigint = (${OWNER_LOCK}::bigint & 4294967295)
               )
               UPDATE ops SET state = 'pending', uncertain = 1, sent_at = ?, updated_at = ?
               WHERE state = 'in_flight' AND (owner IS NULL OR owner NOT IN (SELECT id FROM live)) RETURNING key`,
              [at, at]
            )
          }),
          (rows) => rows.length
        )
      )),
    retryFailed: (kinds) =>
      plain(run(
        "retryFailed",
        Effect.map(
          kinds === undefined
            ? q(`UPDATE ops SET state = 'pending', updated_at = ? WHERE state = 'failed' RETURNING key`, [now()])
            : q(`UPDATE ops SET state = 'pending', updated_at = ? WHERE state = 'failed' AND kind = ANY(?::text[]) RETURNING key`, [
              now(),
              kinds
            ]),
          (rows) => rows.length
        )
      )),
    pending: (options) => {
      const kinds = options.kinds ?? []
      return ops(
        "pending",
        `SELECT o.* FROM ops o
         WHERE o.state = 'pending' AND o.seq > ? ${kinds.length > 0 ? "AND o.kind = ANY(?::text[])" : ""}
           AND (o.depends_on IS NULL OR EXISTS (SELECT 1 FROM ops d WHERE d.key = o.depends_on AND d.state = 'done'))
         ORDER BY o.seq LIMIT ?`,
        kinds.length > 0 ? [options.afterSeq ?? 0, kinds, options.limit] : [options.afterSeq ?? 0, options.limit]
      )
    },
    pendingPage: (options) => {
      const kinds = options.kinds ?? []
      return plain(run(
        "pendingPage",
        Effect.map(
          q<OpRow & { waits_for: string | null }>(
            `SELECT o.*, ${WAITS_FOR} AS waits_for FROM ops o
             WHERE o.state = 'pending' AND o.seq > ? ${kinds.length > 0 ? "AND o.kind = ANY(?::text[])" : ""}
             ORDER BY o.seq LIMIT ?`,
            kinds.length > 0 ? [options.afterSeq ?? 0, kinds, options.limit] : [options.afterSeq ?? 0, options.limit]
          ),
          (rows) => rows.map((r) => ({ op: toOp(r), waitsFor: r.waits_for }))
        )
      ))
    },
    blocked: (limit = 100) =>
      ops(
        "blocked",
        `SELECT o.* FROM ops o WHERE o.state = 'pending' AND o.depends_on IS NOT NULL
           AND NOT EXISTS (SELECT 1 FROM ops d WHERE d.key = o.depends_on AND d.state = 'done')
         ORDER BY o.seq LIMIT ?`,
        [limit]
      ),
    failed: (limit = 100) => ops("failed", `SELECT * FROM ops WHERE state = 'failed' ORDER BY seq LIMIT ?`, [limit]),
    recordBefore,
    list: (options) => {
      const kinds = options.kinds ?? []
      const states = options.states ?? []
      return ops(
        "list",
        `SELECT * FROM ops WHERE seq > ? ${options.beforeSeq !== undefined ? "AND seq < ?" : ""}
           ${kinds.length > 0 ? "AND kind = ANY(?::text[])" : ""}
           ${states.length > 0 ? "AND state = ANY(?::text[])" : ""}
         ORDER BY seq ${options.descending === true ? "DESC" : ""} LIMIT ?`,
        [
          options.afterSeq ?? 0,
          ...(options.beforeSeq !== undefined ? [options.beforeSeq] : []),
          ...(kinds.length > 0 ? [kinds] : []),
          ...(states.length > 0 ? [states] : []),
          options.limit
        ]
      )
    },
    setMapping,
    lookup: (namespace, sourceKey) =>
      plain(run(
        "lookup",
        Effect.map(
          q<{ target_id: string }>(`SELECT target_id FROM id_map WHERE namespace = ? AND source_key = ?`, [namespace, sourceKey]),
          (rows) => Option.fromNullishOr(rows[0]?.target_id)
        )
      )),
    mappedTargets: (namespace, targetIds) =>
      targetIds.length === 0 ? Effect.succeed(new Set<string>()) : plain(run(
        "mappedTargets",
        Effect.map(
          q<{ target_id: string }>(`SELECT DISTINCT target_id FROM id_map WHERE namespace = ? AND target_id = ANY(?::text[])`, [
            namespace,
            targetIds
          ]),
          (rows) => new Set(rows.map((r) => r.target_id))
        )
      )),
    getMeta: (key) =>
      plain(run(
        "getMeta",
        Effect.map(q<{ value: string }>(`SELECT value FROM meta WHERE key = ?`, [key]), (rows) => Option.fromNullishOr(rows[0]?.value))
      )),
    setMeta: (key, value) => plain(run("setMeta", setMetaBody(key, value))),
    counts: () =>
      plain(run(
        "counts",
        Effect.map(
          q<{ kind: string; state: OpState; n: number; u: number | null }>(
            `SELECT kind, state, COUNT(*) AS n, SUM(uncertain) AS u FROM ops GROUP BY kind, state`
          ),
          (rows): JournalCounts => {
            const zero = () => ({ pending: 0, in_flight: 0, done: 0, failed: 0 })
            const all = zero()
            const byKind: Record<string, ReturnType<typeof zero>> = {}
            let uncertain = 0
            let total = 0
            for (const r of rows) {
              const k = (byKind[r.kind] ??= zero())
              k[r.state] += r.n
              all[r.state] += r.n
              total += r.n
              if (r.state !== "done") uncertain += r.u ?? 0
            }
            return { ...all, total, uncertain, byKind }
          }
        )
      ))
  }
}
