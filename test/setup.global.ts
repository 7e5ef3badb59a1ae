import { execFileSync } from "node:child_process"

// Tests that run the CLI as a child process need the bundle to match the sources.
export default function setup() {
  execFileSync(process.execPath, ["scripts/build.mjs"], { stdio: "inherit" })
}
