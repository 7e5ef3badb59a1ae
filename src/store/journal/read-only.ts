/**
 * A journal read without writing: the ops of given keys, the id map and meta, as
 * import-csv's delta planning reads them (what earlier passes wrote for a row, which rows
 * have a record on the target). A run reads the journal it plans into; `--plan` and
 * `--dry-run` read an existing journal (a file, or a PostgreSQL schema through
 * postgres.ts) this way, so they create and change nothing. A dry run of import-csv reads
 * the states of its keys the same way (openJournalStates).
 * Rows are read as the store reads them (schema.ts `toOp`).
 */
import Database from "better-sqlite3"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import * as fs from "node:fs"
import { JournalError, type JournalApi, type OpState } from "../journal.ts"
import { journalOnPostgres } from "../postgres-backends.ts"
import { isPostgresUrl } from "../postgres-url.ts"
import { toPromise } from "./to-promise.ts"
import { idMapReader, opsReader } from "./schema.ts"

export type JournalView = Pick<JournalApi, "getMany" | "mappings" | "getMeta">

/** A journal with nothing in it (no file yet, or one a read-only view cannot open). */
export const EMPTY_VIEW: JournalView = {
  getMany: () => Effect.succeed([]),
  mappings: () => Effect.succeed([]),
  getMeta: () => Effect.succeed(Option.none())
}

/**
 * The view of the journal at `location`, read-only, for the scope; a journal that does not
 * exist (no file, a schema without one) reads as empty and is not created.
 */
export const openJournalView = (location: string | undefined): Effect.Effect<JournalView, JournalError, Scope.Scope> => {
  if (location !== undefined && isPostgresUrl(location)) {
    return Effect.flatMap(journalOnPostgres, (pg) => Effect.map(pg.openPostgresJournalView(location), (view) => view ?? EMPTY_VIEW))
  }
  if (location === undefined || !fs.existsSync(location)) return Effect.succeed(EMPTY_VIEW)
  const fail = (operation: string) => (e: unknown) =>
    new JournalError({ file: location, operation, detail: e instanceof Error ? e.message : String(e) })
  return Effect.map(
    Effect.acquireRelease(
      Effect.try({ try: () => new Database(location, { readonly: true, fileMustExist: true }), catch: fail("open") }),
      (db) => Effect.sync(() => db.close())
    ),
    (db): JournalView => {
      const hasOps = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'ops'").get() !== undefined
      if (!hasOps) return EMPTY_VIEW
      const opsOf = opsReader(db)
      const mappings = idMapReader(db)
      const meta = db.prepare<[string], { value: string }>("SELECT value FROM meta WHERE key = ?")
      return {
        getMany: (keys) => Effect.try({ try: () => opsOf(keys), catch: fail("read") }),
        mappings: (namespace, page) => Effect.try({ try: () => mappings(namespace, page), catch: fail("read") }),
        getMeta: (key) =>
          Effect.try({ try: () => Option.fromNullishOr(meta.get(key)?.value), catch: fail("read") })
      }
    }
  )
}

/**
 * The journal a dry run plans against, read only: a key's state, or nothing when the key
 * (or the whole journal) does not exist. A SQLite file answers key by key, synchronously;
 * a PostgreSQL journal answers a batch's keys in one query.
 */
export interface JournalStates {
  readonly stateOf?: (key: string) => OpState | undefined
  readonly statesOf?: (keys: ReadonlyArray<string>) => Promise<ReadonlyMap<string, OpState>>
}

/**
 * Opens the journal at `location` for a dry run's states (for the scope): nothing is
 * created, so a journal that does not exist yet is planned against as empty.
 */
export const openJournalStates = (location: string | undefined): Effect.Effect<JournalStates, JournalError, Scope.Scope> => {
  if (location === undefined) return Effect.succeed({})
  if (isPostgresUrl(location)) {
    return Effect.gen(function*() {
      const states = yield* (yield* journalOnPostgres).openPostgresJournalStates(location)
      if (states === undefined) return {}
      const services = yield* Effect.context<never>()
      return {
        statesOf: (keys) => toPromise(services, states(keys))
      } satisfies JournalStates
    })
  }
  if (!fs.existsSync(location)) return Effect.succeed({})
  return Effect.map(
    Effect.acquireRelease(
      Effect.try({
        try: () => new Database(location, { readonly: true, fileMustExist: true }),
        catch: (e) => new JournalError({ file: location, operation: "open", detail: e instanceof Error ? e.message : String(e) })
      }),
      (db) => Effect.sync(() => db.close())
    ),
    (db) => {
      const stateOf = db.prepare<[string], { state: OpState }>("SELECT state FROM ops WHERE key = ?")
      return { stateOf: (key) => stateOf.get(key)?.state } satisfies JournalStates
    }
  )
}
