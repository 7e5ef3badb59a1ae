import { execFileSync } from "node:child_process"

// Tests that run the CLI as a child process need the bundle to match the sources. Every
// project of the run (reference, alt) inherits this setup; the bundle is built once.
export default function setup() {
  if (process.env.WORKSYNC_TEST_BUNDLE_BUILT === String(process.pid)) return
  execFileSync(process.execPath, ["scripts/build.mjs"], { stdio: "inherit" })
  process.env.WORKSYNC_TEST_BUNDLE_BUILT = String(process.pid)
}
