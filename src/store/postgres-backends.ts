/**
 * The PostgreSQL backends of the stores, loaded when a location first names PostgreSQL.
 * Evaluating them brings in @effect/sql-pg and pg, which a command keeping its stores in
 * SQLite files (the default) would otherwise pay for at every start.
 */
import * as Effect from "effect/Effect"

export const snapshotOnPostgres = Effect.promise(() => import("./snapshot-postgres.ts"))

export const journalOnPostgres = Effect.promise(() => import("./journal/postgres.ts"))

export const planCopiesOnPostgres = Effect.promise(() => import("./postgres-copy.ts"))
