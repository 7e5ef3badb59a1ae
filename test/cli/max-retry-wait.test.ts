/**
 * The contract's "Waits, locks and deletions": a wait the service asks for (429
 * Retry-After) is honoured up to `--max-retry-wait SECONDS` (default 120); a longer one
 * is not waited: exit 1 at once with one line naming the requested wait, and a rerun
 * resumes. The assertions are on the exit and the line; a wrong CLI would wait for hours
 * and the test would not finish within its small timeout.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import type { EmulatorHandle } from "../../src/emulator/index.ts"
import { type CliResult, runCli, connectionEnv } from "../support/cli.ts"
import { Emulator, emulatorLayer, tempDir } from "../support/effect.ts"

const THREE_HOURS_S = 3 * 3600
const QUICK = { timeout: 20_000 }

const env = (emu: EmulatorHandle, extra: Record<string, string> = {}) => ({ ...connectionEnv(emu), ...extra })

const lines = (r: CliResult) => r.stderr.trim().split("\n")

const noSecrets = (emu: EmulatorHandle, r: CliResult) => {
  expect(r.stdout).not.toContain(emu.token)
  expect(r.stderr).not.toContain(emu.token)
}

// The CLI runs as a child process against the emulator: real time (`excludeTestServices`).
layer(emulatorLayer({ variant: "reference", seed: "empty" }), { timeout: 30_000, excludeTestServices: true })("worksync --max-retry-wait", (it) => {
  it.effect("R-REST-ERR-05: backup asked to wait 3 hours exits 1 at once with one line naming the wait; the rerun completes", () =>
    Effect.gen(function*() {
      const emu = yield* Emulator
      const snapshot = path.join(yield* tempDir("ws-max-wait-"), "backup.sqlite")
      emu.faults.inject({ route: /./, kind: "429", retryAfter: THREE_HOURS_S })
      const r = yield* Effect.promise(() => runCli(["backup", "--snapshot", snapshot, "--quiet"], { env: env(emu) }))
      noSecrets(emu, r)
      expect(r.code).toBe(1)
      expect(lines(r)).toEqual([
        expect.stringMatching(
          /^worksync: backup failed: list-workspaces.*: the service asked to wait 3 h 0 min \(Retry-After\), more than --max-retry-wait 120 s; rerun later to resume/
        )
      ])
      const again = yield* Effect.promise(() => runCli(["backup", "--snapshot", snapshot, "--quiet"], { env: env(emu) }))
      expect(again.code).toBe(0)
    }), QUICK)

  it.effect("the limit comes from the flag, else the profile (maxRetryWait), else WORKSYNC_MAX_RETRY_WAIT", () =>
    Effect.gen(function*() {
      const emu = yield* Emulator
      const dir = yield* tempDir("ws-max-wait-")
      const snapshot = path.join(dir, "backup.sqlite")
      const config = path.join(dir, "profiles.json")
      fs.writeFileSync(config, JSON.stringify({ profiles: { default: { maxRetryWait: 7 } } }), { mode: 0o600 })
      const cases: Array<[ReadonlyArray<string>, Record<string, string>, string]> = [
        [["--max-retry-wait", "5", "--config", config], { WORKSYNC_MAX_RETRY_WAIT: "9" }, "5"],
        [["--config", config], { WORKSYNC_MAX_RETRY_WAIT: "9" }, "7"],
        [[], { WORKSYNC_MAX_RETRY_WAIT: "9" }, "9"]
      ]
      for (const [flags, extra, shown] of cases) {
        emu.faults.inject({ route: /./, kind: "429", retryAfter: 30 })
        const r = yield* Effect.promise(() => runCli(["backup", "--snapshot", snapshot, "--quiet", ...flags], { env: env(emu, extra), cwd: dir }))
        expect(r.code).toBe(1)
        expect(lines(r)).toEqual([
          expect.stringMatching(new RegExp(`asked to wait 30 s \\(Retry-After\\), more than --max-retry-wait ${shown} s; rerun later to resume`))
        ])
      }
    }), QUICK)

  it.effect("a wait within the limit is waited: Retry-After 1 s, the backup completes", () =>
    Effect.gen(function*() {
      const emu = yield* Emulator
      const snapshot = path.join(yield* tempDir("ws-max-wait-"), "backup.sqlite")
      emu.resetStats()
      emu.faults.inject({ route: /./, kind: "429", retryAfter: 1 })
      const r = yield* Effect.promise(() => runCli(["backup", "--snapshot", snapshot, "--quiet"], { env: env(emu) }))
      expect(r.code).toBe(0)
      expect(Object.entries(emu.stats().byRouteStatus).filter(([k]) => k.endsWith(" 429"))).toEqual([[expect.any(String), 1]])
    }), QUICK)

  it.effect("a value that is not a number of seconds is a usage error (exit 64), from the flag or the environment", () =>
    Effect.gen(function*() {
      const emu = yield* Emulator
      const snapshot = path.join(yield* tempDir("ws-max-wait-"), "backup.sqlite")
      const flag = yield* Effect.promise(() => runCli(["backup", "--snapshot", snapshot, "--max-retry-wait", "soon"], { env: env(emu) }))
      expect(flag.code).toBe(64)
      const fromEnv = yield* Effect.promise(() => runCli(["backup", "--snapshot", snapshot], { env: env(emu, { WORKSYNC_MAX_RETRY_WAIT: "soon" }) }))
      expect(fromEnv.code).toBe(64)
      expect(fromEnv.stderr).toContain("WORKSYNC_MAX_RETRY_WAIT=soon: expected a number of whole seconds")
    }), QUICK)

  it.effect("an import cut short that way resumes on rerun: every row created exactly once", () =>
    Effect.gen(function*() {
      const emu = yield* Emulator
      const ws = emu.admin.createWorkspace({ name: "long wait import" }).id
      const dir = yield* tempDir("ws-max-wait-")
      const csv = path.join(dir, "rows.csv")
      const journal = path.join(dir, "import.journal.sqlite")
      const titles = Array.from({ length: 12 }, (_, i) => `waited row ${i + 1}`)
      fs.writeFileSync(csv, `title\n${titles.join("\n")}\n`)
      emu.faults.inject({ route: "create-record", kind: "429", retryAfter: THREE_HOURS_S })
      const first = yield* Effect.promise(() => runCli(["import-csv", "--workspace", ws, "--csv", csv, "--journal", journal, "--quiet"], { env: env(emu) }))
      noSecrets(emu, first)
      expect(first.code).toBe(1)
      expect(lines(first)).toEqual([
        expect.stringMatching(
          /^worksync: .*create-record: the service asked to wait 3 h 0 min \(Retry-After\), more than --max-retry-wait 120 s; rerun later to resume.*--journal/
        )
      ])
      const second = yield* Effect.promise(() => runCli(["import-csv", "--workspace", ws, "--csv", csv, "--journal", journal, "--quiet"], { env: env(emu) }))
      expect(second.code).toBe(0)
      const rows = emu.ctx.db
        .prepare("SELECT title, COUNT(*) AS n FROM records WHERE workspace_id = ? AND deleted_at IS NULL GROUP BY title")
        .all(ws) as Array<{ title: string; n: number }>
      expect(new Map(rows.map((r) => [r.title, r.n]))).toEqual(new Map(titles.map((t) => [t, 1])))
    }), QUICK)
})
