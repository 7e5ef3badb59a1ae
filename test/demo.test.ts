/**
 * The README's first command ends in `npm run demo`: this runs the same script, the way a
 * newcomer does, and checks that every step left its result where the summary says.
 */
import Database from "better-sqlite3"
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, describe, expect, it } from "vitest"

const ROOT = new URL("..", import.meta.url).pathname
const SCRIPT = path.join(ROOT, "scripts", "demo.mjs")

const run = (args: ReadonlyArray<string>, cwd: string) =>
  new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
    const env: NodeJS.ProcessEnv = {}
    // A newcomer's environment holds no connection; the emulator variant under test stays.
    for (const [k, v] of Object.entries(process.env)) if (!k.startsWith("WORKSYNC_") || k === "WORKSYNC_EMULATOR_VARIANT") env[k] = v
    const child = spawn(process.execPath, [SCRIPT, ...args], { cwd, env, stdio: ["ignore", "pipe", "pipe"] })
    let stdout = ""
    let stderr = ""
    child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d))
    child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d))
    child.once("error", reject)
    child.once("close", (code) => resolve({ code, stdout, stderr }))
  })

describe("npm run demo", () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "worksync-demo-"))
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

  it("runs backup, change, backup + diff, CSV import, file copy both ways and export against the emulator, then stops it", async () => {
    const out = path.join(dir, "demo-output")
    const result = await run(["--out", out], dir)
    expect(result.stderr).toBe("")
    expect(result.code).toBe(0)

    // The diff of the two runs is exactly the demo's four changes.
    expect(result.stdout).toMatch(/run 2: records 1 created, 2 updated, 1 deleted/)
    expect(result.stdout).toMatch(/3 rows, 3 created, 0 already imported, 0 rejected/)
    expect(result.stdout).toMatch(/Where everything landed/)

    const db = new Database(path.join(out, "snapshot.sqlite"), { readonly: true })
    try {
      const runs = db.prepare("SELECT status FROM runs ORDER BY id").pluck().all()
      expect(runs).toEqual(["complete", "complete"])
    } finally {
      db.close()
    }
    for (const name of ["records", "activity", "files", "workspaces"]) {
      expect(fs.statSync(path.join(out, "export", `${name}.csv`)).size).toBeGreaterThan(0)
    }
    const manifest = fs.readFileSync(path.join(out, "files", "manifest.ndjson"), "utf8").trim().split("\n")
    expect(manifest.length).toBeGreaterThan(0)
    for (const line of manifest) {
      const entry = JSON.parse(line) as { path: string }
      expect(fs.existsSync(path.join(out, "files", entry.path))).toBe(true)
    }
    expect(result.stdout).toMatch(new RegExp(`${manifest.length} files uploaded`))

    // Connection secrets travel in the environment of the commands, never in the output.
    expect(result.stdout).not.toMatch(/pat_[0-9a-f]{16,}/)
    expect(result.stdout).not.toMatch(/tid_[0-9a-f]{8,}/)
  }, 120_000)

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
