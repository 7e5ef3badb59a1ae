/**
 * Shared set-up of the file-copy tests, as Effects and Layers: an emulator with a client
 * to it (`FilesClient`), copies and reads that run in the test's fiber, scoped temp dirs.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import { createHash } from "node:crypto"
import { clientLayer } from "../../../src/client/layer.ts"
import { Uploads } from "../../../src/client/uploads.ts"
import { copyFiles, type CopyFilesOptions } from "../../../src/connectors/files/copy.ts"
import type { WorkspaceFiles } from "../../../src/connectors/files/ports.ts"
import { workspaceFilesFromServices } from "../../../src/connectors/files/workspace-files.ts"
import type { EmulatorHandle, EmulatorOptions } from "../../../src/emulator/index.ts"
import { insertFile, storageCredentialLog, storageKeyFor } from "../../../src/emulator/uploads/files.ts"
import { isDiskObjectStore } from "../../../src/emulator/uploads/object-store.ts"
import { openJournal } from "../../../src/store/journal.ts"
import type { FileItem } from "../../../src/schema/files.ts"
import { Emulator, emulatorLayer, tempDir as scopedTempDir } from "../../support/effect.ts"

export { Emulator }

/** A temporary directory removed when the test's scope closes. */
export const tempDir = (label = "ws-copy-") => scopedTempDir(label)

/** The client services built for the emulator's OWNER. */
export type ClientServices = Layer.Success<ReturnType<typeof clientLayer>>

/** A client to the file's emulator: its services and the files port built on them. */
export class FilesClient extends Context.Service<FilesClient, {
  readonly ctx: Context.Context<ClientServices>
  readonly files: WorkspaceFiles
}>()("test/FilesClient") {}

export type ClientCtx = Context.Service.Shape<typeof FilesClient>

/** The client of the emulator in context, fast retries for tests; released with the layer. */
export const filesClientLayer: Layer.Layer<FilesClient, never, Emulator> = Layer.effect(
  FilesClient,
  Effect.gen(function*() {
    const emu = yield* Emulator
    const ctx = yield* Layer.build(
      clientLayer({
        restUrl: emu.restUrl,
        baseUrl: emu.baseUrl,
        token: emu.token,
        tokenId: emu.tokenId,
        tokenSecret: emu.tokenSecret,
        org: emu.org,
        retry: { baseDelayMs: 5, capDelayMs: 50 },
        limiter: { initialRps: 1000 }
      })
    )
    const files = yield* Effect.provide(workspaceFilesFromServices, ctx)
    return { ctx, files }
  })
)

/** The file's fixture: an emulator seeded as asked and a client to it, shared by its tests. */
export const emulatorWithClient = (options: EmulatorOptions = { seed: "demo" }): Layer.Layer<Emulator | FilesClient> =>
  filesClientLayer.pipe(Layer.provideMerge(emulatorLayer(options)))

export const runCopy = (options: Omit<CopyFilesOptions, "journal"> & { readonly journalFile: string }) =>
  Effect.scoped(
    Effect.gen(function*() {
      const journal = yield* openJournal(options.journalFile)
      return yield* copyFiles({ ...options, journal })
    })
  )

/** Every file of a workspace, as the client lists it. */
export const listFiles = (client: Pick<ClientCtx, "files">, workspaceId: string): Effect.Effect<ReadonlyArray<FileItem>, unknown> =>
  Stream.runCollect(client.files.listFiles(workspaceId)).pipe(Effect.map((c) => [...c]))

/** sha256 of a file's bytes downloaded through the client (serving URL and redirect). */
export const downloadSha = (files: WorkspaceFiles, uid: string, name: string) =>
  Stream.runFold(files.download({ uid, name }), () => ({ hash: createHash("sha256"), size: 0 }), (acc, bytes) => {
    acc.hash.update(bytes)
    acc.size += bytes.length
    return acc
  }).pipe(Effect.map((acc) => ({ sha256: acc.hash.digest("hex"), size: acc.size })))

/** sha256 of the object the emulator stores for `uid` (read directly from its store). */
export const storedSha = (emu: EmulatorHandle, uid: string): Effect.Effect<string> =>
  Effect.promise(async () => {
    const hash = createHash("sha256")
    for await (const chunk of emu.ctx.objects.read(storageKeyFor(uid))) hash.update(chunk as Buffer)
    return hash.digest("hex")
  })

export const credentialLog = (emu: EmulatorHandle) => storageCredentialLog(emu.ctx)

/** Uploads bytes as a CONFIRMED file of `workspaceId` through the real presigned flow. */
export const uploadBytes = (client: ClientCtx, workspaceId: string, name: string, bytes: Uint8Array) =>
  Effect.gen(function*() {
    const uploads = yield* Uploads
    const r = yield* uploads.upload(
      { name, size: bytes.length, body: { _tag: "Bytes", bytes } },
      { workspaceId, filename: name }
    )
    return r.uid
  }).pipe(Effect.provide(client.ctx))

/**
 * `count` small CONFIRMED files (`f0.txt`, ...) written straight into the emulator's
 * tables and storage, for listings of many files; returns their uids.
 */
export const seedConfirmedFiles = (emu: EmulatorHandle, workspaceId: string, count: number): Array<string> => {
  const store = emu.ctx.objects
  if (!isDiskObjectStore(store)) throw new Error("the emulator's object store is not on disk")
  return Array.from({ length: count }, (_, i) => {
    const bytes = Buffer.from(`file ${i}\n`)
    const file = insertFile(emu.ctx, {
      name: `f${i}.txt`,
      size: bytes.length,
      type: "text/plain",
      extension: "txt",
      orgId: emu.org,
      workspaceId,
      status: "CONFIRMED"
    })
    store.putBytes(storageKeyFor(file.uid), bytes)
    return file.uid
  })
}

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

/**
 * Promise-based client and listing, for the files-stream churn test outside this folder
 * (test/streams), which still drives its emulator from `beforeAll`. The tests here use
 * `FilesClient` and `listFiles`.
 */
export const clientContext = (emu: EmulatorHandle) =>
  Effect.runPromise(
    Effect.gen(function*() {
      const scope = yield* Scope.make()
      const client = yield* Layer.buildWithScope(filesClientLayer, scope).pipe(
        Effect.provideService(Emulator, emu),
        Effect.map(Context.get(FilesClient))
      )
      return { ...client, close: () => Effect.runPromise(Scope.close(scope, Exit.void)) }
    })
  )

export const listWorkspaceFiles = (client: Pick<ClientCtx, "files">, workspaceId: string): Promise<ReadonlyArray<FileItem>> =>
  Effect.runPromise(listFiles(client, workspaceId))
