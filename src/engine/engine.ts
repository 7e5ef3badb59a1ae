/**
 * The pool's engine: a job queue in PostgreSQL kept by pg-boss (docs/scale.md says why
 * pg-boss), plus what the pool needs beside the queue: each job's output lines, so the
 * command that waits shows progress, and a liveness lock per running job, so a killed
 * worker's job is handed to another within seconds rather than at pg-boss's expiry.
 *
 * Everything lives in one schema of the engine's database (`?schema=NAME`, default
 * `worksync_engine`): pg-boss's tables and `job_lines`.
 *
 * pg-boss 12 cannot migrate the schema pg-boss 10 made (its migrations start at pg-boss
 * 11's schema, and 11 itself shipped none from 10): `start()` would fail with "Cannot
 * migrate pg-boss schema from version 24". `openEngine` moves such a schema over itself
 * (`retirePgBoss10`, `restorePgBoss10Jobs`), keeping the queue's settings and its jobs
 * with their ids, states and attempts, so commands waiting on them carry on.
 */
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Schedule from "effect/Schedule"
import type * as Scope from "effect/Scope"
import Pg from "pg"
import { PgBoss, type Queue } from "pg-boss"
import { redactUrl, SCHEMA_NAME } from "../store/postgres-url.ts"
import { type JobOutcome, type JobSpec, jobKeyOf } from "./job.ts"

/** The queue every worksync job goes through. */
export const QUEUE = "worksync-jobs"

/**
 * pg-boss's expiry is a backstop only (liveness locks hand a dead worker's job on within
 * seconds); pg-boss caps it below 24 hours. A job may run longer: its worker keeps
 * renewing it (the heartbeat in worker.ts), so only a job whose worker stopped renewing
 * it for this long expires.
 */
const EXPIRE_SECONDS = 23 * 60 * 60
/** Attempts of one job: each lost worker or hand-back is one. */
const RETRY_LIMIT = 100

/** The queue as the engine creates it on a new database. */
export const QUEUE_OPTIONS = {
  name: QUEUE,
  // One job per key in each state: concurrent submits of one command make one job.
  policy: "stately",
  retryLimit: RETRY_LIMIT,
  retryDelay: 0,
  expireInSeconds: EXPIRE_SECONDS
} as const satisfies Queue

/** The engine's database could not be reached or used. */
export class EngineError extends Data.TaggedError("EngineError")<{
  readonly engine: string
  readonly operation: string
  readonly detail: string
}> {
  override get message(): string {
    return `engine ${this.engine}: ${this.operation} failed: ${this.detail}`
  }
}

export interface EngineLocation {
  readonly url: string
  readonly schema: string
  /** For messages: the URL without its password. */
  readonly display: string
}

export const parseEngineUrl = (location: string): EngineLocation | string => {
  let u: URL
  try {
    u = new URL(location)
  } catch {
    return `--engine ${redactUrl(location)}: not a PostgreSQL URL (postgres://USER@HOST:PORT/DB)`
  }
  if (u.protocol !== "postgres:" && u.protocol !== "postgresql:") {
    return `--engine ${redactUrl(location)}: not a PostgreSQL URL (postgres://USER@HOST:PORT/DB)`
  }
  const schema = u.searchParams.get("schema") ?? "worksync_engine"
  if (!SCHEMA_NAME.test(schema)) return `--engine: schema "${schema}" is not a plain name (lower-case letters, digits and _)`
  u.searchParams.delete("schema")
  return { url: u.toString(), schema, display: redactUrl(location) }
}

/** A job as the engine tracks it. */
export interface JobState {
  readonly id: string
  readonly state: "created" | "retry" | "active" | "completed" | "cancelled" | "failed"
  readonly outcome: JobOutcome | undefined
}

export interface EngineApi {
  readonly location: EngineLocation
  readonly boss: PgBoss
  /** A plain pool on the same database, for the job lines and the liveness locks. */
  readonly pool: Pg.Pool
  /** Runs a pg-boss or pool call, failures named by `operation`. */
  readonly call: <A>(operation: string, f: () => Promise<A>) => Effect.Effect<A, EngineError>
  /**
   * The job doing what `spec` does: the one queued or running (attached), else a new one.
   * Two commands racing for the same new job end up on one (the queue admits one job
   * per key in each state).
   */
  readonly submit: (spec: JobSpec) => Effect.Effect<{ readonly id: string; readonly attached: boolean }, EngineError>
  readonly jobState: (id: string) => Effect.Effect<JobState | undefined, EngineError>
  /** Lines a job printed after `afterSeq`, oldest first. */
  readonly lines: (id: string, afterSeq: number) => Effect.Effect<Array<{ readonly seq: number; readonly line: string }>, EngineError>
  readonly addLine: (id: string, line: string) => Effect.Effect<void, EngineError>
}

const detailOf = (e: unknown): string => (e instanceof Error ? e.message : String(e))

/** The oldest and newest schema versions of pg-boss 10 (10.0.0 and 10.1.x to 10.4.x). */
const PG_BOSS_10_SCHEMAS = { from: 21, to: 24 } as const
/** Where `retirePgBoss10` keeps pg-boss 10's queue and jobs until pg-boss 12's schema is in place. */
const PG_BOSS_10_STASH = "worksync_pgboss10"

/**
 * Whether `schema.table` exists, read from pg_catalog with the statement's snapshot.
 * Not `to_regclass`: it answers from the connection's catalog cache, which taking the
 * upgrade lock does not refresh, so a process that waited for another's upgrade would
 * still see the tables that upgrade dropped.
 */
const tableExists = async (db: Pg.Pool | Pg.PoolClient, schema: string, table: string): Promise<boolean> => {
  const { rows } = await db.query(
    `SELECT 1 FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
     WHERE n.nspname = $1 AND c.relname = $2`,
    [schema, table]
  )
  return rows.length > 0
}

/** A read of a table that another process's upgrade may drop between the look and the read: gone reads as nothing. */
const unlessDropped = <R>(none: R) => (e: { readonly code?: string }): R => {
  if (e.code === "42P01") return none
  throw e
}

/**
 * Runs `body` in a transaction on a connection of its own, holding the engine's upgrade
 * lock (one per schema), so processes started together take turns.
 */
const upgradeStep = <A>(pool: Pg.Pool, schema: string, body: (client: Pg.PoolClient) => Promise<A>): Promise<A> =>
  pool.connect().then(async (client) => {
    try {
      await client.query("BEGIN")
      await client.query("SELECT pg_advisory_xact_lock(hashtext('worksync-engine-upgrade'), hashtext($1))", [schema])
      const out = await body(client)
      await client.query("COMMIT")
      return out
    } catch (e) {
      await client.query("ROLLBACK").catch(() => undefined)
      throw e
    } finally {
      client.release()
    }
  })

/**
 * When `schema` holds pg-boss 10's tables: keeps the queue's row and its jobs (archived
 * ones too, for the commands that read a finished job) as JSON in a table of their own,
 * then drops pg-boss 10's objects, so that pg-boss 12's `start()` installs its schema
 * where they were. One transaction: a crash leaves either the old schema or the stash.
 * The engine's own tables (`job_lines`, the shared limiter's) stay.
 */
const retirePgBoss10 = async (pool: Pg.Pool, schema: string): Promise<void> => {
  // Looked at first without the lock: every start of a process asks, and almost always
  // finds pg-boss 12's schema, or none.
  if ((await pgBoss10Version(pool, schema)) === undefined) return
  await upgradeStep(pool, schema, async (client) => {
    if ((await pgBoss10Version(client, schema)) === undefined) return
    const archive = await tableExists(client, schema, "archive")
    const stash = `${schema}.${PG_BOSS_10_STASH}`
    await client.query(`CREATE TABLE ${stash} (kind TEXT NOT NULL, row JSONB NOT NULL)`)
    await client.query(`INSERT INTO ${stash} SELECT 'queue', to_jsonb(q) FROM ${schema}.queue q WHERE q.name = $1`, [QUEUE])
    await client.query(`INSERT INTO ${stash} SELECT 'job', to_jsonb(j) FROM ${schema}.job j WHERE j.name = $1`, [QUEUE])
    if (archive) {
      await client.query(
        `INSERT INTO ${stash} SELECT 'job', to_jsonb(a) - 'archived_on' FROM ${schema}.archive a
         WHERE a.name = $1 AND NOT EXISTS (SELECT 1 FROM ${schema}.job j WHERE j.name = a.name AND j.id = a.id)`,
        [QUEUE]
      )
    }
    // The job table's partitions go with it; the type goes last, once nothing uses it.
    await client.query(
      `DROP TABLE IF EXISTS ${schema}.job, ${schema}.archive, ${schema}.schedule, ${schema}.subscription,
         ${schema}.queue, ${schema}.version CASCADE`
    )
    await client.query(`DROP FUNCTION IF EXISTS ${schema}.create_queue(text, json), ${schema}.delete_queue(text)`)
    await client.query(`DROP TYPE IF EXISTS ${schema}.job_state`)
  })
}

/** The version of the pg-boss 10 schema in `schema`, or undefined (none, or another pg-boss's). */
const pgBoss10Version = async (db: Pg.Pool | Pg.PoolClient, schema: string): Promise<number | undefined> => {
  if (!(await tableExists(db, schema, "version"))) return undefined
  const { rows } = await db
    .query<{ version: number }>(`SELECT version FROM ${schema}.version`)
    .catch(unlessDropped({ rows: [] as Array<{ version: number }> }))
  const version = rows[0]?.version
  return version !== undefined && version >= PG_BOSS_10_SCHEMAS.from && version <= PG_BOSS_10_SCHEMAS.to ? version : undefined
}

/** The queue's settings in pg-boss 10's queue row (QUEUE_OPTIONS where it has none), as createQueue options. */
const queueOptionsOf10 = (row: Record<string, unknown>): Omit<Queue, "name"> => {
  const { name: _name, ...defaults } = QUEUE_OPTIONS
  return {
    ...defaults,
    ...(typeof row.policy === "string" ? { policy: row.policy } : {}),
    ...(typeof row.retry_limit === "number" ? { retryLimit: row.retry_limit } : {}),
    ...(typeof row.retry_delay === "number" ? { retryDelay: row.retry_delay } : {}),
    ...(typeof row.retry_backoff === "boolean" ? { retryBackoff: row.retry_backoff } : {}),
    ...(typeof row.expire_seconds === "number" ? { expireInSeconds: row.expire_seconds } : {}),
    ...(typeof row.retention_minutes === "number" ? { retentionSeconds: row.retention_minutes * 60 } : {})
  }
}

/** pg-boss 10's queue row kept by `retirePgBoss10`, if there is one to restore. */
const stashedQueue = async (pool: Pg.Pool, schema: string): Promise<Record<string, unknown> | undefined> => {
  if (!(await tableExists(pool, schema, PG_BOSS_10_STASH))) return undefined
  const queue = await pool
    .query<{ row: Record<string, unknown> }>(`SELECT row FROM ${schema}.${PG_BOSS_10_STASH} WHERE kind = 'queue' LIMIT 1`)
    .catch(unlessDropped(undefined))
  // Dropped meanwhile: another process restored the jobs already.
  if (queue === undefined) return undefined
  return queue.rows[0]?.row ?? {}
}

/**
 * Puts the jobs `retirePgBoss10` kept into pg-boss 12's job table, once its queue exists:
 * same ids, states, attempts, times and outputs (a job already there, or one a new
 * command queued meanwhile under the same key, wins), then drops the stash.
 */
const restorePgBoss10Jobs = (pool: Pg.Pool, schema: string): Promise<void> =>
  upgradeStep(pool, schema, async (client) => {
    const stash = `${schema}.${PG_BOSS_10_STASH}`
    if (!(await tableExists(client, schema, PG_BOSS_10_STASH))) return
    await client.query(
      `INSERT INTO ${schema}.job (id, name, priority, data, state, retry_limit, retry_count, retry_delay, retry_backoff,
         start_after, started_on, singleton_key, singleton_on, expire_seconds, deletion_seconds, created_on, completed_on,
         keep_until, output, dead_letter, policy, heartbeat_seconds)
       SELECT (s.row->>'id')::uuid, s.row->>'name', (s.row->>'priority')::int, NULLIF(s.row->'data', 'null'::jsonb),
         (s.row->>'state')::${schema}.job_state, (s.row->>'retry_limit')::int, (s.row->>'retry_count')::int,
         (s.row->>'retry_delay')::int, (s.row->>'retry_backoff')::bool, (s.row->>'start_after')::timestamptz,
         (s.row->>'started_on')::timestamptz, s.row->>'singleton_key', (s.row->>'singleton_on')::timestamp,
         EXTRACT(epoch FROM (s.row->>'expire_in')::interval)::int, q.deletion_seconds, (s.row->>'created_on')::timestamptz,
         (s.row->>'completed_on')::timestamptz, (s.row->>'keep_until')::timestamptz, NULLIF(s.row->'output', 'null'::jsonb),
         s.row->>'dead_letter', COALESCE(s.row->>'policy', q.policy), q.heartbeat_seconds
       FROM ${stash} s JOIN ${schema}.queue q ON q.name = s.row->>'name'
       WHERE s.kind = 'job'
       ORDER BY (s.row->>'created_on')::timestamptz
       ON CONFLICT DO NOTHING`
    )
    await client.query(`DROP TABLE ${stash}`)
  })

/**
 * Opens the engine for the scope. `worker` turns on pg-boss's maintenance (expiry,
 * deleting old jobs); a waiting command only sends and reads.
 */
export const openEngine = (
  location: EngineLocation,
  options: { readonly worker: false } | { readonly worker: true; readonly concurrency: number }
): Effect.Effect<EngineApi, EngineError, Scope.Scope> =>
  Effect.gen(function*() {
    const engine = location.display
    const call = <A>(operation: string, f: () => Promise<A>) =>
      Effect.tryPromise({ try: f, catch: (e) => new EngineError({ engine, operation, detail: detailOf(e) }) })
    // Connections are the server's scarcest resource when hundreds of commands wait: a
    // waiting command reads one thing at a time; a worker holds one per running job (its
    // liveness lock) and one for its presence, and needs more for sweeps and job lines.
    const poolSize = options.worker ? options.concurrency + 3 : 1
    const pool = yield* Effect.acquireRelease(
      Effect.sync(() => new Pg.Pool({ connectionString: location.url, max: poolSize, application_name: "worksync engine" })),
      (p) => Effect.promise(() => p.end().catch(() => undefined))
    )
    // A broken idle connection must not crash the process; the next query reports it.
    pool.on("error", () => undefined)
    const boss = yield* Effect.acquireRelease(
      call("start", async () => {
        await retirePgBoss10(pool, location.schema)
        const b = new PgBoss({
          connectionString: location.url,
          schema: location.schema,
          application_name: "worksync engine",
          max: options.worker ? 4 : 2,
          supervise: options.worker,
          schedule: false,
          // Expiry, a backstop only, runs in pg-boss 12's monitor pass (10 ran it with its
          // maintenance): both every 30 s, as before.
          superviseIntervalSeconds: 30,
          monitorIntervalSeconds: 30,
          maintenanceIntervalSeconds: 30,
          // No row per process in pg-boss's instance registry: hundreds of waiting commands
          // would each keep one fresh.
          registerInstance: false
        })
        b.on("error", () => undefined)
        await b.start()
        return b
      }),
      // stop() waits for pg-boss's own work to end (10 needed `wait: true` for that).
      (b) => Effect.promise(() => b.stop({ graceful: false }).catch(() => undefined))
    )
    const q = (sql: string) => `${sql.replaceAll("$schema", location.schema)}`
    // Workers started together on a new database race to create the same objects; the
    // server may answer one of them "deadlock detected", which a second try gets past.
    yield* call("prepare the queue", async () => {
      const old = await stashedQueue(pool, location.schema)
      if ((await boss.getQueue(QUEUE)) === null) {
        // A queue pg-boss 10 made comes back with its own settings.
        const settings = old === undefined ? QUEUE_OPTIONS : queueOptionsOf10(old)
        await boss.createQueue(QUEUE, settings).catch(async (e: unknown) => {
          // Another process created it first.
          if ((await boss.getQueue(QUEUE)) === null) throw e
        })
      }
      if (old !== undefined) await restorePgBoss10Jobs(pool, location.schema)
      await pool.query(q(
        `CREATE TABLE IF NOT EXISTS $schema.job_lines (
           seq    BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
           job_id UUID   NOT NULL,
           at     TIMESTAMPTZ NOT NULL DEFAULT now(),
           line   TEXT   NOT NULL
         );
         CREATE INDEX IF NOT EXISTS job_lines_job ON $schema.job_lines (job_id, seq);`
      )).catch(async (e: unknown) => {
        // Two processes creating it at once: the loser's duplicate is harmless.
        if (!/already exists|duplicate key/.test(detailOf(e))) throw e
      })
    }).pipe(Effect.retry({ times: 4, schedule: Schedule.spaced("200 millis"), while: (e) => /deadlock detected/.test(e.detail) }))

    const findOpen = (key: string) =>
      call("look up the job", async () => {
        const { rows } = await pool.query<{ id: string }>(
          q(`SELECT id FROM $schema.job WHERE name = $1 AND singleton_key = $2 AND state < 'completed'
             ORDER BY created_on LIMIT 1`),
          [QUEUE, key]
        )
        return rows[0]?.id
      })

    const api: EngineApi = {
      location,
      boss,
      pool,
      call,
      submit: (spec) =>
        Effect.gen(function*() {
          const key = jobKeyOf(spec)
          for (let attempt = 0; attempt < 5; attempt++) {
            const open = yield* findOpen(key)
            if (open !== undefined) return { id: open, attached: true }
            const id = yield* call("queue the job", () => boss.send(QUEUE, spec, { singletonKey: key }))
            if (id !== null) return { id, attached: false }
            // Refused: another command queued the same job a moment ago; attach to it.
          }
          return yield* new EngineError({ engine, operation: "queue the job", detail: "the queue kept refusing it" })
        }),
      jobState: (id) =>
        call("read the job", async () => {
          // pg-boss 12 keeps finished jobs in the job table (10 moved them to an archive).
          const [job] = await boss.findJobs<JobSpec>(QUEUE, { id })
          if (job === undefined) return undefined
          return { id, state: job.state, outcome: (job.output ?? undefined) as JobOutcome | undefined }
        }),
      lines: (id, afterSeq) =>
        call("read the job's output", async () => {
          const { rows } = await pool.query<{ seq: string; line: string }>(
            q("SELECT seq, line FROM $schema.job_lines WHERE job_id = $1 AND seq > $2 ORDER BY seq"),
            [id, afterSeq]
          )
          return rows.map((r) => ({ seq: Number(r.seq), line: r.line }))
        }),
      addLine: (id, line) =>
        call("write the job's output", () =>
          pool.query(q("INSERT INTO $schema.job_lines (job_id, line) VALUES ($1, $2)"), [id, line]).then(() => undefined))
    }
    return api
  })
