/**
 * `export --files DIR`: the bytes a run holds (`backup --files DIR`) laid out as
 * copy-files lays out a workspace: `OUT/files/<workspace>/<safe name>` with a
 * `manifest.ndjson` per workspace (`{"id", "uid", "name", "path", "size", "sha256"}`).
 *
 * Names come from the server, so each is made a safe, unique path component
 * (files/safe-name.ts) and written through the directory target of copy-files
 * (files/dir-target.ts), which never writes outside its directory. Every object is
 * verified as it is read (its bytes must hash to its name) and against the file's size.
 *
 * The layout is built in `OUT/files.partial` and replaces `OUT/files` at the end, so an
 * export cut short leaves the previous layout, never half of one. A file the run holds no
 * bytes for, or whose object is missing or damaged, is reported and the others are written.
 */
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import * as fs from "node:fs"
import * as path from "node:path"
import type { ObjectStoreApi } from "../store/object-store.ts"
import type { SnapshotError, SnapshotStoreService } from "../store/snapshot.ts"
import { type DirTarget, openDirTarget } from "./files/dir-target.ts"
import { detailOf, LocalIoError } from "./files/errors.ts"
import { SafeNamer } from "./files/safe-name.ts"

export interface FilesExport {
  /** Files written. */
  readonly written: number
  readonly bytes: number
  /** CONFIRMED files of the run not written, each named with why. */
  readonly failed: ReadonlyArray<string>
}

/** The directory `export --files` writes under OUT. */
export const FILES_DIR = "files"

const io = (file: string, operation: string) => (e: unknown) => new LocalIoError({ path: file, operation, detail: detailOf(e) })

/** Writes the run's file bytes under `outDir/files`. */
export const exportFiles = (
  store: SnapshotStoreService,
  runId: number,
  outDir: string,
  objects: ObjectStoreApi,
  onFile?: (bytes: number) => void
): Effect.Effect<FilesExport, SnapshotError | LocalIoError> =>
  Effect.gen(function*() {
    const final = path.join(outDir, FILES_DIR)
    const partial = `${final}.partial`
    yield* Effect.try({ try: () => fs.rmSync(partial, { recursive: true, force: true }), catch: io(partial, "clear") })
    const result = yield* Effect.scoped(Effect.gen(function*() {
      const workspaceNames = new SafeNamer()
      const targets = new Map<string, { readonly target: DirTarget; readonly names: SafeNamer }>()
      const targetOf = (workspaceId: string) =>
        Effect.gen(function*() {
          const known = targets.get(workspaceId)
          if (known !== undefined) return known
          const made = { target: yield* openDirTarget(path.join(partial, workspaceNames.next(workspaceId))), names: new SafeNamer() }
          targets.set(workspaceId, made)
          return made
        })
      let written = 0
      let bytes = 0
      const failed: Array<string> = []
      yield* store.runFileObjects(runId, "workspace").pipe(
        Stream.runForEach((row) =>
          Effect.gen(function*() {
            const item = JSON.parse(row.item) as { uid?: unknown; name?: unknown; size?: unknown; status?: unknown }
            // PENDING files have no bytes anywhere (R-FILE-STATUS-07).
            if (item.status !== "CONFIRMED") return
            const name = typeof item.name === "string" ? item.name : row.id
            const label = `file ${row.id} (${JSON.stringify(name)})`
            if (row.sha256 === null) return void failed.push(`${label}: the run holds no bytes for it`)
            const { target, names } = yield* targetOf(row.workspaceId)
            const localName = names.next(name)
            const size = typeof item.size === "number" ? item.size : -1
            const wrote = yield* Effect.result(target.write(localName, name, objects.open(row.sha256), size))
            if (wrote._tag === "Failure") {
              // A local write failure is not this file's: it ends the export.
              if (wrote.failure instanceof LocalIoError) return yield* Effect.fail(wrote.failure)
              return void failed.push(`${label}: ${detailOf(wrote.failure)}`)
            }
            yield* target.record({
              id: row.id,
              uid: typeof item.uid === "string" ? item.uid : null,
              name,
              path: localName,
              size: wrote.success.size,
              sha256: wrote.success.sha256
            })
            written++
            bytes += wrote.success.size
            onFile?.(wrote.success.size)
          })
        )
      )
      return { written, bytes, failed }
    }))
    yield* Effect.try({
      try: () => {
        fs.mkdirSync(partial, { recursive: true })
        fs.rmSync(final, { recursive: true, force: true })
        fs.renameSync(partial, final)
      },
      catch: io(final, "move into place")
    })
    return result
  }).pipe(Effect.onError(() => Effect.sync(() => fs.rmSync(path.join(outDir, `${FILES_DIR}.partial`), { recursive: true, force: true }))))
