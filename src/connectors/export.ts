/**
 * Export of one snapshot run to files: `records`, `activity`, `files` and
 * `workspaces`, as ndjson (the stored objects, one per line) or csv (flattened
 * columns). Rows stream from the store in a fixed order (by id; activity by record id
 * then service order) and are written in bounded batches, so memory stays flat.
 * Each file is written under a temporary name and renamed when complete. With the files
 * directory of `backup --files`, the run's file bytes are laid out under `files/` too
 * (export-files.ts).
 */
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import * as fs from "node:fs"
import * as path from "node:path"
import type { ObjectStoreApi } from "../store/object-store.ts"
import { type RunNotFound, resolveRun, type SnapshotError, SnapshotStore, type SnapshotStoreService } from "../store/snapshot.ts"
import { exportFiles, type FilesExport } from "./export-files.ts"
import { ACTIVITY_COLUMNS, type Column, csvField, csvLine, FILE_COLUMNS, RECORD_COLUMNS, WORKSPACE_COLUMNS } from "./export-columns.ts"

export type ExportFormat = "ndjson" | "csv"

export interface ExportOptions {
  readonly outDir: string
  readonly format: ExportFormat
  /** Run id; default the latest complete run. */
  readonly run?: string | undefined
  /** Prefix formula-like CSV cells (`=`, `+`, `-`, `@`) with an apostrophe. */
  readonly guardFormulas?: boolean | undefined
  /** Called after each written batch with the rows written so far in the current file. */
  readonly onProgress?: ((file: string, rows: number) => void) | undefined
  /** The files directory of `backup --files`: lay the run's file bytes out under `files/`. */
  readonly files?: ObjectStoreApi | undefined
}

export interface ExportResult {
  readonly runId: string
  readonly format: ExportFormat
  readonly files: ReadonlyArray<{ readonly name: string; readonly path: string; readonly rows: number }>
  /** With `files`: the file bytes written under `files/`, and the files that could not be. */
  readonly fileBytes?: FilesExport
}

/** Writing an export file failed. */
export class ExportError extends Data.TaggedError("ExportError")<{
  readonly file: string
  readonly detail: string
}> {
  override get message(): string {
    return `export: cannot write ${this.file}: ${this.detail}`
  }
}

/** There is no complete run to export. */
export class NothingToExport extends Data.TaggedError("NothingToExport")<{
  readonly file: string
}> {
  override get message(): string {
    return `snapshot ${this.file} has no complete run; run worksync backup first`
  }
}

interface Source {
  readonly name: "records" | "activity" | "files" | "workspaces"
  /** The stored objects (JSON text) the file holds, in its order. */
  readonly read: (store: SnapshotStoreService, runId: number) => Stream.Stream<string, SnapshotError>
  readonly columns: ReadonlyArray<Column>
}

const SOURCES: ReadonlyArray<Source> = [
  { name: "records", read: (store, runId) => store.runItems("records", runId), columns: RECORD_COLUMNS },
  { name: "activity", read: (store, runId) => store.runActivity(runId), columns: ACTIVITY_COLUMNS },
  { name: "files", read: (store, runId) => store.runItems("files", runId), columns: FILE_COLUMNS },
  { name: "workspaces", read: (store, runId) => store.runItems("workspaces", runId), columns: WORKSPACE_COLUMNS }
]

/** Rows per batch: one write each (and an interruption point between two). */
const BATCH = 2000

const writeOne = (
  store: SnapshotStoreService,
  source: Source,
  runId: number,
  target: string,
  format: ExportFormat,
  guard: boolean,
  onProgress: ((file: string, rows: number) => void) | undefined
): Effect.Effect<number, ExportError | SnapshotError> => {
  const temp = `${target}.partial`
  const wrap = <A>(f: () => A) =>
    Effect.try({ try: f, catch: (e) => new ExportError({ file: target, detail: (e as Error).message }) })
  return Effect.acquireUseRelease(
    wrap(() => fs.openSync(temp, "w", 0o600)),
    (fd) => {
      let count = 0
      const write = (text: string) => {
        if (text.length > 0) fs.writeSync(fd, text)
      }
      const parse = (json: string) => JSON.parse(json) as Record<string, unknown>
      return Effect.gen(function*() {
        if (format === "csv") write(`${source.columns.map((c) => csvField(c.name)).join(",")}\n`)
        yield* source.read(store, runId).pipe(
          Stream.grouped(BATCH),
          // One bounded batch per step: the fiber can be interrupted between batches. Each
          // batch is written as one string, at once: no line outlives its batch, so the
          // young generation's collections have nothing to promote and the heap stays small.
          Stream.runForEach((rows) =>
            wrap(() => {
              count += rows.length
              write(
                format === "ndjson"
                  ? `${rows.join("\n")}\n`
                  : rows.map((json) => csvLine(source.columns, parse(json), guard)).join("")
              )
              onProgress?.(source.name, count)
            })
          )
        )
        if (count === 0) onProgress?.(source.name, 0)
        yield* wrap(() => fs.fsyncSync(fd))
        return count
      })
    },
    (fd, exit) =>
      Effect.sync(() => {
        fs.closeSync(fd)
        if (exit._tag === "Success") fs.renameSync(temp, target)
        else fs.rmSync(temp, { force: true })
      })
  )
}

/** Writes the four export files of one run into `outDir`. */
export const exportRun = (
  store: SnapshotStoreService,
  options: ExportOptions
): Effect.Effect<ExportResult, ExportError | SnapshotError | RunNotFound | NothingToExport> =>
  Effect.gen(function*() {
    const run = yield* resolveRun(store, options.run)
    if (run === undefined) return yield* new NothingToExport({ file: store.file })
    yield* Effect.try({
      try: () => fs.mkdirSync(options.outDir, { recursive: true }),
      catch: (e) => new ExportError({ file: options.outDir, detail: (e as Error).message })
    })
    const files: Array<{ name: string; path: string; rows: number }> = []
    for (const source of SOURCES) {
      const target = path.join(options.outDir, `${source.name}.${options.format}`)
      const rows = yield* writeOne(
        store,
        source,
        run.id,
        target,
        options.format,
        options.guardFormulas === true,
        options.onProgress
      )
      files.push({ name: source.name, path: target, rows })
    }
    if (options.files === undefined) return { runId: String(run.id), format: options.format, files }
    const fileBytes = yield* exportFiles(store, run.id, options.outDir, options.files).pipe(
      Effect.catchTag("LocalIoError", (e) => Effect.fail(new ExportError({ file: e.path, detail: e.detail })))
    )
    return { runId: String(run.id), format: options.format, files, fileBytes }
  })

/** `exportRun` with the store from the context. */
export const exportSnapshot = (options: ExportOptions) => Effect.flatMap(SnapshotStore, (store) => exportRun(store, options))
