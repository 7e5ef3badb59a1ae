/**
 * The local side of `worksync doctor`: a snapshot or journal file opens (read-only, as
 * nothing here may change it), is of its kind, has a schema this worksync reads, passes
 * SQLite's quick check; and whether another worksync run holds it. The lock is asked of
 * the store lock itself (file-lock.ts), without waiting: the operating system drops it
 * with its holder, so a lock that is held is held by a live process.
 */
import * as Effect from "effect/Effect"
import * as fs from "node:fs"
import { lockStore } from "../../store/file-lock.ts"
import { JOURNAL_MIGRATIONS } from "../../store/journal/schema.ts"
import { isPostgresUrl, redactUrl } from "../../store/postgres-url.ts"
import { SNAPSHOT_MIGRATIONS } from "../../store/snapshot-schema.ts"
import type { Migration } from "../../store/sqlite.ts"
import { openStoreFileView, type StoreFileView } from "../../store/sqlite-inspect.ts"
import { type Check, fail, pass } from "./check.ts"

export type StoreKind = "snapshot" | "journal"

interface Kind {
  readonly migrations: ReadonlyArray<Migration>
  /** A table only this kind of store has. */
  readonly table: string
  /** What the store holds, for the line. */
  readonly summary: (view: StoreFileView) => string
  readonly createdBy: string
}

const KINDS: Readonly<Record<StoreKind, Kind>> = {
  snapshot: {
    migrations: SNAPSHOT_MIGRATIONS,
    table: "runs",
    summary: (view) => {
      const runs = view.completeRuns()
      return runs.latest === null ? "no complete run yet" : `${runs.count} complete run(s), the latest ${runs.latest}`
    },
    createdBy: "worksync backup"
  },
  journal: {
    migrations: JOURNAL_MIGRATIONS,
    table: "ops",
    summary: (view) => {
      const ops = view.journalOps()
      return `${ops.count} operation(s), ${ops.open} not done`
    },
    createdBy: "the first import-csv, copy-files, restore or migrate run with it"
  }
}

const newest = (migrations: ReadonlyArray<Migration>) => migrations.reduce((max, m) => Math.max(max, m.version), 0)

const messageOf = (e: unknown): string => (e instanceof Error ? e.message : String(e))

/** Opens, kind, schema version and quick check of one store file. */
const health = (what: StoreKind, file: string): Check => {
  const kind = KINDS[what]
  const other: StoreKind = what === "snapshot" ? "journal" : "snapshot"
  let view: StoreFileView
  try {
    view = openStoreFileView(file)
  } catch (e) {
    return fail(what, `${file} cannot be opened (${messageOf(e)}): check its path and permissions`)
  }
  try {
    const tables = view.tables()
    if (!tables.has(kind.table)) {
      return fail(
        what,
        tables.has(KINDS[other].table)
          ? `${file} is a ${other}, not a ${what}: check --${what}`
          : `${file} is not a worksync ${what}: check --${what}`
      )
    }
    const version = view.schemaVersion()
    const known = newest(kind.migrations)
    if (version > known) {
      return fail(what, `${file} was written by a newer worksync (schema ${version}; this one reads up to ${known}): upgrade worksync`)
    }
    const problems = view.quickCheck()
    if (problems.length !== 1 || problems[0] !== "ok") {
      return fail(what, `${file} is damaged (SQLite quick check: ${problems[0]}${problems.length > 1 ? `, and ${problems.length - 1} more` : ""}): ${mend(what)}`)
    }
    const upgrade = version < known ? ` (the next run upgrades it to ${known})` : ""
    return pass(what, `${file}: schema ${version}${upgrade}, quick check ok, ${kind.summary(view)}`)
  } catch (e) {
    return fail(what, `${file} is damaged or not a SQLite file (${messageOf(e)}): ${mend(what)}`)
  } finally {
    view.close()
  }
}

const mend = (what: StoreKind): string =>
  what === "snapshot"
    ? "keep it aside, and back up into a new snapshot (or bring back a copy of it)"
    : "keep it aside and bring back a copy of it: a new journal would send again what this one recorded as done"

/** Whether another run holds the store: taken and let go at once, never waited for. */
const lock = (what: StoreKind, file: string): Effect.Effect<Check> =>
  Effect.scoped(lockStore(what, file, { waitMs: 0 })).pipe(
    Effect.as(pass(`${what} lock`, "free: no worksync run holds it")),
    Effect.catch((e) => Effect.succeed(fail(`${what} lock`, e.message)))
  )

/** The checks of `--snapshot FILE` or `--journal FILE`. */
export const storeChecks = (what: StoreKind, location: string): Effect.Effect<ReadonlyArray<Check>> =>
  Effect.suspend(() => {
    if (isPostgresUrl(location)) return Effect.succeed([pass(what, `${redactUrl(location)}: a PostgreSQL store; doctor checks store files only`)])
    if (!fs.existsSync(location)) {
      return Effect.succeed([fail(what, `${location}: no such file: check --${what} (${KINDS[what].createdBy} creates it)`)])
    }
    const checked = health(what, location)
    return Effect.map(lock(what, location), (held) => [checked, held])
  })
