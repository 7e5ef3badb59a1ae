/**
 * import-csv: a create whose answer is lost is reconciled by title, and the record taken
 * (adopted) is reported: `adopted` in --json, one line with --verbose. The adoption window
 * is a flag.
 */
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type EmulatorHandle, startEmulator } from "../../src/emulator/index.ts"

const BIN = "bin/worksync.js"

let handle: EmulatorHandle
beforeAll(async () => {
  handle = await startEmulator({ seed: "empty" })
})
afterAll(() => handle.close())

const run = (args: ReadonlyArray<string>) =>
  new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      env: { ...process.env, WORKSYNC_REST_URL: handle.restUrl, WORKSYNC_TOKEN: handle.token, WORKSYNC_ORG: handle.org },
      stdio: ["ignore", "pipe", "pipe"]
    })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (d) => (stdout += d))
    child.stderr.on("data", (d) => (stderr += d))
    child.on("close", (code) => resolve({ code, stdout, stderr }))
  })

const titles = (ws: string) =>
  (handle.ctx.db.prepare("SELECT id, title FROM records WHERE workspace_id = ? AND deleted_at IS NULL").all(ws) as Array<{ id: string; title: string }>)

describe("import-csv: adoptions reported", () => {
  it("a create that committed but lost its answer: the record is adopted once, listed in --json and in a --verbose line", async () => {
    const ws = handle.admin.createWorkspace({ name: "adopt" }).id
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "ws-adopt-cli-"))
    const csv = path.join(dir, "in.csv")
    fs.writeFileSync(csv, "title\nFirst task\nSecond task\n")
    handle.faults.inject({ route: "create-record", kind: "ambiguous" })
    const r = await run(["import-csv", "--workspace", ws, "--csv", csv, "--journal", path.join(dir, "j.sqlite"), "--adoption-window", "60", "--json", "--verbose"])
    handle.faults.reset()
    expect(r.code).toBe(0)
    const out = JSON.parse(r.stdout)
    expect(out).toMatchObject({ rows: 2, created: 2, rejected: 0 })
    const records = titles(ws)
    expect(records.map((x) => x.title).sort()).toEqual(["First task", "Second task"])
    expect(out.adopted).toHaveLength(1)
    const [adopted] = out.adopted as Array<{ key: string; recordId: string; found: string }>
    expect(records.map((x) => x.id)).toContain(adopted!.recordId)
    expect(r.stderr).toContain(`import: adopted record ${adopted!.recordId} for ${adopted!.key} (found by ${adopted!.found})`)
  })

  it("--adoption-window must be 0 or more seconds: exit 64, one line", async () => {
    const ws = handle.admin.createWorkspace({ name: "adopt bad" }).id
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "ws-adopt-cli-"))
    const csv = path.join(dir, "in.csv")
    fs.writeFileSync(csv, "title\nOne\n")
    const r = await run(["import-csv", "--workspace", ws, "--csv", csv, "--journal", path.join(dir, "j.sqlite"), "--adoption-window=-5"])
    expect(r.code).toBe(64)
    expect(r.stderr).toContain("--adoption-window -5: must be 0 or more seconds")
  })
})
