/**
 * The README's first command ends in `npm run demo`: this runs the same script, the way a
 * newcomer does, and checks that every job printed its line and that nothing was left
 * behind (not in the working directory, not in the temporary directory).
 */
import Database from "better-sqlite3"
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, describe, expect, it } from "vitest"

const ROOT = new URL("..", import.meta.url).pathname
const SCRIPT = path.join(ROOT, "scripts", "demo.mjs")

const run = (args: ReadonlyArray<string>, cwd: string, extraEnv: NodeJS.ProcessEnv = {}) =>
  new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
    const env: NodeJS.ProcessEnv = {}
    // A newcomer's environment holds no connection; the emulator variant under test stays.
    for (const [k, v] of Object.entries(process.env)) if (!k.startsWith("WORKSYNC_") || k === "WORKSYNC_EMULATOR_VARIANT") env[k] = v
    const child = spawn(process.execPath, [SCRIPT, ...args], { cwd, env: { ...env, ...extraEnv }, stdio: ["ignore", "pipe", "pipe"] })
    let stdout = ""
    let stderr = ""
    child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d))
    child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d))
    child.once("error", reject)
    child.once("close", (code) => resolve({ code, stdout, stderr }))
  })

/** The lines a step printed, from its numbered heading to the next blank line. */
const stepLines = (stdout: string, n: number) => {
  const start = stdout.indexOf(`\n${n}. `)
  expect(start, `step ${n} is missing:\n${stdout}`).toBeGreaterThanOrEqual(0)
  return stdout.slice(start + 1).split("\n\n")[0]!.split("\n")
}

/** What each step must say: its heading, then its result line(s), then what to try next. */
const STEPS: ReadonlyArray<readonly [heading: RegExp, result: RegExp]> = [
  [/^1\. backup:/, /^ {3}run 1: 2 workspaces, 60 records, \d+ activity items, 20 files \(\d+ objects stored\)$/],
  [/^2\. diff:/, /^ {3}run 1 -> 2: records 1 created, 2 updated, 1 deleted \(".+"\)$/],
  [/^3\. export:/, /^ {3}run 2: records\.csv \(60\), activity\.csv \(\d+\), files\.csv \(\d+\), workspaces\.csv \(2\)$/],
  [/^4\. restore: the deleted record ".+" back from run 1$/, /^ {3}1 created: ".+" is in the workspace again \(new id \w+\)$/],
  [/^5\. migrate: .*another account/, /^ {3}verified: \d+ lists, 30 records, \d+ files, \d+ comments, \d+ people invited$/],
  [/^6\. mirror:/, /^ {3}webhook TODO_\w+ for \w+: the snapshot's latest run now shows ".+ \(renamed again, live\)"$/],
  [/^7\. import-csv: a Jira export/, /^ {3}3 rows: 3 records created, 0 rejected/],
  [/^8\. copy-files:/, /^ {3}9 files \(\d+ bytes\) with a manifest\.ndjson/]
]

/** Each step of `stdout` in order: its heading, one or two result lines, then what to try next. */
const expectSteps = (stdout: string) =>
  STEPS.forEach(([heading, line], i) => {
    const lines = stepLines(stdout, i + 1)
    expect(lines[0]).toMatch(heading)
    expect(lines.length, lines.join("\n")).toBeGreaterThanOrEqual(3)
    expect(lines.length, lines.join("\n")).toBeLessThanOrEqual(4)
    expect(lines[1]).toMatch(line)
    expect(lines.at(-1)).toMatch(/^ {3}next: \S/)
  })

describe("npm run demo", () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "worksync-demo-test-"))
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

  it("shows every job, each with its result and what to try next, and leaves nothing behind", async () => {
    const cwd = fs.mkdtempSync(path.join(dir, "cwd-"))
    const tmp = fs.mkdtempSync(path.join(dir, "tmp-"))
    const result = await run([], cwd, { TMPDIR: tmp })
    expect(result.stderr).toBe("")
    expect(result.code).toBe(0)

    expectSteps(result.stdout)
    expect(result.stdout).toMatch(/temporary directory, now removed/)

    // The outputs went to a temporary directory, removed at the end; the working directory
    // is as it was.
    expect(fs.readdirSync(tmp)).toEqual([])
    expect(fs.readdirSync(cwd)).toEqual([])

    // Connection secrets travel in the environment of the commands, never in the output.
    expect(result.stdout).not.toMatch(/pat_[0-9a-f]{16,}/)
    expect(result.stdout).not.toMatch(/tid_[0-9a-f]{8,}/)
  }, 120_000)

  it("--out DIR keeps the snapshot, export, files and journals", async () => {
    const out = path.join(dir, "kept")
    const result = await run(["--out", out], dir)
    expect(result.stderr).toBe("")
    expect(result.code).toBe(0)
    expect(result.stdout).toContain(`Everything is in ${out}`)

    const db = new Database(path.join(out, "backup.sqlite"), { readonly: true })
    try {
      // Two backups, then the mirror's reconciliation and the run it keeps current.
      const runs = db.prepare("SELECT status FROM runs ORDER BY id").pluck().all()
      expect(runs).toEqual(["complete", "complete", "complete", "complete"])
    } finally {
      db.close()
    }
    for (const name of ["records", "activity", "files", "workspaces"]) {
      expect(fs.statSync(path.join(out, "export", `${name}.csv`)).size).toBeGreaterThan(0)
    }
    const manifest = fs.readFileSync(path.join(out, "files", "manifest.ndjson"), "utf8").trim().split("\n")
    expect(manifest).toHaveLength(9)
    for (const line of manifest) {
      const entry = JSON.parse(line) as { path: string }
      expect(fs.existsSync(path.join(out, "files", entry.path))).toBe(true)
    }
    for (const journal of ["restore", "migrate", "jira", "files"]) expect(fs.existsSync(path.join(out, `${journal}.journal.sqlite`))).toBe(true)
    // The import's rejects file is among the outputs, not beside the repository's sample CSV.
    expect(fs.existsSync(path.join(out, "jira.rejects.csv"))).toBe(true)
  }, 120_000)

  it("the README's transcript of a run shows the steps the demo prints", () => {
    const readme = fs.readFileSync(path.join(ROOT, "README.md"), "utf8")
    const transcript = /\n```\n(worksync demo: every job[\s\S]*?)```/.exec(readme)
    expect(transcript, "README.md has no transcript of npm run demo").not.toBeNull()
    expectSteps(transcript![1]!)
  })

  it("refuses to wipe a directory it did not create", async () => {
    const foreign = path.join(dir, "foreign")
    fs.mkdirSync(foreign)
    fs.writeFileSync(path.join(foreign, "keep.txt"), "mine")
    const result = await run(["--out", foreign], dir)
    expect(result.code).toBe(1)
    expect(result.stderr).toMatch(/was not made by the demo; pass --out DIR/)
    expect(fs.readFileSync(path.join(foreign, "keep.txt"), "utf8")).toBe("mine")
  }, 120_000)
})
