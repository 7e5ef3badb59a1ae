/**
 * Writes the service applied without saying so: an unreadable 2xx answer ("garble") and a
 * create answered 504 that commits later ("late-commit"). Every row exactly once.
 */
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as fs from "node:fs"
import * as path from "node:path"
import { RestClient } from "../../src/client/rest-client.ts"
import { importCsv } from "../../src/connectors/csv/import.ts"
import type { ImportOptions } from "../../src/connectors/csv/options.ts"
import type { EmulatorHandle } from "../../src/emulator/index.ts"
import { Journal, JournalDb } from "../../src/store/journal.ts"
import { Emulator, emulatorLayer, tempDir } from "../support/effect.ts"
import { recordCount, testClient, titleCounts } from "./replay-helpers.ts"

const workspace = (handle: EmulatorHandle, name: string): string => handle.admin.createWorkspace({ name }).id

const runImport = (handle: EmulatorHandle, journalFile: string, options: ImportOptions) =>
  Effect.gen(function*() {
    const journal = yield* Journal
    const rest = yield* RestClient
    return yield* importCsv(rest, journal, options)
  }).pipe(Effect.provide(Layer.merge(Journal.layer(journalFile), testClient(handle))))

const csvOf = (dir: string, rows: ReadonlyArray<string>) => {
  const file = path.join(dir, "in.csv")
  fs.writeFileSync(file, ["title,list,done,tags", ...rows].join("\n") + "\n")
  return file
}

// No TestClock: the client's retries, timeouts and settle windows run on real time against a real server.
layer(emulatorLayer({ seed: "empty" }), { timeout: 30_000, excludeTestServices: true })("writes applied without a readable answer", (it) => {
  it.effect("R-REST-ERR-05: a create answered 2xx with an unreadable body is applied: reconciled, never sent again", () =>
    Effect.gen(function*() {
      const handle = yield* Emulator
      const ws = workspace(handle, "garble")
      const dir = yield* tempDir("ws-replay-")
      const rows = ["Alpha,,no,", "Beta,,yes,", "Gamma,,no,", "Alpha,,no,"]
      const file = csvOf(dir, rows)
      handle.faults.inject({ route: "create-record", kind: "garble", times: 4 })
      const journalFile = path.join(dir, "j.sqlite")
      const options: ImportOptions = { workspaceId: ws, csv: { file }, mapping: { preset: "generic" } }
      yield* Effect.gen(function*() {
        yield* runImport(handle, journalFile, options)
        // The rerun must not send again what the first run applied.
        const again = yield* runImport(handle, journalFile, options)
        expect(again.failed + again.unknown).toBe(0)
      }).pipe(Effect.ensuring(Effect.sync(() => handle.faults.reset())))
      expect(recordCount(handle, ws)).toBe(4)
      expect(titleCounts(handle, ws).get("Alpha")).toBe(2)
      const done = handle.ctx.db.prepare("SELECT COUNT(*) AS n FROM records WHERE workspace_id = ? AND done = 1").get(ws) as { n: number }
      expect(done.n).toBe(1)
    }))

  it.effect("R-REST-ERR-06: a create answered 504 that commits while the client looks again is found, not sent twice", () =>
    Effect.gen(function*() {
      const handle = yield* Emulator
      const ws = workspace(handle, "late")
      const dir = yield* tempDir("ws-replay-")
      const file = csvOf(dir, ["Late one,,no,", "On time,,no,"])
      // The commit lands when the client's second look arrives: a client that looks once
      // and then sends again makes a duplicate; one that keeps looking finds it.
      handle.faults.inject({ route: "create-record", kind: "late-commit", releaseOn: { route: "search-records", count: 2 } })
      const journalFile = path.join(dir, "j.sqlite")
      yield* Effect.gen(function*() {
        const result = yield* runImport(handle, journalFile, {
          workspaceId: ws,
          csv: { file },
          mapping: { preset: "generic" },
          settleWindowMs: 2_000
        })
        expect(result.failed + result.unknown).toBe(0)
        // Found by title: recorded as an adoption and reported.
        expect(result.adopted.map((a) => a.detail)).toEqual([expect.stringContaining('title "Late one"')])
      }).pipe(
        // Whatever is still held commits now, as the service eventually would.
        Effect.ensuring(Effect.andThen(Effect.promise(() => handle.faults.lateCommits.releaseAll()), Effect.sync(() => handle.faults.reset())))
      )
      expect(titleCounts(handle, ws).get("Late one")).toBe(1)
      expect(recordCount(handle, ws)).toBe(2)
      const j = new JournalDb(journalFile)
      try {
        expect(j.counts().done).toBe(2)
      } finally {
        j.close()
      }
    }))
})
