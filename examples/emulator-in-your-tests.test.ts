/**
 * Example: the emulator inside your own vitest suite. Start it once per file on a free
 * port, point your code at its URLs and token, shape its data through `admin`, script
 * faults through `faults`, and close it afterwards. Nothing leaves 127.0.0.1.
 *
 * In your project: `import { startEmulator } from "worksync/emulator"`.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type EmulatorHandle, startEmulator } from "../src/emulator/index.ts"

/** The code under test: yours, talking plain HTTP to the service. */
const countOpenRecords = async (restUrl: string, token: string, workspaceId: string): Promise<number> => {
  const response = await fetch(`${restUrl}/v1/count-records`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify({ workspaceId, done: false })
  })
  if (!response.ok) throw new Error(`count-records answered ${response.status}`)
  // The documents do not show this answer: `{count}`, `{totalCount}` or a bare number.
  const body = (await response.json()) as number | { count?: number; totalCount?: number }
  const count = typeof body === "number" ? body : body.count ?? body.totalCount
  if (count === undefined) throw new Error("count-records answered no count")
  return count
}

describe("my ETL against the worksync emulator", () => {
  let emu: EmulatorHandle
  beforeAll(async () => {
    emu = await startEmulator({ seed: "demo" }) // or "empty", 500, "3x20000", { workspaces, recordsPerWorkspace }
  })
  afterAll(() => emu.close())

  it("counts open records, and sees records deleted through the admin handle disappear", async () => {
    const workspaceId = emu.workspaces[0]!
    const before = await countOpenRecords(emu.restUrl, emu.token, workspaceId)
    expect(before).toBeGreaterThan(0)
    emu.admin.deleteRecords(2, workspaceId)
    expect(await countOpenRecords(emu.restUrl, emu.token, workspaceId)).toBeLessThan(before)
  })

  it("handles a scripted server error (faults inject one 500)", async () => {
    emu.faults.inject({ route: "count-records", kind: "500" })
    await expect(countOpenRecords(emu.restUrl, emu.token, emu.workspaces[0]!)).rejects.toThrow(/500/)
    expect(await countOpenRecords(emu.restUrl, emu.token, emu.workspaces[0]!)).toBeGreaterThanOrEqual(0)
  })
})
