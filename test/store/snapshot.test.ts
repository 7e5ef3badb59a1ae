import * as Effect from "effect/Effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { openSnapshot, scopeOf, type SnapshotStoreService } from "../../src/store/snapshot.ts"
import { tempDir } from "../support/effect.ts"
import { activityOf, detailOf, fileOf, summaryOf } from "./snapshot-fixtures.ts"
import { sqliteOf } from "../support/sqlite-store.ts"

/** A second connection to the same file, as another process would have. */
const withOther = <A, E>(file: string, f: (store: SnapshotStoreService) => Effect.Effect<A, E>) =>
  Effect.scoped(Effect.flatMap(openSnapshot(file), f))

/** A snapshot path in a directory removed with the test's scope. */
const tempFile = Effect.map(tempDir("ws-snap-"), (dir) => path.join(dir, "snap.sqlite"))

const withStore = <A>(file: string, f: (store: SnapshotStoreService) => Effect.Effect<A, unknown>) =>
  Effect.scoped(Effect.flatMap(openSnapshot(file), f))

const version = (id: string, v: number, activity = 0) => {
  const detail = detailOf(id, v)
  return {
    kind: "version" as const,
    workspaceId: "w1",
    summary: summaryOf(detail),
    detail,
    activity: activityOf(id, activity)
  }
}

describe("snapshot store", () => {
  it.effect("creates the file with owner-only permissions in WAL mode", () =>
    Effect.gen(function*() {
      const file = yield* tempFile
      const mode = yield* withStore(file, (store) => Effect.sync(() => sqliteOf(store).pragma("journal_mode", { simple: true })))
      expect(mode).toBe("wal")
      expect(fs.statSync(file).mode & 0o777).toBe(0o600)
    }))

  it.effect("keeps one version per distinct content and records run membership", () =>
    Effect.gen(function*() {
      const file = yield* tempFile
      const result = yield* withStore(file, (store) =>
        Effect.gen(function*() {
          const r1 = yield* store.beginRun(scopeOf([]), false)
          yield* store.putRecords(r1, [version("a", 0, 3), version("b", 0)])
          yield* store.completeRun(r1, {})
          const a1 = yield* store.latestRecordVersion("a")
          const r2 = yield* store.beginRun(scopeOf([]), false)
          // a unchanged (kept), b changed, c new
          yield* store.putRecords(r2, [
            { kind: "keep", id: "a", vid: a1!.vid },
            version("b", 1),
            version("c", 0)
          ])
          yield* store.completeRun(r2, {})
          const rows = sqliteOf(store).prepare("SELECT id, count(*) AS n FROM records GROUP BY id ORDER BY id").all()
          const counts = yield* store.counts(r2)
          const activity = sqliteOf(store).prepare("SELECT count(*) AS n FROM activity").pluck().get()
          const lastRunOfA = sqliteOf(store).prepare("SELECT last_run FROM records WHERE id = 'a'").pluck().get()
          return { rows, counts, activity, lastRunOfA, r2 }
        })
      )
      expect(result.rows).toEqual([{ id: "a", n: 1 }, { id: "b", n: 2 }, { id: "c", n: 1 }])
      expect(result.counts).toEqual({ workspaces: 0, records: 3, activities: 3, files: 0 })
      expect(result.activity).toBe(3)
      expect(result.lastRunOfA).toBe(result.r2)
    }))

  it.effect("reuses the version id when content returns to an earlier state", () =>
    Effect.gen(function*() {
      const file = yield* tempFile
      const vids = yield* withStore(file, (store) =>
        Effect.gen(function*() {
          const out: Array<number> = []
          for (const v of [0, 1, 0]) {
            const r = yield* store.beginRun("*", false)
            yield* store.putRecords(r, [version("a", v)])
            yield* store.completeRun(r, {})
            out.push((yield* store.latestRecordVersion("a"))!.vid)
          }
          return out
        })
      )
      expect(vids[0]).toBe(vids[2])
      expect(vids[1]).not.toBe(vids[0])
    }))

  it.effect("marks a run left running by a killed process as failed when the next run begins", () =>
    Effect.gen(function*() {
      const file = yield* tempFile
      yield* withStore(file, (store) => Effect.asVoid(store.beginRun("*", false)))
      const runs = yield* withStore(file, (store) =>
        Effect.gen(function*() {
          const r = yield* store.beginRun("*", false)
          yield* store.putFiles(r, "w1", [fileOf("f1")])
          yield* store.completeRun(r, {})
          return yield* store.listRuns
        })
      )
      expect(runs.map((r) => r.status)).toEqual(["failed", "complete"])
      expect(runs[0]!.error).toMatch(/interrupted/)
    }))

  it.effect("a run that another process marked failed is never reported complete", () =>
    Effect.gen(function*() {
      const file = yield* tempFile
      const outcome = yield* withStore(file, (store) =>
        Effect.gen(function*() {
          const r = yield* store.beginRun("*", false)
          // A second writer (without the snapshot lock) takes this run for a killed one.
          yield* withOther(file, (other) => Effect.asVoid(other.beginRun("*", false)))
          return yield* Effect.result(store.completeRun(r, {}))
        })
      )
      expect(outcome._tag).toBe("Failure")
      expect(String((outcome as { failure: { message: string } }).failure.message)).toContain("run 1 is no longer running")
      const runs = yield* withStore(file, (store) => store.listRuns)
      expect(runs.map((r) => r.status)).toEqual(["failed", "running"])
    }))

  it("scope is order-independent and * for all workspaces", () => {
    expect(scopeOf([])).toBe("*")
    expect(scopeOf(["b", "a", "b"])).toBe("a,b")
  })
})
