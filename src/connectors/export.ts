/**
 * Export of one snapshot run to files: `records`, `activity`, `files` and
 * `workspaces`, as ndjson (the stored objects, one per line) or csv (flattened
 * columns). Rows stream from the store in a fixed order (by id; activity by record id
 * then service order) and are written in bounded batches, so memory stays flat. On a
 * SQLite snapshot, large files are read and made into lines on threads while this one
 * writes them (export-threads.ts): the same bytes, batches and failures.
 * Each file is written under a temporary name, and all are renamed when all are complete. With the files
 * directory of `backup --files`, the run's file bytes are laid out under `files/` too
 * (export-files.ts).
 */
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import * as fs from "node:fs"
import * as os from "node:os"
import type * as Scope from "effect/Scope"
import * as path from "node:path"
import type { ObjectStoreApi } from "../store/object-store.ts"
import { isPostgresUrl } from "../store/postgres-url.ts"
import { type ExportReader, holdWrites, type IdRange, openExportReader, type RangeEntity } from "../store/snapshot-export.ts"
import { type RunNotFound, resolveRun, SnapshotError, SnapshotStore, type SnapshotStoreService } from "../store/snapshot.ts"
import { COLUMNS_OF, csvField, type ExportFormat, linesOf } from "./export-columns.ts"
import { exportFiles, type FilesExport } from "./export-files.ts"
import { type ExportThreads, openExportThreads, ThreadFailure, type ThreadStart } from "./export-threads.ts"

export type { ExportFormat }

export interface ExportOptions {
  readonly outDir: string
  readonly format: ExportFormat
  /** Run id; default the latest complete run. */
  readonly run?: string | undefined
  /** Prefix formula-like CSV cells (`=`, `+`, `-`, `@`) with an apostrophe. */
  readonly guardFormulas?: boolean | undefined
  /**
   * Called after each written batch with the rows written so far in that file. Two files
   * may be written at once (one made on the threads, one here): their calls interleave.
   */
  readonly onProgress?: ((file: string, rows: number) => void) | undefined
  /** The files directory of `backup --files`: lay the run's file bytes out under `files/`. */
  readonly files?: ObjectStoreApi | undefined
  /**
   * Read and format on threads (a SQLite snapshot only): true always, false never;
   * by default for files of many rows.
   */
  readonly threads?: boolean | undefined
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
  /** What the file holds, one row per member, for an export on threads; activity has several per record. */
  readonly entity?: RangeEntity
}

const SOURCES: ReadonlyArray<Source> = [
  { name: "records", read: (store, runId) => store.runItems("records", runId), entity: "records" },
  { name: "activity", read: (store, runId) => store.runActivity(runId) },
  { name: "files", read: (store, runId) => store.runItems("files", runId), entity: "files" },
  { name: "workspaces", read: (store, runId) => store.runItems("workspaces", runId), entity: "workspaces" }
]

/** Rows per batch: one write each (and an interruption point between two); on threads, rows per range. */
const BATCH = 2000

/**
 * Files from this many batches on are written on threads (export-threads.ts), when the
 * snapshot is a SQLite file: for fewer, starting the threads costs more than it saves.
 */
const THREADS_MIN_BATCHES = 10

/**
 * Threads reading and formatting, on a machine of two cores or more: reading and making
 * lines is nearly all of an export's CPU, the writing thread needs little, and each
 * thread more would hold some 30 MB more.
 */
const THREADS = 2

/**
 * How long the export waits for a writer at work (a mirror's batch, a backup's) to let its
 * threads begin reading one state of the file; past it, it exports on one thread.
 */
const HOLD_WAIT_MS = 5000

/** Writes `text` (or bytes) to `fd` whole. */
const writeAll = (fd: number, chunk: string | Uint8Array) => {
  if (typeof chunk === "string") {
    if (chunk.length > 0) fs.writeSync(fd, chunk)
    return
  }
  for (let at = 0; at < chunk.length;) at += fs.writeSync(fd, chunk, at, chunk.length - at)
}

/** Writes one batch of lines, with its number of rows. */
type Sink = (chunk: string | Uint8Array, rows: number) => void

/** Where an export file is written until every file of the export is complete. */
const partialOf = (target: string) => `${target}.partial`

/**
 * Writes one export file under its partial name (`partialOf`): the header, then what
 * `fill` gives the sink, synced; removed when it fails. The export renames it once every
 * file is complete.
 */
const writeOne = <E>(
  target: string,
  name: Source["name"],
  header: string,
  fill: (sink: Sink) => Effect.Effect<void, E | ExportError>,
  onProgress: ((file: string, rows: number) => void) | undefined
): Effect.Effect<number, E | ExportError> => {
  const temp = partialOf(target)
  const wrap = <A>(f: () => A) =>
    Effect.try({ try: f, catch: (e) => new ExportError({ file: target, detail: (e as Error).message }) })
  return Effect.acquireUseRelease(
    wrap(() => fs.openSync(temp, "w", 0o600)),
    (fd) => {
      let count = 0
      return Effect.gen(function*() {
        yield* wrap(() => writeAll(fd, header))
        yield* fill((chunk, rows) => {
          writeAll(fd, chunk)
          count += rows
          onProgress?.(name, count)
        })
        if (count === 0) onProgress?.(name, 0)
        // On libuv's pool: another file's lines are made meanwhile.
        yield* Effect.callback<void, ExportError>((resume) => {
          fs.fsync(fd, (e) =>
            resume(e === null ? Effect.void : Effect.fail(new ExportError({ file: target, detail: e.message }))))
        })
        return count
      })
    },
    (fd, exit) =>
      Effect.sync(() => {
        fs.closeSync(fd)
        if (exit._tag !== "Success") fs.rmSync(temp, { force: true })
      })
  )
}

/** The file's rows read on this thread, a batch at a time, made into lines here. */
const fillHere = (
  store: SnapshotStoreService,
  source: Source,
  runId: number,
  target: string,
  format: ExportFormat,
  guard: boolean
) =>
(sink: Sink): Effect.Effect<void, ExportError | SnapshotError> =>
  source.read(store, runId).pipe(
    Stream.grouped(BATCH),
    // One bounded batch per step: the fiber can be interrupted between batches. Each
    // batch is written as one string, at once: no line outlives its batch, so the
    // young generation's collections have nothing to promote and the heap stays small.
    Stream.runForEach((rows) =>
      Effect.try({
        try: () => sink(linesOf(format, COLUMNS_OF[source.name], rows, guard), rows.length),
        catch: (e) => new ExportError({ file: target, detail: (e as Error).message })
      })
    )
  )

/** The file's ranges read and made into lines on the threads, written here in order. */
const fillOnThreads = (
  threads: ExportThreads,
  store: SnapshotStoreService,
  entity: RangeEntity,
  ranges: Iterator<IdRange, void>,
  target: string
) =>
(sink: Sink): Effect.Effect<void, ExportError | SnapshotError> =>
  Effect.tryPromise({
    try: (signal) => threads.write(entity, ranges, sink, signal),
    // What failed is named as on one thread: a read is the store's, the rest the file's.
    catch: (e) =>
      e instanceof ThreadFailure && e.stage === "read"
        ? new SnapshotError({ file: store.file, operation: `read the run's ${entity}`, detail: e.message })
        : new ExportError({ file: target, detail: e instanceof Error ? e.message : String(e) })
  })

/**
 * What an export on threads needs, opened for the scope when the store is a SQLite file: a
 * read-only connection that cuts the files into ranges, and the threads, started when a
 * file first needs them. The threads' read transactions and this connection's begin while
 * writers are held off, so all of them read one state of the file; when that cannot be (no
 * thread to be had, no lock within HOLD_WAIT_MS), `threads` gives undefined and the export
 * reads on one thread, as before.
 */
const threadsFor = (
  store: SnapshotStoreService,
  start: ThreadStart
): Effect.Effect<
  | { readonly reader: ExportReader; readonly threads: Effect.Effect<ExportThreads | undefined, never, Scope.Scope> }
  | undefined,
  never,
  Scope.Scope
> =>
  isPostgresUrl(store.file)
    ? Effect.succeed(undefined)
    : Effect.gen(function*() {
      const reader = yield* Effect.acquireRelease(
        Effect.sync(() => {
          try {
            return openExportReader(store.file)
          } catch {
            return undefined
          }
        }),
        (r) => Effect.sync(() => r?.close())
      )
      if (reader === undefined) return undefined
      const begun = async (): Promise<ExportThreads | undefined> => {
        const threads = openExportThreads(start, THREADS)
        if (threads === undefined) return undefined
        try {
          await threads.ready()
          const release = holdWrites(store.file, HOLD_WAIT_MS)
          try {
            reader.begin()
            await threads.begin()
          } finally {
            release()
          }
          return threads
        } catch {
          await threads.close()
          return undefined
        }
      }
      const threads = yield* Effect.cached(
        Effect.acquireRelease(Effect.promise(begun), (t) => Effect.promise(() => t?.close() ?? Promise.resolve()))
      )
      return { reader, threads }
    })

/** Writes the four export files of one run into `outDir`. */
export const exportRun = (
  store: SnapshotStoreService,
  options: ExportOptions
): Effect.Effect<ExportResult, ExportError | SnapshotError | RunNotFound | NothingToExport> =>
  Effect.scoped(Effect.gen(function*() {
    const run = yield* resolveRun(store, options.run)
    if (run === undefined) return yield* new NothingToExport({ file: store.file })
    yield* Effect.try({
      try: () => fs.mkdirSync(options.outDir, { recursive: true }),
      catch: (e) => new ExportError({ file: options.outDir, detail: (e as Error).message })
    })
    const guard = options.guardFormulas === true
    const format = options.format
    const onThreads = options.threads === false || (options.threads === undefined && os.availableParallelism() < THREADS)
      ? undefined
      : yield* threadsFor(store, { file: store.file, runId: run.id, format, guard })
    // Two lanes, each writing its files one after the other: the files made on the threads,
    // and those made here, which this thread makes while it waits for the threads' lines
    // (an export on one thread has the second lane only).
    const lanes: Record<"threads" | "here", Array<Effect.Effect<void, ExportError | SnapshotError>>> = { threads: [], here: [] }
    const rowsOf = new Map<Source["name"], number>()
    const targets = SOURCES.map((source) => path.join(options.outDir, `${source.name}.${format}`))
    for (const [i, source] of SOURCES.entries()) {
      const target = targets[i]!
      const header = format === "csv" ? `${COLUMNS_OF[source.name].map((c) => csvField(c.name)).join(",")}\n` : ""
      let fill = fillHere(store, source, run.id, target, format, guard)
      let lane: keyof typeof lanes = "here"
      if (onThreads !== undefined && source.entity !== undefined) {
        const entity = source.entity
        const large = options.threads === true || (yield* Effect.try({
          try: () => onThreads.reader.holds(entity, run.id, THREADS_MIN_BATCHES * BATCH),
          catch: (e) => new SnapshotError({ file: store.file, operation: `read the run's ${entity}`, detail: (e as Error).message })
        }))
        const threads = large ? yield* onThreads.threads : undefined
        if (threads !== undefined) {
          fill = fillOnThreads(threads, store, entity, onThreads.reader.ranges(entity, run.id, BATCH), target)
          lane = "threads"
        }
      }
      lanes[lane].push(
        Effect.map(writeOne(target, source.name, header, fill, options.onProgress), (rows) => void rowsOf.set(source.name, rows))
      )
    }
    const removePartials = Effect.sync(() => targets.forEach((target) => fs.rmSync(partialOf(target), { force: true })))
    // Every file is renamed once all are complete, and none when one fails: a failed export
    // leaves the files of an earlier one in the directory as they were, never a mix of runs.
    yield* Effect.all([Effect.all(lanes.threads, { discard: true }), Effect.all(lanes.here, { discard: true })], {
      concurrency: 2,
      discard: true
    }).pipe(Effect.onError(() => removePartials))
    let renaming = ""
    yield* Effect.try({
      try: () => targets.forEach((target) => fs.renameSync(partialOf(renaming = target), target)),
      catch: (e) => new ExportError({ file: renaming, detail: (e as Error).message })
    }).pipe(Effect.onError(() => removePartials))
    const files = SOURCES.map((source, i) => ({ name: source.name, path: targets[i]!, rows: rowsOf.get(source.name) ?? 0 }))
    if (options.files === undefined) return { runId: String(run.id), format: options.format, files }
    const fileBytes = yield* exportFiles(store, run.id, options.outDir, options.files).pipe(
      Effect.catchTag("LocalIoError", (e) => Effect.fail(new ExportError({ file: e.path, detail: e.detail })))
    )
    return { runId: String(run.id), format: options.format, files, fileBytes }
  }))

/** `exportRun` with the store from the context. */
export const exportSnapshot = (options: ExportOptions) => Effect.flatMap(SnapshotStore, (store) => exportRun(store, options))
