/**
 * One writer per store file (a journal, a snapshot), across processes and within one.
 *
 * The lock is SQLite's own: `<file>.lock` is a one-row SQLite database held open in
 * exclusive locking mode after a write, so its file lock (fcntl) is kept until the
 * connection closes. The operating system drops it when the holder dies, however it
 * dies (SIGKILL, power loss of the process), so a killed run never blocks its rerun,
 * and nothing here guesses from pids whether a holder is alive. A second connection in
 * the same process is refused as well: SQLite tracks its locks per file, not per
 * descriptor.
 */
import Database from "better-sqlite3"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import * as fs from "node:fs"

/** How long a second opener waits for the holder before giving up, by default. */
export const STORE_LOCK_WAIT_MS = 2_000

/** Another process (or another opener in this one) holds the store. */
export class StoreBusy extends Data.TaggedError("StoreBusy")<{
  /** `journal` or `snapshot`: what the file is, for the message. */
  readonly what: string
  readonly file: string
}> {
  override get message(): string {
    return `${this.what} ${this.file} is in use by another worksync run; wait for it to finish or stop it`
  }
}

/** The lock file could not be created or opened (permissions, disk). */
export class StoreLockError extends Data.TaggedError("StoreLockError")<{
  readonly what: string
  readonly file: string
  readonly detail: string
}> {
  override get message(): string {
    return `${this.what} ${this.file}: cannot take its lock (${this.detail})`
  }
}

export const lockFileOf = (file: string): string => `${file}.lock`

const isBusy = (e: unknown): boolean => {
  const code = (e as { code?: unknown }).code
  return typeof code === "string" && code.startsWith("SQLITE_BUSY")
}

/** Whether the file exists and is not a SQLite database (a pid-file lock of older releases). */
const isLegacyLockFile = (lock: string): boolean => {
  try {
    const head = Buffer.alloc(16)
    const fd = fs.openSync(lock, "r")
    try {
      const n = fs.readSync(fd, head, 0, 16, 0)
      return n < 16 || head.toString("latin1") !== "SQLite format 3\0"
    } finally {
      fs.closeSync(fd)
    }
  } catch {
    return false
  }
}

const take = (what: string, file: string, waitMs: number): Database.Database => {
  const lock = lockFileOf(file)
  // Older releases wrote the holder's pid as text; such a file holds no OS lock.
  if (isLegacyLockFile(lock)) fs.rmSync(lock, { force: true })
  let db: Database.Database | undefined
  try {
    db = new Database(lock)
    fs.chmodSync(lock, 0o600)
    db.pragma(`busy_timeout = ${Math.max(0, Math.floor(waitMs))}`)
    db.pragma("locking_mode = EXCLUSIVE")
    // The first write takes the exclusive lock, which exclusive mode then keeps.
    db.exec("CREATE TABLE IF NOT EXISTS holder (id INTEGER PRIMARY KEY CHECK (id = 1), pid INTEGER, since TEXT)")
    db.prepare("INSERT OR REPLACE INTO holder (id, pid, since) VALUES (1, ?, ?)").run(process.pid, new Date().toISOString())
    return db
  } catch (e) {
    db?.close()
    if (isBusy(e)) throw new StoreBusy({ what, file })
    throw new StoreLockError({ what, file, detail: e instanceof Error ? e.message : String(e) })
  }
}

/**
 * Holds the store's lock for the life of the scope; fails with StoreBusy when another
 * holder keeps it longer than `waitMs`.
 */
export const lockStore = (
  what: string,
  file: string,
  options: { readonly waitMs?: number } = {}
): Effect.Effect<void, StoreBusy | StoreLockError, Scope.Scope> =>
  Effect.asVoid(
    Effect.acquireRelease(
      Effect.try({
        try: () => take(what, file, options.waitMs ?? STORE_LOCK_WAIT_MS),
        catch: (e) =>
          e instanceof StoreBusy || e instanceof StoreLockError
            ? e
            : new StoreLockError({ what, file, detail: String(e) })
      }),
      (db) => Effect.sync(() => db.close())
    )
  )
