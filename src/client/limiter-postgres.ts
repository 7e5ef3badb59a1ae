/**
 * The rate limiter's bucket in PostgreSQL, shared by every process that uses the same
 * token (see limiter.ts): one row of `worksync_rate_limits` per account, in the schema
 * named by the URL's `?schema=NAME` (default `worksync_engine`). Each change is one
 * transaction: the row is locked, the transition runs on the database server's clock,
 * the row is written back. The account key is an opaque hash made by the caller: no
 * token and no password is ever written to the table or put in a message.
 */
import * as Effect from "effect/Effect"
import * as Schedule from "effect/Schedule"
import type * as Scope from "effect/Scope"
import Pg from "pg"
import { redactUrl, SCHEMA_NAME } from "../store/postgres-url.ts"
import type { Bucket, BucketStore } from "./limiter.ts"

/** The schema of the table when the URL names none. */
export const DEFAULT_SHARED_LIMITER_SCHEMA = "worksync_engine"
export const RATE_LIMITS_TABLE = "worksync_rate_limits"


/** Tries per database operation before the store gives up (the first try included). */
const TRIES = 5
/** 50, 100, 200, 400 ms between the tries. */
const retrySchedule = Schedule.exponential("50 millis", 2).pipe(Schedule.upTo({ times: TRIES - 1 }))

/** A session that holds the row and stalls must not stall every process for long. */
const SESSION_OPTIONS = "-c lock_timeout=10000 -c statement_timeout=10000 -c idle_in_transaction_session_timeout=10000"


// JSON has no Infinity (a new bucket's cutWindowEnd is -Infinity): non-finite numbers are
// kept as the strings "Infinity", "-Infinity" and "NaN". A Bucket has no string field, so
// the strings cannot be confused with anything.
const NON_FINITE = new Set(["Infinity", "-Infinity", "NaN"])

export const encodeBucket = (bucket: Bucket): string =>
  JSON.stringify(bucket, (_key, v: unknown) => (typeof v === "number" && !Number.isFinite(v) ? String(v) : v))

const NUMBER_FIELDS = ["tokens", "lastRefill", "rate", "pausedUntil", "cutWindowEnd", "sampledAt", "sampledRate"] as const
const NULLABLE_FIELDS = ["ceiling", "previousSample"] as const

/** The bucket of a row, or undefined when the row does not hold one (then it starts afresh). */
export const decodeBucket = (text: string): Bucket | undefined => {
  let value: unknown
  try {
    value = JSON.parse(text, (_key, v: unknown) => (typeof v === "string" && NON_FINITE.has(v) ? Number(v) : v))
  } catch {
    return undefined
  }
  if (value === null || typeof value !== "object") return undefined
  const o = value as Record<string, unknown>
  if (!NUMBER_FIELDS.every((k) => typeof o[k] === "number")) return undefined
  if (!NULLABLE_FIELDS.every((k) => o[k] === null || typeof o[k] === "number")) return undefined
  const b: Bucket = {
    tokens: o.tokens as number,
    lastRefill: o.lastRefill as number,
    rate: o.rate as number,
    ceiling: o.ceiling as number | null,
    pausedUntil: o.pausedUntil as number,
    cutWindowEnd: o.cutWindowEnd as number,
    sampledAt: o.sampledAt as number,
    sampledRate: o.sampledRate as number,
    previousSample: o.previousSample as number | null
  }
  return b
}

/** A transition that threw: a defect of the caller, not of the database, so not retried. */
class TransitionFailed {
  constructor(readonly cause: unknown) {}
}

const messageOf = (e: unknown): string => (e instanceof Error ? e.message : String(e))

/**
 * The bucket of `account` in the PostgreSQL database at `url`, for the scope (a pool of
 * two connections, closed with it). `initial` is the bucket a missing row starts with;
 * given as a function it gets the server's clock, so its times are the server's.
 *
 * The limiter has no error channel: an operation that still fails after a few quick tries
 * dies with an Error naming the URL without its password.
 */
export const postgresBucketStore = (
  url: string,
  account: string,
  initial: Bucket | ((now: number) => Bucket)
): Effect.Effect<BucketStore, never, Scope.Scope> =>
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
    const initialAt = (now: number): Bucket => (typeof initial === "function" ? initial(now) : initial)

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
        broken = !(e instanceof TransitionFailed)
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
        Effect.retry({ schedule: retrySchedule, while: (e) => !(e instanceof TransitionFailed) }),
        Effect.catch((e) =>
          Effect.die(
            e instanceof TransitionFailed
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

    const serverNow = "(extract(epoch FROM clock_timestamp()) * 1000)::float8"
    // The clock is read in the outer query, after the CTE has locked the row: a change
    // that waited for another's lock sees the time it actually runs at.
    const lockRow = (client: Pg.PoolClient) =>
      client.query<{ bucket: string; now: number }>(
        `WITH locked AS (SELECT bucket FROM ${table} WHERE account = $1 FOR UPDATE)
         SELECT bucket::text AS bucket, ${serverNow} AS now FROM locked`,
        [account]
      )

    const modify = <A>(f: (bucket: Bucket, now: number) => readonly [A, Bucket]): Effect.Effect<A> =>
      run("updating the bucket", async (client) => {
        let locked = await lockRow(client)
        if (locked.rows.length === 0) {
          const now = await client.query<{ now: number }>(`SELECT ${serverNow} AS now`)
          await client.query(
            `INSERT INTO ${table} (account, bucket, updated_at) VALUES ($1, $2::jsonb, clock_timestamp())
             ON CONFLICT (account) DO NOTHING`,
            [account, encodeBucket(initialAt(now.rows[0]!.now))]
          )
          locked = await lockRow(client)
        }
        const row = locked.rows[0]
        if (row === undefined) throw new Error(`the row of the account vanished from ${RATE_LIMITS_TABLE}`)
        const stored = decodeBucket(row.bucket)
        const bucket = stored ?? initialAt(row.now)
        let result: readonly [A, Bucket]
        try {
          result = f(bucket, row.now)
        } catch (e) {
          throw new TransitionFailed(e)
        }
        const [a, next] = result
        if (next !== bucket || stored === undefined) {
          await client.query(`UPDATE ${table} SET bucket = $2::jsonb, updated_at = clock_timestamp() WHERE account = $1`, [
            account,
            encodeBucket(next)
          ])
        }
        return a
      })

    const get: Effect.Effect<Bucket> = Effect.flatMap(
      run("reading the bucket", async (client) => {
        const rows = await client.query<{ bucket: string }>(`SELECT bucket::text AS bucket FROM ${table} WHERE account = $1`, [
          account
        ])
        const text = rows.rows[0]?.bucket
        return text === undefined ? undefined : decodeBucket(text)
      }),
      // A missing (or unreadable) row is made by the first change.
      (bucket) => (bucket !== undefined ? Effect.succeed(bucket) : modify((b) => [b, b] as const))
    )

    // The row exists from the start, so the first request does not create it.
    yield* get
    return { modify, get } satisfies BucketStore
  })
