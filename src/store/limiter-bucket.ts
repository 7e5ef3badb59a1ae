/**
 * The shared rate limiter's table in PostgreSQL (client/limiter-postgres.ts keeps the
 * bucket in it): one row of `worksync_rate_limits` per account, in the schema named by the
 * URL's `?schema=NAME` (default `worksync_engine`). Each change is one transaction: the
 * row is locked, the change runs on the database server's clock, the row is written back.
 * The row holds the bucket as JSON text this module does not read. The account key is an
 * opaque hash made by the caller: no token and no password is ever written to the table or
 * put in a message.
 */
import * as Effect from "effect/Effect"
import * as Schedule from "effect/Schedule"
import type * as Scope from "effect/Scope"
import Pg from "pg"
import { redactUrl, SCHEMA_NAME } from "./postgres-url.ts"

/** The schema of the table when the URL names none. */
export const DEFAULT_SHARED_LIMITER_SCHEMA = "worksync_engine"
export const RATE_LIMITS_TABLE = "worksync_rate_limits"

/** Tries per database operation before the store gives up (the first try included). */
const TRIES = 5
/** 50, 100, 200, 400 ms between the tries. */
const retrySchedule = Schedule.exponential("50 millis", 2).pipe(Schedule.upTo({ times: TRIES - 1 }))

/** A session that holds the row and stalls must not stall every process for long. */
const SESSION_OPTIONS = "-c lock_timeout=10000 -c statement_timeout=10000 -c idle_in_transaction_session_timeout=10000"

/** The database server's clock, in epoch milliseconds. */
const SERVER_NOW = "(extract(epoch FROM clock_timestamp()) * 1000)::float8"

/** A change that threw: a defect of the caller, not of the database, so not retried. */
class ChangeFailed {
  constructor(readonly cause: unknown) {}
}

const messageOf = (e: unknown): string => (e instanceof Error ? e.message : String(e))

/** One account's row. */
export interface LimiterBucketRow {
  /**
   * Runs `change` on the row's text and the server's clock, the row locked, in one
   * transaction; a missing row is made first with `initial(now)`. `change` gives its
   * result and the text to write back (undefined: the row stays as it is). A `change`
   * that throws dies with what it threw, and is not retried.
   */
  readonly modify: <A>(
    initial: (now: number) => string,
    change: (text: string, now: number) => readonly [A, string | undefined]
  ) => Effect.Effect<A>
  /** The row's text, or undefined when there is no row yet. */
  readonly read: Effect.Effect<string | undefined>
}

/**
 * The row of `account` in the PostgreSQL database at `url`, for the scope (a pool of two
 * connections, closed with it); the schema and the table are made if missing.
 *
 * The limiter has no error channel: an operation that still fails after a few quick tries
 * dies with an Error naming the URL without its password.
 */
export const limiterBucketRow = (url: string, account: string): Effect.Effect<LimiterBucketRow, never, Scope.Scope> =>
  Effect.gen(function*() {
    const display = redactUrl(url)
    const password = (() => {
      try {
        return decodeURIComponent(new URL(url).password)
      } catch {
        return ""
      }
    })()
    const scrub = (text: string) => (password === "" ? text : text.split(password).join("***"))
    const fail = (detail: string) => new Error(`shared rate limiter store ${display}: ${scrub(detail)}`)

    const where = yield* Effect.try({
      try: () => {
        const u = new URL(url)
        if (u.protocol !== "postgres:" && u.protocol !== "postgresql:") throw new Error("not a postgres:// URL")
        const schema = u.searchParams.get("schema") ?? DEFAULT_SHARED_LIMITER_SCHEMA
        if (!SCHEMA_NAME.test(schema)) {
          throw new Error(`schema "${schema}" is not a plain name (lower-case letters, digits and _, at most 63)`)
        }
        u.searchParams.delete("schema")
        return { connectionString: u.toString(), schema }
      },
      catch: (e) =>
        fail(e instanceof TypeError ? "not a valid PostgreSQL URL (postgres://USER@HOST:PORT/DB)" : messageOf(e))
    }).pipe(Effect.orDie)

    const table = `"${where.schema}".${RATE_LIMITS_TABLE}`

    const pool = yield* Effect.acquireRelease(
      Effect.sync(() => {
        const p = new Pg.Pool({
          connectionString: where.connectionString,
          max: 2,
          connectionTimeoutMillis: 5_000,
          application_name: "worksync rate limiter",
          options: SESSION_OPTIONS
        })
        // An idle connection the server ends must not take the process down: the next
        // query reports it (and is retried).
        p.on("error", () => undefined)
        return p
      }),
      (p) => Effect.promise(() => p.end().catch(() => undefined))
    )

    /** `body` in one transaction on a pooled connection; a connection that failed is discarded. */
    const transaction = async <A>(body: (client: Pg.PoolClient) => Promise<A>): Promise<A> => {
      const client = await pool.connect()
      let broken = false
      try {
        await client.query("BEGIN")
        const result = await body(client)
        await client.query("COMMIT")
        return result
      } catch (e) {
        broken = !(e instanceof ChangeFailed)
        await client.query("ROLLBACK").catch(() => {
          broken = true
        })
        throw e
      } finally {
        client.release(broken)
      }
    }

    /**
     * One database operation: uninterruptible while it runs (a connection must not go back
     * to the pool mid-transaction), retried a few times, then a defect.
     */
    const run = <A>(what: string, body: (client: Pg.PoolClient) => Promise<A>): Effect.Effect<A> =>
      Effect.uninterruptible(Effect.tryPromise({ try: () => transaction(body), catch: (e) => e })).pipe(
        Effect.retry({ schedule: retrySchedule, while: (e) => !(e instanceof ChangeFailed) }),
        Effect.catch((e) =>
          Effect.die(
            e instanceof ChangeFailed
              ? e.cause
              : fail(`${what} failed after ${TRIES} tries: ${messageOf(e)}`)
          )
        )
      )

    // Two processes may create the table at once: an advisory lock makes them take turns,
    // and what exists already is not created again (nor needs the right to create it).
    yield* run("creating the table", async (client) => {
      await client.query("SELECT pg_advisory_xact_lock(hashtext('worksync'), hashtext($1))", [
        `${RATE_LIMITS_TABLE}:${where.schema}`
      ])
      const schemas = await client.query("SELECT 1 FROM pg_namespace WHERE nspname = $1", [where.schema])
      if (schemas.rowCount === 0) await client.query(`CREATE SCHEMA IF NOT EXISTS "${where.schema}"`)
      const tables = await client.query<{ t: string | null }>("SELECT to_regclass($1)::text AS t", [table])
      if (tables.rows[0]?.t == null) {
        await client.query(
          `CREATE TABLE IF NOT EXISTS ${table} (account TEXT PRIMARY KEY, bucket JSONB NOT NULL, updated_at TIMESTAMPTZ)`
        )
      }
    })

    // The clock is read in the outer query, after the CTE has locked the row: a change
    // that waited for another's lock sees the time it actually runs at.
    const lockRow = (client: Pg.PoolClient) =>
      client.query<{ bucket: string; now: number }>(
        `WITH locked AS (SELECT bucket FROM ${table} WHERE account = $1 FOR UPDATE)
         SELECT bucket::text AS bucket, ${SERVER_NOW} AS now FROM locked`,
        [account]
      )

    const modify = <A>(
      initial: (now: number) => string,
      change: (text: string, now: number) => readonly [A, string | undefined]
    ): Effect.Effect<A> =>
      run("updating the bucket", async (client) => {
        let locked = await lockRow(client)
        if (locked.rows.length === 0) {
          const now = await client.query<{ now: number }>(`SELECT ${SERVER_NOW} AS now`)
          await client.query(
            `INSERT INTO ${table} (account, bucket, updated_at) VALUES ($1, $2::jsonb, clock_timestamp())
             ON CONFLICT (account) DO NOTHING`,
            [account, initial(now.rows[0]!.now)]
          )
          locked = await lockRow(client)
        }
        const row = locked.rows[0]
        if (row === undefined) throw new Error(`the row of the account vanished from ${RATE_LIMITS_TABLE}`)
        let result: readonly [A, string | undefined]
        try {
          result = change(row.bucket, row.now)
        } catch (e) {
          throw new ChangeFailed(e)
        }
        const [a, next] = result
        if (next !== undefined) {
          await client.query(`UPDATE ${table} SET bucket = $2::jsonb, updated_at = clock_timestamp() WHERE account = $1`, [
            account,
            next
          ])
        }
        return a
      })

    const read = run("reading the bucket", async (client) => {
      const rows = await client.query<{ bucket: string }>(`SELECT bucket::text AS bucket FROM ${table} WHERE account = $1`, [
        account
      ])
      return rows.rows[0]?.bucket
    })

    return { modify, read } satisfies LimiterBucketRow
  })
