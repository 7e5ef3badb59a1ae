/**
 * Opening a local SQLite file the way every worksync store wants it: created with
 * owner-only permissions (it may hold private work data), WAL mode, and brought to
 * the newest schema by ordered migrations tracked in `PRAGMA user_version`.
 *
 * Generic on purpose: the snapshot and the journal each pass their own migrations.
 */
import Database from "better-sqlite3"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import * as fs from "node:fs"
import * as path from "node:path"

/** One schema step; `up` runs inside a transaction with the version bump. */
export interface Migration {
  readonly version: number
  readonly description: string
  readonly up: string | ((db: Database.Database) => void)
}

export interface OpenOptions {
  /** Ordered by version, starting at 1. */
  readonly migrations: ReadonlyArray<Migration>
  /** Open an existing file only (reading commands must not create an empty store). */
  readonly mustExist?: boolean
  readonly readonly?: boolean
}

/** The file could not be opened, created or migrated. */
export class StoreOpenError extends Data.TaggedError("StoreOpenError")<{
  readonly file: string
  readonly reason: "not-found" | "not-a-store" | "too-new" | "io"
  readonly detail: string
}> {
  override get message(): string {
    switch (this.reason) {
      case "not-found":
        return `${this.file}: file not found`
      case "too-new":
        return `${this.file}: written by a newer worksync (${this.detail})`
      case "not-a-store":
        return `${this.file}: not a worksync store (${this.detail})`
      default:
        return `${this.file}: cannot open (${this.detail})`
    }
  }
}

const OWNER_ONLY = 0o600

/** Creates the file (and its directory) with owner-only permissions when it is missing. */
const ensureFile = (file: string): void => {
  fs.mkdirSync(path.dirname(path.resolve(file)), { recursive: true })
  try {
    // "wx" fails when the file exists, so an existing store keeps its mode.
    fs.closeSync(fs.openSync(file, "wx", OWNER_ONLY))
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e
  }
}

/** Applies the migrations above the file's version, each in its own transaction. */
/**
 * Statements by their text, each prepared once for the connection, for texts built at the
 * call (a parameter per key or kind). A statement made per call is compiled each time, and
 * its compiled form is freed only when V8 collects its object, which may be long after
 * (8,000 reads of 500 keys, each with a statement of its own: a peak of 923 MB, against
 * 105 MB with one statement, docs/growth.md). Bounded: the
 * texts vary with a list's length, so past `max` the cache starts again. Only for `get`,
 * `all` and `run`: a statement being iterated cannot serve another caller meanwhile.
 */
export const statementCache = (db: Database.Database, max = 64) => {
  const cache = new Map<string, Database.Statement<Array<unknown>, unknown>>()
  return <P extends Array<unknown> = Array<unknown>, R = unknown>(sql: string): Database.Statement<P, R> => {
    let st = cache.get(sql)
    if (st === undefined) {
      if (cache.size >= max) cache.clear()
      st = db.prepare<Array<unknown>, unknown>(sql)
      cache.set(sql, st)
    }
    return st as unknown as Database.Statement<P, R>
  }
}

export const migrate = (db: Database.Database, migrations: ReadonlyArray<Migration>, file: string): void => {
  const current = db.pragma("user_version", { simple: true }) as number
  const newest = migrations.reduce((max, m) => Math.max(max, m.version), 0)
  if (current > newest) {
    throw new StoreOpenError({ file, reason: "too-new", detail: `schema version ${current}, this build knows ${newest}` })
  }
  for (const m of [...migrations].sort((a, b) => a.version - b.version)) {
    if (m.version <= current) continue
    db.transaction(() => {
      if (typeof m.up === "string") db.exec(m.up)
      else m.up(db)
      db.pragma(`user_version = ${m.version}`)
    })()
  }
}

/** Opens synchronously; throws StoreOpenError. */
export const openDatabaseSync = (file: string, options: OpenOptions): Database.Database => {
  if (options.mustExist === true || options.readonly === true) {
    if (!fs.existsSync(file)) throw new StoreOpenError({ file, reason: "not-found", detail: "" })
  } else {
    try {
      ensureFile(file)
    } catch (e) {
      throw new StoreOpenError({ file, reason: "io", detail: (e as Error).message })
    }
  }
  let db: Database.Database
  try {
    db = new Database(file, { readonly: options.readonly === true, fileMustExist: true })
  } catch (e) {
    throw new StoreOpenError({ file, reason: "io", detail: (e as Error).message })
  }
  try {
    if (options.readonly !== true) {
      db.pragma("journal_mode = WAL")
      // WAL with synchronous=NORMAL is durable at each checkpoint and loses at most the
      // last transactions on power loss, never consistency.
      db.pragma("synchronous = NORMAL")
    }
    db.pragma("foreign_keys = ON")
    db.pragma("busy_timeout = 5000")
    // 16 MB of page cache and temporary b-trees in files: a 64 MB cache and in-memory
    // temporaries (the sorts and DISTINCTs of prune, diff and export over a whole run) were
    // most of these commands' peak RSS at 100,000 records, and measured no faster.
    db.pragma("cache_size = -16384")
    if (options.readonly !== true) migrate(db, options.migrations, file)
    return db
  } catch (e) {
    db.close()
    if (e instanceof StoreOpenError) throw e
    const message = (e as Error).message
    const reason = /not a database|file is not a database|malformed/i.test(message) ? "not-a-store" : "io"
    throw new StoreOpenError({ file, reason, detail: message })
  }
}

/** Opens the database for the life of the scope. */
export const openDatabase = (
  file: string,
  options: OpenOptions
): Effect.Effect<Database.Database, StoreOpenError, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.try({
      try: () => openDatabaseSync(file, options),
      catch: (e) =>
        e instanceof StoreOpenError ? e : new StoreOpenError({ file, reason: "io", detail: String(e) })
    }),
    (db) =>
      Effect.sync(() => {
        if (db.open) db.close()
      })
  )
