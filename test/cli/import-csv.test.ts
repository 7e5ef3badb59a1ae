import Database from "better-sqlite3"
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { parse } from "csv-parse/sync"
import type { EmulatorHandle } from "../../src/emulator/index.ts"
import { JournalDb } from "../../src/store/journal.ts"
import { connectionEnv, type CliResult, runCli } from "../support/cli.ts"
import { Emulator, emulatorLayer, tempDir } from "../support/effect.ts"

/** Runs the CLI against `handle`, with `extraEnv` over its connection variables. */
const run = (handle: EmulatorHandle, args: ReadonlyArray<string>, extraEnv: Record<string, string> = {}) =>
  Effect.promise(() => runCli(args, { env: { ...connectionEnv(handle), ...extraEnv } }))

const liveTitles = (handle: EmulatorHandle, ws: string): Map<string, number> => {
  const rows = handle.ctx.db
    .prepare("SELECT title, COUNT(*) AS n FROM records WHERE workspace_id = ? AND deleted_at IS NULL GROUP BY title")
    .all(ws) as Array<{ title: string; n: number }>
  return new Map(rows.map((r) => [r.title, r.n]))
}

/** How many records the workspace holds (deleted ones left out). */
const created = (handle: EmulatorHandle, ws: string): number =>
  (handle.ctx.db.prepare("SELECT COUNT(*) AS n FROM records WHERE workspace_id = ? AND deleted_at IS NULL").get(ws) as { n: number }).n

const noSecrets = (handle: EmulatorHandle, r: CliResult) => {
  expect(r.stdout).not.toContain(handle.token)
  expect(r.stderr).not.toContain(handle.token)
}

/**
 * What the `--json` line adds where the list create makes no list (the alt reading,
 * assumptions.ts CREATE_LIST_READING): the lists, and one notice naming them; nothing otherwise.
 */
const listsNotMade = (handle: EmulatorHandle, titles: ReadonlyArray<string>) =>
  handle.variant === "alt"
    ? {
      notices: [expect.stringMatching(new RegExp(`^lists: .*records go to the first list: ${titles.map((t) => JSON.stringify(t)).join(", ")}$`))],
      listsNotMade: titles
    }
    : {}

// The CLI runs as a child process against the emulator: real time (`excludeTestServices`).
// Each test runs the CLI several times (a bundle start each): a loaded machine needs a
// while, and no assertion is on time.
const CLI_TEST_TIMEOUT = 120_000

layer(emulatorLayer({ seed: "empty" }), { timeout: 30_000, excludeTestServices: true })((it) => {
  describe("worksync import-csv", () => {
    it.effect("R-REST-RECORD-30 R-REST-RECORD-34 R-REST-RECORD-35: a nasty CSV imports its valid rows; bad rows go to the rejects file with their line", () =>
      Effect.gen(function*() {
        const handle = yield* Emulator
        const ws = handle.admin.createWorkspace({ name: "nasty" }).id
        const dir = yield* tempDir("ws-import-cli-")
        const csv = path.join(dir, "nasty.csv")
        fs.writeFileSync(
          csv,
          "\uFEFFtitle,description,duedAt,done,list\r\n" +
            "Plain,,2024-05-01,yes,Backlog\r\n" +
            "\"Comma, inside\",\"first para\r\n\r\nsecond \"\"quoted\"\" para\",2024-05-01T09:30:00Z,no,\r\n" +
            "\r\n" +
            "Ünïcødé 😀 タスク,,,,Backlog\r\n" +
            ",no title here,,,\r\n" +
            "Bad date,,2024-02-30,,\r\n" +
            "Bad done,,,maybe,\r\n" +
            "Last,,,x,\r\n"
        )
        const journal = path.join(dir, "j.sqlite")
        const r = yield* run(handle, ["import-csv", "--workspace", ws, "--csv", csv, "--journal", journal, "--json", "--quiet"])
        noSecrets(handle, r)
        expect(r.code).toBe(2)
        expect(JSON.parse(r.stdout)).toEqual({ rows: 7, created: 4, skipped: 0, rejected: 3, updated: 0, pass: 1, ...listsNotMade(handle, ["Backlog"]) })
        expect(r.stderr.trim().split("\n")).toHaveLength(1)
        expect(r.stderr).toMatch(/3 rows rejected; see .*nasty\.rejects\.csv/)
        const rejects = parse(fs.readFileSync(path.join(dir, "nasty.rejects.csv")), { columns: true }) as Array<Record<string, string>>
        expect(rejects.map((x) => [x.row, x.title])).toEqual([["8", ""], ["9", "Bad date"], ["10", "Bad done"]])
        expect(rejects[0]!.error).toBe("title is empty")
        expect(rejects[1]!.error).toMatch(/duedAt "2024-02-30" is not a date/)
        expect(rejects[2]!.error).toMatch(/done "maybe"/)
        expect(Object.keys(rejects[0]!)).toEqual(["title", "description", "duedAt", "done", "list", "row", "error"])
        const titles = liveTitles(handle, ws)
        expect([...titles.keys()].sort()).toEqual(["Comma, inside", "Last", "Plain", "Ünïcødé 😀 タスク"].sort())
        const rec = handle.ctx.db
          .prepare("SELECT html, text, dued_at, dued_all_day, done FROM records WHERE workspace_id = ? AND title = ?")
        const plain = rec.get(ws, "Plain") as { dued_all_day: number; done: number }
        expect(plain.dued_all_day).toBe(1)
        expect(plain.done).toBe(1)
        const comma = rec.get(ws, "Comma, inside") as { html: string; text: string; dued_all_day: number; done: number }
        expect(comma.dued_all_day).toBe(0)
        expect(comma.done).toBe(0)
        expect(comma.html).toContain("<p>first para</p>")
        // Blank line -> paragraphs (R-REST-RECORD-30); CRLF inside the quoted cell read as one break.
        expect(comma.html).toMatch(/<p>first para<\/p>\s*<p>second &quot;quoted&quot; para<\/p>/)
        expect(comma.text).toContain("second \"quoted\" para")
        expect((rec.get(ws, "Last") as { done: number }).done).toBe(1)
      }), CLI_TEST_TIMEOUT)

    it.effect("R-REST-CALL-15: a tool's export where the list create makes no list (the alt reading): exit 0, the lists named on stderr and in --json, and the rerun sends nothing", () =>
      Effect.gen(function*() {
        const handle = yield* Emulator
        const ws = handle.admin.createWorkspace({ name: "from jira" }).id
        const dir = yield* tempDir("ws-import-cli-")
        const args = ["import-csv", "--workspace", ws, "--csv", "examples/data/jira-export.csv", "--preset", "jira", "--journal", path.join(dir, "j.sqlite"), "--rejects", path.join(dir, "rejects.csv"), "--json"]
        // "To Do" is the workspace's own first list ("To do"); the other two statuses are lists to make.
        const lists = ["Done", "In Progress"]
        // A tool's preset writes comments and files through GraphQL: the app connection too.
        const app = { WORKSYNC_TOKEN_ID: handle.tokenId, WORKSYNC_TOKEN_SECRET: handle.tokenSecret }
        const r = yield* run(handle, args, app)
        expect(r.code, r.stderr).toBe(0)
        expect(JSON.parse(r.stdout)).toMatchObject({ rows: 3, created: 3, rejected: 0, ...listsNotMade(handle, lists) })
        if (handle.variant === "alt") {
          expect(r.stderr).toContain(`import: lists: create-list answered success but list-lists does not show the list: not possible on this service; records go to the first list: "Done", "In Progress"`)
        } else {
          expect(JSON.parse(r.stdout).listsNotMade).toBeUndefined()
        }
        handle.resetStats()
        const again = yield* run(handle, args, app)
        expect(again.code, again.stderr).toBe(0)
        expect(JSON.parse(again.stdout)).toMatchObject({ rows: 3, created: 0, skipped: 3, ...listsNotMade(handle, lists) })
        expect(["create-list", "create-record", "update-record"].map((w) => handle.stats().byRoute[w] ?? 0)).toEqual([0, 0, 0])
      }), CLI_TEST_TIMEOUT)

    it.effect("a Jira export: --plan --json prints the plan alone and writes nothing; the run does what it said; a later export is a delta pass (updated, pass 2)", () =>
      Effect.gen(function*() {
        const handle = yield* Emulator
        const ws = handle.admin.createWorkspace({ name: "jira delta" }).id
        const dir = yield* tempDir("ws-import-cli-")
        const journal = path.join(dir, "j.sqlite")
        const csv = path.join(dir, "jira.csv")
        const original = fs.readFileSync("examples/data/jira-export.csv", "utf8")
        fs.writeFileSync(csv, original)
        const app = { WORKSYNC_TOKEN_ID: handle.tokenId, WORKSYNC_TOKEN_SECRET: handle.tokenSecret }
        const args = ["import-csv", "--workspace", ws, "--csv", csv, "--preset", "jira", "--journal", journal]
        const writes = () => ["create-list", "create-record", "update-record", "move-record", "delete-record"].map((w) => handle.stats().byRoute[w] ?? 0)

        handle.resetStats()
        const plan = yield* run(handle, [...args, "--plan", "--json"], app)
        expect(plan.code, plan.stderr).toBe(0)
        const planned = JSON.parse(plan.stdout)
        // Exactly the contract's shape.
        expect(Object.keys(planned)).toEqual(["plan"])
        expect(Object.keys(planned.plan).sort()).toEqual(
          ["conflicts", "create", "delete", "invite", "lists", "notCarried", "tags", "unchanged", "unresolved", "update"].sort()
        )
        expect(planned.plan).toMatchObject({ create: 3, update: 0, unchanged: 0, delete: 0, invite: [] })
        expect(planned.plan.lists.sort()).toEqual(["Done", "In Progress"])
        for (const n of planned.plan.notCarried) expect(Object.keys(n).sort()).toEqual(["count", "what", "why"])
        // Nothing written: no request that writes, no journal file.
        expect(writes()).toEqual([0, 0, 0, 0, 0])
        expect(fs.existsSync(journal)).toBe(false)

        const first = yield* run(handle, [...args, "--json"], app)
        expect(first.code, first.stderr).toBe(0)
        expect(JSON.parse(first.stdout)).toMatchObject({ rows: 3, created: planned.plan.create, skipped: 0, rejected: 0, updated: 0, pass: 1 })

        // A later export: one issue renamed.
        fs.writeFileSync(csv, original.replace("Upgrade the database", "Upgrade the database to 17"))
        const later = JSON.parse((yield* run(handle, [...args, "--plan", "--json"], app)).stdout)
        expect(later.plan).toMatchObject({ create: 0, update: 1, unchanged: 2, delete: 0, lists: [], tags: [] })
        handle.resetStats()
        const delta = yield* run(handle, [...args, "--json"], app)
        expect(delta.code, delta.stderr).toBe(0)
        expect(JSON.parse(delta.stdout)).toMatchObject({ rows: 3, created: 0, skipped: 3, rejected: 0, updated: 1, pass: 2 })
        expect(writes()).toEqual([0, 0, 1, 0, 0])
        const titles = liveTitles(handle, ws)
        expect(titles.has("Upgrade the database to 17")).toBe(true)
        expect(titles.has("Upgrade the database")).toBe(false)
      }), CLI_TEST_TIMEOUT)

    it.effect("an unknown column in the mapping is an error before any row is read (exit 64)", () =>
      Effect.gen(function*() {
        const handle = yield* Emulator
        const ws = handle.admin.createWorkspace({ name: "badmap" }).id
        const dir = yield* tempDir("ws-import-cli-")
        const csv = path.join(dir, "in.csv")
        fs.writeFileSync(csv, "Name,Notes\nA,B\n")
        handle.resetStats()
        const r = yield* run(handle, ["import-csv", "--workspace", ws, "--csv", csv, "--journal", path.join(dir, "j.sqlite"), "--map", "title=Nmae"])
        expect(r.code).toBe(64)
        expect(r.stderr).toMatch(/unknown column in the mapping: --map title=Nmae; the CSV header has "Name", "Notes"/)
        expect(r.stderr.trim().split("\n")).toHaveLength(1)
        expect(handle.stats().byRoute["create-record"] ?? 0).toBe(0)
      }), CLI_TEST_TIMEOUT)

    it.effect("R-REST-ERR-04: an unknown workspace, or a journal of another workspace, is a usage error naming the flag", () =>
      Effect.gen(function*() {
        const handle = yield* Emulator
        const ws = handle.admin.createWorkspace({ name: "other" }).id
        const dir = yield* tempDir("ws-import-cli-")
        const csv = path.join(dir, "in.csv")
        fs.writeFileSync(csv, "title\nA\n")
        const journal = path.join(dir, "j.sqlite")
        const missing = yield* run(handle, ["import-csv", "--workspace", "no-such-workspace", "--csv", csv, "--journal", journal, "--verbose"])
        noSecrets(handle, missing)
        expect(missing.code).toBe(64)
        // Not found is 422 NOT_FOUND in one reading of the documents, 404 in the other.
        expect(missing.stderr).toMatch(/--workspace no-such-workspace: .*not found \(HTTP (422|404)/)
        const ok = yield* run(handle, ["import-csv", "--workspace", ws, "--csv", csv, "--journal", journal, "--json", "-q"])
        expect(ok.code).toBe(0)
        const second = handle.admin.createWorkspace({ name: "other2" }).id
        const wrong = yield* run(handle, ["import-csv", "--workspace", second, "--csv", csv, "--journal", journal])
        expect(wrong.code).toBe(64)
        expect(wrong.stderr).toContain(`belongs to an import into workspace ${ws}`)
        // A journal another kind of run planned (here a restore into the same workspace).
        const restoreJournal = path.join(dir, "restore.sqlite")
        const db = new JournalDb(restoreJournal)
        db.setMeta("target.workspace", ws)
        db.setMeta("kind", "restore")
        db.close()
        const foreign = yield* run(handle, ["import-csv", "--workspace", ws, "--csv", csv, "--journal", restoreJournal])
        expect(foreign.code).toBe(64)
        expect(foreign.stderr).toBe(`worksync: --journal ${restoreJournal} was planned by restore, not by import-csv; use another journal file\n`)
      }), CLI_TEST_TIMEOUT)

    it.effect("R-REST-ERR-03: writes the service refuses end the run with exit 1 and one line naming the row and status; a rerun resumes", () =>
      Effect.gen(function*() {
        const handle = yield* Emulator
        const ws = handle.admin.createWorkspace({ name: "readonly" }).id
        const viewer = handle.admin.createUser({
          email: "viewer@example.test",
          firstName: "View",
          lastName: "Only",
          workspaces: { [ws]: "VIEW_ONLY" }
        })
        const dir = yield* tempDir("ws-import-cli-")
        const csv = path.join(dir, "in.csv")
        fs.writeFileSync(csv, "title\nFirst\nSecond\n")
        const journal = path.join(dir, "j.sqlite")
        const args = ["import-csv", "--workspace", ws, "--csv", csv, "--journal", journal, "--json", "-q"]
        const refused = yield* run(handle, args, { WORKSYNC_TOKEN: viewer.token })
        expect(refused.code).toBe(1)
        expect(refused.stdout).not.toContain(viewer.token)
        expect(refused.stderr).not.toContain(viewer.token)
        expect(JSON.parse(refused.stdout)).toEqual({ rows: 2, created: 0, skipped: 0, rejected: 0, updated: 0, pass: 1 })
        expect(refused.stderr.trim().split("\n")).toHaveLength(1)
        expect(refused.stderr).toMatch(/2 operations not finished, first: line 2: record\.create .*HTTP 403.*rerun with the same --journal/)
        // With a token that may write, the same journal finishes the job: the same pass, resumed.
        const resumed = yield* run(handle, args)
        expect(resumed.code).toBe(0)
        expect(JSON.parse(resumed.stdout)).toEqual({ rows: 2, created: 2, skipped: 0, rejected: 0, updated: 0, pass: 1 })
      }), CLI_TEST_TIMEOUT)

    it.effect("progress without a terminal: each phase ends with one line, the rows read are not reported twice", () =>
      Effect.gen(function*() {
        const handle = yield* Emulator
        const ws = handle.admin.createWorkspace({ name: "progress" }).id
        const dir = yield* tempDir("ws-import-cli-")
        const csv = path.join(dir, "in.csv")
        fs.writeFileSync(csv, "title\nA\nB\nC\n")
        const r = yield* run(handle, ["import-csv", "--workspace", ws, "--csv", csv, "--journal", path.join(dir, "j.sqlite")])
        expect(r.code).toBe(0)
        const lines = r.stderr.trim().split("\n")
        expect(lines.filter((l) => l.startsWith("rows read:"))).toEqual([expect.stringMatching(/^rows read: 3 /)])
        expect(lines.filter((l) => l.startsWith("operations:")).at(-1)).toMatch(/^operations: 3\/3 100% /)
        expect(new Set(lines).size).toBe(lines.length)
        const dry = yield* run(handle, ["import-csv", "--workspace", ws, "--csv", csv, "--journal", path.join(dir, "dry.sqlite"), "--dry-run"])
        expect(dry.code).toBe(0)
        expect(dry.stderr.split("\n").filter((l) => l.startsWith("rows read:"))).toHaveLength(1)
      }), CLI_TEST_TIMEOUT)

    it.effect("--dry-run prints the plan and sends nothing", () =>
      Effect.gen(function*() {
        const handle = yield* Emulator
        const ws = handle.admin.createWorkspace({ name: "dry" }).id
        const dir = yield* tempDir("ws-import-cli-")
        const csv = path.join(dir, "in.csv")
        fs.writeFileSync(csv, "Card Name,List Name,Labels,Due Complete\nOne,Todo,\"Bug (red), Urgent (orange)\",false\nTwo,Todo,,true\n")
        handle.resetStats()
        const journal = path.join(dir, "j.sqlite")
        const r = yield* run(handle, ["import-csv", "--workspace", ws, "--csv", csv, "--journal", journal, "--preset", "trello", "--dry-run", "--json"])
        expect(r.code).toBe(0)
        const out = JSON.parse(r.stdout)
        expect(out).toMatchObject({ rows: 2, created: 0, skipped: 0, rejected: 0, dryRun: true })
        expect(out.plan.ops).toEqual({ "list.ensure": 1, "tag.ensure": 2, "record.create": 2, "record.update": 1 })
        expect(out.plan.first.map((f: { title: string }) => f.title)).toEqual(["One", "Two"])
        expect(r.stderr).toContain("row 2: \"One\" in \"Todo\"")
        const writes = Object.entries(handle.stats().byRoute).filter(([route]) => /create|update|move|delete/.test(route))
        expect(writes).toEqual([])
        expect(fs.existsSync(journal)).toBe(false)
      }), CLI_TEST_TIMEOUT)

    it.effect("SIGKILL at random points of the replay, then resume: every row exists exactly once, none lost", () =>
      Effect.gen(function*() {
        const handle = yield* Emulator
        const ws = handle.admin.createWorkspace({ name: "kill" }).id
        const dir = yield* tempDir("ws-import-cli-")
        const csv = path.join(dir, "in.csv")
        const lines = ["key,title,list,done"]
        const expected = new Map<string, number>()
        for (let i = 0; i < 160; i++) {
          // Titles repeat (every 40) and rows have explicit keys: duplicates must stay duplicates.
          const title = `Kill task ${i % 40}`
          expected.set(title, (expected.get(title) ?? 0) + 1)
          lines.push(`${i},${title},${["A", "B", "C"][i % 3]},${i % 5 === 0 ? "yes" : "no"}`)
        }
        fs.writeFileSync(csv, lines.join("\n") + "\n")
        const journal = path.join(dir, "j.sqlite")
        const args = ["import-csv", "--workspace", ws, "--csv", csv, "--journal", journal, "--json", "--quiet"]
        // Latency keeps requests in flight when the kill lands; some writes lose their answer.
        handle.faults.configure({ latencyMs: 15, ambiguousWriteRate: 0.1, seed: 5 })
        let seed = 42
        const random = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31)
        let killed = 0
        const createdAtKill: Array<number> = []
        try {
          for (let i = 0; i < 5; i++) {
            // The kill lands by progress, not by the clock: once the service holds a random
            // number more records than before this run (a loaded machine only makes it later).
            const target = Math.min(159, created(handle, ws) + 1 + Math.floor(random() * 30))
            const r = yield* Effect.promise(() =>
              runCli(args, { env: connectionEnv(handle), stop: { when: () => created(handle, ws) >= target, signal: "SIGKILL" } })
            )
            if (r.signal === "SIGKILL") {
              killed++
              createdAtKill.push(created(handle, ws))
            } else break
          }
          handle.faults.configure({ ambiguousWriteRate: 0, latencyMs: 0 })
          let final = yield* run(handle, args)
          // A last op whose outcome stayed unknown is settled by one more rerun.
          if (final.code === 1) final = yield* run(handle, args)
          noSecrets(handle, final)
          expect(final.code).toBe(0)
          const out = JSON.parse(final.stdout)
          expect(out.rows).toBe(160)
          expect(out.rejected).toBe(0)
        } finally {
          handle.faults.reset()
        }
        expect(killed).toBeGreaterThan(0)
        // At least one kill landed mid-replay (some records made, not all).
        expect(createdAtKill.some((n) => n > 0 && n < 160)).toBe(true)
        expect(liveTitles(handle, ws)).toEqual(expected)
        const done = handle.ctx.db.prepare("SELECT COUNT(*) AS n FROM records WHERE workspace_id = ? AND done = 1").get(ws) as { n: number }
        expect(done.n).toBe(32)
        const lists = handle.ctx.db.prepare("SELECT title FROM lists WHERE workspace_id = ? AND deleted_at IS NULL ORDER BY title").all(ws) as Array<{ title: string }>
        expect(lists.map((l) => l.title).filter((t) => ["A", "B", "C"].includes(t))).toEqual(handle.variant === "alt" ? [] : ["A", "B", "C"])
        // A rerun of the finished journal sends nothing.
        handle.resetStats()
        const again = yield* run(handle, args)
        expect(again.code).toBe(0)
        expect(JSON.parse(again.stdout)).toEqual({ rows: 160, created: 0, skipped: 160, rejected: 0, updated: 0, pass: 2, ...listsNotMade(handle, ["A", "B", "C"]) })
        expect(handle.stats().byRoute["create-record"] ?? 0).toBe(0)
      // The rerun after a kill waits one settle window (the request timeout, 30 s) for the
      // ops the dead run left in flight: their request may have left just before the kill.
      }), 180_000)
  })

  describe("import-csv of a large file", () => {
    it.effect("plans on a second thread from the CLI bundle: a 4 MiB file repeating three keys creates three records, rejects the rest", () =>
      Effect.gen(function*() {
        const handle = yield* Emulator
        const ws = handle.admin.createWorkspace({ name: "cli-plan-thread" }).id
        const dir = yield* tempDir("ws-import-cli-")
        const csv = path.join(dir, "big.csv")
        const filler = "x".repeat(400)
        const rows = Array.from({ length: 10_500 }, (_, i) => `k${i % 3},Big ${i % 3},${filler}`)
        fs.writeFileSync(csv, ["key,title,description", ...rows].join("\n") + "\n")
        expect(fs.statSync(csv).size).toBeGreaterThan(4 * 1024 * 1024)
        // Observes the CLI process from outside its code: a preloaded hook notes whether the
        // main thread started a worker thread.
        const hook = path.join(dir, "hook.cjs")
        const mark = path.join(dir, "mark")
        fs.writeFileSync(
          hook,
          `const { createHook } = require("node:async_hooks"); const { isMainThread } = require("node:worker_threads");
    let worker = false; createHook({ init(_id, type) { if (type === "WORKER") worker = true } }).enable();
    if (isMainThread) process.on("exit", () => require("node:fs").writeFileSync(process.env.WS_TEST_THREAD_MARK, worker ? "worker" : "none"))`
        )
        const r = yield* run(handle, 
          ["import-csv", "--workspace", ws, "--csv", csv, "--journal", path.join(dir, "j.sqlite"), "--rejects", path.join(dir, "rejects.csv"), "--json"],
          { NODE_OPTIONS: `--require ${hook}`, WS_TEST_THREAD_MARK: mark }
        )
        expect(r.stderr).toMatch(/import: 10500 rows, 3 created, 0 already imported, 10497 rejected/)
        expect(r.code).toBe(2)
        expect(JSON.parse(r.stdout)).toEqual({ rows: 10_500, created: 3, skipped: 0, rejected: 10_497, updated: 0, pass: 1 })
        expect(fs.readFileSync(mark, "utf8")).toBe("worker")
        expect(liveTitles(handle, ws)).toEqual(new Map([["Big 0", 1], ["Big 1", 1], ["Big 2", 1]]))
        const rejects = parse(fs.readFileSync(path.join(dir, "rejects.csv"))) as Array<Array<string>>
        expect(rejects).toHaveLength(1 + 10_497)
        expect(rejects[1]).toEqual(["k0", "Big 0", filler, "5", "key k0 repeats an earlier row of this file"])
      }), CLI_TEST_TIMEOUT)

    it.effect("SIGINT while a large file is planned: exit 130 with one line, the journal holds a planned prefix with its run ended, and nothing of it is planned again", () =>
      Effect.gen(function*() {
        const handle = yield* Emulator
        const ws = handle.admin.createWorkspace({ name: "cli-plan-interrupt" }).id
        const dir = yield* tempDir("ws-import-cli-")
        const csv = path.join(dir, "big.csv")
        // Over 4 MiB (planned on the second thread) in 40,000 rows: the interrupt lands in
        // its first batches, and the dry run below plans every row not planned yet.
        const total = 40_000
        const filler = "y".repeat(100)
        fs.writeFileSync(csv, ["key,title,list,description", ...Array.from({ length: total }, (_, i) => `${i},Title ${i},${i % 2 ? "A" : "B"},${filler}`)].join("\n") + "\n")
        expect(fs.statSync(csv).size).toBeGreaterThan(4 * 1024 * 1024)
        const journal = path.join(dir, "j.sqlite")
        const args = ["import-csv", "--workspace", ws, "--csv", csv, "--journal", journal]
        // Interrupted once rows flow (the first progress line), well before the end of the plan.
        const r = yield* Effect.promise(() =>
          runCli(args, { env: connectionEnv(handle), stop: { when: (printed) => printed.stderr.includes("rows read"), signal: "SIGINT" } })
        )
        expect(r.code).toBe(130)
        expect(r.stderr.trim().split("\n").at(-1)).toBe("worksync: interrupted")
        expect(r.stderr).not.toMatch(/FATAL|Error:|\n\s+at /)
        const db = new Database(journal, { readonly: true })
        let planned: Array<string>
        try {
          const meta = new Map((db.prepare("SELECT key, value FROM meta").all() as Array<{ key: string; value: string }>).map((m) => [m.key, m.value]))
          expect(meta.get("plan_run_complete")).toBe(meta.get("plan_run"))
          planned = db.prepare("SELECT key FROM ops WHERE kind = 'record.create' ORDER BY seq").pluck().all() as Array<string>
        } finally {
          db.close()
        }
        expect(planned.length).toBeGreaterThan(0)
        expect(planned.length).toBeLessThan(total)
        // A prefix of the file, in order.
        expect(planned.every((key, i) => key === `k:${i}`)).toBe(true)
        // The dry run of a rerun plans exactly the rows not planned yet.
        const dry = yield* run(handle, [...args, "--dry-run", "--json"])
        expect(dry.code).toBe(0)
        expect(JSON.parse(dry.stdout).plan.ops["record.create"]).toBe(total - planned.length)
      }), CLI_TEST_TIMEOUT)
  })
})
