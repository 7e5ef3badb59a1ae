/**
 * A confirm that fails without a definite answer must not lead to a second upload: the
 * first object may have landed, and the service's reconciliation confirms it too.
 */
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type EmulatorHandle, startEmulator } from "../../../src/emulator/index.ts"
import { reconcileOnce } from "../../../src/emulator/uploads/reconcile.ts"
import {
  type ClientCtx,
  clientContext,
  listWorkspaceFiles,
  patternBytes,
  removeTempDirs,
  runCopy,
  tempDir,
  uploadBytes
} from "./_helpers.ts"

let emu: EmulatorHandle
let client: ClientCtx
beforeAll(async () => {
  emu = await startEmulator({ seed: "empty" })
  client = await clientContext(emu)
})
afterAll(async () => {
  await client?.close()
  await emu?.close()
  removeTempDirs()
})

describe("copy-files: only a definite answer to a confirm decides a new upload", () => {
  it("R-UPLOAD-PRESIGN-15 R-FILE-STATUS-04: PUT landed with its answer lost, every confirm dropped: no second upload; the rerun confirms the first, one CONFIRMED copy after the service's reconciliation", async () => {
    const from = emu.workspaces[0]!
    const to = emu.admin.createWorkspace({ name: "confirm-target" }).id
    await uploadBytes(client, from, "landed.bin", patternBytes("landed", 64 * 1024))
    const options = {
      from: { kind: "workspace", workspaceId: from },
      to: { kind: "workspace", workspaceId: to },
      source: client.files,
      target: client.files,
      journalFile: path.join(tempDir(), "j.sqlite"),
      concurrency: 1,
      uploadStrategy: "presign"
    } as const
    // The bytes land but the PUT's answer is lost; then no confirm gets an answer.
    emu.faults.inject({ route: /^\/o\//, kind: "ambiguous" })
    emu.faults.inject({ route: /^\/uploads\/[^/]+\/confirm$/, kind: "drop", times: 1000 })
    try {
      const first = await runCopy(options)
      expect(first.failed).toBe(1)
    } finally {
      emu.faults.reset()
    }
    // The service's own reconciliation confirms every object that landed.
    reconcileOnce(emu.ctx)
    const second = await runCopy(options)
    expect(second).toMatchObject({ copied: 1, failed: 0 })
    reconcileOnce(emu.ctx)
    const copies = (await listWorkspaceFiles(client, to)).filter((f) => f.name === "landed.bin")
    expect(copies.map((f) => f.status)).toEqual(["CONFIRMED"])
  })

  it("R-UPLOAD-PRESIGN-15: a confirm answered 401 once is no answer: no second upload, the rerun confirms the first, one copy", async () => {
    const from = emu.workspaces[0]!
    const to = emu.admin.createWorkspace({ name: "confirm-401" }).id
    await uploadBytes(client, from, "refused.bin", patternBytes("refused", 32 * 1024))
    const options = {
      from: { kind: "workspace", workspaceId: from },
      to: { kind: "workspace", workspaceId: to },
      source: client.files,
      target: client.files,
      journalFile: path.join(tempDir(), "j.sqlite"),
      concurrency: 1,
      uploadStrategy: "presign"
    } as const
    // The bytes land but the PUT's answer is lost; the confirm that asks is refused with a 401.
    emu.faults.inject({ route: /^\/o\//, kind: "ambiguous" })
    emu.faults.inject({ route: /^\/uploads\/[^/]+\/confirm$/, kind: "401" })
    try {
      const first = await runCopy(options)
      expect(first.failed).toBe(1)
    } finally {
      emu.faults.reset()
    }
    reconcileOnce(emu.ctx)
    const second = await runCopy(options)
    expect(second).toMatchObject({ copied: 1, failed: 0 })
    reconcileOnce(emu.ctx)
    const copies = (await listWorkspaceFiles(client, to)).filter((f) => f.name === "refused.bin")
    expect(copies.map((f) => f.status)).toEqual(["CONFIRMED"])
  })
})
