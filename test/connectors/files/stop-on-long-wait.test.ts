/**
 * copy-files stops starting files once the service asks for a wait above --max-retry-wait:
 * every other file would meet the same wait. What was not started waits for the rerun.
 */
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { Emulator, emulatorWithClient, FilesClient, listFiles, runCopy, tempDir } from "./_helpers.ts"

// Real HTTP to the emulator: the layer's tests run on the live clock (`excludeTestServices`).
layer(emulatorWithClient({ seed: "empty" }), { timeout: 30_000, excludeTestServices: true })(
  "copy-files: a wait above the cap stops the run",
  (it) => {
    it.effect("R-REST-ERR-05: a 429 asking for an hour fails its file at once and no other file starts; the rerun copies them all", () =>
      Effect.gen(function*() {
        const emu = yield* Emulator
        const client = yield* FilesClient
        const to = emu.admin.createWorkspace({ name: "long-wait" }).id
        const dir = yield* tempDir()
        for (const n of ["a", "b", "c", "d"]) fs.writeFileSync(path.join(dir, `${n}.txt`), `file ${n}`)
        const options = {
          from: { kind: "dir", path: dir },
          to: { kind: "workspace", workspaceId: to },
          target: client.files,
          journalFile: path.join(yield* tempDir(), "j.sqlite"),
          concurrency: 1,
          uploadStrategy: "presign"
        } as const
        emu.faults.inject({ route: "/uploads", kind: "429", retryAfter: 3600 })
        const first = yield* runCopy(options)
        emu.faults.reset()
        expect(first).toMatchObject({ files: 4, copied: 0, failed: 1 })
        expect(first.stopped?.notStarted).toBe(3)
        expect(first.stopped?.reason).toContain("asked to wait 1 h 0 min")
        const second = yield* runCopy(options)
        expect(second).toMatchObject({ files: 4, copied: 4, failed: 0 })
        expect((yield* listFiles(client, to)).map((f) => f.name).sort()).toEqual(["a.txt", "b.txt", "c.txt", "d.txt"])
      }))
  }
)
