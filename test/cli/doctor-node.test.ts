/** doctor's Node.js check: the release against package.json's `engines.node`. */
import { readFileSync } from "node:fs"
import { describe, expect, it } from "vitest"
import { NODE_ENGINE, nodeCheck, satisfies } from "../../src/cli/doctor/node-version.ts"

describe("doctor: Node.js version", () => {
  it("needs what package.json's engines says", () => {
    const { engines } = JSON.parse(readFileSync("package.json", "utf8")) as { engines: { node: string } }
    expect(NODE_ENGINE).toBe(engines.node)
  })

  it("an older release fails the check, naming the release needed; this one and newer ones pass", () => {
    const old = nodeCheck("20.11.1")
    expect(old).toMatchObject({ name: "node", ok: false })
    expect(old.detail).toContain(`needs Node.js ${NODE_ENGINE}`)
    expect(nodeCheck("22.18.9").ok).toBe(false)
    expect(nodeCheck("22.19.0").ok).toBe(true)
    expect(nodeCheck("26.0.0").ok).toBe(true)
    expect(nodeCheck().ok).toBe(satisfies(process.versions.node))
    expect(satisfies("v23.0.0", ">=22.19.0")).toBe(true)
  })
})
