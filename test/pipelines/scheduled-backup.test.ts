/**
 * pipelines/scheduled-backup.ts: backup with file bytes, prune and verify through the
 * library, against the emulator.
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

/** The latest verification of each run, as runs_summary shows it. */
const verifiedRuns = (file: string) => {
  const db = new Database(file, { readonly: true })
  try {
    return db.prepare("SELECT run_id, verified_ok FROM runs_summary ORDER BY run_id").all() as Array<{ run_id: number; verified_ok: number | null }>
  } finally {
    db.close()
  }
}

/** Objects stored under a files directory. */
const objectsIn = (dir: string) =>
  fs.readdirSync(path.join(dir, "objects")).filter((p) => /^[0-9a-f]{2}$/.test(p)).flatMap((p) => fs.readdirSync(path.join(dir, "objects", p))).length

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
  it.effect("backs up with the files' bytes, keeps the last N complete runs and verifies the new run, recorded in the snapshot", () =>
    Effect.gen(function*() {
      const emu = yield* Emulator
      const dir = yield* tempDir("worksync-sched-")
      const snapshot = path.join(dir, "keep.sqlite")
      const filesDir = path.join(dir, "files")
      const run = () => scheduledBackup({ snapshot, filesDir, keep: 2 }).pipe(Effect.provide(emulatorClient(emu)))

      const first = yield* run()
      expect(first.backup.fileBytes!.stored).toBeGreaterThan(0)
      expect(objectsIn(filesDir)).toBe(first.backup.fileBytes!.stored)
      expect(first.verify.ok).toBe(true)
      expect(first.verify.checks.map((c) => c.name)).toEqual(["integrity", "hashes", "objects"])

      emu.admin.touchRecords(1, emu.workspaces[0])
      const second = yield* run()
      // Every file's bytes are stored already: nothing is written again.
      expect(second.backup.fileBytes).toMatchObject({ stored: 0, bytes: 0 })
      expect(second.prune.forgotten).toBe(0)

      const [changed] = emu.admin.touchRecords(1, emu.workspaces[1])
      const third = yield* run()
      expect(third.backup.changes.updated).toBe(1)
      expect(third.prune.runs.filter((r) => r.keep).map((r) => r.runId)).toEqual([2, 3])
      expect(runs(snapshot).map((r) => r.id)).toEqual([2, 3])
      expect(versionsOnlyIn(snapshot)).toBe(0)
      expect(verifiedRuns(snapshot)).toEqual([{ run_id: 2, verified_ok: 1 }, { run_id: 3, verified_ok: 1 }])
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

  it.effect("a file that cannot be downloaded makes the run incomplete, naming the file, and prunes nothing", () =>
    Effect.gen(function*() {
      const emu = yield* Emulator
      const dir = yield* tempDir("worksync-sched-")
      const snapshot = path.join(dir, "file-fail.sqlite")
      const once = (files: string) =>
        scheduledBackup({ snapshot, filesDir: files, keep: 1 }).pipe(Effect.provide(emulatorClient(emu, { fast: true })))
      yield* once(path.join(dir, "files-ok"))
      // A fresh files directory whose pixel.png download fails on every attempt.
      emu.faults.inject({ route: /\/pixel\.png$/, kind: "500", times: 1000 })
      const exit = yield* Effect.exit(once(path.join(dir, "files-fail")))
      emu.faults.reset()
      const error = soleError(exit)
      expect(error?._tag).toBe("PipelineIncomplete")
      expect(error?.message).toMatch(/^backup run 2 skipped 2 item\(s\) \(first: file \w+ \("pixel\.png"\)\); nothing was pruned, a rerun takes what still exists$/)
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
      expect(JSON.parse(ok.stdout)).toMatchObject({ backup: { runId: "1" }, prune: { forgotten: 0, kept: 1 }, verify: { ok: true } })
      expect(ok.stderr).toMatch(/^scheduled-backup: run 1 complete: /)

      const usage = yield* Effect.promise(() => runScript("pipelines/scheduled-backup.ts", ["--files", "x"], emulatorEnv(emu)))
      expect(usage.code).toBe(64)
      expect(usage.stderr.trim()).toBe("scheduled-backup: missing --snapshot")
    }))
})
