/**
 * The library's public surface is a curated list: what pipelines need (services, layers,
 * streams, the jobs, their errors and the service's shapes), not the internals behind them.
 */
import * as fs from "node:fs"
import { describe, expect, it } from "vitest"
import * as api from "../../src/index.ts"

describe("the public API", () => {
  it("names each export (no export * of internal modules)", () => {
    const source = fs.readFileSync(new URL("../../src/index.ts", import.meta.url), "utf8")
    expect(source).not.toMatch(/export \* from/)
  })

  it("offers the jobs, services and streams, and not the internals behind them", () => {
    for (const name of ["backup", "restore", "prune", "verify", "verifyAndRecord", "openObjectStore", "workspaceFilesFromServices", "migrate", "mirror", "importCsv", "copyFiles", "exportSnapshot", "clientLayer", "RestClient", "GraphqlClient", "SnapshotStore", "Journal.layer", "listRecordsStream", "RecordDetail", "NotFound", "serveWebhooks"]) {
      expect(api, name).toHaveProperty(name)
    }
    for (const name of ["summarizeInput", "makeRestClient", "restFailure", "makePipeline", "checkInput", "openStruct", "undocumented", "USER_QUERIES", "CUSTOM_FIELD_TYPES", "makeLimiter"]) {
      expect(api, name).not.toHaveProperty(name)
    }
  })
})
