import { execFileSync } from "node:child_process"

// Tests that run the CLI as a child process need the bundle to match the sources. Every
// project of the run (reference, alt) inherits this setup; the bundle is built once.
// WORKSYNC_TEST_BUNDLE=prebuilt skips the build: .ci/run sets it for the package test on
// the other Node lines, which follows the suite's own build of the same sources (two of
// them run at once there, and a build swapping dist/ would pull it from under the other).
export default function setup() {
  if (process.env.WORKSYNC_TEST_BUNDLE === "prebuilt") return
  if (process.env.WORKSYNC_TEST_BUNDLE_BUILT === String(process.pid)) return
  execFileSync(process.execPath, ["scripts/build.mjs"], { stdio: "inherit" })
  process.env.WORKSYNC_TEST_BUNDLE_BUILT = String(process.pid)
}
