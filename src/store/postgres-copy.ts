/**
 * Copies of PostgreSQL stores for the scope, the counterpart of sqlite-copy.ts:
 * `migrate --plan` plans against copies of its journal and source snapshot, so it runs the
 * very planning of a run and writes neither. Each store's schema is copied into a new
 * schema of the same database, `worksync_plan_<random>` (the journal) and the same name
 * with `_source` (the source snapshot, where `sourceSnapshotFile` looks for it), in one
 * REPEATABLE READ transaction, so both copies are of one moment. The copies are dropped
 * when the scope closes, on success, failure or interruption alike.
 *
 * Only the store's own relations are copied (the tables and views its migrations create,
 * and `worksync_schema`), not whatever else the schema holds: a journal may live in
 * `public`. Each table is made `LIKE` its original (columns, collations, defaults,
 * constraints, indexes, identity), filled from it, and its identity sequences set to the
 * original's; views are made again from their definitions. Nothing is migrated on the
 * originals: the copy is brought to the newest schema when the command opens it.
 *
 * A process killed before it drops its copies leaves them behind: each copy is held by a
 * session advisory lock of the process that made it, and the next copy drops those whose
 * lock nobody holds (only schemas named as copies and carrying the copies' comment, never
 * a schema of the user's that happens to start the same).
 */
import type { PgClient } from "@effect/sql-pg"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import type * as SqlConnection from "effect/sql/SqlConnection"
import { randomBytes } from "node:crypto"
import { JOURNAL_PG_MIGRATIONS } from "./journal/schema-postgres.ts"
import { connectPostgres, parsePostgresUrl, pgErrorDetail, type PgMigration, redactUrl } from "./postgres.ts"
import { SNAPSHOT_PG_MIGRATIONS } from "./snapshot-schema-postgres.ts"
import { StoreOpenError } from "./sqlite.ts"

/** The prefix of every copy's schema, then 12 hex digits. */
const PREFIX = "worksync_plan_"
const COPY_NAME = `^${PREFIX}[0-9a-f]{12}$`
/** The comment every copy's schema carries: only a schema named and marked so is ever dropped as abandoned. */
const COPY_MARK = "worksync: a copy for migrate --plan, dropped when the command ends"
/** Where the copy of a store's schema `s` lives beside the journal's copy: as sourceSnapshotFile names it. */
const SOURCE_SUFFIX = "_source"
/** The first key of every copy's lock; the second is the copy's schema. */
const COPY_LOCK = "hashtext('worksync-plan-copy')"

/** The relations a store's migrations create, by kind (the schema's own record of them). */
const relationsOf = (migrations: ReadonlyArray<PgMigration>, kind: "TABLE" | "VIEW"): Array<string> => [
  ...new Set(migrations.flatMap((m) => [...m.up.matchAll(new RegExp(`CREATE ${kind} (?:IF NOT EXISTS )?([a-z_][a-z0-9_]*)`, "g"))].map((x) => x[1]!)))
]

/** What a copy takes from a schema: the store's tables (with the version table) and views. */
interface StoreRelations {
  readonly tables: ReadonlyArray<string>
  readonly views: ReadonlyArray<string>
}

const storeRelations = (migrations: ReadonlyArray<PgMigration>): StoreRelations => ({
  tables: ["worksync_schema", ...relationsOf(migrations, "TABLE")],
  views: relationsOf(migrations, "VIEW")
})

export const JOURNAL_RELATIONS = storeRelations(JOURNAL_PG_MIGRATIONS)
export const SNAPSHOT_RELATIONS = storeRelations(SNAPSHOT_PG_MIGRATIONS)

const ident = (name: string) => `"${name.replace(/"/g, "\"\"")}"`

/** Copies the store's relations of schema `from` into the new, empty schema `to` (in the caller's transaction). */
const copySchema = (sql: PgClient.PgClient, from: string, to: string, relations: StoreRelations) =>
  Effect.gen(function*() {
    yield* sql.unsafe(`CREATE SCHEMA ${to}`)
    yield* sql.unsafe(`COMMENT ON SCHEMA ${to} IS '${COPY_MARK}'`)
    const tables = yield* sql.unsafe<{ name: string }>(
      "SELECT c.relname AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND c.relkind IN ('r', 'p') AND c.relname = ANY($2::text[]) ORDER BY c.oid",
      [from, relations.tables]
    )
    for (const { name } of tables) {
      const src = `${from}.${ident(name)}`
      const dst = `${to}.${ident(name)}`
      yield* sql.unsafe(`CREATE TABLE ${dst} (LIKE ${src} INCLUDING ALL)`)
      // Generated columns compute themselves; identity values are kept as they are.
      const columns = yield* sql.unsafe<{ name: string; identity: boolean }>(
        "SELECT attname AS name, attidentity <> '' AS identity FROM pg_attribute WHERE attrelid = $1::regclass AND attnum > 0 AND NOT attisdropped AND attgenerated = '' ORDER BY attnum",
        [src]
      )
      const list = columns.map((c) => ident(c.name)).join(", ")
      yield* sql.unsafe(`INSERT INTO ${dst} (${list}) OVERRIDING SYSTEM VALUE SELECT ${list} FROM ${src}`)
      for (const c of columns.filter((c) => c.identity)) {
        const seq = yield* sql.unsafe<{ original: string; copy: string }>(
          "SELECT pg_get_serial_sequence($1, $3) AS original, pg_get_serial_sequence($2, $3) AS copy",
          [src, dst, c.name]
        )
        const { copy, original } = seq[0]!
        yield* sql.unsafe(`SELECT setval($1::regclass, s.last_value, s.is_called) FROM ${original} AS s`, [copy])
      }
    }
    // Views: their definitions read with `from` as the search path name its relations
    // unqualified, so made with `to` as the search path they read the copies. In the
    // order they were made, which is an order their dependencies allow.
    yield* sql.unsafe(`SET LOCAL search_path TO ${from}`)
    const views = yield* sql.unsafe<{ name: string; definition: string }>(
      "SELECT c.relname AS name, pg_get_viewdef(c.oid) AS definition FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND c.relkind = 'v' AND c.relname = ANY($2::text[]) ORDER BY c.oid",
      [from, relations.views]
    )
    yield* sql.unsafe(`SET LOCAL search_path TO ${to}`)
    for (const v of views) yield* sql.unsafe(`CREATE VIEW ${ident(v.name)} AS ${v.definition}`)
  })

/** Drops the copy `schema` and its source schema. */
const dropCopy = (sql: PgClient.PgClient, schema: string) =>
  Effect.ignore(sql.unsafe(`DROP SCHEMA IF EXISTS ${schema}, ${schema}${SOURCE_SUFFIX} CASCADE`))

/**
 * Drops the copies of processes that died holding them (no one holds their lock), on the
 * connection that holds this process's lock; a copy being made is locked before it exists.
 */
const dropAbandoned = (sql: PgClient.PgClient, connection: SqlConnection.Connection) =>
  Effect.gen(function*() {
    const schemas = yield* sql.unsafe<{ name: string }>(
      "SELECT nspname AS name FROM pg_namespace WHERE nspname ~ $1 AND obj_description(oid, 'pg_namespace') = $2",
      [COPY_NAME, COPY_MARK]
    )
    for (const { name } of schemas) {
      const rows = yield* connection.execute(`SELECT pg_try_advisory_lock(${COPY_LOCK}, hashtext($1)) AS held`, [name], undefined)
      if ((rows[0] as { held?: boolean } | undefined)?.held !== true) continue
      yield* dropCopy(sql, name)
      yield* connection.execute(`SELECT pg_advisory_unlock(${COPY_LOCK}, hashtext($1))`, [name], undefined)
    }
  })

/**
 * Copies of the journal at the PostgreSQL location `journal` and of the source snapshot in
 * `sourceLocation`, for the scope: the location of the journal's copy, whose source
 * snapshot lives in the schema `sourceSnapshotFile` names for it. A store that is not
 * there is not copied (its copy is made when the command opens it, as from nothing).
 */
export const copyPostgresPlanStores = (
  journal: string,
  sourceLocation: string
): Effect.Effect<string, StoreOpenError, Scope.Scope> =>
  Effect.gen(function*() {
    const [where, source] = yield* Effect.try({
      try: () => [parsePostgresUrl(journal), parsePostgresUrl(sourceLocation).schema] as const,
      catch: (e) => e instanceof StoreOpenError ? e : new StoreOpenError({ file: redactUrl(journal), reason: "io", detail: String(e) })
    })
    const fail = (e: unknown) => new StoreOpenError({ file: where.display, reason: "io", detail: pgErrorDetail(e) })
    const sql = yield* connectPostgres(where, "plan", 2)
    const copy = `${PREFIX}${randomBytes(6).toString("hex")}`
    // This process's lock on its copy, held until the copy is dropped.
    const connection = yield* sql.reserve.pipe(Effect.mapError(fail))
    yield* connection.execute(`SELECT pg_advisory_lock(${COPY_LOCK}, hashtext($1))`, [copy], undefined).pipe(Effect.mapError(fail))
    yield* Effect.addFinalizer(() => Effect.ignore(connection.execute(`SELECT pg_advisory_unlock(${COPY_LOCK}, hashtext($1))`, [copy], undefined)))
    yield* dropAbandoned(sql, connection).pipe(Effect.mapError(fail))
    yield* Effect.acquireRelease(
      sql.withTransaction(Effect.gen(function*() {
        // One snapshot of the database for both copies.
        yield* sql.unsafe("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
        yield* copySchema(sql, where.schema, copy, JOURNAL_RELATIONS)
        yield* copySchema(sql, source, `${copy}${SOURCE_SUFFIX}`, SNAPSHOT_RELATIONS)
      })).pipe(Effect.mapError(fail)),
      () => dropCopy(sql, copy)
    )
    const u = new URL(journal)
    u.searchParams.set("schema", copy)
    return u.toString()
  })
