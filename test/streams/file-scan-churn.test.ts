import { expect, layer } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import { workspaceFilesFromServices } from "../../src/connectors/files/workspace-files.ts"
import type { EmulatorHandle } from "../../src/emulator/index.ts"
import { insertFile } from "../../src/emulator/uploads/files.ts"
import { filesStream } from "../../src/streams/files.ts"
import { Emulator, emulatorLayer } from "../support/effect.ts"
import { clientFor, collect, emulatorWithFaultReset } from "./helpers.ts"

/** The emulator with 260 files a workspace: three pages of list-files at its maximum page size. */
const emulatorWithFiles = emulatorLayer({ seed: { workspaces: 2, recordsPerWorkspace: 1 } }).pipe(
  Layer.tap((context) =>
    Effect.sync(() => {
      const emu = Context.get(context, Emulator)
      for (const ws of emu.workspaces) {
        for (let i = 0; i < 260; i++) {
          insertFile(emu.ctx, { name: `f${i}.txt`, size: 1, type: "text/plain", extension: "txt", orgId: emu.org, workspaceId: ws, status: "CONFIRMED" })
        }
      }
    })
  )
)

/** copy-files' listing of a workspace: the files port over a client configured as copy-files' tests configure it. */
const listWorkspaceFiles = (emu: EmulatorHandle, workspaceId: string) =>
  Effect.gen(function*() {
    const files = yield* workspaceFilesFromServices
    return [...yield* Stream.runCollect(files.listFiles(workspaceId))]
  }).pipe(Effect.provide(clientFor(emu, { retry: { baseDelayMs: 5, capDelayMs: 50 }, limiter: { initialRps: 1000 } })))

const fileIds = (emu: EmulatorHandle, ws: string) =>
  emu.ctx.db.prepare("SELECT id FROM files WHERE workspace_id = ?").pluck().all(ws) as Array<string>

/** Files present before and after the listing: those that existed throughout. */
const throughout = (before: ReadonlyArray<string>, after: ReadonlyArray<string>) => {
  const end = new Set(after)
  return before.filter((id) => end.has(id))
}

// No TestClock: the client's retries and timeouts run on real time against a real server.
layer(emulatorWithFiles, { timeout: 30_000, excludeTestServices: true })("file listings under churn", (it) => {
  it.effect("R-REST-PAGE-04 R-REST-PAGE-08: copy-files' listing of a workspace whose files are deleted and added meanwhile misses no file that existed throughout", () =>
    Effect.gen(function*() {
      const emu = yield* emulatorWithFaultReset
      const ws = emu.workspaces[0]!
      const before = fileIds(emu, ws)
      emu.faults.configure({ fileChurn: { insertsPerPage: 1, deletesPerPage: 3 } })
      const items = yield* listWorkspaceFiles(emu, ws)
      emu.faults.reset()
      const got = new Set(items.map((f) => f.id))
      expect(got.size).toBe(items.length)
      expect(throughout(before, fileIds(emu, ws)).filter((id) => !got.has(id)).slice(0, 5)).toEqual([])
    }))

  it.effect("R-REST-PAGE-08: the files stream (backup, library) with small pages under churn misses no file and repeats none", () =>
    Effect.gen(function*() {
      const emu = yield* emulatorWithFaultReset
      const ws = emu.workspaces[1]!
      const before = fileIds(emu, ws)
      emu.faults.configure({ fileChurn: { insertsPerPage: 2, deletesPerPage: 2 } })
      const items = yield* collect(clientFor(emu), filesStream(ws, { limit: 20 }))
      emu.faults.reset()
      const got = new Set(items.map((f) => f.id))
      expect(got.size).toBe(items.length)
      expect(throughout(before, fileIds(emu, ws)).filter((id) => !got.has(id)).slice(0, 5)).toEqual([])
    }))
})
