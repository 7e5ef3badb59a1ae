/**
 * The mirror's records to read again (`mirror_rereads`), on a SQLite file and on a
 * PostgreSQL schema: kept across a reopen (a mirror stopped or killed reads them at its
 * next start), and a finished read removes only the asks it covered, in the same commit
 * as what the read wrote (`changeMembers`).
 */
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { type MemberState, openSnapshot, type RecordEntry, scopeOf } from "../../src/store/snapshot.ts"
import { tempDir } from "../support/effect.ts"
import { freshSchema } from "../support/postgres.ts"
import { activityOf, detailOf, summaryOf } from "./snapshot-fixtures.ts"

const version = (id: string, v: number, activity: number): RecordEntry => {
  const detail = detailOf(id, v)
  return { kind: "version", workspaceId: "w1", summary: summaryOf(detail), detail, activity: activityOf(id, activity) }
}

const BACKENDS: ReadonlyArray<{ readonly name: string; readonly location: Effect.Effect<string, never, Scope.Scope> }> = [
  { name: "sqlite", location: Effect.map(tempDir("ws-snap-"), (dir) => path.join(dir, "snap.sqlite")) },
  { name: "postgres", location: freshSchema }
]

for (const backend of BACKENDS) {
  describe(`the mirror's rereads on ${backend.name}`, () => {
    it.live("are kept across a reopen; a read removes its record's asks up to the one it covered", () =>
      Effect.gen(function*() {
        const location = yield* backend.location
        const seqs = yield* Effect.scoped(Effect.gen(function*() {
          const store = yield* openSnapshot(location)
          return yield* store.addMirrorRereads([
            { recordId: "a", event: "COMMENT_CREATED" },
            { recordId: "b", event: null },
            { recordId: "a", event: "TODO_CHECKLIST_CREATED" }
          ])
        }))
        expect(seqs).toHaveLength(3)
        expect(seqs[0]! < seqs[1]! && seqs[1]! < seqs[2]!).toBe(true)

        yield* Effect.scoped(Effect.gen(function*() {
          const store = yield* openSnapshot(location)
          expect(yield* store.mirrorRereads).toEqual([
            { seq: seqs[0], recordId: "a", event: "COMMENT_CREATED" },
            { seq: seqs[1], recordId: "b", event: null },
            { seq: seqs[2], recordId: "a", event: "TODO_CHECKLIST_CREATED" }
          ])
          // A read that covered a's first ask only: the later one stays, b's is untouched.
          yield* store.mirrorRereadDone("a", seqs[0]!)
          expect((yield* store.mirrorRereads).map((r) => r.seq)).toEqual([seqs[1], seqs[2]])
          const [later] = yield* store.addMirrorRereads([{ recordId: "b", event: "COMMENT_UPDATED" }])
          expect(later! > seqs[2]!).toBe(true)
          yield* store.mirrorRereadDone("b", later!)
          yield* store.mirrorRereadDone("a", seqs[2]!)
          expect(yield* store.mirrorRereads).toEqual([])
          expect(yield* store.addMirrorRereads([])).toEqual([])
        }))
      }))

    it.live("changeMembers: reads what the run holds of each record, writes what its change makes of it and removes its asks, together", () =>
      Effect.gen(function*() {
        const store = yield* openSnapshot(yield* backend.location)
        const run = yield* store.beginRun(scopeOf([]), true)
        yield* store.putRecords(run, [version("a", 0, 2), version("b", 0, 0)])
        const [a1, b1, a2] = yield* store.addMirrorRereads([
          { recordId: "a", event: null },
          { recordId: "b", event: null },
          { recordId: "a", event: "COMMENT_CREATED" }
        ])
        const before = (yield* store.memberVersion(run, "a"))!

        // Nothing written: what was held is handed over whole, and the asks up to a1 go.
        let seen: MemberState | undefined
        yield* store.changeMembers(run, [{
          id: "a",
          rereadDone: a1,
          change: (held) => {
            seen = held
            return undefined
          }
        }])
        expect(seen).toEqual({
          ...before,
          detail: yield* store.memberDetail(run, "a"),
          activity: activityOf("a", 2).map((item) => JSON.stringify({ ...item, recordId: "a" }))
        })
        expect((yield* store.mirrorRereads).map((r) => r.seq)).toEqual([b1, a2])

        // A change that fails rolls its whole batch back: nothing written, no ask removed.
        const failed = yield* Effect.flip(store.changeMembers(run, [
          { id: "b", rereadDone: b1, change: () => "remove" },
          {
            id: "a",
            rereadDone: a2,
            change: () => {
              throw new Error("no")
            }
          }
        ]))
        expect(failed._tag).toBe("SnapshotError")
        expect((yield* store.mirrorRereads).map((r) => r.seq)).toEqual([b1, a2])
        expect(yield* store.memberVersion(run, "a")).toEqual(before)
        expect(yield* store.memberVersion(run, "b")).toBeDefined()

        // A new version of a, b removed from the run, and their asks gone, in one commit;
        // a later change in the batch sees what an earlier one wrote.
        let after: MemberState | undefined
        yield* store.changeMembers(run, [
          { id: "a", rereadDone: a2, change: () => version("a", 1, 3) },
          { id: "b", rereadDone: b1, change: () => "remove" },
          {
            id: "a",
            change: (held) => {
              after = held
              return undefined
            }
          }
        ])
        expect(after?.vid).toBe((yield* store.memberVersion(run, "a"))?.vid)
        expect(after?.vid).not.toBe(before.vid)
        expect(after?.activity).toHaveLength(3)
        expect(JSON.parse((yield* store.memberDetail(run, "a"))!)).toMatchObject({ title: "Record a v1" })
        expect(yield* store.memberVersion(run, "b")).toBeUndefined()
        expect(yield* store.mirrorRereads).toEqual([])

        // A record the run does not hold is handed over as undefined.
        seen = before as MemberState
        yield* store.changeMembers(run, [{
          id: "b",
          change: (held) => {
            seen = held
            return undefined
          }
        }])
        expect(seen).toBeUndefined()
        yield* store.changeMembers(run, [])
      }).pipe(Effect.scoped))
  })
}
