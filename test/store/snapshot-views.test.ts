/**
 * The SQL views of the snapshot, read the way a user reads them: better-sqlite3 on the
 * file, no worksync code. Every example query of docs/snapshot.md ("Querying the snapshot
 * with SQL") is taken from the document itself and run, so the examples cannot rot.
 */
import Database from "better-sqlite3"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, layer } from "@effect/vitest"
import { RestClient } from "../../src/client/rest-client.ts"
import type { EmulatorHandle } from "../../src/emulator/index.ts"
import { SnapshotStore } from "../../src/store/snapshot.ts"
import { backup, type BackupOptions } from "../../src/sync/backup.ts"
import { testClient } from "../sync/replay-helpers.ts"
import { Emulator, emulatorLayer, tempDir } from "../support/effect.ts"

const DOC = path.join(import.meta.dirname, "../../docs/snapshot.md")
const SECTION = "## Querying the snapshot with SQL"

interface Example {
  readonly title: string
  readonly sql: string
}

/** The `#### title` + fenced sql pairs of the section, in document order. */
const docExamples = (): Array<Example> => {
  const text = fs.readFileSync(DOC, "utf8")
  const start = text.indexOf(SECTION)
  if (start < 0) throw new Error(`${DOC}: no section "${SECTION}"`)
  const rest = text.slice(start + SECTION.length)
  const next = rest.search(/^## /m)
  const section = next < 0 ? rest : rest.slice(0, next)
  const out: Array<Example> = []
  let title = ""
  const re = /^#### (.+)$|^```sql\n([\s\S]*?)^```$/gm
  for (const m of section.matchAll(re)) {
    if (m[1] !== undefined) title = m[1].trim()
    else out.push({ title, sql: m[2]!.trim() })
  }
  return out
}

const runBackup = (emu: EmulatorHandle, file: string, options: BackupOptions = {}) =>
  Effect.provide(backup(options), Layer.merge(testClient(emu), SnapshotStore.layer(file)))

const openReadonly = (file: string) => new Database(file, { readonly: true, fileMustExist: true })

type Row = Record<string, unknown>

/** Live and archived records of the emulator (what a backup of every workspace holds). */
const emuRecords = (emu: EmulatorHandle) =>
  emu.ctx.db.prepare("SELECT id, workspace_id, title FROM records WHERE deleted_at IS NULL ORDER BY id").all() as Array<
    { id: string; workspace_id: string; title: string }
  >

const byTitle = (rows: ReadonlyArray<Row>) => new Map(rows.map((r) => [r["title"] as string, r]))

// Real HTTP to the emulator: the live clock (no TestClock), or the client's timeouts and
// retries would never fire.
layer(emulatorLayer({ seed: "demo" }), { timeout: 30_000, excludeTestServices: true })("snapshot SQL views", (it) => {
  it.effect("flatten a backup and its history; every documented example runs with the expected answer", () =>
    Effect.gen(function*() {
      const emu = yield* Emulator
      const dir = yield* tempDir("ws-views-")
      const examples = docExamples()
      expect(examples.length).toBeGreaterThanOrEqual(4)
      expect(examples.length).toBeLessThanOrEqual(6)
      for (const e of examples) {
        expect(e.title, "every example has a heading").not.toBe("")
        // Documented as runnable inside `sqlite3 FILE "<query>"`: nothing the shell would touch.
        expect(e.sql, e.title).not.toMatch(/["$`\\]/)
      }

      const file = path.join(dir, "snapshot.sqlite")
      const first = yield* runBackup(emu, file)

      // The latest state equals the service: every record once, with its title.
      const live = emuRecords(emu)
      expect(live.length).toBeGreaterThan(0)
      {
        const db = openReadonly(file)
        try {
          const latest = db.prepare("SELECT id, workspace_id, title, run_id FROM latest_records ORDER BY id").all() as Array<Row>
          expect(latest).toEqual(live.map((r) => ({ ...r, run_id: Number(first.runId) })))
        } finally {
          db.close()
        }
      }

      // Renaming one record makes a second version of it, seen by the second run only.
      const ws = emu.workspaces[0]!
      const target = emu.ctx.db.prepare(
        "SELECT id, title FROM records WHERE workspace_id = ? AND deleted_at IS NULL AND archived = 0 ORDER BY id LIMIT 1"
      ).get(ws) as { id: string; title: string }
      const renamed = `${target.title} (renamed for the views test)`
      yield* Effect.provide(Effect.flatMap(RestClient, (c) => c.updateRecord({ workspaceId: ws, recordId: target.id, title: renamed })), testClient(emu))
      const second = yield* runBackup(emu, file)
      const [run1, run2] = [Number(first.runId), Number(second.runId)]

      const db = openReadonly(file)
      try {
        const all = <T = Row>(sql: string, ...params: Array<unknown>) => db.prepare(sql).all(...params) as Array<T>

        const latest = all("SELECT * FROM latest_records ORDER BY id")
        const liveNow = emuRecords(emu)
        expect(latest.length).toBe(
          emu.ctx.db.prepare("SELECT count(*) FROM records WHERE deleted_at IS NULL").pluck().get() as number
        )
        expect(latest.map((r) => [r["id"], r["title"], r["run_id"]])).toEqual(liveNow.map((r) => [r.id, r.title, run2]))
        // Flattened columns match the service's own rows.
        const emuFlat = emu.ctx.db.prepare(
          `SELECT r.id, r.list_id, l.title AS list_title, r.done, r.archived, r.dued_at,
             (SELECT group_concat(u.email, ',') FROM (SELECT u.email FROM record_assignees ra JOIN users u ON u.id = ra.user_id
               WHERE ra.record_id = r.id ORDER BY ra.position) AS u) AS assignees
           FROM records r JOIN lists l ON l.id = r.list_id WHERE r.deleted_at IS NULL ORDER BY r.id`
        ).all() as Array<Row>
        const viewFlat = latest.map((r) => ({
          id: r["id"],
          list_id: r["list_id"],
          list_title: r["list_title"],
          done: r["done"],
          archived: r["archived"],
          dued_at: r["dued_at"] === null ? null : Date.parse(r["dued_at"] as string),
          assignees: r["assignees"]
        }))
        expect(viewFlat).toEqual(
          emuFlat.map((r) => ({ ...r, dued_at: r["dued_at"] === null ? null : Date.parse(r["dued_at"] as string) }))
        )
        expect(latest.some((r) => r["done"] === 1)).toBe(true)
        expect(latest.some((r) => typeof r["tags"] === "string" && (r["tags"] as string).length > 0)).toBe(true)

        const history = all("SELECT * FROM record_history WHERE id = ? ORDER BY first_run", target.id)
        expect(history.map((h) => [h["title"], h["first_run"], h["last_run"], h["runs"]])).toEqual([
          [target.title, run1, run1, 1],
          [renamed, run2, run2, 1]
        ])
        // An unchanged record has one version seen by both runs.
        const other = liveNow.find((r) => r.id !== target.id)!
        expect(all("SELECT first_run, last_run, runs FROM record_history WHERE id = ?", other.id)).toEqual([
          { first_run: run1, last_run: run2, runs: 2 }
        ])

        const runs = all("SELECT * FROM runs_summary ORDER BY run_id")
        expect(runs.map((r) => [r["run_id"], r["status"], r["records"]])).toEqual([
          [run1, "complete", live.length],
          [run2, "complete", liveNow.length]
        ])
        const emuFiles = emu.ctx.db.prepare("SELECT count(*) FROM files").pluck().get() as number
        const emuActivity = emu.ctx.db.prepare(
          "SELECT count(*) FROM activity a JOIN records r ON r.id = a.record_id WHERE r.deleted_at IS NULL"
        ).pluck().get() as number
        expect(runs[1]).toMatchObject({ files: emuFiles, activities: emuActivity, finished_at: expect.any(String) })
        expect(all("SELECT count(*) AS n FROM latest_files")).toEqual([{ n: emuFiles }])
        expect(all("SELECT count(*) AS n FROM latest_activity")).toEqual([{ n: emuActivity }])
        // The rename is an action of the renamed record in the latest activity.
        expect(
          all("SELECT count(*) AS n FROM latest_activity WHERE record_id = ? AND type IS NOT NULL", target.id)[0]!["n"]
        ).toBeGreaterThan(0)

        // The documented examples, each checked against an answer computed another way.
        const checks: Record<string, (rows: Array<Row>) => void> = {
          "Open records per assignee": (rows) => {
            const expected = emu.ctx.db.prepare(
              `SELECT u.email AS assignee, count(*) AS open_records
               FROM records r JOIN record_assignees ra ON ra.record_id = r.id JOIN users u ON u.id = ra.user_id
               WHERE r.deleted_at IS NULL AND r.done = 0 AND r.archived = 0
               GROUP BY u.email ORDER BY open_records DESC, assignee`
            ).all()
            expect(expected.length).toBeGreaterThan(0)
            expect(rows).toEqual(expected)
          },
          "Records per list": (rows) => {
            const expected = emu.ctx.db.prepare(
              `SELECT r.workspace_id, l.title AS list_title, count(*) AS records, sum(r.done) AS done, sum(r.archived) AS archived
               FROM records r JOIN lists l ON l.id = r.list_id WHERE r.deleted_at IS NULL
               GROUP BY r.workspace_id, r.list_id`
            ).all() as Array<Row>
            const key = (r: Row) => JSON.stringify([r["workspace_id"], r["list_title"], r["records"], r["done"], r["archived"]])
            expect(rows.map(key).sort()).toEqual(expected.map(key).sort())
          },
          "Records changed between the last two complete runs": (rows) => {
            expect(rows).toEqual([
              { id: target.id, title_before: target.title, title_after: renamed, done_before: 0, done_after: 0 }
            ])
          },
          "Largest files": (rows) => {
            const expected = emu.ctx.db.prepare(
              `SELECT f.name, f.size, f.type, r.title AS record FROM files f LEFT JOIN records r ON r.id = f.todo_id
               ORDER BY f.size DESC, f.id LIMIT 10`
            ).all()
            expect(expected.length).toBeGreaterThan(0)
            expect(rows).toEqual(expected)
          },
          "Most commented records": (rows) => {
            // Counted from the raw stored activity of the second run, not through any view.
            const counts = new Map(
              (all<{ id: string; n: number }>(
                `SELECT rr.id, count(*) AS n FROM run_records rr JOIN activity a ON a.vid = rr.vid
                 WHERE rr.run_id = ? AND json_extract(a.item, '$.__typename') LIKE '%Comment' GROUP BY rr.id`,
                run2
              )).map((r) => [r.id, r.n])
            )
            expect(rows.length).toBe(Math.min(10, counts.size))
            expect(rows.length).toBeGreaterThan(0)
            const titles = byTitle(latest)
            for (const r of rows) {
              const rec = titles.get(r["title"] as string)
              expect(rec, `record titled ${String(r["title"])}`).toBeDefined()
              expect(r["comments"]).toBe(counts.get(rec!["id"] as string))
            }
            const top = Math.max(...counts.values())
            expect(rows[0]!["comments"]).toBe(top)
          },
          "Runs over time": (rows) => {
            expect(rows.map((r) => [r["run_id"], r["status"], r["scope"], r["records"]])).toEqual([
              [run1, "complete", "*", live.length],
              [run2, "complete", "*", liveNow.length]
            ])
          }
        }
        for (const e of examples) {
          const rows = db.prepare(e.sql).all() as Array<Row>
          expect(rows.length, `${e.title}: rows`).toBeGreaterThan(0)
          const check = checks[e.title]
          if (check !== undefined) check(rows)
        }
        // A check whose example left the document would pass silently: every one must be used.
        expect(Object.keys(checks).filter((t) => !examples.some((e) => e.title === t))).toEqual([])
      } finally {
        db.close()
      }
    }))

  it.effect("read each workspace from the newest complete run that covered it when scopes overlap", () =>
    Effect.gen(function*() {
      const emu = yield* Emulator
      const dir = yield* tempDir("ws-views-")
      const file = path.join(dir, "snapshot.sqlite")
      const everything = yield* runBackup(emu, file)
      const ws = emu.workspaces[0]!
      const alone = yield* runBackup(emu, file, { workspaces: [ws] })
      const db = openReadonly(file)
      try {
        const rows = db.prepare("SELECT workspace_id, run_id, count(*) AS n FROM latest_records GROUP BY workspace_id, run_id ORDER BY workspace_id")
          .all() as Array<Row>
        const expected = emu.workspaces.map((w) => ({
          workspace_id: w,
          run_id: Number(w === ws ? alone.runId : everything.runId),
          n: emu.ctx.db.prepare("SELECT count(*) FROM records WHERE workspace_id = ? AND deleted_at IS NULL").pluck().get(w)
        })).sort((a, b) => (a.workspace_id < b.workspace_id ? -1 : 1))
        expect(rows).toEqual(expected)
        expect(db.prepare("SELECT scope, run_id FROM latest_runs ORDER BY run_id").all()).toEqual([
          { scope: "*", run_id: Number(everything.runId) },
          { scope: ws, run_id: Number(alone.runId) }
        ])
        // Files and activity follow the same choice, so nothing is counted twice.
        const files = db.prepare("SELECT count(*) FROM latest_files").pluck().get()
        expect(files).toBe(emu.ctx.db.prepare("SELECT count(*) FROM files").pluck().get())
      } finally {
        db.close()
      }
    }))
})
