/**
 * pg-boss 10's schema moved over for pg-boss 12 (engine/engine.ts says why: pg-boss 12
 * cannot migrate it). In the engine's schema: pg-boss 10's queue row and jobs are kept as
 * JSON in a table of their own while pg-boss 12 installs its schema, then put into its job
 * table. Promises, not Effects: the engine runs them through its own `call`, which names
 * a failure by what the engine was doing.
 */
import type Pg from "pg"

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
 * When `schema` holds pg-boss 10's tables: keeps `queue`'s row and its jobs (archived
 * ones too, for the commands that read a finished job) as JSON in a table of their own,
 * then drops pg-boss 10's objects, so that pg-boss 12's `start()` installs its schema
 * where they were. One transaction: a crash leaves either the old schema or the stash.
 * The engine's own tables (`job_lines`, the shared limiter's) stay.
 */
export const retirePgBoss10 = async (pool: Pg.Pool, schema: string, queue: string): Promise<void> => {
  // Looked at first without the lock: every start of a process asks, and almost always
  // finds pg-boss 12's schema, or none.
  if ((await pgBoss10Version(pool, schema)) === undefined) return
  await upgradeStep(pool, schema, async (client) => {
    if ((await pgBoss10Version(client, schema)) === undefined) return
    const archive = await tableExists(client, schema, "archive")
    const stash = `${schema}.${PG_BOSS_10_STASH}`
    await client.query(`CREATE TABLE ${stash} (kind TEXT NOT NULL, row JSONB NOT NULL)`)
    await client.query(`INSERT INTO ${stash} SELECT 'queue', to_jsonb(q) FROM ${schema}.queue q WHERE q.name = $1`, [queue])
    await client.query(`INSERT INTO ${stash} SELECT 'job', to_jsonb(j) FROM ${schema}.job j WHERE j.name = $1`, [queue])
    if (archive) {
      await client.query(
        `INSERT INTO ${stash} SELECT 'job', to_jsonb(a) - 'archived_on' FROM ${schema}.archive a
         WHERE a.name = $1 AND NOT EXISTS (SELECT 1 FROM ${schema}.job j WHERE j.name = a.name AND j.id = a.id)`,
        [queue]
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

/** pg-boss 10's queue row kept by `retirePgBoss10`, if there is one to restore. */
export const stashedQueue = async (pool: Pg.Pool, schema: string): Promise<Record<string, unknown> | undefined> => {
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
export const restorePgBoss10Jobs = (pool: Pg.Pool, schema: string): Promise<void> =>
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
