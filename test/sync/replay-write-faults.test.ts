/**
 * Writes the service applied without saying so: an unreadable 2xx answer ("garble") and a
 * create answered 504 that commits later ("late-commit"). Every row exactly once.
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as fs from "node:fs"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { RestClient } from "../../src/client/rest-client.ts"
import { importCsv, type ImportOptions } from "../../src/connectors/csv/import.ts"
import { type EmulatorHandle, startEmulator } from "../../src/emulator/index.ts"
import { Journal, JournalDb, journalLayer } from "../../src/store/journal.ts"
import { recordCount, testClient, titleCounts, tmpDir } from "./replay-helpers.ts"

let handle: EmulatorHandle
beforeAll(async () => {
  handle = await startEmulator({ seed: "empty" })
})
afterAll(() => handle.close())

const workspace = async (name: string): Promise<string> => handle.admin.createWorkspace({ name }).id

const runImport = (journalFile: string, options: ImportOptions) =>
  Effect.runPromise(
    Effect.gen(function*() {
      const journal = yield* Journal
      const rest = yield* RestClient
      return yield* importCsv(rest, journal, options)
    }).pipe(Effect.provide(Layer.merge(journalLayer(journalFile), testClient(handle))))
  )

const csvOf = (dir: string, rows: ReadonlyArray<string>) => {
  const file = path.join(dir, "in.csv")
  fs.writeFileSync(file, ["title,list,done,tags", ...rows].join("\n") + "\n")
  return file
}

describe("writes applied without a readable answer", () => {
  it("R-REST-ERR-05: a create answered 2xx with an unreadable body is applied: reconciled, never sent again", async () => {
    const ws = await workspace("garble")
    const dir = tmpDir()
    const rows = ["Alpha,,no,", "Beta,,yes,", "Gamma,,no,", "Alpha,,no,"]
    const file = csvOf(dir, rows)
    handle.faults.inject({ route: "create-record", kind: "garble", times: 4 })
    const journalFile = path.join(dir, "j.sqlite")
    const options: ImportOptions = { workspaceId: ws, csv: { file }, mapping: { preset: "generic" } }
    try {
      await runImport(journalFile, options)
      // The rerun must not send again what the first run applied.
      const again = await runImport(journalFile, options)
      expect(again.failed + again.unknown).toBe(0)
    } finally {
      handle.faults.reset()
    }
    expect(recordCount(handle, ws)).toBe(4)
    expect(titleCounts(handle, ws).get("Alpha")).toBe(2)
    const done = handle.ctx.db.prepare("SELECT COUNT(*) AS n FROM records WHERE workspace_id = ? AND done = 1").get(ws) as { n: number }
    expect(done.n).toBe(1)
  })

  it("R-REST-ERR-06: a create answered 504 that commits while the client looks again is found, not sent twice", async () => {
    const ws = await workspace("late")
    const dir = tmpDir()
    const file = csvOf(dir, ["Late one,,no,", "On time,,no,"])
    // The commit lands when the client's second look arrives: a client that looks once
    // and then sends again makes a duplicate; one that keeps looking finds it.
    handle.faults.inject({ route: "create-record", kind: "late-commit", releaseOn: { route: "search-records", count: 2 } })
    const journalFile = path.join(dir, "j.sqlite")
    try {
      const result = await runImport(journalFile, {
        workspaceId: ws,
        csv: { file },
        mapping: { preset: "generic" },
        settleWindowMs: 2_000
      })
      expect(result.failed + result.unknown).toBe(0)
      // Found by title: recorded as an adoption and reported.
      expect(result.adopted.map((a) => a.detail)).toEqual([expect.stringContaining('title "Late one"')])
    } finally {
      // Whatever is still held commits now, as the service eventually would.
      await handle.faults.lateCommits.releaseAll()
      handle.faults.reset()
    }
    expect(titleCounts(handle, ws).get("Late one")).toBe(1)
    expect(recordCount(handle, ws)).toBe(2)
    const j = new JournalDb(journalFile)
    try {
      expect(j.counts().done).toBe(2)
    } finally {
      j.close()
    }
  })
})
