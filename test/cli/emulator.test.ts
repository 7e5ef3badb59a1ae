import { describe, expect, it } from "vitest"
import { runCli, startCli, waitForExit } from "../support/cli.ts"

describe("worksync emulator", () => {
  it("prints one JSON line with URLs and an OWNER's tokens, serves REST, and stops on SIGTERM with exit 0", async () => {
    const { child, firstLine } = await startCli(["emulator", "--seed", "demo", "--port", "0"])
    try {
      const info = JSON.parse(firstLine) as Record<string, unknown>
      for (const key of ["restUrl", "baseUrl", "token", "tokenId", "tokenSecret", "org", "workspaces"]) {
        expect(info).toHaveProperty(key)
      }
      expect(Array.isArray(info.workspaces) && info.workspaces.length).toBeGreaterThan(0)
      const res = await fetch(`${info.restUrl}/v1/list-workspaces`, {
        method: "POST",
        headers: { authorization: `Bearer ${info.token}`, "content-type": "application/json" },
        body: "{}"
      })
      expect(res.status).toBe(200)
      const body = (await res.json()) as { items: Array<{ id: string }>; totalCount: number }
      expect(body.items.map((w) => w.id)).toEqual(info.workspaces)
    } finally {
      child.kill("SIGTERM")
    }
    const { code } = await waitForExit(child)
    expect(code).toBe(0)
  })
})

describe("worksync emulator faults from flags", () => {
  it("--churn inserts and deletes at the front of the ordering on each list-records call", async () => {
    const { child, firstLine } = await startCli(["emulator", "--seed", "1x50", "--port", "0", "--churn", "3:3"])
    try {
      const info = JSON.parse(firstLine) as { restUrl: string; token: string; workspaces: Array<string> }
      const page = async (skip: number) => {
        const res = await fetch(`${info.restUrl}/v1/list-records`, {
          method: "POST",
          headers: { authorization: `Bearer ${info.token}`, "content-type": "application/json" },
          body: JSON.stringify({ workspaceId: info.workspaces[0], skip, limit: 10 })
        })
        return ((await res.json()) as { items: Array<{ id: string }> }).items.map((r) => r.id)
      }
      const first = await page(0)
      const again = await page(0)
      // The front moved between two reads of the same window.
      expect(again).not.toEqual(first)
    } finally {
      child.kill("SIGTERM")
    }
    await waitForExit(child)
  })
})

describe("worksync emulator --variant", () => {
  const countKeys = async (args: ReadonlyArray<string>, env: NodeJS.ProcessEnv = {}) => {
    const { child, firstLine } = await startCli(["emulator", "--port", "0", ...args], { env })
    try {
      const info = JSON.parse(firstLine) as { restUrl: string; token: string }
      const res = await fetch(`${info.restUrl}/v1/count-records`, {
        method: "POST",
        headers: { authorization: `Bearer ${info.token}`, "content-type": "application/json" },
        body: "{}"
      })
      return Object.keys((await res.json()) as object)
    } finally {
      child.kill("SIGTERM")
      await waitForExit(child)
    }
  }

  it("--variant alt serves the other reading (count-records answers {totalCount}); without the flag WORKSYNC_EMULATOR_VARIANT decides; the flag wins", async () => {
    expect(await countKeys([], { WORKSYNC_EMULATOR_VARIANT: "" })).toEqual(["count"])
    expect(await countKeys(["--variant", "alt"])).toEqual(["totalCount"])
    expect(await countKeys([], { WORKSYNC_EMULATOR_VARIANT: "alt" })).toEqual(["totalCount"])
    expect(await countKeys(["--variant", "reference"], { WORKSYNC_EMULATOR_VARIANT: "alt" })).toEqual(["count"])
  })

  it("an unknown WORKSYNC_EMULATOR_VARIANT is a usage error (exit 64) naming the accepted values", async () => {
    const r = await runCli(["emulator", "--port", "0"], { env: { WORKSYNC_EMULATOR_VARIANT: "bogus" } })
    expect(r.code).toBe(64)
    expect(r.stderr).toContain("WORKSYNC_EMULATOR_VARIANT=bogus: use reference or alt")
    expect(r.stdout).toBe("")
  })

  it("an unknown --variant is a usage error (exit 64)", async () => {
    const r = await runCli(["emulator", "--port", "0", "--variant", "bogus"])
    expect(r.code).toBe(64)
  })
})
