/**
 * The Node.js release worksync needs: package.json's `engines.node` (a literal, as
 * version.ts keeps the version: test/cli/doctor-node.test.ts holds them equal).
 */
import { type Check, fail, pass } from "./check.ts"

export const NODE_ENGINE = ">=22.19.0"

const parts = (version: string): ReadonlyArray<number> => version.replace(/^v/, "").split(".").map((n) => Number.parseInt(n, 10) || 0)

/** Whether `version` (e.g. `26.10.0` or `v20.11.1`) is at least the `>=X.Y.Z` of `engine`. */
export const satisfies = (version: string, engine: string = NODE_ENGINE): boolean => {
  const have = parts(version)
  const need = parts(engine.replace(/^>=\s*/, ""))
  for (let i = 0; i < 3; i++) {
    const a = have[i] ?? 0
    const b = need[i] ?? 0
    if (a !== b) return a > b
  }
  return true
}

export const nodeCheck = (version: string = process.versions.node): Check =>
  satisfies(version)
    ? pass("node", `${version} (worksync needs ${NODE_ENGINE})`)
    : fail("node", `${version} is too old: worksync needs Node.js ${NODE_ENGINE}; install a newer release (nodejs.org, or nvm install 22)`)
