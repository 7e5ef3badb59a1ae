/**
 * Opening a PostgreSQL database the way every worksync store wants it, the counterpart of
 * sqlite.ts: a location `postgres://USER@HOST:PORT/DB` with an optional `?schema=NAME`, a
 * pool through @effect/sql-pg, the store's tables brought to the newest schema by ordered
 * migrations, and the store's single-writer lock as a session advisory lock, which the
 * server drops when the holder's connection closes, however the holder dies.
 */
import { PgClient, PgTypes } from "@effect/sql-pg"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import * as Reactivity from "effect/reactivity/Reactivity"
import * as Result from "effect/Result"
import * as Schedule from "effect/Schedule"
import type * as Scope from "effect/Scope"
import { isSqlError, type SqlError } from "effect/sql/SqlError"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
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

/**
 * int8 (counts, sums, identity columns) and numeric as JavaScript numbers, as SQLite gives
 * them (the driver's own codecs answer bigint and decimal strings). A registry per client,
 * so nothing else in the process is affected.
 */
const storeTypes = (): PgTypes.Registry => {
  const registry = PgTypes.makeRegistry()
  registry.register<number | bigint>(PgTypes.OID.int8, {
    decode: (bytes) => Result.map(PgTypes.decode(bytes, PgTypes.OID.int8, 1), Number),
    encode: (value) => PgTypes.encode(typeof value === "bigint" ? value : BigInt(value), PgTypes.OID.int8)
  })
  registry.register<number | string>(PgTypes.OID.numeric, {
    decode: (bytes) => Result.map(PgTypes.decode(bytes, PgTypes.OID.numeric, 1), Number),
    encode: (value) => PgTypes.encode(String(value), PgTypes.OID.numeric)
  })
  return registry
}

/**
 * The words of a failure for messages. A SqlError's reason (ConnectionError,
 * SqlSyntaxError, ...) carries the driver's error, whose message is the server's (or the
 * socket's); the reason's own message only names the driver's step.
 */
export const pgErrorDetail = (e: unknown): string => {
  if (isSqlError(e)) {
    const inner = e.reason.cause
    return inner instanceof Error ? inner.message : e.reason.message ?? e.message
  }
  const cause = (e as { cause?: unknown }).cause
  const inner = cause instanceof Error ? cause.message : undefined
  return inner ?? (e instanceof Error ? e.message : String(e))
}

const detailOf = pgErrorDetail

/**
 * The statements of a script, for a driver that runs one statement per query (the
 * extended protocol): split at the semicolons outside quotes, dollar quotes and comments.
 */
export const statementsOf = (script: string): Array<string> => {
  const out: Array<string> = []
  let start = 0
  let i = 0
  while (i < script.length) {
    const c = script[i]!
    if (c === "'" || c === "\"") {
      const end = script.indexOf(c, i + 1)
      i = end === -1 ? script.length : end + 1
    } else if (c === "-" && script[i + 1] === "-") {
      const end = script.indexOf("\n", i)
      i = end === -1 ? script.length : end + 1
    } else if (c === "/" && script[i + 1] === "*") {
      const end = script.indexOf("*/", i + 2)
      i = end === -1 ? script.length : end + 2
    } else if (c === "$") {
      const tag = /^\$[A-Za-z_]*\$/.exec(script.slice(i))?.[0]
      if (tag === undefined) {
        i++
      } else {
        const end = script.indexOf(tag, i + tag.length)
        i = end === -1 ? script.length : end + tag.length
      }
    } else if (c === ";") {
      out.push(script.slice(start, i))
      start = ++i
    } else {
      i++
    }
  }
  out.push(script.slice(start))
  return out.map((statement) => statement.trim()).filter((statement) => statement.length > 0)
}

/**
 * The user and password libpq (and node-postgres) would take for `url` when it carries
 * none: PGUSER, then PGPASSWORD or the password file (PGPASSFILE or ~/.pgpass, owner-only).
 * The docs tell users of the pool to give passwords this way; `@effect/sql-pg`'s driver
 * reads neither.
 */
export const libpqCredentials = (
  url: string,
  env: NodeJS.ProcessEnv = process.env
): { readonly username?: string; readonly password?: Redacted.Redacted } => {
  const u = new URL(url)
  const decoded = (text: string) => {
    try {
      return decodeURIComponent(text)
    } catch {
      return text
    }
  }
  const urlUser = decoded(u.username)
  const username = urlUser !== "" ? undefined : env.PGUSER
  if (u.password !== "") return username === undefined ? {} : { username }
  const user = urlUser !== "" ? urlUser : env.PGUSER ?? env.USER ?? ""
  const password = env.PGPASSWORD ?? pgPassFile({
    host: u.hostname !== "" ? u.hostname.replace(/^\[(.*)\]$/, "$1") : env.PGHOST ?? "localhost",
    port: u.port !== "" ? u.port : env.PGPORT ?? "5432",
    database: decoded(u.pathname.replace(/^\//, "")) || (env.PGDATABASE ?? user),
    user
  }, env)
  return {
    ...(username === undefined ? {} : { username }),
    ...(password === undefined ? {} : { password: Redacted.make(password) })
  }
}

/** The password file's entry for a connection, as libpq reads it (`*` matches anything). */
const pgPassFile = (
  want: { readonly host: string; readonly port: string; readonly database: string; readonly user: string },
  env: NodeJS.ProcessEnv
): string | undefined => {
  const file = env.PGPASSFILE ?? path.join(env.HOME ?? os.homedir(), ".pgpass")
  let text: string
  try {
    const stat = fs.statSync(file)
    // libpq ignores a file others may read (and says so).
    if (!stat.isFile()) return undefined
    if (process.platform !== "win32" && (stat.mode & 0o077) !== 0) {
      process.stderr.write(`WARNING: password file "${file}" has group or world access; permissions should be u=rw (0600) or less\n`)
      return undefined
    }
    text = fs.readFileSync(file, "utf8")
  } catch {
    return undefined
  }
  const wanted = [want.host, want.port, want.database, want.user]
  for (const line of text.split(/\r?\n/)) {
    if (line.trim() === "" || line.trimStart().startsWith("#")) continue
    // Fields split at unescaped colons; `\:` and `\\` stand for `:` and `\`.
    const fields: Array<string> = []
    let field = ""
    for (let i = 0; i < line.length; i++) {
      const c = line[i]!
      if (c === "\\" && i + 1 < line.length) {
        field += line[++i]
      } else if (c === ":" && fields.length < 4) {
        fields.push(field)
        field = ""
      } else {
        field += c
      }
    }
    fields.push(field)
    if (fields.length !== 5 || fields[4] === "") continue
    if (wanted.every((value, i) => fields[i] === "*" || fields[i] === value)) return fields[4]
  }
  return undefined
}

/** Two-key advisory lock ids: one namespace for worksync, one key per store and schema. */
const lockKeys = (store: string, schema: string): string =>
  `hashtext('worksync'), hashtext('${store}:${schema}')`

/**
 * A pool to the database of `where` for the scope, every connection working in its schema,
 * nothing created or changed: openPostgres's connection, and that of callers that must not
 * bring a store to the newest schema (`migrate --plan` copying one, postgres-copy.ts).
 */
export const connectPostgres = (
  where: PostgresLocation,
  store: string,
  maxConnections: number
): Effect.Effect<PgClient.PgClient, StoreOpenError, Scope.Scope> =>
  PgClient.make({
    url: Redacted.make(where.url),
    ...libpqCredentials(where.url),
    // Every connection works in the store's schema.
    startupParameters: { search_path: where.schema },
    maxConnections,
    connectTimeout: Duration.seconds(10),
    applicationName: `worksync ${store}`,
    types: storeTypes()
  }).pipe(
    Effect.provide(Reactivity.layer),
    Effect.mapError((e) => new StoreOpenError({ file: where.display, reason: "io", detail: detailOf(e) }))
  )

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
    const sql = yield* connectPostgres(where, store, options.maxConnections ?? 8)
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
        // One statement per query: the driver speaks the extended protocol only.
        for (const statement of statementsOf(m.up)) yield* sql.unsafe(statement)
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
        schedule: Schedule.spaced(Duration.millis(100)).pipe(Schedule.upTo({ duration: Duration.millis(waitMs) }))
      })
    )
    yield* Effect.addFinalizer(() =>
      Effect.ignore(connection.execute(`SELECT pg_advisory_unlock(${keys})`, [], undefined))
    )
  })

/**
 * `?` placeholders (the SQL both backends speak) as PostgreSQL's `$1, $2, ...`. A `?`
 * inside a string literal, a quoted identifier or a comment is text, not a placeholder:
 * queries given through the snapshot's `select` and `stream` may hold one
 * (`WHERE title = 'Why?' AND id = ?`).
 */
export const dollarParams = (sql: string): string => {
  let out = ""
  let n = 0
  let i = 0
  /** The index just past the end of a quoted run starting at `from` (a doubled quote stays inside). */
  const pastQuoted = (from: number, quote: string): number => {
    let j = from + 1
    while (j < sql.length) {
      if (sql[j] === quote) {
        if (sql[j + 1] === quote) j += 2
        else return j + 1
      } else j++
    }
    return sql.length
  }
  while (i < sql.length) {
    const c = sql[i]!
    let end = i + 1
    if (c === "'" || c === "\"") end = pastQuoted(i, c)
    else if (c === "-" && sql[i + 1] === "-") {
      const eol = sql.indexOf("\n", i)
      end = eol === -1 ? sql.length : eol
    } else if (c === "/" && sql[i + 1] === "*") {
      const close = sql.indexOf("*/", i + 2)
      end = close === -1 ? sql.length : close + 2
    } else if (c === "?") {
      out += `$${++n}`
      i = end
      continue
    }
    out += sql.slice(i, end)
    i = end
  }
  return out
}
