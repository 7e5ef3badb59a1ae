/**
 * The engine's advisory locks in PostgreSQL (engine/worker.ts): a session lock the server
 * drops when its connection closes, however its holder dies, so the pool sees a dead
 * worker within seconds. Each is taken on a connection the caller holds for as long as
 * the lock should last.
 */
import type Pg from "pg"

/** A running job's lock: two keys, the pool's namespace and the job id's hash. */
const JOB = "hashtext('worksync-job'), hashtext($1)"
/** The account lock: one running job per service account in the whole pool. */
const ACCOUNT = "hashtext('worksync-account'), hashtext($1)"
/** Held by each worker while it runs, so the pool can count its live workers. */
const WORKER = "hashtext('worksync-worker'), $1"
/** Live workers of this database: the holders of a worker lock (classid is key 1, as an oid). */
const LIVE_WORKERS = `SELECT count(*)::int AS n FROM pg_locks
  WHERE locktype = 'advisory' AND granted AND objsubid = 2 AND classid = hashtext('worksync-worker')::oid
    AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`

/** Takes the job's lock, waiting for it. */
export const lockJob = (client: Pg.PoolClient, id: string): Promise<void> =>
  client.query(`SELECT pg_advisory_lock(${JOB})`, [id]).then(() => undefined)

/**
 * Whether the job's lock is free (its worker is gone): taken and given back at once, so
 * asking holds nothing.
 */
export const jobLockFree = async (client: Pg.PoolClient, id: string): Promise<boolean> => {
  const { rows } = await client.query<{ free: boolean }>(`SELECT pg_try_advisory_lock(${JOB}) AS free`, [id])
  if (rows[0]?.free !== true) return false
  await client.query(`SELECT pg_advisory_unlock(${JOB})`, [id])
  return true
}

/** Takes the account's lock if it is free; whether it is held now. */
export const tryLockAccount = (client: Pg.PoolClient, account: string): Promise<boolean> =>
  client.query<{ held: boolean }>(`SELECT pg_try_advisory_lock(${ACCOUNT}) AS held`, [account]).then((r) => r.rows[0]?.held === true)

/** Gives back every advisory lock of the session (the job's and its account's). */
export const unlockAll = (client: Pg.PoolClient): Promise<void> =>
  client.query("SELECT pg_advisory_unlock_all()").then(() => undefined)

/** Takes a worker lock of its own (a random key), counted by `liveWorkers` while the connection lasts. */
export const joinWorkers = (client: Pg.PoolClient): Promise<void> =>
  client.query(`SELECT pg_advisory_lock(${WORKER})`, [Math.floor(Math.random() * 2 ** 31)]).then(() => undefined)

/** How many workers of this database hold their worker lock now. */
export const liveWorkers = (db: Pg.Pool | Pg.PoolClient): Promise<number | undefined> =>
  db.query<{ n: number }>(LIVE_WORKERS).then(({ rows }) => rows[0]?.n)
