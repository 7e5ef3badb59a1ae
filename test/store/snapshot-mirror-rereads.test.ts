/**
 * The mirror's records to read again (`mirror_rereads`), on a SQLite file and on a
 * PostgreSQL schema: kept across a reopen (a mirror stopped or killed reads them at its
 * next start), and a finished read removes only the asks it covered.
 */
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { openSnapshot } from "../../src/store/snapshot.ts"
import { tempDir } from "../support/effect.ts"
import { freshSchema } from "../support/postgres.ts"

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
  })
}
