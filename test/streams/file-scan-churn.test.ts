import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest"
import { type EmulatorHandle, startEmulator } from "../../src/emulator/index.ts"
import { insertFile } from "../../src/emulator/uploads/files.ts"
import { filesStream } from "../../src/streams/files.ts"
import { clientContext, type ClientCtx, listWorkspaceFiles } from "../connectors/files/_helpers.ts"
import { clientFor, collect } from "./helpers.ts"

let emu: EmulatorHandle
let client: ClientCtx
beforeAll(async () => {
  emu = await startEmulator({ seed: { workspaces: 2, recordsPerWorkspace: 1 } })
  // 260 files a workspace: three pages of list-files at its maximum page size.
  for (const ws of emu.workspaces) {
    for (let i = 0; i < 260; i++) {
      insertFile(emu.ctx, { name: `f${i}.txt`, size: 1, type: "text/plain", extension: "txt", orgId: emu.org, workspaceId: ws, status: "CONFIRMED" })
    }
  }
  client = await clientContext(emu)
})
afterAll(async () => {
  await client?.close()
  await emu?.close()
})
afterEach(() => {
  emu.faults.reset()
})

const fileIds = (ws: string) =>
  emu.ctx.db.prepare("SELECT id FROM files WHERE workspace_id = ?").pluck().all(ws) as Array<string>

/** Files present before and after the listing: those that existed throughout. */
const throughout = (before: ReadonlyArray<string>, after: ReadonlyArray<string>) => {
  const end = new Set(after)
  return before.filter((id) => end.has(id))
}

describe("file listings under churn", () => {
  it("R-REST-PAGE-04 R-REST-PAGE-08: copy-files' listing of a workspace whose files are deleted and added meanwhile misses no file that existed throughout", async () => {
    const ws = emu.workspaces[0]!
    const before = fileIds(ws)
    emu.faults.configure({ fileChurn: { insertsPerPage: 1, deletesPerPage: 3 } })
    const items = await listWorkspaceFiles(client, ws)
    emu.faults.reset()
    const got = new Set(items.map((f) => f.id))
    expect(got.size).toBe(items.length)
    expect(throughout(before, fileIds(ws)).filter((id) => !got.has(id)).slice(0, 5)).toEqual([])
  })

  it("R-REST-PAGE-08: the files stream (backup, library) with small pages under churn misses no file and repeats none", async () => {
    const ws = emu.workspaces[1]!
    const before = fileIds(ws)
    emu.faults.configure({ fileChurn: { insertsPerPage: 2, deletesPerPage: 2 } })
    const items = await collect(clientFor(emu), filesStream(ws, { limit: 20 }))
    emu.faults.reset()
    const got = new Set(items.map((f) => f.id))
    expect(got.size).toBe(items.length)
    expect(throughout(before, fileIds(ws)).filter((id) => !got.has(id)).slice(0, 5)).toEqual([])
  })
})
