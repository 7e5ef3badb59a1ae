/**
 * pipelines/scheduled-backup.ts: snapshot, file mirror and retention, against the emulator.
 */
import Database from "better-sqlite3"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as fs from "node:fs"
import * as path from "node:path"
import { expect, layer } from "@effect/vitest"
import { Emulator, emulatorLayer, tempDir } from "../support/effect.ts"
import { scheduledBackup } from "../../pipelines/scheduled-backup.ts"
import { emulatorClient, emulatorEnv, runScript, soleError } from "./helpers.ts"

const runs = (file: string) => {
  const db = new Database(file, { readonly: true })
  try {
    return db.prepare("SELECT id, status FROM runs ORDER BY id").all() as Array<{ id: number; status: string }>
  } finally {
    db.close()
  }
}

const versionsOnlyIn = (file: string) => {
  const db = new Database(file, { readonly: true })
  try {
    return (db.prepare(
      "SELECT count(*) AS n FROM records r WHERE NOT EXISTS (SELECT 1 FROM run_records m WHERE m.vid = r.vid)"
    ).get() as { n: number }).n
  } finally {
    db.close()
  }
}

// Real HTTP to the emulator and real child processes: the live clock (no TestClock).
layer(emulatorLayer({ seed: { workspaces: 2, recordsPerWorkspace: 6 } }), { timeout: 30_000, excludeTestServices: true })("scheduled backup pipeline", (it) => {
  it.effect("backs up, mirrors files per workspace incrementally and keeps the last N complete runs", () =>
    Effect.gen(function*() {
      const emu = yield* Emulator
      const dir = yield* tempDir("worksync-sched-")
      const snapshot = path.join(dir, "keep.sqlite")
      const filesDir = path.join(dir, "files")
      const run = () => scheduledBackup({ snapshot, filesDir, keep: 2 }).pipe(Effect.provide(emulatorClient(emu)))

      const first = yield* run()
      expect(first.files.workspaces).toBe(2)
      expect(first.files.copied).toBeGreaterThan(0)
      expect(first.files.failed).toBe(0)
      for (const ws of emu.workspaces) {
        const manifest = fs.readFileSync(path.join(filesDir, ws, "manifest.ndjson"), "utf8").trim().split("\n")
        expect(manifest.length).toBe(first.files.copied / 2)
      }

      emu.admin.touchRecords(1, emu.workspaces[0])
      const second = yield* run()
      expect(second.files.copied).toBe(0) // the journal remembers every file
      expect(second.files.skipped).toBe(first.files.copied)
      expect(second.retention.removedRuns).toEqual([])

      const [changed] = emu.admin.touchRecords(1, emu.workspaces[1])
      const third = yield* run()
      expect(third.backup.changes.updated).toBe(1)
      expect(third.retention.keptComplete).toEqual([2, 3])
      expect(third.retention.removedRuns).toEqual([1])
      expect(runs(snapshot).map((r) => r.id)).toEqual([2, 3])
      expect(versionsOnlyIn(snapshot)).toBe(0)
      expect(changed).toBeDefined()
    }))

  it.effect("a failed backup ends incomplete with one line and prunes nothing, keeping the latest complete state", () =>
    Effect.gen(function*() {
      const emu = yield* Emulator
      const dir = yield* tempDir("worksync-sched-")
      const snapshot = path.join(dir, "fail.sqlite")
      const filesDir = path.join(dir, "files-fail")
      yield* scheduledBackup({ snapshot, filesDir, keep: 1 }).pipe(Effect.provide(emulatorClient(emu)))
      emu.faults.inject({ route: "list-records", kind: "500", times: 50 })
      const exit = yield* Effect.exit(
        scheduledBackup({ snapshot, filesDir, keep: 1 }).pipe(Effect.provide(emulatorClient(emu, { fast: true })))
      )
      emu.faults.reset()
      expect(Exit.isFailure(exit)).toBe(true)
      if (Exit.isFailure(exit)) {
        const error = soleError(exit)
        expect(error?._tag).toBe("PipelineIncomplete")
        expect(error?.message).toMatch(/^backup incomplete: .*HTTP 500.*nothing was pruned, a rerun resumes$/)
      }
      expect(runs(snapshot)).toEqual([{ id: 1, status: "complete" }, { id: 2, status: "failed" }])
    }))

  it.effect("a file that cannot be downloaded makes the run incomplete, naming the first file, and prunes nothing", () =>
    Effect.gen(function*() {
      const emu = yield* Emulator
      const dir = yield* tempDir("worksync-sched-")
      const snapshot = path.join(dir, "file-fail.sqlite")
      const filesDir = path.join(dir, "files-file-fail")
      const once = (files: string) =>
        scheduledBackup({ snapshot, filesDir: files, keep: 1 }).pipe(Effect.provide(emulatorClient(emu, { fast: true })))
      yield* once(path.join(dir, "files-ok"))
      // A fresh mirror whose pixel.png download fails on every attempt.
      emu.faults.inject({ route: /\/pixel\.png$/, kind: "500", times: 1000 })
      const exit = yield* Effect.exit(once(filesDir))
      emu.faults.reset()
      const error = soleError(exit)
      expect(error?._tag).toBe("PipelineIncomplete")
      expect(error?.message).toMatch(/^2 of 10 file\(s\) not copied \(first: pixel\.png: .*\); backup run 2 is complete, nothing was pruned, a rerun copies the rest$/)
      expect(runs(snapshot)).toEqual([{ id: 1, status: "complete" }, { id: 2, status: "complete" }])
    }))

  it.effect("as a script, a wrong token ends with exit 1 and one line naming HTTP 401, without the token", () =>
    Effect.gen(function*() {
      const emu = yield* Emulator
      const dir = yield* tempDir("worksync-sched-")
      const r = yield* Effect.promise(() =>
        runScript(
          "pipelines/scheduled-backup.ts",
          ["--snapshot", path.join(dir, "denied.sqlite"), "--files", path.join(dir, "files-denied")],
          { ...emulatorEnv(emu), WORKSYNC_TOKEN: "pat_not_a_real_token_0123456789" }
        ))
      expect(r.code).toBe(1)
      expect(r.stdout).toBe("")
      expect(r.stderr.trim().split("\n")).toEqual([expect.stringMatching(/^scheduled-backup: backup incomplete: .*HTTP 401.*a rerun resumes$/)])
      expect(r.stderr).not.toContain("pat_not_a_real_token_0123456789")
    }))

  it.effect("runs as a script: --json result on stdout, one summary line on stderr, exit 0; missing flags exit 64", () =>
    Effect.gen(function*() {
      const emu = yield* Emulator
      const dir = yield* tempDir("worksync-sched-")
      const snapshot = path.join(dir, "script.sqlite")
      const ok = yield* Effect.promise(() =>
        runScript(
          "pipelines/scheduled-backup.ts",
          ["--snapshot", snapshot, "--files", path.join(dir, "files-script"), "--keep", "3", "--json"],
          emulatorEnv(emu)
        ))
      expect(ok.code).toBe(0)
      expect(JSON.parse(ok.stdout)).toMatchObject({ backup: { runId: "1" }, files: { failed: 0 }, retention: { keptComplete: [1] } })
      expect(ok.stderr).toMatch(/^scheduled-backup: run 1 complete: /)

      const usage = yield* Effect.promise(() => runScript("pipelines/scheduled-backup.ts", ["--files", "x"], emulatorEnv(emu)))
      expect(usage.code).toBe(64)
      expect(usage.stderr.trim()).toBe("scheduled-backup: missing --snapshot")
    }))
})
