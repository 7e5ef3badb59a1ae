/**
 * `worksync verify` per the contract, through the real binary against the emulator and
 * real snapshot files: a sound run passes every check and is recorded in runs_summary;
 * each check catches the damage it names (a stored version edited, the file's structure
 * damaged, a membership without its version, a record a restore cannot carry, a record
 * deleted on the live service), and --against-service sends no write.
 */
import { expect, layer } from "@effect/vitest"
import Database from "better-sqlite3"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as fs from "node:fs"
import * as path from "node:path"
import { areas } from "../../src/emulator/areas.ts"
import { insertList } from "../../src/emulator/core/lists.ts"
import type { EmulatorHandle } from "../../src/emulator/index.ts"
import { contentHash } from "../../src/store/snapshot-hash.ts"
import { connectionEnv } from "../support/cli.ts"
import { Emulator, emulatorLayer } from "../support/effect.ts"
import { freshSchema, pgClient } from "../support/postgres.ts"
import { cli, WorkDir, workDirLayer } from "./cli-effect.ts"

const READS = new Set(areas.flatMap((a) => (a.operations ?? []).filter((op) => !op.write).map((op) => op.name)))

const rpc = (emu: EmulatorHandle, op: string, body: Record<string, unknown>) =>
  Effect.promise(async () => {
    const res = await fetch(`${emu.restUrl}/v1/${op}`, {
      method: "POST",
      headers: { authorization: `Bearer ${emu.token}`, "content-type": "application/json", "svc-org-id": emu.org },
      body: JSON.stringify(body)
    })
    expect(res.status, `${op}: ${res.status}`).toBeLessThan(300)
    return (await res.json()) as any
  })

/**
 * A workspace of three lists, one record each (a done one with a colour, an archived one
 * with a start time, one with an HTML description, a due day, an assignee, a tag and a
 * comment).
 */
const seedWorkspace = (emu: EmulatorHandle) =>
  Effect.gen(function*() {
    const ws = emu.admin.createWorkspace({ name: "Verified" }).id
    // Made inside the emulator: under the other reading no operation creates a list.
    const now = insertList(emu.ctx, ws, "Now").id
    const later = insertList(emu.ctx, ws, "Later").id
    const done = insertList(emu.ctx, ws, "Done").id
    const tag = yield* rpc(emu, "create-tag", { workspaceId: ws, title: "urgent" })
    const alpha = (yield* rpc(emu, "create-record", {
      workspaceId: ws,
      title: "Alpha",
      listId: now,
      descriptionHtml: "<p>Plan <strong>this</strong></p>",
      duedAt: "2026-03-01",
      assigneeIds: [emu.ownerUserId]
    })).id as string
    yield* rpc(emu, "add-record-tag", { workspaceId: ws, recordId: alpha, tagId: tag.id ?? tag.tag?.id })
    yield* rpc(emu, "create-comment", { workspaceId: ws, recordId: alpha, text: "Looks good" })
    const bravo = (yield* rpc(emu, "create-record", { workspaceId: ws, title: "Bravo", listId: later })).id as string
    yield* rpc(emu, "update-record", { workspaceId: ws, recordId: bravo, done: true, color: "blue" })
    const charlie = (yield* rpc(emu, "create-record", { workspaceId: ws, title: "Charlie", listId: done, startedAt: "2026-02-01T09:30:00Z" })).id as string
    yield* rpc(emu, "update-record", { workspaceId: ws, recordId: charlie, archived: true })
    return { ws, alpha, bravo, charlie }
  })

/** A copy of a snapshot to damage (VACUUM INTO: the WAL's content included). */
const copyOf = (snapshot: string, name: string) => {
  const target = path.join(path.dirname(snapshot), name)
  fs.rmSync(target, { force: true })
  const db = new Database(snapshot, { readonly: true })
  db.prepare("VACUUM INTO ?").run(target)
  db.close()
  return target
}

const edit = (file: string, f: (db: Database.Database) => void) => {
  const db = new Database(file)
  try {
    f(db)
  } finally {
    db.close()
  }
}

interface Check {
  name: string
  ok: boolean
  checked: number
  failed: number
  first: string | null
}
const checkOf = (stdout: string, name: string): Check => {
  const found = (JSON.parse(stdout) as { checks: Array<Check> }).checks.find((c) => c.name === name)
  expect(found, `check ${name} in ${stdout}`).toBeDefined()
  return found!
}

const summaryOf = (file: string) => {
  const db = new Database(file, { readonly: true })
  const rows = db.prepare("SELECT run_id, last_verified_at, verified_ok FROM runs_summary ORDER BY run_id").all()
  db.close()
  return rows as Array<{ run_id: number; last_verified_at: string | null; verified_ok: number | null }>
}

/** Each test runs the CLI several times; a loaded machine may need a while (no assertion is on time). */
const TEST_TIMEOUT = 180_000

// Real time: the CLI runs as a child process (`excludeTestServices`). Later tests read the
// snapshot the first one wrote.
layer(Layer.merge(emulatorLayer({ seed: "empty" }), workDirLayer("ws-cli-verify-")), { timeout: 90_000, excludeTestServices: true })(
  "worksync verify",
  (it) => {
    it.effect("a sound run passes integrity, hashes and a rehearsed restore; the outcome shows in runs_summary", () =>
      Effect.gen(function*() {
        const emu = yield* Emulator
        const dir = yield* WorkDir
        yield* seedWorkspace(emu)
        const snapshot = path.join(dir, "main.sqlite")
        const b = yield* cli(["backup", "--snapshot", snapshot, "--json"], { env: connectionEnv(emu) })
        expect(b.code).toBe(0)
        expect(summaryOf(snapshot)).toEqual([{ run_id: 1, last_verified_at: null, verified_ok: null }])

        const plain = yield* cli(["verify", "--snapshot", snapshot, "--json"])
        expect(plain.code, plain.stderr).toBe(0)
        const result = JSON.parse(plain.stdout)
        expect(Object.keys(result).sort()).toEqual(["checks", "ok", "runId"])
        expect(result.runId).toBe("1")
        expect(result.ok).toBe(true)
        expect(result.checks.map((c: Check) => c.name)).toEqual(["integrity", "hashes"])
        for (const c of result.checks) {
          expect(Object.keys(c).sort()).toEqual(["checked", "failed", "first", "name", "ok"])
          expect(c).toMatchObject({ ok: true, failed: 0, first: null })
          expect(c.checked).toBeGreaterThan(0)
        }
        const [row] = summaryOf(snapshot)
        expect(row!.verified_ok).toBe(1)
        expect(Date.parse(row!.last_verified_at!)).not.toBeNaN()

        const rehearsed = yield* cli(["verify", "--snapshot", snapshot, "--rehearse", "--json"])
        expect(rehearsed.code, rehearsed.stderr).toBe(0)
        const names = JSON.parse(rehearsed.stdout).checks.map((c: Check) => c.name)
        expect(names).toEqual(["integrity", "hashes", "rehearse.records", "rehearse.order", "rehearse.lists", "rehearse.tags", "rehearse.comments"])
        expect(checkOf(rehearsed.stdout, "rehearse.records")).toMatchObject({ ok: true, checked: 3, failed: 0 })
        expect(checkOf(rehearsed.stdout, "rehearse.lists")).toMatchObject({ ok: true, checked: 3 })
        expect(checkOf(rehearsed.stdout, "rehearse.tags")).toMatchObject({ ok: true, checked: 1 })
        // What no restore carries is reported, and is not a failure.
        expect(rehearsed.stderr).toMatch(/a restore would not carry 1 comments/)
        expect(rehearsed.stderr).toMatch(/verify: run 1: every check holds/)
      }), TEST_TIMEOUT)

    it.effect("hashes: a stored version edited in the file fails, naming the record; runs_summary records the failure", () =>
      Effect.gen(function*() {
        const dir = yield* WorkDir
        const snapshot = copyOf(path.join(dir, "main.sqlite"), "edited.sqlite")
        let edited = ""
        edit(snapshot, (db) => {
          const row = db.prepare("SELECT vid, id FROM records WHERE detail LIKE '%\"Bravo\"%'").get() as { vid: number; id: string }
          edited = row.id
          db.prepare("UPDATE records SET detail = replace(detail, '\"Bravo\"', '\"Bravo (edited)\"') WHERE vid = ?").run(row.vid)
        })
        const r = yield* cli(["verify", "--snapshot", snapshot, "--json"])
        expect(r.code).toBe(1)
        const hashes = checkOf(r.stdout, "hashes")
        expect(hashes).toMatchObject({ ok: false, failed: 1 })
        expect(hashes.first).toMatch(new RegExp(`^record ${edited} \\(version \\d+\\): its content hashes to`))
        expect(JSON.parse(r.stdout).ok).toBe(false)
        expect(r.stderr).toMatch(new RegExp(`worksync: verify: run 1: hashes failed: record ${edited}`))
        expect(r.stderr.trim().split("\n").filter((l) => l.startsWith("worksync:"))).toHaveLength(1)
        expect(summaryOf(snapshot)[0]!.verified_ok).toBe(0)
      }), TEST_TIMEOUT)

    it.effect("integrity: SQLite's check catches a damaged file, and the snapshot's rules a membership without its version", () =>
      Effect.gen(function*() {
        const dir = yield* WorkDir
        const damaged = copyOf(path.join(dir, "main.sqlite"), "damaged.sqlite")
        // The root page of an index overwritten (a bad sector, a torn write): the file still
        // opens and every row still reads, but SQLite's own check reports the page.
        let root = 0
        let pageSize = 0
        edit(damaged, (db) => {
          root = db.prepare("SELECT rootpage FROM sqlite_schema WHERE name = 'records_id_vid'").pluck().get() as number
          pageSize = db.pragma("page_size", { simple: true }) as number
        })
        const fd = fs.openSync(damaged, "r+")
        fs.writeSync(fd, Buffer.alloc(pageSize, 0xa5), 0, pageSize, (root - 1) * pageSize)
        fs.closeSync(fd)
        const r = yield* cli(["verify", "--snapshot", damaged, "--json"])
        expect(r.code).toBe(1)
        const integrity = checkOf(r.stdout, "integrity")
        expect(integrity.ok).toBe(false)
        expect(integrity.first).toMatch(/^SQLite: .*(malformed|page)/i)
        expect(checkOf(r.stdout, "hashes").ok).toBe(true)

        const orphan = copyOf(path.join(dir, "main.sqlite"), "orphan.sqlite")
        let lost = ""
        edit(orphan, (db) => {
          const row = db.prepare("SELECT vid, id FROM records ORDER BY vid LIMIT 1").get() as { vid: number; id: string }
          lost = row.id
          db.prepare("DELETE FROM records WHERE vid = ?").run(row.vid)
        })
        const o = yield* cli(["verify", "--snapshot", orphan, "--json"])
        expect(o.code).toBe(1)
        expect(checkOf(o.stdout, "integrity").first).toMatch(new RegExp(`run 1 holds record ${lost} as version \\d+, which is not stored`))
      }), TEST_TIMEOUT)

    it.effect("rehearse: a record a restore cannot carry fails, naming it", () =>
      Effect.gen(function*() {
        const dir = yield* WorkDir
        const snapshot = copyOf(path.join(dir, "main.sqlite"), "uncarried.sqlite")
        // A start the service's create refuses (as another service's snapshot may hold),
        // stored with a matching hash: only the rehearsal can tell.
        let id = ""
        edit(snapshot, (db) => {
          const row = db.prepare("SELECT vid, id, detail FROM records WHERE detail LIKE '%\"Charlie\"%'").get() as { vid: number; id: string; detail: string }
          id = row.id
          const detail = { ...JSON.parse(row.detail), startedAt: "sometime in February" }
          const activity = (db.prepare("SELECT item FROM activity WHERE vid = ? ORDER BY seq").all(row.vid) as Array<{ item: string }>)
            .map((a) => JSON.parse(a.item))
          db.prepare("UPDATE records SET detail = ?, hash = ? WHERE vid = ?").run(JSON.stringify(detail), contentHash({ detail, activity }), row.vid)
        })
        const r = yield* cli(["verify", "--snapshot", snapshot, "--rehearse", "--json"])
        expect(r.code).toBe(1)
        expect(checkOf(r.stdout, "hashes").ok).toBe(true)
        const records = checkOf(r.stdout, "rehearse.records")
        expect(records).toMatchObject({ ok: false, checked: 3, failed: 1 })
        expect(records.first).toMatch(new RegExp(`^record ${id} \\("Charlie"\\) of workspace \\w+: not restored`))
        expect(r.stderr).toMatch(/worksync: verify: run 1: rehearse\.records failed: record/)
      }), TEST_TIMEOUT)

    it.effect("against the service: a record deleted since the run fails the counts; nothing but reads is sent", () =>
      Effect.gen(function*() {
        const emu = yield* Emulator
        const dir = yield* WorkDir
        const snapshot = copyOf(path.join(dir, "main.sqlite"), "service.sqlite")
        const same = yield* cli(["verify", "--snapshot", snapshot, "--against-service", "--json"], { env: connectionEnv(emu) })
        expect(same.code, same.stderr).toBe(0)
        expect(checkOf(same.stdout, "service.counts")).toMatchObject({ ok: true, checked: 2 })
        expect(checkOf(same.stdout, "service.records")).toMatchObject({ ok: true, checked: 3 })

        const db = new Database(snapshot, { readonly: true })
        const victim = db.prepare("SELECT r.id, r.workspace_id FROM records r WHERE detail LIKE '%\"Alpha\"%'").get() as { id: string; workspace_id: string }
        db.close()
        emu.admin.deleteRecords([victim.id], victim.workspace_id)
        emu.resetStats()
        const r = yield* cli(["verify", "--snapshot", snapshot, "--against-service", "--json"], { env: connectionEnv(emu) })
        expect(r.code).toBe(1)
        expect(checkOf(r.stdout, "service.counts").first).toBe(
          `workspace ${victim.workspace_id}: the run holds 3 records, the service counts 2 now`
        )
        expect(checkOf(r.stdout, "service.records").first).toMatch(new RegExp(`^record ${victim.id} \\("Alpha"\\) .*: the service no longer has it`))
        const routes = Object.keys(emu.stats().byRoute)
        expect(routes.length).toBeGreaterThan(0)
        expect(routes.filter((route) => !READS.has(route))).toEqual([])
      }), TEST_TIMEOUT)

    it.effect("a snapshot on PostgreSQL is verified and rehearsed the same way, and records the outcome", () =>
      Effect.gen(function*() {
        const emu = yield* Emulator
        const pg = yield* freshSchema
        const b = yield* cli(["backup", "--snapshot", pg, "--json"], { env: connectionEnv(emu) })
        expect(b.code, b.stderr).toBe(0)
        const r = yield* cli(["verify", "--snapshot", pg, "--rehearse", "--json"])
        expect(r.code, r.stderr).toBe(0)
        expect(checkOf(r.stdout, "integrity")).toMatchObject({ ok: true, failed: 0 })
        expect(checkOf(r.stdout, "rehearse.records")).toMatchObject({ ok: true, failed: 0 })
        const client = yield* pgClient(pg.replace(/\?schema=.*$/, ""))
        const rows = yield* Effect.promise(() => client.query("SELECT run_id::int AS run_id, verified_ok FROM worksync.runs_summary"))
        expect(rows.rows).toEqual([{ run_id: 1, verified_ok: 1 }])
      }), TEST_TIMEOUT)

    it.effect("exit 64 with one line: missing snapshot, unknown run, missing --files directory, bad --sample", () =>
      Effect.gen(function*() {
        const dir = yield* WorkDir
        const snapshot = path.join(dir, "main.sqlite")
        const cases: Array<[ReadonlyArray<string>, RegExp]> = [
          [["--snapshot", path.join(dir, "nope.sqlite")], /--snapshot: file not found: .*nope\.sqlite/],
          [["--snapshot", snapshot, "--run", "99"], /run 99 does not exist/],
          [["--snapshot", snapshot, "--files", path.join(dir, "no-such-dir")], /--files .*no-such-dir: no such directory/],
          [["--snapshot", snapshot, "--files", dir, "--sample", "0"], /--sample 0: a percentage above 0 and at most 100/]
        ]
        for (const [args, line] of cases) {
          const r = yield* cli(["verify", ...args, "--json"])
          expect(r.code, r.stderr).toBe(64)
          expect(r.stdout).toBe("")
          expect(r.stderr).toMatch(line)
          expect(r.stderr).not.toMatch(/\n\s+at /)
        }
        expect(fs.existsSync(path.join(dir, "nope.sqlite"))).toBe(false)
      }), TEST_TIMEOUT)
  }
)
