/**
 * worksync for programs that do not use Effect: Promises and AsyncIterables over the main
 * operations (backup, diff, change stream, paging, CSV import, file copy, export).
 *
 *     import { connect } from "worksync/promise"
 *     const ws = connect({ restUrl, baseUrl, token, tokenId, tokenSecret, org })
 *     try {
 *       const run = await ws.backup({ snapshot: "backup.sqlite" })
 *       for await (const change of ws.changes({ snapshot: "backup.sqlite" })) { ... }
 *       for await (const record of ws.records({ workspaceId })) { ... }
 *     } finally {
 *       await ws.close()
 *     }
 *
 * A failure rejects with the library's tagged error itself (see errors.ts): check
 * `error._tag` ("Unauthorized", "RateLimited", "WorkspaceNotFound", ...) or `instanceof`.
 * One connection (pool, rate limiter, retries) serves every call until `close()`.
 */
import * as Cause from "effect/Cause"
import type * as Arr from "effect/Array"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Stream from "effect/Stream"
import type { ConnectionInput } from "../client/config.ts"
import { clientLayer, type ClientServices } from "../client/layer.ts"
import { RestClient } from "../client/rest-client.ts"
import { GraphqlClient } from "../client/graphql-client.ts"
import { importCsv as importCsvEffect } from "../connectors/csv/import.ts"
import type { ImportResult } from "../connectors/csv/result.ts"
import type { Field } from "../connectors/csv/mapping.ts"
import type { PresetName } from "../connectors/csv/presets.ts"
import { type ExportFormat, type ExportResult, exportSnapshot as exportEffect } from "../connectors/export.ts"
import { copyFiles as copyEffect, type CopySummary, type UploadStrategy } from "../connectors/files/copy.ts"
import type { Endpoint } from "../connectors/files/spec.ts"
import { workspaceFilesFromServices } from "../connectors/files/workspace-files.ts"
import type { FileItem } from "../schema/files.ts"
import type { ListRecordsInput } from "../schema/inputs.ts"
import type { RecordSummary } from "../schema/records.ts"
import type { Workspace } from "../schema/workspaces.ts"
import { openJournal, Journal } from "../store/journal.ts"
import { SnapshotStore } from "../store/snapshot.ts"
import { listsStream, workspacesStream } from "../streams/directory.ts"
import { filesStream } from "../streams/files.ts"
import { listRecordsStream } from "../streams/records.ts"
import { backup as backupEffect, type BackupResult } from "../sync/backup.ts"
import { type Change, changesBetween } from "../sync/changes.ts"
import { diff as diffEffect, type DiffResult } from "../sync/diff.ts"

export * from "./errors.ts"
export type { BackupResult, Change, ConnectionInput, CopySummary, DiffResult, ExportResult, FileItem, ImportResult, RecordSummary, Workspace }

/** Runs an Effect to a Promise that rejects with the failure itself (tag intact), not a wrapper. */
const settle = <A, E>(exit: Exit.Exit<A, E>): A => {
  if (Exit.isSuccess(exit)) return exit.value
  throw Cause.squash(exit.cause)
}

/** A Stream as an AsyncIterable, handed over a chunk at a time (few fiber hand-offs per page). */
async function* iterate<A, E, R>(
  stream: Stream.Stream<A, E, R>,
  run: (s: Stream.Stream<Arr.NonEmptyReadonlyArray<A>, E, R>) => AsyncIterable<Arr.NonEmptyReadonlyArray<A>>
): AsyncGenerator<A> {
  for await (const chunk of run(Stream.chunks(stream))) yield* chunk
}

export interface SnapshotOptions {
  /** The SQLite snapshot file (created by the first backup). */
  readonly snapshot: string
}

export interface BackupOptions extends SnapshotOptions {
  /** Workspace ids or slugs; default every workspace the token reads. */
  readonly workspaces?: ReadonlyArray<string>
  /** Refetch every record detail and activity list. */
  readonly full?: boolean
  /** Called as records finish: done so far, and the total once known. */
  readonly onProgress?: (done: number, total: number | undefined) => void
}

export interface RunRange extends SnapshotOptions {
  /** Earlier run id; default the complete run of the same scope before `to`. */
  readonly from?: string
  /** Later run id; default the latest complete run. */
  readonly to?: string
}

export interface ImportCsvOptions {
  readonly workspaceId: string
  readonly csv: string
  /** SQLite journal: a rerun with the same file creates nothing twice. Not needed for a dry run. */
  readonly journal?: string
  readonly preset?: PresetName
  /** FIELD to column name, e.g. `{ title: "Name", duedAt: "Due" }`. */
  readonly mapping?: Partial<Record<Field, string>>
  readonly dryRun?: boolean
  /** Rejected rows go here; default `<csv without .csv>.rejects.csv`. */
  readonly rejectsFile?: string
  readonly delimiter?: string
  readonly encoding?: string
  readonly concurrency?: number
  /**
   * Another tool's export (`preset` trello, asana, jira or clickup): the only hosts its
   * attachment URLs are fetched from, each `HOST[:PORT]`; a loopback, private or
   * link-local address only for a host named here. Default: the tool's own hosts.
   */
  readonly attachmentHosts?: ReadonlyArray<string>
  /** Attachments larger than this many bytes are not fetched; default 25 MB. */
  readonly attachmentMaxBytes?: number
}

export interface CopyFilesOptions {
  /** `workspace:ID` or `dir:PATH`, or an endpoint object. */
  readonly from: string | Endpoint
  readonly to: string | Endpoint
  /** SQLite journal: a rerun copies nothing twice. */
  readonly journal: string
  /** Another account for a workspace target; default this connection. */
  readonly target?: ConnectionInput
  readonly concurrency?: number
  readonly include?: ReadonlyArray<string>
  readonly exclude?: ReadonlyArray<string>
  readonly uploadStrategy?: UploadStrategy
  /** Called with the bytes moved (negative when a failed attempt's bytes are taken back). */
  readonly onBytes?: (n: number) => void
}

export interface ExportOptions extends SnapshotOptions {
  readonly outDir: string
  readonly format?: ExportFormat
  readonly run?: string
}

const endpoint = (flag: string, value: string | Endpoint): Endpoint => {
  if (typeof value !== "string") return value
  const colon = value.indexOf(":")
  const kind = value.slice(0, colon)
  const rest = value.slice(colon + 1)
  if (colon > 0 && (kind === "workspace" || kind === "ws") && rest !== "") return { kind: "workspace", workspaceId: rest }
  if (colon > 0 && kind === "dir" && rest !== "") return { kind: "dir", path: rest }
  throw new TypeError(`${flag}: expected workspace:ID or dir:PATH, got ${JSON.stringify(value)}`)
}

/** Operations on snapshots only (no connection): diff, change stream, export. */
export const diffSnapshot = (options: RunRange): Promise<DiffResult & { readonly fromRun: string | null; readonly toRun: string | null }> =>
  Effect.runPromiseExit(
    diffEffect({ from: options.from, to: options.to }).pipe(
      Effect.map(({ selection, result }) => ({
        ...result,
        fromRun: selection?.from ? String(selection.from.id) : null,
        toRun: selection ? String(selection.to.id) : null
      })),
      Effect.provide(SnapshotStore.layer(options.snapshot, { mustExist: true }))
    )
  ).then(settle)

/** Every created, updated or deleted record and file between two runs, with content before and after. */
export const snapshotChanges = (options: RunRange): AsyncIterable<Change> =>
  iterate(
    changesBetween({ from: options.from, to: options.to }).pipe(
      Stream.provide(SnapshotStore.layer(options.snapshot, { mustExist: true }))
    ),
    (s) => Stream.toAsyncIterable(s)
  )

export const exportSnapshot = (options: ExportOptions): Promise<ExportResult> =>
  Effect.runPromiseExit(
    exportEffect({ outDir: options.outDir, format: options.format ?? "ndjson", run: options.run }).pipe(
      Effect.provide(SnapshotStore.layer(options.snapshot, { mustExist: true }))
    )
  ).then(settle)

export interface Worksync {
  readonly backup: (options: BackupOptions) => Promise<BackupResult>
  readonly diff: (options: RunRange) => ReturnType<typeof diffSnapshot>
  readonly changes: (options: RunRange) => AsyncIterable<Change>
  readonly export: (options: ExportOptions) => Promise<ExportResult>
  /**
   * Record summaries of list-records, paged (at most 100 a page) and in the service's
   * order. Without `archived` in the filter, whether archived records come is the
   * service's choice (the documents leave it open): pass `archived` to decide.
   */
  readonly records: (filter?: Omit<ListRecordsInput, "skip" | "limit">) => AsyncIterable<RecordSummary>
  readonly workspaces: () => AsyncIterable<Workspace>
  readonly lists: (workspaceId: string) => AsyncIterable<{ readonly id: string; readonly title: string }>
  readonly files: (workspaceId: string) => AsyncIterable<FileItem>
  readonly importCsv: (options: ImportCsvOptions) => Promise<ImportResult>
  readonly copyFiles: (options: CopyFilesOptions) => Promise<CopySummary>
  /** Closes the connection pool. Calls after it fail. */
  readonly close: () => Promise<void>
}

/** A connection to the service. Strings given for secrets are wrapped as Redacted at once. */
export const connect = (connection: ConnectionInput): Worksync => {
  const runtime = ManagedRuntime.make(clientLayer(connection))
  const run = <A, E>(effect: Effect.Effect<A, E, ClientServices>): Promise<A> => runtime.runPromiseExit(effect).then(settle)
  const stream = <A, E>(s: Stream.Stream<A, E, ClientServices>): AsyncIterable<A> =>
    (async function*() {
      const services = await runtime.context()
      yield* iterate(s, (chunks) => Stream.toAsyncIterableWith(chunks, services))
    })()

  return {
    backup: (options) =>
      run(
        backupEffect({
          workspaces: options.workspaces,
          full: options.full,
          ...(options.onProgress !== undefined
            ? {
              progress: (() => {
                let done = 0
                let total: number | undefined
                const report = options.onProgress
                return {
                  advance: (n: number) => Effect.sync(() => report((done += n), total)),
                  setTotal: (n: number) => Effect.sync(() => void (total = n))
                }
              })()
            }
            : {})
        }).pipe(Effect.provide(SnapshotStore.layer(options.snapshot)))
      ),
    diff: diffSnapshot,
    changes: snapshotChanges,
    export: exportSnapshot,
    records: (filter = {}) => stream(listRecordsStream(filter)),
    workspaces: () => stream(workspacesStream()),
    lists: (workspaceId) => stream(listsStream(workspaceId)),
    files: (workspaceId) => stream(filesStream(workspaceId)),
    importCsv: (options) =>
      run(
        Effect.gen(function*() {
          const rest = yield* RestClient
          // Comments and attachments of another tool's export are written through GraphQL.
          const graphql = yield* GraphqlClient
          const mapping = {
            ...(options.preset !== undefined ? { preset: options.preset } : {}),
            ...(options.mapping !== undefined ? { file: options.mapping } : {}),
            ...(options.preset === undefined && options.mapping === undefined ? { preset: "generic" as const } : {})
          }
          const base = {
            workspaceId: options.workspaceId,
            csv: { file: options.csv, delimiter: options.delimiter, encoding: options.encoding },
            mapping,
            graphql,
            ...(options.concurrency !== undefined ? { concurrency: options.concurrency } : {}),
            attachmentHosts: options.attachmentHosts,
            attachmentMaxBytes: options.attachmentMaxBytes
          }
          if (options.dryRun === true) {
            return yield* importCsvEffect(rest, { dryRunJournalFile: options.journal }, { ...base, dryRun: true })
          }
          if (options.journal === undefined) {
            return yield* Effect.die(new TypeError("importCsv: `journal` is required unless `dryRun` is true"))
          }
          const rejectsFile = options.rejectsFile ?? `${options.csv.replace(/\.csv$/i, "")}.rejects.csv`
          return yield* Effect.flatMap(Journal, (journal) => importCsvEffect(rest, journal, { ...base, rejectsFile })).pipe(
            Effect.provide(Journal.layer(options.journal))
          )
        })
      ),
    copyFiles: (options) =>
      run(
        Effect.scoped(
          Effect.gen(function*() {
            const from = endpoint("from", options.from)
            const to = endpoint("to", options.to)
            const here = yield* workspaceFilesFromServices
            const there = options.target === undefined
              ? here
              : yield* Effect.flatMap(Layer.build(clientLayer(options.target)), (ctx) => Effect.provide(workspaceFilesFromServices, ctx))
            const journal = yield* openJournal(options.journal)
            return yield* copyEffect({
              from,
              to,
              source: from.kind === "workspace" ? here : undefined,
              target: to.kind === "workspace" ? there : undefined,
              journal,
              concurrency: options.concurrency,
              filter: { include: options.include, exclude: options.exclude },
              uploadStrategy: options.uploadStrategy,
              ...(options.onBytes !== undefined ? { reporter: { bytes: options.onBytes } } : {})
            })
          })
        )
      ),
    close: () => runtime.dispose()
  }
}
