/**
 * The Promise / AsyncIterable facade (src/facade): each operation against the emulator,
 * and failures that reject with the library's tagged errors unchanged.
 */
import { expect, layer } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as fs from "node:fs"
import * as path from "node:path"
import type { EmulatorHandle } from "../../src/emulator/index.ts"
import {
  type Change,
  connect,
  diffSnapshot,
  isWorksyncError,
  PageError,
  rootCause,
  snapshotChanges,
  Unauthorized,
  type Worksync,
  WorkspaceNotFound
} from "../../src/facade/index.ts"
import { Emulator, emulatorLayer, tempDir } from "../support/effect.ts"

const ROOT = new URL("../..", import.meta.url).pathname

const connectionOf = (e: EmulatorHandle) => ({
  restUrl: e.restUrl,
  baseUrl: e.baseUrl,
  token: e.token,
  tokenId: e.tokenId,
  tokenSecret: e.tokenSecret,
  org: e.org
})

/** The facade connected to the file's emulator, closed before the emulator is. */
class Facade extends Context.Service<Facade, Worksync>()("test/facade/Facade") {}
/** A directory shared by the tests of the file. */
class Dir extends Context.Service<Dir, string>()("test/facade/Dir") {}

const facadeLayer = Layer.effect(
  Facade,
  Effect.acquireRelease(
    Effect.map(Emulator, (emu) => connect(connectionOf(emu))),
    (ws) => Effect.promise(() => ws.close())
  )
)

const testLayer = Layer.merge(
  Layer.provideMerge(facadeLayer, emulatorLayer({ seed: { workspaces: 2, recordsPerWorkspace: 230 } })),
  Layer.effect(Dir, tempDir("worksync-facade-"))
)

const collect = async <A>(it: AsyncIterable<A>): Promise<Array<A>> => {
  const out: Array<A> = []
  for await (const a of it) out.push(a)
  return out
}

/** `collect` as an Effect. */
const collected = <A>(it: AsyncIterable<A>) => Effect.promise(() => collect(it))

// Real HTTP to the emulator: the live clock (no TestClock).
layer(testLayer, { timeout: 30_000, excludeTestServices: true })("Promise facade", (it) => {
  it.effect("R-REST-PAGE-04: records() pages list-records to the end as an AsyncIterable, each record once", () =>
    Effect.gen(function*() {
      const emu = yield* Emulator
      const ws = yield* Facade
      const workspaceId = emu.workspaces[0]!
      // Whether list-records without `archived` includes archived records is left open by
      // the documents: both values are asked for, as a backup does.
      const records = [...yield* collected(ws.records({ workspaceId, archived: false })), ...yield* collected(ws.records({ workspaceId, archived: true }))]
      expect(records).toHaveLength(230)
      expect(new Set(records.map((r) => r.id)).size).toBe(230)
      expect((yield* collected(ws.workspaces())).map((w) => w.id).sort()).toEqual([...emu.workspaces].sort())
      expect((yield* collected(ws.files(workspaceId))).length).toBeGreaterThan(0)
    }))

  it.effect("leaving a for-await loop early stops the stream (no hang, no further pages needed)", () =>
    Effect.gen(function*() {
      const ws = yield* Facade
      const n = yield* Effect.promise(async () => {
        let n = 0
        for await (const _ of ws.records({})) {
          if (++n === 5) break
        }
        return n
      })
      expect(n).toBe(5)
    }))

  it.effect("backup, diff, the change stream and export, as Promises over one snapshot", () =>
    Effect.gen(function*() {
      const emu = yield* Emulator
      const ws = yield* Facade
      const dir = yield* Dir
      const snapshot = path.join(dir, "snap.sqlite")
      let progressCalls = 0
      const first = yield* Effect.promise(() => ws.backup({ snapshot, workspaces: [emu.workspaces[1]!], onProgress: () => void progressCalls++ }))
      expect(first).toMatchObject({ runId: "1", workspaces: 1, records: 230, changes: { created: 230, updated: 0, deleted: 0 } })
      expect(progressCalls).toBeGreaterThan(0)

      const [touched] = emu.admin.touchRecords(1, emu.workspaces[1])
      const [deleted] = emu.admin.deleteRecords(1, emu.workspaces[1])
      yield* Effect.promise(() => ws.backup({ snapshot, workspaces: [emu.workspaces[1]!] }))

      const diff = yield* Effect.promise(() => ws.diff({ snapshot }))
      expect(diff.fromRun).toBe("1")
      expect(diff.toRun).toBe("2")
      expect(diff.records.deleted).toEqual([deleted])

      const changes: Array<Change> = yield* collected(snapshotChanges({ snapshot }))
      const removal = changes.find((c) => c.id === deleted)
      expect(removal).toMatchObject({ entity: "record", kind: "deleted", after: null })
      expect(removal?.before).toMatchObject({ id: deleted })
      expect(changes.filter((c) => c.entity === "record").map((c) => c.id).sort()).toEqual(
        [...diff.records.created, ...diff.records.updated, ...diff.records.deleted].sort()
      )
      expect(touched).toBeDefined()

      const exported = yield* Effect.promise(() => ws.export({ snapshot, outDir: path.join(dir, "export") }))
      expect(exported.files.find((f) => f.name === "records")?.rows).toBe(229)
      expect(yield* Effect.promise(() => diffSnapshot({ snapshot, from: "1", to: "1" }))).toMatchObject({ records: { created: [], updated: [], deleted: [] } })
    }))

  it.effect("importCsv (dry run, then for real) and copyFiles (workspace to directory)", () =>
    Effect.gen(function*() {
      const emu = yield* Emulator
      const ws = yield* Facade
      const dir = yield* Dir
      const workspaceId = emu.admin.createWorkspace({ name: "Facade import" }).id
      const csv = path.join(ROOT, "examples", "data", "generic.csv")
      const dry = yield* Effect.promise(() => ws.importCsv({ workspaceId, csv, preset: "generic", dryRun: true }))
      expect(dry).toMatchObject({ rows: 3, created: 0, rejected: 0 })
      expect(emu.admin.countRecords(workspaceId)).toBe(0)
      const done = yield* Effect.promise(() =>
        ws.importCsv({ workspaceId, csv, preset: "generic", journal: path.join(dir, "import.sqlite"), rejectsFile: path.join(dir, "rejects.csv") })
      )
      expect(done).toMatchObject({ rows: 3, created: 3, rejected: 0 })

      let bytes = 0
      const copied = yield* Effect.promise(() =>
        ws.copyFiles({
          from: `workspace:${emu.workspaces[0]}`,
          to: `dir:${path.join(dir, "files")}`,
          journal: path.join(dir, "files.sqlite"),
          onBytes: (n) => void (bytes += n)
        })
      )
      expect(copied.failed).toBe(0)
      expect(copied.copied).toBeGreaterThan(0)
      expect(bytes).toBe(copied.bytes)
      expect(fs.existsSync(path.join(dir, "files", "manifest.ndjson"))).toBe(true)
    }))

  it.effect("failures reject with the tagged error itself: instanceof and _tag work, causes stay reachable, no token in messages", () =>
    Effect.gen(function*() {
      const emu = yield* Emulator
      const ws = yield* Facade
      const dir = yield* Dir
      const denied = connect({ ...connectionOf(emu), token: "pat_wrong_token_for_the_facade_test" })
      yield* Effect.gen(function*() {
        const error = yield* Effect.promise(() => denied.backup({ snapshot: path.join(dir, "denied.sqlite") }).then(() => undefined, (e: unknown) => e))
        expect(error).toBeInstanceOf(PageError)
        expect(isWorksyncError(error, "PageError")).toBe(true)
        expect(rootCause(error)).toBeInstanceOf(Unauthorized)
        expect(String((error as Error).message)).not.toContain("pat_wrong_token_for_the_facade_test")

        const iterError = yield* Effect.promise(() => collect(denied.records({})).then(() => undefined, (e: unknown) => e))
        expect(isWorksyncError(iterError, "PageError")).toBe(true)
        expect((rootCause(iterError) as { _tag: string })._tag).toBe("Unauthorized")
      }).pipe(Effect.ensuring(Effect.promise(() => denied.close())))

      const unknown = yield* Effect.promise(() =>
        ws.backup({ snapshot: path.join(dir, "unknown.sqlite"), workspaces: ["no-such-workspace"] }).then(
          () => undefined,
          (e: unknown) => e
        )
      )
      expect(unknown).toBeInstanceOf(WorkspaceNotFound)
      expect((unknown as WorkspaceNotFound).workspace).toBe("no-such-workspace")

      const missing = yield* Effect.promise(() => diffSnapshot({ snapshot: path.join(dir, "absent.sqlite") }).then(() => undefined, (e: unknown) => e))
      expect(isWorksyncError(missing, "StoreOpenError")).toBe(true)
    }))
})
