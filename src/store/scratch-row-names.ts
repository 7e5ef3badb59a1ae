/**
 * A scratch file of an import's rows by the names other rows use for them (scratch.ts):
 * a tool preset's rows (connectors/csv/preset-plan.ts) by id, by other name (Jira's issue
 * key) and by title, with the sub-tasks and the rows whose texts name other rows, which
 * wait there until every row is read. Kept on disk, not in the heap: an export of a million
 * rows plans in the memory of one.
 */
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import { scratchDatabase } from "./scratch.ts"
import type { StoreOpenError } from "./sqlite.ts"

/** What a name is of: each its own namespace, as the planner's lookups were. */
export const NAME_OF = { name: 0, id: 1, title: 2, checklist: 3 } as const
export type NameOf = (typeof NAME_OF)[keyof typeof NAME_OF]

export interface ScratchRowNames {
  /** Notes a row's name; the first row of a name keeps it. True when the name is new. */
  readonly first: (of: NameOf, name: string, key: string) => boolean
  /** Notes a row's name; the last row of a name keeps it. */
  readonly last: (of: NameOf, name: string, key: string) => void
  /** Notes a row's name; a name two rows have names neither (its key is null). */
  readonly only: (of: NameOf, name: string, key: string) => void
  /** The key of a name: undefined when no row has it, null when several rows do (`only`). */
  readonly keyOf: (of: NameOf, name: string) => string | null | undefined
  /** Keeps an item of a waiting list (`list` names it), as JSON, after the ones kept before. */
  readonly wait: (list: string, item: unknown) => void
  /** The items of a waiting list in the order kept, a page at a time (nothing held open between pages). */
  readonly waiting: <A>(list: string) => Generator<ReadonlyArray<A>>
  /** Runs `f` in one transaction of the file: one per batch of rows, not per row. */
  readonly batch: <A>(f: () => A) => A
}

/** Waiting items read a page at a time by `waiting()`. */
const PAGE = 500

/** A new, empty scratch file of row names for the scope; `name` names its directory (scratch.ts). */
export const scratchRowNames = (name: string): Effect.Effect<ScratchRowNames, StoreOpenError, Scope.Scope> =>
  Effect.map(scratchDatabase(name), (db): ScratchRowNames => {
    db.exec(
      "CREATE TABLE name (of INTEGER NOT NULL, name TEXT NOT NULL, key TEXT, PRIMARY KEY (of, name)) WITHOUT ROWID;" +
        "CREATE TABLE waiting (list TEXT NOT NULL, seq INTEGER NOT NULL, item TEXT NOT NULL, PRIMARY KEY (list, seq)) WITHOUT ROWID"
    )
    const first = db.prepare<[number, string, string]>("INSERT OR IGNORE INTO name (of, name, key) VALUES (?, ?, ?)")
    const last = db.prepare<[number, string, string]>("INSERT OR REPLACE INTO name (of, name, key) VALUES (?, ?, ?)")
    const only = db.prepare<[number, string, string]>(
      "INSERT INTO name (of, name, key) VALUES (?, ?, ?) ON CONFLICT (of, name) DO UPDATE SET key = NULL"
    )
    const keyOf = db.prepare<[number, string], { key: string | null }>("SELECT key FROM name WHERE of = ? AND name = ?")
    const wait = db.prepare<[string, number, string]>("INSERT INTO waiting (list, seq, item) VALUES (?, ?, ?)")
    const page = db.prepare<[string, number], { seq: number; item: string }>(
      `SELECT seq, item FROM waiting WHERE list = ? AND seq > ? ORDER BY seq LIMIT ${PAGE}`
    )
    const inTransaction = db.transaction((f: () => unknown) => f())
    /** The next sequence number of each waiting list. */
    const next = new Map<string, number>()
    return {
      first: (of, n, key) => first.run(of, n, key).changes > 0,
      last: (of, n, key) => void last.run(of, n, key),
      only: (of, n, key) => void only.run(of, n, key),
      keyOf: (of, n) => keyOf.get(of, n)?.key,
      wait: (list, item) => {
        const seq = next.get(list) ?? 0
        next.set(list, seq + 1)
        wait.run(list, seq, JSON.stringify(item))
      },
      waiting: function*<A>(list: string): Generator<ReadonlyArray<A>> {
        let after = -1
        for (;;) {
          const rows = page.all(list, after)
          if (rows.length === 0) return
          after = rows[rows.length - 1]!.seq
          yield rows.map((r) => JSON.parse(r.item) as A)
          if (rows.length < PAGE) return
        }
      },
      batch: <A>(f: () => A) => inTransaction(f) as A
    }
  })
