import { describe, expect, it } from "vitest"
import { runCli } from "../support/cli.ts"

describe("worksync exit codes and failure lines", () => {
  it("an unknown flag exits 64 with no stack trace", async () => {
    const r = await runCli(["emulator", "--no-such-flag"])
    expect(r.code).toBe(64)
    expect(r.stdout).toBe("")
    expect(r.stderr).not.toMatch(/\n\s+at /)
  })

  it("an out-of-range fault fraction is a usage error naming the flag", async () => {
    const r = await runCli(["emulator", "--fail-rate", "1.5"])
    expect(r.code).toBe(64)
    expect(r.stderr.trim().split("\n")).toHaveLength(1)
    expect(r.stderr).toContain("--fail-rate")
  })

  it("--help lists the commands and exits 0", async () => {
    const r = await runCli(["--help"])
    expect(r.code).toBe(0)
    expect(r.stdout).toContain("emulator")
  })
})
