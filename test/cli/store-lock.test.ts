/**
 * One process at a time per journal and per snapshot file (the contract's "Waits, locks
 * and deletions"): a second run exits 1 with one line and writes nothing; the lock of a
 * SIGKILLed holder is gone with it.
 */
import Database from "better-sqlite3"
import type { ChildProcess } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type EmulatorHandle, startEmulator } from "../../src/emulator/index.ts"
import { runCli } from "../support/cli.ts"
import { lockHolder } from "../support/lock-holder.ts"


let emu: EmulatorHandle
let dir: string
beforeAll(async () => {
  emu = await startEmulator({ seed: "demo" })
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "ws-cli-lock-"))
})
afterAll(async () => {
  await emu?.close()
})

const env = () => ({ WORKSYNC_REST_URL: emu.restUrl, WORKSYNC_TOKEN: emu.token, WORKSYNC_ORG: emu.org })


const kill = (child: ChildProcess) =>
  new Promise<void>((resolve) => {
    child.once("exit", () => resolve())
    child.kill("SIGKILL")
  })

const runs = (snapshot: string) => {
  const db = new Database(snapshot, { readonly: true })
  try {
    return db.prepare("SELECT id, status FROM runs ORDER BY id").all()
  } finally {
    db.close()
  }
}

describe("one process per snapshot and per journal", () => {
  it("a backup on a snapshot another process holds exits 1 with one line and adds no run; after the holder's SIGKILL it runs", async () => {
    const snapshot = path.join(dir, "held.sqlite")
    const first = await runCli(["backup", "--snapshot", snapshot, "--json"], { env: env() })
    expect(first.code).toBe(0)
    const child = await lockHolder(snapshot)
    let second
    try {
      second = await runCli(["backup", "--snapshot", snapshot, "--json"], { env: env() })
    } finally {
      await kill(child)
    }
    expect(second.code).toBe(1)
    expect(second.stdout).toBe("")
    const lines = second.stderr.trim().split("\n")
    expect(lines.at(-1)).toBe(`worksync: snapshot ${snapshot} is in use by another worksync run; wait for it to finish or stop it`)
    expect(lines.filter((l) => l.startsWith("worksync:"))).toHaveLength(1)
    // The first run is still the only one, and still complete: nobody marked it failed.
    expect(runs(snapshot)).toEqual([{ id: 1, status: "complete" }])
    const third = await runCli(["backup", "--snapshot", snapshot, "--json"], { env: env() })
    expect(third.code).toBe(0)
    expect(runs(snapshot)).toEqual([{ id: 1, status: "complete" }, { id: 2, status: "complete" }])
  })

  it("an import on a journal another process holds exits 1 with one line and sends nothing", async () => {
    const csv = path.join(dir, "in.csv")
    fs.writeFileSync(csv, "title\nOne\nTwo\n")
    const journal = path.join(dir, "held-journal.sqlite")
    const child = await lockHolder(journal)
    let result
    try {
      result = await runCli(["import-csv", "--workspace", emu.workspaces[0]!, "--csv", csv, "--journal", journal, "--map", "title=title", "--json"], { env: env() })
    } finally {
      await kill(child)
    }
    expect(result.code).toBe(1)
    const lines = result.stderr.trim().split("\n")
    expect(lines.at(-1)).toBe(`worksync: journal ${journal} is in use by another worksync run; wait for it to finish or stop it`)
    expect(lines.filter((l) => l.startsWith("worksync:"))).toHaveLength(1)
    const writes = emu.ctx.db.prepare("SELECT count(*) FROM records WHERE title IN ('One', 'Two')").pluck().get()
    expect(writes).toBe(0)
  })
})
