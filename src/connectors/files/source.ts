/**
 * The source side of a copy: what it holds and the bytes of each file.
 */
import * as NodeStream from "@effect/platform-node/NodeStream"
import * as Effect from "effect/Effect"
import * as Predicate from "effect/Predicate"
import * as Stream from "effect/Stream"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import type { FileItem } from "../../schema/files.ts"
import type { ObjectStoreApi } from "../../store/object-store.ts"
import { openScratchKeys } from "../../store/scratch-keys.ts"
import { StoreOpenError } from "../../store/sqlite.ts"
import { ScanUnstable } from "../../streams/stable-scan.ts"
import { detailOf, LocalIoError, SourceMissing } from "./errors.ts"
import type { SourceFile } from "./plan.ts"
import type { WorkspaceFiles } from "./ports.ts"
import type { Endpoint } from "./spec.ts"
import { walkFiles, type WalkOptions } from "./walk.ts"

/** What a listing found besides its files, which `listSource` hands on a page at a time. */
export interface SourceListing {
  /** How many files were handed on. */
  readonly files: number
  /** Names of source files left out because they are still PENDING (not servable). */
  readonly pending: ReadonlyArray<string>
  /**
   * Set when the workspace's listing could not be verified complete (it kept changing
   * behind the reading): the files handed on are every file it read, and may miss some.
   */
  readonly unverified: ScanUnstable | null
}

/** Files handed to `listSource`'s caller at a time. */
export const LISTING_PAGE = 500

/**
 * CONFIRMED files of a workspace (PENDING ones reported), or the files of a directory tree,
 * handed to `onPage` in listing order a page of at most LISTING_PAGE at a time, as they are
 * read: nothing of a file is held once its page is handed on (a workspace's uids seen,
 * against the repeats of offset paging, are kept in a scratch file until the listing ends).
 */
export const listSource = <E>(
  from: Endpoint,
  source: WorkspaceFiles | undefined,
  filter: WalkOptions,
  onPage: (files: ReadonlyArray<SourceFile>) => Effect.Effect<void, E>
): Effect.Effect<SourceListing, unknown> =>
  Effect.scoped(Effect.gen(function*() {
    let page: Array<SourceFile> = []
    let files = 0
    const add = (file: SourceFile): Effect.Effect<void, E> => {
      page.push(file)
      files++
      return page.length < LISTING_PAGE ? Effect.void : flush
    }
    const flush = Effect.suspend(() => {
      if (page.length === 0) return Effect.void
      const full = page
      page = []
      return onPage(full)
    })
    if (from.kind === "dir") {
      const walk = Stream.fromAsyncIterable(
        walkFiles(from.path, filter),
        (e) => new LocalIoError({ path: from.path, operation: "list source directory", detail: detailOf(e) })
      )
      yield* Stream.runForEach(walk, (f) => add({ kind: "dir", root: from.path, relPath: f.relPath, size: f.size }))
      yield* flush
      return { files, pending: [], unverified: null }
    }
    const seen = yield* Effect.acquireRelease(
      Effect.try({
        try: () => openScratchKeys("copy-listing"),
        catch: (e) => new StoreOpenError({ file: `a scratch file in ${os.tmpdir()}`, reason: "io", detail: detailOf(e) })
      }),
      (keys) => Effect.sync(keys.remove)
    )
    const pending: Array<string> = []
    // A listing that cannot be verified still gave every file it read: those are copied,
    // and the caller says the listing may be short.
    const unverified = yield* eachListed(source!, from.workspaceId, (item) => {
      // Offset paging may repeat an item when the listing shifts under us.
      if (!seen.see(item.uid)) return Effect.void
      // Only CONFIRMED files are served (R-FILE-STATUS-07).
      if (item.status !== "CONFIRMED") return Effect.sync(() => void pending.push(item.name))
      return add({
        kind: "workspace",
        workspaceId: from.workspaceId,
        id: item.id,
        uid: item.uid,
        name: item.name,
        size: item.size
      })
    })
    yield* flush
    return { files, pending, unverified }
  }))

/**
 * Runs `f` on every file item of a workspace's listing as read (repeats included), and
 * says whether it could be verified complete. A listing that cannot be verified still
 * gives every item it read (the scan emits as it reads): `unverified` says it may be short.
 */
const eachListed = <E>(
  source: WorkspaceFiles,
  workspaceId: string,
  f: (item: FileItem) => Effect.Effect<void, E>
): Effect.Effect<ScanUnstable | null, unknown> =>
  Stream.runForEach(source.listFiles(workspaceId), f).pipe(
    Effect.as<ScanUnstable | null>(null),
    Effect.catchIf((e): e is ScanUnstable => e instanceof ScanUnstable, (e) => Effect.succeed(e))
  )

/**
 * Every file item of a workspace's listing as read (repeats included), and whether it
 * could be verified complete. A listing that cannot be verified still gives every item it
 * read (the scan emits as it reads): `unverified` says it may be short.
 */
export const readListing = (
  source: WorkspaceFiles,
  workspaceId: string
): Effect.Effect<{ readonly items: ReadonlyArray<FileItem>; readonly unverified: ScanUnstable | null }, unknown> => {
  const items: Array<FileItem> = []
  return Effect.map(
    eachListed(source, workspaceId, (item) => Effect.sync(() => void items.push(item))),
    (unverified) => ({ items, unverified })
  )
}

/**
 * HTTP answers to a download that say the file is not there. The documents show what a
 * uid without a name gets (404, R-FILE-SERVE-06), not what the uid of a deleted file
 * gets: 404 or 410 from the serving URL, or a redirect to storage that answers 404 (or
 * 403, as a store does that hides which keys exist) are all plausible. None proves the
 * file was deleted: the copy confirms it with the listing (deleted-at-source.ts).
 */
const NOT_THERE_STATUSES: ReadonlySet<number> = new Set([403, 404, 410])

/** Whether a download's failure says the file is not there (see NOT_THERE_STATUSES). */
export const saysNotThere = (e: unknown): boolean =>
  (Predicate.isTagged(e, "UploadRejected") || Predicate.isTagged(e, "UnexpectedStatus")) &&
  Predicate.hasProperty(e, "status") && typeof e.status === "number" && NOT_THERE_STATUSES.has(e.status)

/** A local file that is not there (anymore): removed, or a directory on its path removed. */
const isNoEntry = (e: unknown): boolean => {
  const code = typeof e === "object" && e !== null && "code" in e ? e.code : undefined
  return code === "ENOENT" || code === "ENOTDIR"
}

const localPathOf = (file: Extract<SourceFile, { kind: "dir" }>): string =>
  path.join(file.root, ...file.relPath.split("/"))

/**
 * The bytes of a source file as a stream; each run of the stream reads afresh. A source
 * that says the file is not there fails with `SourceMissing`.
 *
 * An object of a files directory (`objects`, held by the caller) is read by its sha256
 * and verified on the way; its last chunk is handed on only once every byte hashed to
 * the name, so an upload of a damaged object is cut short (one byte under its declared
 * size) and the service never holds it whole. A missing or damaged object is
 * `SourceMissing`: no attempt can do better.
 */
export const openSource = (
  source: WorkspaceFiles | undefined,
  file: SourceFile,
  objects?: ObjectStoreApi
): Stream.Stream<Uint8Array, unknown> => {
  if (file.kind === "object") {
    if (objects === undefined) return Stream.fail(new SourceMissing({ name: file.name, detail: "no files directory to read its bytes from" }))
    return objects.open(file.sha256).pipe(
      Stream.zipWithNext,
      Stream.map(([chunk]) => chunk),
      Stream.mapError((e) => (e._tag === "ObjectCorrupt" ? new SourceMissing({ name: file.name, detail: e.message }) : e))
    )
  }
  if (file.kind === "workspace") {
    return source!.download({ uid: file.uid, name: file.name }).pipe(
      Stream.mapError((e) => (saysNotThere(e) ? new SourceMissing({ name: file.name, detail: detailOf(e) }) : e))
    )
  }
  const local = localPathOf(file)
  return NodeStream.fromReadable({
    evaluate: () => fs.createReadStream(local, { highWaterMark: 256 * 1024 }),
    onError: (e) =>
      isNoEntry(e)
        ? new SourceMissing({ name: file.relPath, detail: detailOf(e) })
        : new LocalIoError({ path: local, operation: "read", detail: detailOf(e) })
  })
}

/** Whether a directory's file is still on disk. */
export const onDisk = (file: Extract<SourceFile, { kind: "dir" }>): Effect.Effect<boolean, LocalIoError> => {
  const local = localPathOf(file)
  return Effect.tryPromise({
    try: () => fs.promises.stat(local).then(() => true, (e: unknown) => (isNoEntry(e) ? false : Promise.reject(e))),
    catch: (e) => new LocalIoError({ path: local, operation: "look at", detail: detailOf(e) })
  })
}
