/**
 * No service credentials are sent to storage URLs (R-UPLOAD-PRESIGN-13, R-FILE-SERVE-02).
 * The emulator's storage origin records the name of every credential-looking header it
 * receives; after copies in every direction through the real binary the log must be
 * empty, while the storage request counters prove storage was really used.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type EmulatorHandle, startEmulator } from "../../src/emulator/index.ts"
import { storageCredentialLog } from "../../src/emulator/uploads/files.ts"
import { runCli } from "../support/cli.ts"
import { type Canary, canaryUser, tempDirs } from "./support.ts"

let emu: EmulatorHandle
let owner: Canary
let second: Canary
let target: string
const temp = tempDirs()

beforeAll(async () => {
  emu = await startEmulator({ seed: "demo" })
  owner = canaryUser(emu, "storage-owner")
  target = emu.admin.createWorkspace({ name: "storage target" }).id
  emu.admin.setWorkspaceLevel(target, owner.userId, "ADMIN")
  second = canaryUser(emu, "storage-second")
  emu.admin.setWorkspaceLevel(target, second.userId, "ADMIN")
})
afterAll(async () => {
  await emu?.close()
  temp.cleanup()
})

const flags = () => [
  "--rest-url", emu.restUrl, "--base-url", emu.baseUrl, "--token", owner.token, "--token-id", owner.tokenId,
  "--token-secret", owner.tokenSecret, "--org", emu.org
]

/** Storage requests by method-less route, e.g. 3 PUTs and 9 GETs both count as `storage:/o/...`. */
const storageHits = () =>
  Object.entries(emu.stats().byRoute)
    .filter(([route]) => route.startsWith("storage:"))
    .reduce((n, [, count]) => n + count, 0)

const confirmedIn = (ws: string) =>
  emu.ctx.db.prepare("SELECT count(*) FROM files WHERE workspace_id = ? AND status = 'CONFIRMED'").pluck().get(ws) as number

describe("no service credentials reach storage", () => {
  it("R-FILE-SERVE-02: workspace -> dir downloads follow the signed redirect with no credential header", async () => {
    emu.resetStats()
    const out = path.join(temp.make(), "out")
    const r = await runCli(["copy-files", ...flags(), "--from", `workspace:${emu.workspaces[0]}`, "--to", `dir:${out}`,
      "--journal", path.join(temp.make(), "j.sqlite"), "--json"])
    expect(r.code, r.stderr).toBe(0)
    const copied = JSON.parse(r.stdout).copied as number
    expect(copied).toBeGreaterThan(0)
    expect(storageHits()).toBeGreaterThanOrEqual(copied)
    expect(storageCredentialLog(emu.ctx)).toEqual([])
  })

  it("R-UPLOAD-PRESIGN-13: dir -> workspace presigned PUTs (both upload strategies) carry no credential header", async () => {
    const src = temp.make()
    fs.writeFileSync(path.join(src, "small.txt"), "small")
    fs.writeFileSync(path.join(src, "big.bin"), Buffer.alloc(300_000, 1))
    fs.writeFileSync(path.join(src, "no-extension"), "x")
    emu.resetStats()
    const before = confirmedIn(target)
    for (const strategy of ["presign", "auto"]) {
      const r = await runCli(["copy-files", ...flags(), "--from", `dir:${src}`, "--to", `workspace:${target}`,
        "--journal", path.join(temp.make(), "j.sqlite"), "--upload-strategy", strategy, "--json"])
      expect(r.code, r.stderr).toBe(0)
      expect(JSON.parse(r.stdout)).toMatchObject({ files: 3, copied: 3, failed: 0 })
    }
    expect(confirmedIn(target)).toBe(before + 6)
    // At least the presign run's three PUTs went to storage.
    expect(storageHits()).toBeGreaterThanOrEqual(3)
    expect(storageCredentialLog(emu.ctx)).toEqual([])
  })

  it("R-UPLOAD-PRESIGN-13, R-FILE-SERVE-02: workspace -> workspace on a second account (--to-*) downloads and uploads with no credential at storage", async () => {
    emu.resetStats()
    const r = await runCli(["copy-files", ...flags(), "--from", `workspace:${emu.workspaces[0]}`, "--to", `workspace:${target}`,
      "--to-token", second.token, "--to-token-id", second.tokenId, "--to-token-secret", second.tokenSecret,
      "--journal", path.join(temp.make(), "j.sqlite"), "--upload-strategy", "presign", "--concurrency", "3", "--json"])
    expect(r.code, r.stderr).toBe(0)
    const copied = JSON.parse(r.stdout).copied as number
    expect(copied).toBeGreaterThan(0)
    // A GET and a PUT per file (an empty file may skip its download).
    expect(storageHits()).toBeGreaterThanOrEqual(2 * copied - 1)
    expect(storageCredentialLog(emu.ctx)).toEqual([])
  })

  it("the storage log does catch a credential header (so an empty log means something)", async () => {
    const res = await fetch(`${emu.storageUrl}/o/nothing`, { headers: { authorization: `Bearer ${owner.token}` } })
    await res.arrayBuffer()
    expect(storageCredentialLog(emu.ctx).map((e) => e.header)).toEqual(["authorization"])
  })
})
