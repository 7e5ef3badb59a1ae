/**
 * A replayed command stopped with SIGTERM: an op whose write cannot have been applied
 * (its only request was answered 429, and it waits out the Retry-After) goes back to
 * pending, so the next run sends it at once; an op whose request left unanswered stays in
 * flight, and the next run looks for it first and creates nothing twice.
 */
import Database from "better-sqlite3"
import * as fs from "node:fs"
import * as path from "node:path"
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import type { EmulatorHandle } from "../../src/emulator/index.ts"
import { connectionEnv, runCli } from "../support/cli.ts"
import { Emulator, emulatorLayer, tempDir } from "../support/effect.ts"

/** Runs import-csv of one row and stops it with SIGTERM once `ready` holds. */
const importStopped = (handle: EmulatorHandle, args: ReadonlyArray<string>, ready: () => boolean) =>
  Effect.promise(() => runCli(args, { env: connectionEnv(handle), stop: { when: ready, signal: "SIGTERM" } }))

interface OpRow {
  readonly state: string
  readonly uncertain: number
}

const createOps = (journal: string): Array<OpRow> => {
  const db = new Database(journal, { readonly: true })
  try {
    return db.prepare("SELECT state, uncertain FROM ops WHERE kind = 'record.create'").all() as Array<OpRow>
  } finally {
    db.close()
  }
}

const titles = (handle: EmulatorHandle, ws: string): Array<string> =>
  handle.ctx.db.prepare("SELECT title FROM records WHERE workspace_id = ? AND deleted_at IS NULL").pluck().all(ws) as Array<string>

// The CLI runs as a child process against the emulator: real time (`excludeTestServices`).
layer(emulatorLayer({ seed: "empty" }), { timeout: 60_000, excludeTestServices: true })("a replay stopped by SIGTERM", (it) => {
  const setup = (name: string) =>
    Effect.gen(function*() {
      const handle = yield* Emulator
      const ws = handle.admin.createWorkspace({ name }).id
      const dir = yield* tempDir("ws-stop-release-")
      const csv = path.join(dir, "in.csv")
      fs.writeFileSync(csv, "title\nOnly task\n")
      const journal = path.join(dir, "j.sqlite")
      const args = ["import-csv", "--workspace", ws, "--csv", csv, "--journal", journal]
      return { handle, ws, journal, args }
    })

  it.effect("an op waiting out a 429's Retry-After goes back to pending, not uncertain; the next run creates it at once", () =>
    Effect.gen(function*() {
      const { handle, ws, journal, args } = yield* setup("stop-429")
      handle.resetStats()
      // Longer than the test: a run that waited it out, or looked for the record a whole
      // settle window, would not end in time.
      handle.faults.inject({ route: "create-record", kind: "429", retryAfter: 100 })
      try {
        const stopped = yield* importStopped(handle, args, () => (handle.stats().byRoute["create-record"] ?? 0) >= 1)
        expect(stopped.code, stopped.stderr).toBe(130)
      } finally {
        handle.faults.reset()
      }
      expect(createOps(journal)).toEqual([{ state: "pending", uncertain: 0 }])
      expect(titles(handle, ws)).toEqual([])
      const rerun = yield* Effect.promise(() => runCli([...args, "--json"], { env: connectionEnv(handle) }))
      expect(rerun.code, rerun.stderr).toBe(0)
      expect(JSON.parse(rerun.stdout)).toMatchObject({ created: 1 })
      expect(titles(handle, ws)).toEqual(["Only task"])
      expect(createOps(journal)).toEqual([{ state: "done", uncertain: 0 }])
    }), { timeout: 60_000 })

  it.effect("an op whose request left unanswered stays in flight; the next run finds the record and creates nothing twice", () =>
    Effect.gen(function*() {
      const { handle, ws, journal, args } = yield* setup("stop-held")
      handle.faults.inject({ route: "create-record", kind: "hold" })
      try {
        const stopped = yield* importStopped(handle, args, () => handle.faults.heldRequests.size === 1)
        expect(stopped.code, stopped.stderr).toBe(130)
        expect(createOps(journal)).toEqual([{ state: "in_flight", uncertain: 0 }])
      } finally {
        // Whether the service applies the held create once its client is gone or not,
        // the next run must end with the record once.
        handle.faults.heldRequests.releaseAll()
        handle.faults.reset()
      }
      const rerun = yield* Effect.promise(() => runCli([...args, "--request-timeout", "1", "--json"], { env: connectionEnv(handle) }))
      expect(rerun.code, rerun.stderr).toBe(0)
      expect(titles(handle, ws)).toEqual(["Only task"])
      expect(createOps(journal)).toEqual([{ state: "done", uncertain: 0 }])
    }), { timeout: 60_000 })
})
