import { describe, expect, it } from "vitest"
import { execFileSync } from "node:child_process"

describe("package", () => {
  it("bin/worksync.js runs the bundled CLI", () => {
    const out = execFileSync(process.execPath, ["bin/worksync.js"], { encoding: "utf8" })
    expect(out).toContain("worksync")
  })
})
