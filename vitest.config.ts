import { defineConfig } from "vitest/config"

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // A stuck teardown (a server or worker that will not close) fails the file, never hangs the run.
    teardownTimeout: 15_000,
    // Failures print small values: a diff or an object over this many characters is cut.
    chaiConfig: { truncateThreshold: 400 },
    pool: "forks",
    globalSetup: ["test/setup.global.ts"],
    reporters: ["default", "./test/support/summary-reporter.ts"]
  }
})
