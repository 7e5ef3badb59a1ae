/**
 * `worksync prune` as cron runs it: the real binary on real snapshots and files
 * directories (written by real backups against the emulator, or by the store's API for a
 * long history). The contract's JSON, a dry run that changes nothing, what a prune
 * removes, the lock shared with backup, and a prune killed midway that loses nothing kept.
 */
import { expect, layer } from "@effect/vitest"
import Database from "better-sqlite3"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { spawn } from "node:child_process"
import { createHash } from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"
import type { EmulatorHandle } from "../../src/emulator/index.ts"
import { deleteFile } from "../../src/emulator/uploads/files.ts"
import { openObjectStore } from "../../src/store/object-store.ts"
import { openSnapshot } from "../../src/store/snapshot.ts"
import { cleanEnv, connectionEnv } from "../support/cli.ts"
import { Emulator, emulatorLayer } from "../support/effect.ts"
import { buildHistory } from "../support/snapshot-builder.ts"
import { cli, WorkDir, workDirLayer } from "./cli-effect.ts"

const BIN = new URL("../../bin/worksync.js", import.meta.url).pathname
const sha = (b: Uint8Array) => createHash("sha256").update(b).digest("hex")

const query = <A>(snapshot: string, sql: string, ...params: Array<unknown>): Array<A> => {
  const db = new Database(snapshot, { readonly: true })
  try {
    return db.prepare(sql).all(...params) as Array<A>
  } finally {
    db.close()
  }
}
const runIds = (snapshot: string) => query<{ id: number }>(snapshot, "SELECT id FROM runs ORDER BY id").map((r) => r.id)

/** Every object under DIR: name, and the sha256 of its bytes. */
const objectsIn = (dir: string) => {
  const root = path.join(dir, "objects")
  return fs.readdirSync(root).filter((p) => /^[0-9a-f]{2}$/.test(p)).flatMap((p) =>
    fs.readdirSync(path.join(root, p)).map((name) => ({ name, actual: sha(fs.readFileSync(path.join(root, p, name))) }))
  )
}

/** How many objects are under DIR (cheap: names only). */
const objectCount = (dir: string) => {
  const root = path.join(dir, "objects")
  return fs.readdirSync(root).filter((p) => /^[0-9a-f]{2}$/.test(p)).reduce((n, p) => n + fs.readdirSync(path.join(root, p)).length, 0)
}

/** What a run holds, to compare before and after: its records' versions, activity, files and objects. */
const holdings = (snapshot: string, run: number) => ({
  records: query(snapshot, "SELECT rr.id, r.hash FROM run_records rr JOIN records r ON r.vid = rr.vid WHERE rr.run_id = ? ORDER BY rr.id", run),
  activity: query(snapshot, "SELECT a.vid, a.seq, a.item FROM run_records rr JOIN activity a ON a.vid = rr.vid WHERE rr.run_id = ? ORDER BY rr.id, a.seq", run),
  files: query(snapshot, "SELECT rf.id, f.hash FROM run_files rf JOIN files f ON f.vid = rf.vid WHERE rf.run_id = ? ORDER BY rf.id", run),
  objects: query(snapshot, "SELECT o.file_id, o.sha256, fo.size FROM run_file_objects o JOIN file_objects fo ON fo.sha256 = o.sha256 WHERE o.run_id = ? ORDER BY o.file_id", run)
})

const oneLine = (stderr: string) => stderr.trim().split("\n").filter((l) => l.startsWith("worksync:"))

/** The files of the snapshot, byte for byte (the file and its write-ahead log). */
const fileState = (snapshot: string) =>
  [snapshot, `${snapshot}-wal`].map((f) => (fs.existsSync(f) ? sha(fs.readFileSync(f)) : null))

// Real time: the CLI runs as a child process (`excludeTestServices`).
layer(Layer.merge(emulatorLayer({ seed: "demo" }), workDirLayer("ws-cli-prune-")), { timeout: 120_000, excludeTestServices: true })("worksync prune", (it) => {
  it.effect("--dry-run --json: every run with keep or forget and its reasons, by start day in UTC; nothing changes", () =>
    Effect.gen(function*() {
      const emu = yield* Emulator
      const dir = yield* WorkDir
      const snapshot = path.join(dir, "dry.sqlite")
      for (let i = 0; i < 4; i++) {
        const r = yield* cli(["backup", "--snapshot", snapshot, "--json"], { env: connectionEnv(emu) })
        expect(r.code).toBe(0)
      }
      // Runs 1 and 2 on one day, 3 and 4 on the next two.
      const db = new Database(snapshot)
      const days = ["2026-03-01T08:00:00.000Z", "2026-03-01T20:00:00.000Z", "2026-03-02T08:00:00.000Z", "2026-03-03T08:00:00.000Z"]
      days.forEach((d, i) => db.prepare("UPDATE runs SET started = ? WHERE id = ?").run(d, i + 1))
      db.close()
      const before = fileState(snapshot)
      const r = yield* cli(["prune", "--snapshot", snapshot, "--keep-daily", "2", "--dry-run", "--json"])
      expect(r.code).toBe(0)
      const out = JSON.parse(r.stdout)
      expect(Object.keys(out)).toEqual(["runs", "forgotten", "kept", "bytesBefore", "bytesAfter"])
      expect(out.runs).toEqual([
        { runId: "1", startedAt: days[0], keep: false, reasons: [] },
        { runId: "2", startedAt: days[1], keep: false, reasons: [] },
        { runId: "3", startedAt: days[2], keep: true, reasons: ["keep-daily"] },
        { runId: "4", startedAt: days[3], keep: true, reasons: ["keep-daily", "newest complete run"] }
      ])
      expect(out).toMatchObject({ forgotten: 2, kept: 2 })
      expect(out.bytesAfter).toBe(out.bytesBefore)
      expect(r.stderr).toMatch(/run 1 {2}2026-03-01T08:00:00.000Z {2}forget/)
      expect(r.stderr).toMatch(/run 4 .* keep {4}keep-daily, newest complete run/)
      expect(r.stderr).toMatch(/dry run: would forget 2 runs, keep 2; nothing was changed/)
      expect(fileState(snapshot)).toEqual(before)
      expect(runIds(snapshot)).toEqual([1, 2, 3, 4])

      // A count left over after the days there are keeps the oldest run too (restic 0.17).
      const wide = JSON.parse((yield* cli(["prune", "--snapshot", snapshot, "--keep-daily", "7", "--dry-run", "--json"])).stdout)
      expect(wide.runs.map((x: { reasons: Array<string> }) => x.reasons)).toEqual([
        ["keep-daily (oldest)"],
        ["keep-daily"],
        ["keep-daily"],
        ["keep-daily", "newest complete run"]
      ])
    }), 120_000)

  it.effect("removes the versions, activity, file rows and objects only forgotten runs held, compacts, and the kept run exports whole", () =>
    Effect.gen(function*() {
      const emu = yield* Emulator
      const dir = yield* WorkDir
      const snapshot = path.join(dir, "prune.sqlite")
      const filesDir = path.join(dir, "files")
      const backup = () => cli(["backup", "--snapshot", snapshot, "--files", filesDir, "--json"], { env: connectionEnv(emu) })
      expect((yield* backup()).code).toBe(0)
      // Between the runs: a record deleted, one retitled, a file deleted.
      const ws = emu.workspaces[0]!
      emu.admin.deleteRecords(1, ws)
      const [edited] = emu.admin.touchRecords(1, ws)
      emu.ctx.db.prepare("UPDATE records SET title = 'Retitled' WHERE id = ?").run(edited)
      const gone = emu.ctx.db.prepare("SELECT uid FROM files WHERE workspace_id = ? AND status = 'CONFIRMED' AND name = 'quarterly report 2024.pdf'").get(ws) as { uid: string }
      const goneObject = (query<{ sha256: string }>(snapshot, "SELECT o.sha256 FROM run_file_objects o JOIN run_files rf ON rf.run_id = o.run_id AND rf.id = o.file_id JOIN files f ON f.vid = rf.vid WHERE json_extract(f.item, '$.uid') = ?", gone.uid))[0]!.sha256
      deleteFile(emu.ctx.db, gone.uid)
      expect((yield* backup()).code).toBe(0)
      const kept = holdings(snapshot, 2)
      const onlyFirst = query<{ n: number }>(snapshot, "SELECT count(*) AS n FROM records WHERE vid NOT IN (SELECT vid FROM run_records WHERE run_id = 2)")[0]!.n
      expect(onlyFirst).toBeGreaterThanOrEqual(2)

      const r = yield* cli(["prune", "--snapshot", snapshot, "--files", filesDir, "--keep-last", "1", "--json"])
      expect(r.code).toBe(0)
      const out = JSON.parse(r.stdout)
      expect(out).toMatchObject({ forgotten: 1, kept: 1 })
      expect(out.runs.map((x: { keep: boolean }) => x.keep)).toEqual([false, true])
      expect(out.bytesAfter).toBeLessThan(out.bytesBefore)
      expect(runIds(snapshot)).toEqual([2])
      expect(holdings(snapshot, 2)).toEqual(kept)
      // Nothing is left that only run 1 held.
      for (const [table, member] of [["records", "run_records"], ["files", "run_files"], ["lists", "run_lists"], ["users", "run_users"], ["workspaces", "run_workspaces"]]) {
        expect(query(snapshot, `SELECT count(*) AS n FROM ${table} WHERE vid NOT IN (SELECT vid FROM ${member})`)).toEqual([{ n: 0 }])
      }
      expect(query(snapshot, "SELECT count(*) AS n FROM activity WHERE vid NOT IN (SELECT vid FROM records)")).toEqual([{ n: 0 }])
      expect(query(snapshot, "SELECT count(*) AS n FROM run_file_objects WHERE run_id = 1")).toEqual([{ n: 0 }])
      const objects = objectsIn(filesDir).map((o) => o.name).sort()
      expect(objects).toEqual([...new Set(kept.objects.map((o) => (o as { sha256: string }).sha256))].sort())
      expect(objects).not.toContain(goneObject)
      expect(query<{ n: number }>(snapshot, "SELECT count(*) AS n FROM file_objects")[0]!.n).toBe(objects.length)
      // Compacted: no free pages left.
      expect(query(snapshot, "PRAGMA freelist_count")).toEqual([{ freelist_count: 0 }])

      const ex = yield* cli(["export", "--snapshot", snapshot, "--out", path.join(dir, "after-prune"), "--files", filesDir])
      expect(ex.code).toBe(0)
      // A second prune has nothing to do.
      const again = JSON.parse((yield* cli(["prune", "--snapshot", snapshot, "--files", filesDir, "--keep-last", "1", "--json"])).stdout)
      expect(again).toMatchObject({ forgotten: 0, kept: 1 })
    }), 120_000)

  it.effect("exit 64 with one line: no rule, a negative count, a missing snapshot or files directory", () =>
    Effect.gen(function*() {
      const dir = yield* WorkDir
      const snapshot = path.join(dir, "dry.sqlite")
      const none = yield* cli(["prune", "--snapshot", snapshot])
      expect(none.code).toBe(64)
      expect(oneLine(none.stderr)).toEqual([
        "worksync: prune needs at least one rule: --keep-last N, --keep-daily N, --keep-weekly N or --keep-monthly N (N at least 1)"
      ])
      const zero = yield* cli(["prune", "--snapshot", snapshot, "--keep-last", "0", "--keep-daily", "0"])
      expect(zero.code).toBe(64)
      const negative = yield* cli(["prune", "--snapshot", snapshot, "--keep-weekly", "-1"])
      expect(negative.code).toBe(64)
      expect(oneLine(negative.stderr)).toEqual(["worksync: --keep-weekly -1: must be 0 or more"])
      const missing = yield* cli(["prune", "--snapshot", path.join(dir, "nope.sqlite"), "--keep-last", "1"])
      expect(missing.code).toBe(64)
      expect(oneLine(missing.stderr)[0]).toMatch(/file not found: .*nope\.sqlite/)
      expect(fs.existsSync(path.join(dir, "nope.sqlite"))).toBe(false)
      const noDir = yield* cli(["prune", "--snapshot", snapshot, "--keep-last", "1", "--files", path.join(dir, "no-such-dir")])
      expect(noDir.code).toBe(64)
      expect(runIds(snapshot)).toEqual([1, 2, 3, 4])
    }), 120_000)

  it.effect("a prune while a backup runs on the snapshot exits 1 with one line and changes nothing; once the backup ends it runs", () =>
    Effect.gen(function*() {
      const emu = yield* Emulator
      const dir = yield* WorkDir
      const snapshot = path.join(dir, "busy.sqlite")
      expect((yield* cli(["backup", "--snapshot", snapshot], { env: connectionEnv(emu) })).code).toBe(0)
      // A full backup reads every record's detail, each slowly: it is surely running when the prune comes.
      emu.faults.inject({ route: "get-record", kind: "latency", latencyMs: 1000, times: 10_000 })
      const child = spawn(process.execPath, [BIN, "backup", "--snapshot", snapshot, "--full"], {
        env: { ...cleanEnv(), ...connectionEnv(emu) },
        stdio: ["ignore", "ignore", "pipe"]
      })
      const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)))
      // The backup holds the lock once its run exists.
      while (runIds(snapshot).length < 2) yield* Effect.promise(() => new Promise((r) => setTimeout(r, 20)))
      const busy = yield* cli(["prune", "--snapshot", snapshot, "--keep-last", "1", "--json"])
      expect(busy.code).toBe(1)
      expect(busy.stdout).toBe("")
      expect(oneLine(busy.stderr)).toEqual([`worksync: snapshot ${snapshot} is in use by another worksync run; wait for it to finish or stop it`])
      expect(runIds(snapshot)).toEqual([1, 2])
      emu.faults.reset()
      expect(yield* Effect.promise(() => exited)).toBe(0)
      const after = yield* cli(["prune", "--snapshot", snapshot, "--keep-last", "1", "--json"])
      expect(after.code).toBe(0)
      expect(runIds(snapshot)).toEqual([2])
    }), 120_000)

  it.effect("SIGKILL during a prune, in its transaction and while it removes objects, loses nothing kept; the rerun finishes the job", () =>
    Effect.gen(function*() {
      const dir = yield* WorkDir
      const snapshot = path.join(dir, "history.sqlite")
      const filesDir = path.join(dir, "history-files")
      yield* Effect.scoped(Effect.gen(function*() {
        const store = yield* openSnapshot(snapshot)
        const objects = yield* openObjectStore(filesDir)
        yield* buildHistory(store, { runs: 24, records: 1000, changedPerRun: 100, files: 100, changedFilesPerRun: 40, objects })
      }))
      const rules = ["--keep-last", "3", "--keep-weekly", "2"]
      const plan = JSON.parse((yield* cli(["prune", "--snapshot", snapshot, ...rules, "--dry-run", "--json"])).stdout)
      const keptRuns: Array<number> = plan.runs.filter((r: { keep: boolean }) => r.keep).map((r: { runId: string }) => Number(r.runId))
      expect(keptRuns.length).toBeLessThan(24)
      const before = new Map(keptRuns.map((id) => [id, holdings(snapshot, id)]))
      const total = objectCount(filesDir)

      /** Every kept run holds exactly what it held, and every object it references is whole. */
      const nothingKeptLost = () => {
        const present = new Map(objectsIn(filesDir).map((o) => [o.name, o.actual]))
        for (const [id, held] of before) {
          expect(holdings(snapshot, id)).toEqual(held)
          for (const o of held.objects as Array<{ sha256: string }>) expect(present.get(o.sha256)).toBe(o.sha256)
        }
      }

      // Killed by progress: first once its transaction writes to the log, then (the rows
      // gone) once it has removed an object.
      const wal = `${snapshot}-wal`
      const triggers = [
        () => (fs.statSync(wal, { throwIfNoEntry: false })?.size ?? 0) > 0,
        () => objectCount(filesDir) < total
      ]
      for (const reached of triggers) {
        const child = spawn(process.execPath, [BIN, "prune", "--snapshot", snapshot, "--files", filesDir, ...rules], {
          env: cleanEnv(),
          stdio: ["ignore", "ignore", "pipe"]
        })
        const exited = new Promise<NodeJS.Signals | null>((resolve) => child.on("exit", (_code, signal) => resolve(signal)))
        while (!reached() && child.exitCode === null) yield* Effect.promise(() => new Promise((r) => setTimeout(r, 1)))
        child.kill("SIGKILL")
        expect(yield* Effect.promise(() => exited)).toBe("SIGKILL")
        nothingKeptLost()
        // The transaction is all or nothing: every run, or only the kept ones.
        const remaining = JSON.stringify(runIds(snapshot))
        expect([JSON.stringify(keptRuns), JSON.stringify(Array.from({ length: 24 }, (_, i) => i + 1))]).toContain(remaining)
      }
      expect(runIds(snapshot)).toEqual(keptRuns)

      const rerun = yield* cli(["prune", "--snapshot", snapshot, "--files", filesDir, ...rules, "--json"])
      expect(rerun.code).toBe(0)
      expect(runIds(snapshot)).toEqual(keptRuns)
      nothingKeptLost()
      const referenced = new Set(query<{ sha256: string }>(snapshot, "SELECT DISTINCT sha256 FROM run_file_objects").map((r) => r.sha256))
      expect(objectsIn(filesDir).map((o) => o.name).sort()).toEqual([...referenced].sort())
      expect(fs.readdirSync(path.join(filesDir, "tmp"))).toEqual([])
    }), 240_000)
})
