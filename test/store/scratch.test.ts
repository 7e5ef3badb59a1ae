/**
 * A scratch file (src/store/scratch.ts) is its one connection's: the file's lock is taken
 * at the first statement and kept, so lookups outside a transaction take no lock each
 * (the cost of a lookup is in `npm run bench`, not here). What shows it: while the file
 * is open, a second connection can neither read nor write it.
 */
import { describe, expect, it } from "@effect/vitest"
import Database from "better-sqlite3"
import * as fs from "node:fs"
import * as path from "node:path"
import { openScratch } from "../../src/store/scratch.ts"

describe("scratch file", () => {
  it("keeps its lock from the first statement: another connection is refused until it is removed", () => {
    const { db, remove } = openScratch("lock-test")
    const file = db.name
    try {
      db.exec("CREATE TABLE t (k TEXT PRIMARY KEY) WITHOUT ROWID")
      db.prepare("INSERT INTO t (k) VALUES (?)").run("a")
      expect(db.prepare("SELECT k FROM t").pluck().all()).toEqual(["a"])
      const other = new Database(file, { timeout: 0 })
      try {
        expect(() => other.prepare("SELECT k FROM t").all()).toThrow(/locked/)
      } finally {
        other.close()
      }
    } finally {
      remove()
    }
    expect(fs.existsSync(path.dirname(file))).toBe(false)
  })
})
