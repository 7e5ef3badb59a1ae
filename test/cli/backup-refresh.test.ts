/** `worksync backup --refresh-every N`: the rolling refresh from the command line. */
import Database from "better-sqlite3"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type EmulatorHandle, startEmulator } from "../../src/emulator/index.ts"
import { runCli } from "../support/cli.ts"

let emu: EmulatorHandle
let dir: string
beforeAll(async () => {
  emu = await startEmulator({ seed: "demo" })
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "ws-cli-refresh-"))
})
afterAll(async () => {
  await emu?.close()
})

const env = () => ({ WORKSYNC_REST_URL: emu.restUrl, WORKSYNC_TOKEN: emu.token, WORKSYNC_ORG: emu.org })

describe("worksync backup --refresh-every", () => {
  it("--refresh-every 1 re-reads every record's detail; a negative value is a usage error", async () => {
    const snapshot = path.join(dir, "refresh.sqlite")
    expect((await runCli(["backup", "--snapshot", snapshot, "--quiet"], { env: env() })).code).toBe(0)
    emu.resetStats()
    const second = await runCli(["backup", "--snapshot", snapshot, "--refresh-every", "1", "--json"], { env: env() })
    expect(second.code).toBe(0)
    const records = JSON.parse(second.stdout).records as number
    expect(emu.stats().byRoute["get-record"]).toBe(records)
    const db = new Database(snapshot, { readonly: true })
    const stats = JSON.parse(db.prepare("SELECT stats FROM runs ORDER BY id DESC LIMIT 1").pluck().get() as string)
    db.close()
    expect(stats.refreshed).toBe(records)
    const bad = await runCli(["backup", "--snapshot", snapshot, "--refresh-every", "-1"], { env: env() })
    expect(bad.code).toBe(64)
    expect(bad.stderr.trim().split("\n")).toHaveLength(1)
    expect(bad.stderr).toMatch(/--refresh-every -1/)
  })
})
