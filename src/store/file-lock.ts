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
 *
 * The lock file itself is never removed, so every opener of a store meets the same file
 * and its locks: two processes opening a new store at once cannot each lock a file of
 * their own. The one exception is a pid file an older release left behind, which holds
 * no lock at all; it is taken over under that release's own rule (see removePidFile).
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

const codeOf = (e: unknown): string => {
  const code = (e as { code?: unknown }).code
  return typeof code === "string" ? code : ""
}

const isBusy = (e: unknown): boolean => codeOf(e).startsWith("SQLITE_BUSY")

/**
 * Creates the lock file when there is none: empty, with O_EXCL, owner-only. An empty
 * file is an empty SQLite database, so the file at the lock's path is always one that
 * SQLite's locking governs from its first byte; whoever creates it, every opener meets
 * the same file.
 */
const ensureLockFile = (lock: string): void => {
  try {
    fs.closeSync(fs.openSync(lock, "wx", 0o600))
  } catch (e) {
    if (codeOf(e) !== "EEXIST") throw e
  }
}

/**
 * Opens the lock file that exists and takes its exclusive lock. SQLite never creates the
 * file here (a file removed in between is created again by the caller, owner-only).
 */
const open = (lock: string, waitMs: number): Database.Database => {
  const db = new Database(lock, { fileMustExist: true })
  try {
    db.pragma(`busy_timeout = ${Math.max(0, Math.floor(waitMs))}`)
    db.pragma("locking_mode = EXCLUSIVE")
    // The first write takes the exclusive lock, which exclusive mode then keeps.
    db.exec("CREATE TABLE IF NOT EXISTS holder (id INTEGER PRIMARY KEY CHECK (id = 1), pid INTEGER, since TEXT)")
    db.prepare("INSERT OR REPLACE INTO holder (id, pid, since) VALUES (1, ?, ?)").run(process.pid, new Date().toISOString())
    // Lock files of earlier releases were created by SQLite with the default mode.
    fs.chmodSync(lock, 0o600)
    return db
  } catch (e) {
    db.close()
    throw e
  }
}

const isAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch (e) {
    // EPERM: the process exists but belongs to someone else.
    return codeOf(e) === "EPERM"
  }
}

/**
 * Whether the lock file is a pid file of an older release: text SQLite refuses as not a
 * database. SQLite judges it under its own locks, so a lock file another process is
 * creating or writing is never taken for one.
 */
const isPidFile = (lock: string): boolean => {
  let db: Database.Database | undefined
  try {
    // No waiting: a holder's lock means a SQLite file.
    db = new Database(lock, { fileMustExist: true, timeout: 0 })
    db.pragma("schema_version")
    return false
  } catch (e) {
    const code = codeOf(e)
    if (code === "SQLITE_NOTADB") return true
    if (code === "SQLITE_CANTOPEN" || isBusy(e)) return false
    throw e
  } finally {
    db?.close()
  }
}

/**
 * Removes the lock file when it is a pid file of an older release whose process is gone
 * (the rule those releases followed). Removals are serialised by the lock of
 * `<lock>.takeover`, and the file is judged again under it: this release never writes a
 * pid file, and no new lock file can take the place of one while it is there (O_EXCL),
 * so the file judged is the file removed, and a lock file that a live process created
 * or holds is never removed.
 */
const removePidFile = (what: string, file: string, lock: string, waitMs: number): void => {
  const guardFile = `${lock}.takeover`
  ensureLockFile(guardFile)
  const guard = open(guardFile, waitMs)
  try {
    if (!isPidFile(lock)) return
    const pid = Number(fs.readFileSync(lock, "latin1").trim())
    if (Number.isInteger(pid) && pid > 0 && pid !== process.pid && isAlive(pid)) throw new StoreBusy({ what, file })
    fs.rmSync(lock, { force: true })
  } finally {
    guard.close()
  }
}

const take = (what: string, file: string, waitMs: number): Database.Database => {
  const lock = lockFileOf(file)
  try {
    // Three tries: a pid file of an older release removed, or the lock file removed by
    // such a removal between creating it and opening it, costs one each.
    for (let attempt = 0; ; attempt++) {
      ensureLockFile(lock)
      try {
        return open(lock, waitMs)
      } catch (e) {
        if (attempt === 2) throw e
        if (codeOf(e) === "SQLITE_NOTADB") removePidFile(what, file, lock, waitMs)
        else if (codeOf(e) !== "SQLITE_CANTOPEN") throw e
      }
    }
  } catch (e) {
    if (e instanceof StoreBusy) throw e
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
