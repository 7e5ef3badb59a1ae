/**
 * Opening a PostgreSQL database the way every worksync store wants it, the counterpart of
 * sqlite.ts: a location `postgres://USER@HOST:PORT/DB` with an optional `?schema=NAME`, a
 * pool through @effect/sql-pg, the store's tables brought to the newest schema by ordered
 * migrations, and the store's single-writer lock as a session advisory lock, which the
 * server drops when the holder's connection closes, however the holder dies.
 */
import { PgClient } from "@effect/sql-pg"
import * as Reactivity from "@effect/experimental/Reactivity"
import type { SqlError } from "@effect/sql/SqlError"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Schedule from "effect/Schedule"
import type * as Scope from "effect/Scope"
import Pg from "pg"
import { STORE_LOCK_WAIT_MS, StoreBusy, StoreLockError } from "./file-lock.ts"
import { StoreOpenError } from "./sqlite.ts"

import { isPostgresUrl, redactUrl, SCHEMA_NAME } from "./postgres-url.ts"

export { isPostgresUrl, redactUrl }

/** A parsed store location. */
export interface PostgresLocation {
  /** The connection URL without the `schema` parameter. */
  readonly url: string
  /** The schema holding the store's tables (`public` unless `?schema=` names another). */
  readonly schema: string
  /** The location for messages: the URL with any password replaced by `***`. */
  readonly display: string
}


export const parsePostgresUrl = (location: string): PostgresLocation => {
  const display = redactUrl(location)
  let u: URL
  try {
    u = new URL(location)
  } catch {
    throw new StoreOpenError({ file: display, reason: "io", detail: "not a valid PostgreSQL URL (postgres://USER@HOST:PORT/DB)" })
  }
  const schema = u.searchParams.get("schema") ?? "public"
  if (!SCHEMA_NAME.test(schema)) {
    throw new StoreOpenError({
      file: display,
      reason: "io",
      detail: `schema "${schema}" is not a plain name (lower-case letters, digits and _, at most 63)`
    })
  }
  u.searchParams.delete("schema")
  return { url: u.toString(), schema, display }
}

/** One schema step of a PostgreSQL store; run in a transaction with its version bump. */
export interface PgMigration {
  readonly version: number
  readonly description: string
  readonly up: string
}

/** An open store database: the client, where it is, and the store's name for its lock. */
export interface PostgresStore {
  readonly sql: PgClient.PgClient
  readonly location: PostgresLocation
  readonly store: string
}

/** int8 (counts, sums, identity columns) as a JavaScript number, as SQLite gives them. */
const INT8_OID = 20
const NUMERIC_OID = 1700
const types: Pg.CustomTypesConfig = {
  getTypeParser: ((oid: number, format?: "text" | "binary") =>
    oid === INT8_OID || oid === NUMERIC_OID
      ? (value: string) => Number(value)
      : Pg.types.getTypeParser(oid, format ?? "text")) as Pg.CustomTypesConfig["getTypeParser"]
}

const detailOf = (e: unknown): string => {
  const cause = (e as { cause?: unknown }).cause
  const inner = cause instanceof Error ? cause.message : undefined
  return inner ?? (e instanceof Error ? e.message : String(e))
}

/** Two-key advisory lock ids: one namespace for worksync, one key per store and schema. */
const lockKeys = (store: string, schema: string): string =>
  `hashtext('worksync'), hashtext('${store}:${schema}')`

/**
 * Opens the store's database for the scope: a pool whose connections use the store's
 * schema, then the migrations above the recorded version (each store keeps its own
 * version row in `worksync_schema`), serialized between processes by an advisory lock.
 */
export const openPostgres = (
  location: string,
  store: string,
  migrations: ReadonlyArray<PgMigration>,
  options: { readonly mustExist?: boolean; readonly maxConnections?: number } = {}
): Effect.Effect<PostgresStore, StoreOpenError, Scope.Scope> =>
  Effect.gen(function*() {
    const where = yield* Effect.try({
      try: () => parsePostgresUrl(location),
      catch: (e) => e instanceof StoreOpenError ? e : new StoreOpenError({ file: redactUrl(location), reason: "io", detail: String(e) })
    })
    const fail = (e: unknown) => new StoreOpenError({ file: where.display, reason: "io", detail: detailOf(e) })
    const sql = yield* PgClient.fromPool({
      acquire: Effect.acquireRelease(
        Effect.sync(() => {
          const pool = new Pg.Pool({
            connectionString: where.url,
            options: `-c search_path=${where.schema}`,
            max: options.maxConnections ?? 8,
            connectionTimeoutMillis: 10_000,
            application_name: `worksync ${store}`,
            types
          })
          // An idle connection the server ends (a restart, an administrator, a dropped
          // database) must not take the process down: the next query reports it.
          pool.on("error", () => undefined)
          return pool
        }),
        (pool) => Effect.promise(() => pool.end().catch(() => undefined))
      )
    }).pipe(Effect.provide(Reactivity.layer), Effect.mapError(fail))
    const newest = migrations.reduce((max, m) => Math.max(max, m.version), 0)
    yield* sql.withTransaction(Effect.gen(function*() {
      yield* sql.unsafe(`SELECT pg_advisory_xact_lock(${lockKeys("migrate", where.schema)})`)
      const exists = yield* sql.unsafe<{ n: number }>(
        "SELECT count(*) AS n FROM information_schema.tables WHERE table_schema = $1 AND table_name = 'worksync_schema'",
        [where.schema]
      )
      if ((exists[0]?.n ?? 0) === 0) {
        if (options.mustExist === true) {
          return yield* new StoreOpenError({ file: where.display, reason: "not-found", detail: `no worksync ${store} in schema ${where.schema}` })
        }
        yield* sql.unsafe(`CREATE SCHEMA IF NOT EXISTS ${where.schema}`)
        yield* sql.unsafe("CREATE TABLE worksync_schema (store TEXT PRIMARY KEY, version INTEGER NOT NULL)")
      }
      const row = yield* sql.unsafe<{ version: number }>("SELECT version FROM worksync_schema WHERE store = $1", [store])
      const current = row[0]?.version ?? 0
      if (current === 0 && options.mustExist === true) {
        return yield* new StoreOpenError({ file: where.display, reason: "not-found", detail: `no worksync ${store} in schema ${where.schema}` })
      }
      if (current > newest) {
        return yield* new StoreOpenError({ file: where.display, reason: "too-new", detail: `schema version ${current}, this build knows ${newest}` })
      }
      for (const m of [...migrations].sort((a, b) => a.version - b.version)) {
        if (m.version <= current) continue
        yield* sql.unsafe(m.up)
      }
      if (newest > current) {
        yield* sql.unsafe(
          "INSERT INTO worksync_schema (store, version) VALUES ($1, $2) ON CONFLICT (store) DO UPDATE SET version = excluded.version",
          [store, newest]
        )
      }
    })).pipe(Effect.mapError((e) => e instanceof StoreOpenError ? e : fail(e)))
    return { sql, location: where, store }
  })

/**
 * Holds the store's writer lock for the scope on a connection of its own: a second
 * writer retries for `waitMs`, then fails with StoreBusy naming the store.
 */
export const lockPostgresWriter = (
  db: PostgresStore,
  what: string,
  options: { readonly waitMs?: number } = {}
): Effect.Effect<void, StoreBusy | StoreLockError, Scope.Scope> =>
  Effect.gen(function*() {
    const file = db.location.display
    const lockError = (e: SqlError) => new StoreLockError({ what, file, detail: detailOf(e) })
    const connection = yield* db.sql.reserve.pipe(Effect.mapError(lockError))
    const keys = lockKeys(db.store, db.location.schema)
    const tryLock = connection.execute(`SELECT pg_try_advisory_lock(${keys}) AS held`, [], undefined).pipe(
      Effect.mapError(lockError),
      Effect.flatMap((rows) => (rows[0] as { held?: boolean } | undefined)?.held === true ? Effect.void : Effect.fail(new StoreBusy({ what, file })))
    )
    const waitMs = options.waitMs ?? STORE_LOCK_WAIT_MS
    yield* tryLock.pipe(
      Effect.retry({
        while: (e) => e._tag === "StoreBusy",
        schedule: Schedule.spaced(Duration.millis(100)).pipe(Schedule.upTo(Duration.millis(waitMs)))
      })
    )
    yield* Effect.addFinalizer(() =>
      Effect.ignore(connection.execute(`SELECT pg_advisory_unlock(${keys})`, [], undefined))
    )
  })

/** `?` placeholders (the SQL both backends speak) as PostgreSQL's `$1, $2, ...`. */
export const dollarParams = (sql: string): string => {
  let n = 0
  return sql.replace(/\?/g, () => `$${++n}`)
}
