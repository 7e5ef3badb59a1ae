/**
 * A local directory as a copy target. Each file is streamed into a scratch file under
 * `.worksync-tmp/`, checked against its declared size, then renamed into place, so a
 * file at its final name is always whole; its manifest line follows.
 *
 * A rename replaces a symbolic link at the final name rather than writing through it,
 * and the scratch directory must be a real directory: nothing is ever written outside
 * the target directory.
 */
import * as NodeSink from "@effect/platform-node/NodeSink"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import { createHash } from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"
import { type Digest, tapDigestStream } from "./digest.ts"
import { detailOf, LocalIoError, SizeMismatch, UnsafeLocalPath } from "./errors.ts"
import { type Manifest, type ManifestLine, openManifest } from "./manifest.ts"
import { resolveInside, TEMP_DIR } from "./safe-name.ts"

export interface DirTarget {
  readonly root: string
  readonly manifest: Manifest
  /** Names already present in the directory (top level), for collision avoidance. */
  readonly existingNames: ReadonlyArray<string>
  /**
   * Streams `body` to `root/localName`; fails with SizeMismatch (nothing left behind) when
   * the byte count differs from `expectedSize`.
   */
  readonly write: <E, R>(
    localName: string,
    displayName: string,
    body: Stream.Stream<Uint8Array, E, R>,
    expectedSize: number,
    onBytes?: (n: number) => void
  ) => Effect.Effect<Digest, E | LocalIoError | SizeMismatch | UnsafeLocalPath, R>
  readonly record: (line: ManifestLine) => Effect.Effect<void, LocalIoError>
}

const io = (file: string, operation: string) => (error: unknown) =>
  new LocalIoError({ path: file, operation, detail: detailOf(error) })

/** Opens `root` (created if missing) as a copy target for the scope. */
export const openDirTarget = (root: string): Effect.Effect<DirTarget, LocalIoError, Scope.Scope> =>
  Effect.gen(function*() {
    const absRoot = path.resolve(root)
    const scratch = path.join(absRoot, TEMP_DIR)
    yield* Effect.try({
      try: () => {
        fs.mkdirSync(absRoot, { recursive: true })
        const stat = fs.lstatSync(absRoot)
        if (!stat.isDirectory()) throw new Error("not a directory")
        try {
          fs.mkdirSync(scratch)
        } catch (e) {
          if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e
        }
        if (!fs.lstatSync(scratch).isDirectory()) throw new Error(`${TEMP_DIR} exists and is not a directory`)
      },
      catch: io(absRoot, "open target directory")
    })
    const manifest = yield* Effect.acquireRelease(
      Effect.try({ try: () => openManifest(absRoot), catch: io(path.join(absRoot, "manifest.ndjson"), "open") }),
      (m) =>
        Effect.sync(() => {
          m.close()
          // Leave no scratch directory behind when nothing is half-written.
          try {
            fs.rmdirSync(scratch)
          } catch {
            // Not empty (an interrupted write) or already gone.
          }
        })
    )
    const existingNames = yield* Effect.try({
      try: () => fs.readdirSync(absRoot).filter((n) => n !== TEMP_DIR),
      catch: io(absRoot, "list")
    })

    const write: DirTarget["write"] = (localName, displayName, body, expectedSize, onBytes) =>
      Effect.gen(function*() {
        const final = resolveInside(absRoot, localName)
        if (final === null) return yield* Effect.fail(new UnsafeLocalPath({ name: displayName, root: absRoot }))
        const temp = path.join(scratch, `${createHash("sha256").update(localName).digest("hex").slice(0, 24)}.part`)
        const tapped = tapDigestStream(body, onBytes)
        const cleanup = Effect.sync(() => fs.rmSync(temp, { force: true }))
        yield* Stream.run(
          tapped.stream,
          NodeSink.fromWritable({ evaluate: () => fs.createWriteStream(temp), onError: io(temp, "write") })
        ).pipe(Effect.onError(() => cleanup))
        const digest = tapped.digest()
        if (digest.size !== expectedSize) {
          yield* cleanup
          return yield* Effect.fail(
            new SizeMismatch({ name: displayName, stage: "download", expected: expectedSize, actual: digest.size })
          )
        }
        yield* Effect.try({ try: () => fs.renameSync(temp, final), catch: io(final, "rename into place") }).pipe(
          Effect.onError(() => cleanup)
        )
        return digest
      })

    return {
      root: absRoot,
      manifest,
      existingNames,
      write,
      record: (line) => Effect.try({ try: () => manifest.append(line), catch: io(manifest.file, "append") })
    }
  })
