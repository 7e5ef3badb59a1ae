/**
 * A confirm that fails without a definite answer must not lead to a second upload: the
 * first object may have landed, and the service's reconciliation confirms it too.
 */
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as path from "node:path"
import { reconcileOnce } from "../../../src/emulator/uploads/reconcile.ts"
import {
  Emulator,
  emulatorWithClient,
  FilesClient,
  listFiles,
  patternBytes,
  runCopy,
  tempDir,
  uploadBytes
} from "./_helpers.ts"

// The copies talk to the emulator over real HTTP with real retry waits: the tests run on
// the live clock (no TestClock), which `excludeTestServices` gives the layer's `it.effect`.
layer(emulatorWithClient({ seed: "empty" }), { timeout: 30_000, excludeTestServices: true })(
  "copy-files: only a definite answer to a confirm decides a new upload",
  (it) => {
    it.effect("R-UPLOAD-PRESIGN-15 R-FILE-STATUS-04: PUT landed with its answer lost, every confirm dropped: no second upload; the rerun confirms the first, one CONFIRMED copy after the service's reconciliation", () =>
      Effect.gen(function*() {
        const emu = yield* Emulator
        const client = yield* FilesClient
        const from = emu.workspaces[0]!
        const to = emu.admin.createWorkspace({ name: "confirm-target" }).id
        yield* uploadBytes(client, from, "landed.bin", patternBytes("landed", 64 * 1024))
        const options = {
          from: { kind: "workspace", workspaceId: from },
          to: { kind: "workspace", workspaceId: to },
          source: client.files,
          target: client.files,
          journalFile: path.join(yield* tempDir(), "j.sqlite"),
          concurrency: 1,
          uploadStrategy: "presign"
        } as const
        // The bytes land but the PUT's answer is lost; then no confirm gets an answer.
        emu.faults.inject({ route: /^\/o\//, kind: "ambiguous" })
        emu.faults.inject({ route: /^\/uploads\/[^/]+\/confirm$/, kind: "drop", times: 1000 })
        const first = yield* runCopy(options).pipe(Effect.ensuring(Effect.sync(() => emu.faults.reset())))
        expect(first.failed).toBe(1)
        // The service's own reconciliation confirms every object that landed.
        reconcileOnce(emu.ctx)
        const second = yield* runCopy(options)
        expect(second).toMatchObject({ copied: 1, failed: 0 })
        reconcileOnce(emu.ctx)
        const copies = (yield* listFiles(client, to)).filter((f) => f.name === "landed.bin")
        expect(copies.map((f) => f.status)).toEqual(["CONFIRMED"])
      }))

    it.effect("R-UPLOAD-PRESIGN-15: a confirm answered 401 once is no answer: no second upload, the rerun confirms the first, one copy", () =>
      Effect.gen(function*() {
        const emu = yield* Emulator
        const client = yield* FilesClient
        const from = emu.workspaces[0]!
        const to = emu.admin.createWorkspace({ name: "confirm-401" }).id
        yield* uploadBytes(client, from, "refused.bin", patternBytes("refused", 32 * 1024))
        const options = {
          from: { kind: "workspace", workspaceId: from },
          to: { kind: "workspace", workspaceId: to },
          source: client.files,
          target: client.files,
          journalFile: path.join(yield* tempDir(), "j.sqlite"),
          concurrency: 1,
          uploadStrategy: "presign"
        } as const
        // The bytes land but the PUT's answer is lost; the confirm that asks is refused with a 401.
        emu.faults.inject({ route: /^\/o\//, kind: "ambiguous" })
        emu.faults.inject({ route: /^\/uploads\/[^/]+\/confirm$/, kind: "401" })
        const first = yield* runCopy(options).pipe(Effect.ensuring(Effect.sync(() => emu.faults.reset())))
        expect(first.failed).toBe(1)
        reconcileOnce(emu.ctx)
        const second = yield* runCopy(options)
        expect(second).toMatchObject({ copied: 1, failed: 0 })
        reconcileOnce(emu.ctx)
        const copies = (yield* listFiles(client, to)).filter((f) => f.name === "refused.bin")
        expect(copies.map((f) => f.status)).toEqual(["CONFIRMED"])
      }))
  }
)
