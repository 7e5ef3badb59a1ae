/**
 * The target's records as a restore reads them, kept in a scratch SQLite file of the
 * caller's scope (restore-target.ts): each summary as list-records gave it, every id
 * walked while other reads of the file go on, and the file gone with the scope even
 * when a walk of the ids was left unfinished.
 */
import { expect, layer } from "@effect/vitest"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import { RestClient } from "../../src/client/rest-client.ts"
import { PAGE_MAX_LIMIT } from "../../src/schema/limits.ts"
import { readTarget } from "../../src/sync/restore-target.ts"
import { Emulator, emulatorLayer } from "../support/effect.ts"
import { testClient } from "./replay-helpers.ts"

const check = (ws: string) =>
  Effect.gen(function*() {
    const client = yield* RestClient
    const pages = [
      yield* client.listRecords({ workspaceId: ws, archived: false, limit: PAGE_MAX_LIMIT }),
      yield* client.listRecords({ workspaceId: ws, archived: true, limit: PAGE_MAX_LIMIT })
    ]
    // One page each holds them all: the comparison below sees every record.
    expect(pages.map((p) => p.pageInfo.hasNextPage)).toEqual([false, false])
    const listed = pages.flatMap((p) => p.items)
    expect(listed.length).toBeGreaterThan(1)

    const exit = yield* Effect.exit(Effect.scoped(Effect.gen(function*() {
      const now = yield* readTarget(client, ws)
      expect(now.records.size).toBe(listed.length)
      // Each summary comes back from the file as the service listed it.
      for (const r of listed) expect(now.records.get(r.id)).toEqual(r)
      expect(listed.every((r) => now.records.has(r.id))).toBe(true)
      expect(now.records.has("not-a-listed-id")).toBe(false)
      // A walk of the ids inside another (a caller's loop that reads again meanwhile).
      const pairs: Array<string> = []
      for (const a of now.records.ids()) for (const b of now.records.ids()) if (a < b) pairs.push(`${a} ${b}`)
      expect(pairs.length).toBe((listed.length * (listed.length - 1)) / 2)
      // A walk that stops after one id, as a loop interrupted there does: the scope still closes the file.
      const open = now.records.ids()[Symbol.iterator]()
      expect(open.next().done).toBe(false)
    })))
    // Without the scope's close failing (a defect) nor anything else.
    if (Exit.isFailure(exit)) throw Cause.squash(exit.cause)
  })

// The read talks to the emulator over real HTTP: the layer's tests run on the live clock.
layer(emulatorLayer({ seed: "demo" }), { timeout: 30_000, excludeTestServices: true })("readTarget", (it) => {
  it.effect("holds every record's summary as listed; the ids are walked twice at once and a walk left open does not keep the file", () =>
    Effect.gen(function*() {
      const handle = yield* Emulator
      yield* Effect.provide(check(handle.workspaces[0]!), testClient(handle))
    }))
})
