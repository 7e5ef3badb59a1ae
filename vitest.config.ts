import { defineConfig } from "vitest/config"

/**
 * The suites that run a whole job against the emulator. They run twice: against the
 * emulator's reference reading of the service's documents, and against its `alt` variant
 * (the other plausible reading of every choice, only documented fields in every shape),
 * so nothing the jobs do depends on a choice the documents do not make. Not here: the
 * CLI suites of what runs on local files alone (prune, the store lock, the config file's
 * profiles, the PostgreSQL snapshot against its SQLite twin): the backups they start from
 * are the backup suites' subject, which run in both readings.
 */
const INTEGRATION = [
  "test/sync/**/*.test.ts",
  "test/streams/**/*.test.ts",
  "test/cli/{backup,backup-files,verify,verify-files,notify,copy-files,import-csv,restore,migrate,migrate-delta,migrate-mappings,references,mirror,mirror-stop,webhooks,exit-codes,progress,doctor,undo}.test.ts",
  "test/connectors/{export,csv-plan-thread,csv-dry-run,csv-presets}.test.ts",
  "test/connectors/files/**/*.test.ts",
  "test/connectors/presets/import-*.test.ts",
  "test/pipelines/**/*.test.ts",
  "test/examples/**/*.test.ts",
  "test/facade/facade.test.ts",
  "test/demo.test.ts"
]

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // A stuck teardown (a server or worker that will not close) fails the file, never hangs the run.
    teardownTimeout: 15_000,
    // Failures print small values: a diff or an object over this many characters is cut.
    chaiConfig: { truncateThreshold: 400 },
    pool: "forks",
    // A worker process runs file after file with its modules loaded once, instead of a fresh
    // module graph per file: importing Effect, the emulator and the stores again for each of
    // some 260 files was about a seventh of the suite's time. Files share no state but the
    // module cache: each starts its own emulator, servers and stores, and closes them, and no
    // file writes process.env or process-wide handlers. vitest keeps each project (reading)
    // in workers of its own.
    isolate: false,
    // Most files wait on I/O (HTTP to the emulator, child processes, PostgreSQL), not the
    // CPU: three at once on two cores. vitest's default, one fewer than the cores, ran the
    // suite one file at a time on this size of machine.
    maxWorkers: 3,
    // The bundle for the CLI tests; a PostgreSQL server for the PostgreSQL store's tests.
    globalSetup: ["test/setup.global.ts", "test/support/postgres-global-setup.ts"],
    reporters: ["default", "./test/support/summary-reporter.ts"],
    projects: [
      {
        extends: true,
        test: {
          name: "reference",
          include: ["test/**/*.test.ts"],
          env: { WORKSYNC_EMULATOR_VARIANT: "reference" }
        }
      },
      {
        extends: true,
        test: {
          name: "alt",
          include: INTEGRATION,
          env: { WORKSYNC_EMULATOR_VARIANT: "alt" }
        }
      }
    ]
  }
})
