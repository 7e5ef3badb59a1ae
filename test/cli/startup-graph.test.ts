/**
 * What `worksync --help` loads: the CLI's static import graph (scripts/cli-graph.mjs,
 * an esbuild metafile) holds the command definitions only; stores, sync, connectors,
 * the client and CSV/glob libraries load when a command runs.
 */
import { spawnSync } from "node:child_process"
import { expect, it } from "vitest"

it("the start-up graph of dist/cli.js holds no store, sync, connector, client, csv-parse or picomatch module", () => {
  const r = spawnSync(process.execPath, ["scripts/cli-graph.mjs", "--all"], { encoding: "utf8", timeout: 60_000 })
  expect(r.stdout).toMatch(/static graph of /)
  expect(r.stdout).toMatch(/src\/cli\/commands\/import-csv\.ts/)
  expect(r.stdout).not.toMatch(/src\/(store|sync|connectors|client|streams|emulator)\//)
  expect(r.stdout).not.toMatch(/node_modules\/(csv-parse|csv-stringify|picomatch|undici)\//)
  expect(r.status).toBe(0)
}, 60_000)
