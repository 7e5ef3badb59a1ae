/** Shared set-up of the file-copy tests: an emulator, client contexts, temp dirs. */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import { createHash } from "node:crypto"
import { afterAll, beforeAll } from "vitest"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { clientLayer } from "../../../src/client/layer.ts"
import { Uploads } from "../../../src/client/uploads.ts"
import { RestClient } from "../../../src/client/rest-client.ts"
import { copyFiles, type CopyFilesOptions, type CopySummary } from "../../../src/connectors/files/copy.ts"
import type { WorkspaceFiles } from "../../../src/connectors/files/ports.ts"
import { workspaceFilesFromServices } from "../../../src/connectors/files/workspace-files.ts"
import { type EmulatorHandle, startEmulator } from "../../../src/emulator/index.ts"
import { storageCredentialLog, storageKeyFor } from "../../../src/emulator/uploads/files.ts"
import { openJournal } from "../../../src/store/journal.ts"
import type { FileItem } from "../../../src/schema/files.ts"

export const tempDirs: Array<string> = []
export const tempDir = (label = "ws-copy-"): string => {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), label))
  tempDirs.push(d)
  return d
}
export const removeTempDirs = () => {
  for (const d of tempDirs.splice(0)) fs.rmSync(d, { recursive: true, force: true })
}

/** A client context (all services) for the emulator's OWNER, fast retries for tests. */
export const clientContext = (emu: EmulatorHandle) =>
  Effect.runPromise(
    Effect.gen(function*() {
      const scope = yield* Scope.make()
      const ctx = yield* Layer.buildWithScope(
        clientLayer({
          restUrl: emu.restUrl,
          baseUrl: emu.baseUrl,
          token: emu.token,
          tokenId: emu.tokenId,
          tokenSecret: emu.tokenSecret,
          org: emu.org,
          retry: { baseDelayMs: 5, capDelayMs: 50 },
          limiter: { initialRps: 1000 }
        }),
        scope
      )
      const files = yield* Effect.provide(workspaceFilesFromServices, ctx)
      return { ctx, files, close: () => Effect.runPromise(Scope.close(scope, Exit.void)) }
    })
  )

export type ClientCtx = Awaited<ReturnType<typeof clientContext>>

export const runCopy = (
  options: Omit<CopyFilesOptions, "journal"> & { readonly journalFile: string }
): Promise<CopySummary> =>
  Effect.runPromise(
    Effect.scoped(
      Effect.gen(function*() {
        const journal = yield* openJournal(options.journalFile)
        return yield* copyFiles({ ...options, journal })
      })
    )
  )

export const listWorkspaceFiles = (client: ClientCtx, workspaceId: string): Promise<ReadonlyArray<FileItem>> =>
  Effect.runPromise(Stream.runCollect(client.files.listFiles(workspaceId)).pipe(Effect.map((c) => [...c]))) as Promise<
    ReadonlyArray<FileItem>
  >

/** sha256 of a file's bytes downloaded through the client (serving URL and redirect). */
export const downloadSha = (files: WorkspaceFiles, uid: string, name: string): Promise<{ sha256: string; size: number }> =>
  Effect.runPromise(
    Stream.runFold(files.download({ uid, name }), { hash: createHash("sha256"), size: 0 }, (acc, bytes) => {
      acc.hash.update(bytes)
      acc.size += bytes.length
      return acc
    }).pipe(Effect.map((acc) => ({ sha256: acc.hash.digest("hex"), size: acc.size })))
  )

/** sha256 of the object the emulator stores for `uid` (read directly from its store). */
export const storedSha = async (emu: EmulatorHandle, uid: string): Promise<string> => {
  const hash = createHash("sha256")
  for await (const chunk of emu.ctx.objects.read(storageKeyFor(uid))) hash.update(chunk as Buffer)
  return hash.digest("hex")
}

export const credentialLog = (emu: EmulatorHandle) => storageCredentialLog(emu.ctx)

/** Uploads bytes as a CONFIRMED file of `workspaceId` through the real presigned flow. */
export const uploadBytes = (client: ClientCtx, workspaceId: string, name: string, bytes: Uint8Array) =>
  Effect.runPromise(
    Effect.gen(function*() {
      const uploads = yield* Uploads
      const r = yield* uploads.upload(
        { name, size: bytes.length, body: { _tag: "Bytes", bytes } },
        { workspaceId, filename: name }
      )
      return r.uid
    }).pipe(Effect.provide(client.ctx))
  )

/** Deterministic pseudo-random bytes (sha256 counter stream), fast enough for tens of MB. */
export const patternBytes = (label: string, size: number): Buffer => {
  const out = Buffer.alloc(size)
  const block = createHash("sha256").update(label).digest()
  // Fill with a repeating 4 KB block, varied per block index so a shifted copy differs.
  const page = Buffer.alloc(4096)
  for (let i = 0; i < 4096; i += 32) block.copy(page, i, 0, Math.min(32, 4096 - i))
  for (let offset = 0, n = 0; offset < size; offset += 4096, n++) {
    page.writeUInt32BE(n, 0)
    page.copy(out, offset, 0, Math.min(4096, size - offset))
  }
  return out
}

export const sha256 = (bytes: Uint8Array): string => createHash("sha256").update(bytes).digest("hex")

export { Context, RestClient }

/**
 * Registers the file's fixture: a demo-seeded emulator and a client to it, started
 * before the tests and stopped (with the temp dirs removed) after them.
 */
export const useDemoEmulator = (set: (emu: EmulatorHandle, client: ClientCtx) => void) => {
  let emu: EmulatorHandle | undefined
  let client: ClientCtx | undefined
  beforeAll(async () => {
    const started = await startEmulator({ seed: "demo" })
    emu = started
    client = await clientContext(started)
    set(started, client)
  })
  afterAll(async () => {
    await client?.close()
    await emu?.close()
    removeTempDirs()
  })
}
