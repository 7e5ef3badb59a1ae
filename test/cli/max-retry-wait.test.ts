/**
 * The contract's "Waits, locks and deletions": a wait the service asks for (429
 * Retry-After) is honoured up to `--max-retry-wait SECONDS` (default 120); a longer one
 * is not waited: exit 1 at once with one line naming the requested wait, and a rerun
 * resumes. The assertions are on the exit and the line; a wrong CLI would wait for hours
 * and the test would not finish within its small timeout.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type EmulatorHandle, startEmulator } from "../../src/emulator/index.ts"
import { type CliResult, runCli } from "../support/cli.ts"

const THREE_HOURS_S = 3 * 3600
const QUICK = { timeout: 20_000 }

let emu: EmulatorHandle
beforeAll(async () => {
  emu = await startEmulator({ variant: "reference", seed: "empty" })
})
afterAll(() => emu?.close())

const tmp = () => fs.mkdtempSync(path.join(os.tmpdir(), "ws-max-wait-"))

const env = (extra: Record<string, string> = {}) => ({
  WORKSYNC_REST_URL: emu.restUrl,
  WORKSYNC_BASE_URL: emu.baseUrl,
  WORKSYNC_TOKEN: emu.token,
  WORKSYNC_ORG: emu.org,
  ...extra
})

const lines = (r: CliResult) => r.stderr.trim().split("\n")

const noSecrets = (r: CliResult) => {
  expect(r.stdout).not.toContain(emu.token)
  expect(r.stderr).not.toContain(emu.token)
}

describe("worksync --max-retry-wait", () => {
  it("R-REST-ERR-05: backup asked to wait 3 hours exits 1 at once with one line naming the wait; the rerun completes", QUICK, async () => {
    const snapshot = path.join(tmp(), "backup.sqlite")
    emu.faults.inject({ route: /./, kind: "429", retryAfter: THREE_HOURS_S })
    const r = await runCli(["backup", "--snapshot", snapshot, "--quiet"], { env: env() })
    noSecrets(r)
    expect(r.code).toBe(1)
    expect(lines(r)).toEqual([
      expect.stringMatching(
        /^worksync: backup failed: list-workspaces.*: the service asked to wait 3 h 0 min \(Retry-After\), more than --max-retry-wait 120 s; rerun later to resume/
      )
    ])
    const again = await runCli(["backup", "--snapshot", snapshot, "--quiet"], { env: env() })
    expect(again.code).toBe(0)
  })

  it("the limit comes from the flag, else the profile (maxRetryWait), else WORKSYNC_MAX_RETRY_WAIT", QUICK, async () => {
    const dir = tmp()
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
      const r = await runCli(["backup", "--snapshot", snapshot, "--quiet", ...flags], { env: env(extra), cwd: dir })
      expect(r.code).toBe(1)
      expect(lines(r)).toEqual([
        expect.stringMatching(new RegExp(`asked to wait 30 s \\(Retry-After\\), more than --max-retry-wait ${shown} s; rerun later to resume`))
      ])
    }
  })

  it("a wait within the limit is waited: Retry-After 1 s, the backup completes", QUICK, async () => {
    const snapshot = path.join(tmp(), "backup.sqlite")
    emu.resetStats()
    emu.faults.inject({ route: /./, kind: "429", retryAfter: 1 })
    const r = await runCli(["backup", "--snapshot", snapshot, "--quiet"], { env: env() })
    expect(r.code).toBe(0)
    expect(Object.entries(emu.stats().byRouteStatus).filter(([k]) => k.endsWith(" 429"))).toEqual([[expect.any(String), 1]])
  })

  it("a value that is not a number of seconds is a usage error (exit 64), from the flag or the environment", QUICK, async () => {
    const snapshot = path.join(tmp(), "backup.sqlite")
    const flag = await runCli(["backup", "--snapshot", snapshot, "--max-retry-wait", "soon"], { env: env() })
    expect(flag.code).toBe(64)
    const fromEnv = await runCli(["backup", "--snapshot", snapshot], { env: env({ WORKSYNC_MAX_RETRY_WAIT: "soon" }) })
    expect(fromEnv.code).toBe(64)
    expect(fromEnv.stderr).toContain("WORKSYNC_MAX_RETRY_WAIT=soon: expected a number of whole seconds")
  })

  it("an import cut short that way resumes on rerun: every row created exactly once", QUICK, async () => {
    const ws = emu.admin.createWorkspace({ name: "long wait import" }).id
    const dir = tmp()
    const csv = path.join(dir, "rows.csv")
    const journal = path.join(dir, "import.journal.sqlite")
    const titles = Array.from({ length: 12 }, (_, i) => `waited row ${i + 1}`)
    fs.writeFileSync(csv, `title\n${titles.join("\n")}\n`)
    emu.faults.inject({ route: "create-record", kind: "429", retryAfter: THREE_HOURS_S })
    const first = await runCli(["import-csv", "--workspace", ws, "--csv", csv, "--journal", journal, "--quiet"], { env: env() })
    noSecrets(first)
    expect(first.code).toBe(1)
    expect(lines(first)).toEqual([
      expect.stringMatching(
        /^worksync: .*create-record: the service asked to wait 3 h 0 min \(Retry-After\), more than --max-retry-wait 120 s; rerun later to resume.*--journal/
      )
    ])
    const second = await runCli(["import-csv", "--workspace", ws, "--csv", csv, "--journal", journal, "--quiet"], { env: env() })
    expect(second.code).toBe(0)
    const rows = emu.ctx.db
      .prepare("SELECT title, COUNT(*) AS n FROM records WHERE workspace_id = ? AND deleted_at IS NULL GROUP BY title")
      .all(ws) as Array<{ title: string; n: number }>
    expect(new Map(rows.map((r) => [r.title, r.n]))).toEqual(new Map(titles.map((t) => [t, 1])))
  })
})
