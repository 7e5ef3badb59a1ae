/**
 * Fills a snapshot with synthetic runs for the diff and export benchmarks, straight
 * through SQL (no HTTP, no hashing): run 1 holds `n` records, run 2 the same with
 * `changedShare` of them changed (60% of those updated, 20% created, 20% deleted).
 */
import Database from "better-sqlite3"
import { SNAPSHOT_MIGRATIONS } from "../../src/store/snapshot-schema.ts"
import { openDatabaseSync } from "../../src/store/sqlite.ts"

/** A synthetic record detail, record `i` at `version`: the benchmarks' one fixture. */
export const benchDetail = (id: string, i: number, version: number) => ({
  id,
  uid: `u${i.toString(36)}`,
  title: `Record ${i} version ${version}`,
  done: version % 2 === 1,
  archived: false,
  position: i,
  startedAt: null,
  duedAt: i % 5 === 0 ? "2026-03-01T00:00:00.000Z" : null,
  color: null,
  createdAt: "2026-01-01T00:00:00.000Z",
  updatedAt: `2026-02-0${1 + version}T00:00:00.000Z`,
  todoList: { id: "list0001", title: "Inbox" },
  users: [{ id: "user0001", firstName: "Ada", lastName: "Lovelace", email: "ada@example.com" }],
  tags: [{ id: "tag00001", title: "red", color: "#ff0000" }],
  text: "Some plain text describing the record in a sentence or two.",
  html: "<p>Some plain text describing the record in a sentence or two.</p>",
  timezone: "",
  cover: "",
  commentCount: 0,
  checklistCount: 0,
  checklistCompletedCount: 0,
  isRepeating: false,
  checklists: [],
  customFields: []
})

const detail = (id: string, i: number, version: number) => JSON.stringify({ ...benchDetail(id, i, version), workspaceId: `ws${i % 3}` })

export interface Filled {
  readonly file: string
  readonly fromRun: number
  readonly toRun: number
  readonly expected: { readonly created: number; readonly updated: number; readonly deleted: number }
}

export const fillSnapshot = (file: string, n: number, changedShare: number): Filled => {
  const db: Database.Database = openDatabaseSync(file, { migrations: SNAPSHOT_MIGRATIONS })
  db.pragma("synchronous = OFF")
  const insertRun = db.prepare("INSERT INTO runs (scope, started, finished, status) VALUES ('*', ?, ?, 'complete') RETURNING id")
  const insertRecord = db.prepare(
    "INSERT INTO records (id, workspace_id, hash, summary_hash, updated_at, comment_count, activity_count, summary, detail, first_run, last_run) VALUES (?, ?, ?, ?, ?, 0, 0, '{}', ?, ?, ?) RETURNING vid"
  )
  const member = db.prepare("INSERT INTO run_records (run_id, id, vid) VALUES (?, ?, ?)")
  const now = new Date().toISOString()
  const r1 = (insertRun.get(now, now) as { id: number }).id
  const r2 = (insertRun.get(now, now) as { id: number }).id
  const changed = Math.round(n * changedShare)
  const every = Math.max(1, Math.floor(n / changed))
  let created = 0, updated = 0, deleted = 0
  const BATCH = 50_000
  for (let start = 0; start < n; start += BATCH) {
    db.transaction(() => {
      for (let i = start; i < Math.min(n, start + BATCH); i++) {
        const id = `rec${i.toString().padStart(9, "0")}`
        const ws = `ws${i % 3}`
        const pick = i % every === 0 ? (i / every) % 5 : -1
        // pick 0..2 updated, 3 created (only in run 2), 4 deleted (only in run 1)
        if (pick === 3) {
          const vid = (insertRecord.get(id, ws, `h${i}b`, `s${i}b`, now, detail(id, i, 1), r2, r2) as { vid: number }).vid
          member.run(r2, id, vid)
          created++
          continue
        }
        const vid = (insertRecord.get(id, ws, `h${i}a`, `s${i}a`, now, detail(id, i, 0), r1, r2) as { vid: number }).vid
        member.run(r1, id, vid)
        if (pick === 4) {
          deleted++
          continue
        }
        if (pick >= 0) {
          const vid2 = (insertRecord.get(id, ws, `h${i}b`, `s${i}b`, now, detail(id, i, 1), r2, r2) as { vid: number }).vid
          member.run(r2, id, vid2)
          updated++
        } else {
          member.run(r2, id, vid)
        }
      }
    })()
  }
  db.pragma("wal_checkpoint(TRUNCATE)")
  db.close()
  return { file, fromRun: r1, toRun: r2, expected: { created, updated, deleted } }
}
