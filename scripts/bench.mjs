// Runs every benchmark script under test/bench (or those named on the command line)
// one after another, each in its own process, and lets each print its figures.
import { spawnSync } from "node:child_process"
import { readdirSync } from "node:fs"

const wanted = process.argv.slice(2)
const scripts = readdirSync("test/bench")
  .filter((f) => f.endsWith(".ts") && !f.startsWith("_"))
  .filter((f) => wanted.length === 0 || wanted.some((w) => f.includes(w)))
  .sort()

let failed = 0
for (const script of scripts) {
  process.stdout.write(`\n== ${script}\n`)
  const r = spawnSync(process.execPath, ["--import", "tsx", `test/bench/${script}`], { stdio: "inherit" })
  if (r.status !== 0) failed++
}
process.exit(failed === 0 ? 0 : 1)
