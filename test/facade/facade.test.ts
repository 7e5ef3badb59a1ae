/**
 * The Promise / AsyncIterable facade (src/facade): each operation against the emulator,
 * and failures that reject with the library's tagged errors unchanged.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type EmulatorHandle, startEmulator } from "../../src/emulator/index.ts"
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

const ROOT = new URL("../..", import.meta.url).pathname

let emu: EmulatorHandle
let ws: Worksync
let dir: string

const connectionOf = (e: EmulatorHandle) => ({
  restUrl: e.restUrl,
  baseUrl: e.baseUrl,
  token: e.token,
  tokenId: e.tokenId,
  tokenSecret: e.tokenSecret,
  org: e.org
})

beforeAll(async () => {
  emu = await startEmulator({ seed: { workspaces: 2, recordsPerWorkspace: 230 } })
  ws = connect(connectionOf(emu))
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "worksync-facade-"))
})
afterAll(async () => {
  await ws.close()
  await emu.close()
  fs.rmSync(dir, { recursive: true, force: true })
})

const collect = async <A>(it: AsyncIterable<A>): Promise<Array<A>> => {
  const out: Array<A> = []
  for await (const a of it) out.push(a)
  return out
}

describe("Promise facade", () => {
  it("R-REST-PAGE-04: records() pages list-records to the end as an AsyncIterable, each record once", async () => {
    const workspaceId = emu.workspaces[0]!
    // Whether list-records without `archived` includes archived records is left open by
    // the documents: both values are asked for, as a backup does.
    const records = [...await collect(ws.records({ workspaceId, archived: false })), ...await collect(ws.records({ workspaceId, archived: true }))]
    expect(records).toHaveLength(230)
    expect(new Set(records.map((r) => r.id)).size).toBe(230)
    expect((await collect(ws.workspaces())).map((w) => w.id).sort()).toEqual([...emu.workspaces].sort())
    expect((await collect(ws.files(workspaceId))).length).toBeGreaterThan(0)
  })

  it("leaving a for-await loop early stops the stream (no hang, no further pages needed)", async () => {
    let n = 0
    for await (const _ of ws.records({})) {
      if (++n === 5) break
    }
    expect(n).toBe(5)
  })

  it("backup, diff, the change stream and export, as Promises over one snapshot", async () => {
    const snapshot = path.join(dir, "snap.sqlite")
    let progressCalls = 0
    const first = await ws.backup({ snapshot, workspaces: [emu.workspaces[1]!], onProgress: () => void progressCalls++ })
    expect(first).toMatchObject({ runId: "1", workspaces: 1, records: 230, changes: { created: 230, updated: 0, deleted: 0 } })
    expect(progressCalls).toBeGreaterThan(0)

    const [touched] = emu.admin.touchRecords(1, emu.workspaces[1])
    const [deleted] = emu.admin.deleteRecords(1, emu.workspaces[1])
    await ws.backup({ snapshot, workspaces: [emu.workspaces[1]!] })

    const diff = await ws.diff({ snapshot })
    expect(diff.fromRun).toBe("1")
    expect(diff.toRun).toBe("2")
    expect(diff.records.deleted).toEqual([deleted])

    const changes: Array<Change> = await collect(snapshotChanges({ snapshot }))
    const removal = changes.find((c) => c.id === deleted)
    expect(removal).toMatchObject({ entity: "record", kind: "deleted", after: null })
    expect(removal?.before).toMatchObject({ id: deleted })
    expect(changes.filter((c) => c.entity === "record").map((c) => c.id).sort()).toEqual(
      [...diff.records.created, ...diff.records.updated, ...diff.records.deleted].sort()
    )
    expect(touched).toBeDefined()

    const exported = await ws.export({ snapshot, outDir: path.join(dir, "export") })
    expect(exported.files.find((f) => f.name === "records")?.rows).toBe(229)
    expect(await diffSnapshot({ snapshot, from: "1", to: "1" })).toMatchObject({ records: { created: [], updated: [], deleted: [] } })
  })

  it("importCsv (dry run, then for real) and copyFiles (workspace to directory)", async () => {
    const workspaceId = emu.admin.createWorkspace({ name: "Facade import" }).id
    const csv = path.join(ROOT, "examples", "data", "generic.csv")
    const dry = await ws.importCsv({ workspaceId, csv, preset: "generic", dryRun: true })
    expect(dry).toMatchObject({ rows: 3, created: 0, rejected: 0 })
    expect(emu.admin.countRecords(workspaceId)).toBe(0)
    const done = await ws.importCsv({ workspaceId, csv, preset: "generic", journal: path.join(dir, "import.sqlite"), rejectsFile: path.join(dir, "rejects.csv") })
    expect(done).toMatchObject({ rows: 3, created: 3, rejected: 0 })

    let bytes = 0
    const copied = await ws.copyFiles({
      from: `workspace:${emu.workspaces[0]}`,
      to: `dir:${path.join(dir, "files")}`,
      journal: path.join(dir, "files.sqlite"),
      onBytes: (n) => void (bytes += n)
    })
    expect(copied.failed).toBe(0)
    expect(copied.copied).toBeGreaterThan(0)
    expect(bytes).toBe(copied.bytes)
    expect(fs.existsSync(path.join(dir, "files", "manifest.ndjson"))).toBe(true)
  })

  it("failures reject with the tagged error itself: instanceof and _tag work, causes stay reachable, no token in messages", async () => {
    const denied = connect({ ...connectionOf(emu), token: "pat_wrong_token_for_the_facade_test" })
    try {
      const error = await denied.backup({ snapshot: path.join(dir, "denied.sqlite") }).then(() => undefined, (e: unknown) => e)
      expect(error).toBeInstanceOf(PageError)
      expect(isWorksyncError(error, "PageError")).toBe(true)
      expect(rootCause(error)).toBeInstanceOf(Unauthorized)
      expect(String((error as Error).message)).not.toContain("pat_wrong_token_for_the_facade_test")

      const iterError = await collect(denied.records({})).then(() => undefined, (e: unknown) => e)
      expect(isWorksyncError(iterError, "PageError")).toBe(true)
      expect((rootCause(iterError) as { _tag: string })._tag).toBe("Unauthorized")
    } finally {
      await denied.close()
    }

    const unknown = await ws.backup({ snapshot: path.join(dir, "unknown.sqlite"), workspaces: ["no-such-workspace"] }).then(
      () => undefined,
      (e: unknown) => e
    )
    expect(unknown).toBeInstanceOf(WorkspaceNotFound)
    expect((unknown as WorkspaceNotFound).workspace).toBe("no-such-workspace")

    const missing = await diffSnapshot({ snapshot: path.join(dir, "absent.sqlite") }).then(() => undefined, (e: unknown) => e)
    expect(isWorksyncError(missing, "StoreOpenError")).toBe(true)
  })
})
