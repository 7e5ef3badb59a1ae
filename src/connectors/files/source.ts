/**
 * The source side of a copy: what it holds and the bytes of each file.
 */
import * as NodeStream from "@effect/platform-node/NodeStream"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import * as fs from "node:fs"
import * as path from "node:path"
import type { FileItem } from "../../schema/files.ts"
import { ScanUnstable } from "../../streams/stable-scan.ts"
import { detailOf, LocalIoError } from "./errors.ts"
import type { SourceFile } from "./plan.ts"
import type { WorkspaceFiles } from "./ports.ts"
import type { Endpoint } from "./spec.ts"
import { walkDirectory, type WalkOptions } from "./walk.ts"

export interface SourceListing {
  readonly files: ReadonlyArray<SourceFile>
  /** Names of source files left out because they are still PENDING (not servable). */
  readonly pending: ReadonlyArray<string>
  /**
   * Set when the workspace's listing could not be verified complete (it kept changing
   * behind the reading): `files` holds every file it read, and may miss some.
   */
  readonly unverified: ScanUnstable | null
}

/** CONFIRMED files of a workspace (PENDING ones reported), or the files of a directory tree. */
export const listSource = (
  from: Endpoint,
  source: WorkspaceFiles | undefined,
  filter: WalkOptions = {}
): Effect.Effect<SourceListing, unknown> => {
  if (from.kind === "dir") {
    return Effect.tryPromise({
      try: () => walkDirectory(from.path, filter),
      catch: (e) => new LocalIoError({ path: from.path, operation: "list source directory", detail: detailOf(e) })
    }).pipe(
      Effect.map((local): SourceListing => ({
        files: local.map((f): SourceFile => ({ kind: "dir", root: from.path, relPath: f.relPath, size: f.size })),
        pending: [],
        unverified: null
      }))
    )
  }
  // A listing that cannot be verified still gave every file it read (the scan emits as it
  // reads): those are copied, and the caller says the listing may be short.
  const read: Array<FileItem> = []
  return Stream.runForEach(source!.listFiles(from.workspaceId), (item) => Effect.sync(() => void read.push(item))).pipe(
    Effect.as<ScanUnstable | null>(null),
    Effect.catchIf((e): e is ScanUnstable => e instanceof ScanUnstable, (e) => Effect.succeed(e)),
    Effect.map((unverified): SourceListing => {
      const files: Array<SourceFile> = []
      const pending: Array<string> = []
      const seen = new Set<string>()
      for (const item of read) {
        // Offset paging may repeat an item when the listing shifts under us.
        if (seen.has(item.uid)) continue
        seen.add(item.uid)
        // Only CONFIRMED files are served (R-FILE-STATUS-07).
        if (item.status === "CONFIRMED") {
          files.push({
            kind: "workspace",
            workspaceId: from.workspaceId,
            id: item.id,
            uid: item.uid,
            name: item.name,
            size: item.size
          })
        } else {
          pending.push(item.name)
        }
      }
      return { files, pending, unverified }
    })
  )
}

/** The bytes of a source file as a stream; each run of the stream reads afresh. */
export const openSource = (
  source: WorkspaceFiles | undefined,
  file: SourceFile
): Stream.Stream<Uint8Array, unknown> => {
  if (file.kind === "workspace") return source!.download({ uid: file.uid, name: file.name })
  const local = path.join(file.root, ...file.relPath.split("/"))
  return NodeStream.fromReadable({
    evaluate: () => fs.createReadStream(local, { highWaterMark: 256 * 1024 }),
    onError: (e) => new LocalIoError({ path: local, operation: "read", detail: detailOf(e) })
  })
}
