/**
 * Bulk file copy between a workspace and a directory, in any of the four directions.
 *
 * Every file is one journal op (kind `file.copy`): planned once, claimed before any byte
 * moves, completed with its result and the source-uid -> target-uid mapping in one
 * transaction. A rerun with the same journal skips done files and resumes the rest; an
 * op left in flight by a killed process is settled before anything is sent again (see
 * workspace-upload.ts).
 *
 * Bytes stream end to end (download piped into the upload, or to/from disk), with sha256
 * and size computed on the way and checked against the declared size.
 *
 * A workspace source whose listing cannot be verified complete (it kept changing behind
 * the reading) still gives every file it read: those are copied, then the copy fails with
 * `ListingUnverified` (the summary inside), and a rerun copies what the listing missed.
 *
 * A file the source says is not there (deleted after the listing was read) is held until
 * the end of the copy, then confirmed gone (deleted-at-source.ts): it is reported as
 * deleted at the source and done in the journal, not failed.
 */
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as path from "node:path"
import { isAbort } from "../../client/predicates.ts"
import type { JournalApi, JournalError, JournalStateError, Op } from "../../store/journal.ts"
import { scratchRecords } from "../../store/scratch-records.ts"
import type { ScanUnstable } from "../../streams/stable-scan.ts"
import type { Digest } from "./digest.ts"
import { confirmGone, type DeletedAtSource, isDeletedAtSource } from "./deleted-at-source.ts"
import { type DirTarget, openDirTarget } from "./dir-target.ts"
import { detailOf, SizeMismatch, SourceMissing } from "./errors.ts"
import {
  type CopyPayload,
  type CopyResult,
  decodePayload,
  FILE_COPY_KIND,
  FILE_NAMESPACE,
  jobIdOf,
  localNamer,
  nameOf,
  opKeyOf,
  type SourceFile,
  sourceKeyOf,
  uploadNameOf
} from "./plan.ts"
import { isTransient, type WorkspaceFiles } from "./ports.ts"
import { listSource, openSource } from "./source.ts"
import type { Endpoint } from "./spec.ts"
import type { WalkOptions } from "./walk.ts"
import {
  batchable,
  batchesOf,
  makeAdopter,
  uploadBatch,
  type UploadContext,
  type UploadJob,
  uploadOne
} from "./workspace-upload.ts"

export const DEFAULT_CONCURRENCY = 4
/** How often the main process of a spread copy looks at the files its helpers hold. */
const SPREAD_POLL = "500 millis"
/** Download/read attempts per file for a directory target. */
export const MAX_WRITE_ATTEMPTS = 3

/** How small files reach a workspace: batched through `uploadFiles` when possible, or all presigned. */
export type UploadStrategy = "auto" | "presign"

/** What the copy tells whoever shows progress. All calls are cheap and synchronous. */
export interface CopyReporter {
  /** Planning is over: `toCopy` files (of `files`) remain, `bytes` in all. */
  readonly planned?: (info: {
    readonly files: number
    readonly toCopy: number
    readonly bytes: number
    readonly pendingSource: ReadonlyArray<string>
  }) => void
  /** Bytes moved (negative when a failed attempt's bytes are taken back). */
  readonly bytes?: (n: number) => void
  readonly fileDone?: (name: string, size: number, where: string) => void
  readonly fileFailed?: (name: string, reason: string) => void
  /** A source file was deleted at the source during the copy (confirmed gone): not copied, not failed. */
  readonly fileDeleted?: (name: string) => void
  readonly retrying?: (name: string, reason: string) => void
}

export interface CopyFilesOptions {
  readonly from: Endpoint
  readonly to: Endpoint
  /** The source workspace connection (required when `from` is a workspace). */
  readonly source?: WorkspaceFiles | undefined
  /** The target workspace connection (required when `to` is a workspace). */
  readonly target?: WorkspaceFiles | undefined
  readonly journal: JournalApi
  readonly concurrency?: number | undefined
  /** Glob filter of a directory source. */
  readonly filter?: WalkOptions | undefined
  readonly uploadStrategy?: UploadStrategy | undefined
  readonly reporter?: CopyReporter | undefined
}

export interface CopyFailure {
  readonly name: string
  readonly reason: string
  /**
   * The source said the file is not there, and whether it was deleted could not be told:
   * the listing read to confirm it failed or could not be verified complete.
   */
  readonly notFoundAtSource?: true
}

/** The `--json` shape of the contract, plus details for people. */
export interface CopySummary {
  readonly files: number
  readonly copied: number
  readonly skipped: number
  readonly failed: number
  readonly bytes: number
  /** Source files deleted at the source during the copy (confirmed gone): not copied, not in `failed`. */
  readonly deleted: number
  /** Their names. */
  readonly deletedAtSource: ReadonlyArray<string>
  /** Source files not copied because they are still PENDING. */
  readonly pendingSource: ReadonlyArray<string>
  readonly failures: ReadonlyArray<CopyFailure>
  /**
   * Set when a failure that every other file would meet too (a wait the service asks for
   * above --max-retry-wait, a refused token) stopped the run: no new file was started
   * after it, and `notStarted` files wait for the rerun.
   */
  readonly stopped?: { readonly reason: string; readonly notStarted: number }
}

/** A configuration problem found before any file moved. */
export class CopySetupError extends Error {
  readonly _tag = "CopySetupError"
}

/**
 * The source workspace's listing could not be verified complete: the copy ran over every
 * file it read (`summary`), and may have missed some that a rerun with the same journal
 * copies.
 */
export class ListingUnverified extends Data.TaggedError("ListingUnverified")<{
  readonly workspaceId: string
  /** Why the listing is unverified (the scan's budget that ran out). */
  readonly detail: string
  readonly summary: CopySummary
}> {
  override get message(): string {
    return this.describe("journal")
  }

  /** One line; `journal` names the journal as the caller's user knows it (`--journal`). */
  describe(journal: string): string {
    const s = this.summary
    // A file deleted at the source meanwhile is only said so when a listing verified
    // complete no longer holds it; under a listing that keeps changing it stays failed.
    const notFound = s.failures.filter((f) => f.notFoundAtSource === true).length
    const failed = notFound > 0
      ? `${s.failed} failed (${notFound} of them not found at the source, perhaps deleted meanwhile: no listing verified complete confirms it)`
      : `${s.failed} failed`
    const deleted = s.deleted > 0 ? `, ${s.deleted} deleted at the source meanwhile` : ""
    const retry = s.failed > 0 ? " and retry those that failed" : ""
    return `the file listing of workspace ${this.workspaceId} could not be verified complete (${this.detail}); of the ${s.files} file(s) it read, ${s.copied} copied, ${s.skipped} already copied, ${failed}${deleted}; rerun with the same ${journal} to copy any it missed${retry}`
  }
}

/** The fingerprint of this copy's two ends (its ops' keys hold it). */
export const copyJobIdOf = (options: Pick<CopyFilesOptions, "from" | "to" | "source" | "target">): string =>
  jobIdOf(options.from, options.to, {
    source: options.from.kind === "workspace" ? options.source!.origin : null,
    target: options.to.kind === "workspace" ? options.target!.origin : null
  })

/** How one file's copy ended, as the journal now holds it. */
export type RecordedOutcome =
  | { readonly _tag: "Copied"; readonly result: CopyResult }
  | {
    readonly _tag: "Failed"
    readonly reason: string
    /** Every other file would meet the same failure (a wait too long, a refused token): start no more. */
    readonly abort: boolean
  }
  /** The source said the file is not there: not recorded yet (see `onMissing`). */
  | { readonly _tag: "Missing"; readonly reason: string }

/**
 * Runs one file's copy and records its end: done with its uid mapping, or failed with the
 * reason. A file the source says is not there is left for the copy's end to settle:
 * `onMissing` "hold" keeps it in flight (the main process settles it), "give back"
 * releases it to pending (a helper: the main process takes it again and settles it).
 */
export const recordOutcome = (
  journal: JournalApi,
  job: Pick<UploadJob, "key" | "payload">,
  outcome: Effect.Effect<CopyResult, unknown>,
  onMissing: "hold" | "give back"
): Effect.Effect<RecordedOutcome, JournalError | JournalStateError> =>
  Effect.flatMap(Effect.result(outcome), (result): Effect.Effect<RecordedOutcome, JournalError | JournalStateError> => {
    if (result._tag === "Success") {
      const r = result.success
      const mappings = r.uid === null ? [] : [{ namespace: FILE_NAMESPACE, sourceKey: sourceKeyOf(job.payload.source), targetId: r.uid }]
      return Effect.as(journal.complete(job.key, r, mappings), { _tag: "Copied", result: r })
    }
    const reason = detailOf(result.failure)
    if (result.failure instanceof SourceMissing) {
      const missing: RecordedOutcome = { _tag: "Missing", reason }
      return onMissing === "hold" ? Effect.succeed(missing) : Effect.as(journal.release(job.key, reason), missing)
    }
    return Effect.as(journal.fail(job.key, reason), { _tag: "Failed", reason, abort: isAbort(result.failure) })
  })

/** A file of the plan: its op, and its place in the listing (`n`, from 0). */
interface PlannedFile extends UploadJob {
  readonly n: number
}

/** A listed file with what an earlier run planned of it (the plan's first pass). */
interface ListedFile {
  readonly key: string
  readonly source: SourceFile
  /** The payload an earlier run planned, if any. */
  readonly known: CopyPayload | null
  readonly attemptedAt: string | null
}

/** Files planned in one call of the journal, and read back at a time. */
const PLAN_PAGE = 500

/** The key of a file's row in the plan's scratch file: its place in the listing, so keys sort in listing order. */
const rowId = (n: number): string => String(n).padStart(15, "0")

/** Pages of at most `size` of `items`, each taken as it is needed. */
function* pagesOf<A>(items: Iterable<A>, size: number): Generator<Array<A>> {
  let page: Array<A> = []
  for (const item of items) {
    page.push(item)
    if (page.length === size) {
      yield page
      page = []
    }
  }
  if (page.length > 0) yield page
}

/** The copy's plan: every file planned in the journal, kept in a scratch file in listing order. */
interface Plan {
  readonly files: number
  readonly toCopy: number
  readonly bytes: number
  readonly pending: ReadonlyArray<string>
  readonly unverified: ScanUnstable | null
  /** The files to copy (not done when planned), in listing order, read a page at a time. */
  readonly todo: () => Generator<PlannedFile>
  /** The file at place `n` of the listing. */
  readonly fileAt: (n: number) => PlannedFile
}

/**
 * Plans every source file in the journal (new ones get names). The listing, what the
 * journal held of each file and the plan are kept in a scratch file for the scope, not in
 * the heap: two passes over it, a page at a time (a directory target's new names avoid
 * every name earlier runs gave, so those are all known before the first new one).
 */
const plan = (
  options: CopyFilesOptions,
  jobId: string,
  dirTarget: DirTarget | null
): Effect.Effect<Plan, unknown, Scope.Scope> =>
  Effect.gen(function*() {
    const journal = options.journal
    const kept = yield* scratchRecords("copy-plan")
    const row = <A>(id: string): A => JSON.parse(kept.get(id)!) as A
    let listed = 0
    const listing = yield* listSource(options.from, options.source, options.filter ?? {}, (page) =>
      Effect.map(journal.getMany(page.map((source) => opKeyOf(jobId, source))), (ops) => {
        const byKey = new Map(ops.map((op) => [op.key, op]))
        kept.putAll(page.map((source) => {
          const key = opKeyOf(jobId, source)
          const op = byKey.get(key)
          const file: ListedFile & { readonly id: string } = {
            id: rowId(listed++),
            key,
            source,
            known: op === undefined ? null : decodePayload(op.payload),
            attemptedAt: op?.attemptedAt ?? null
          }
          return file
        }))
      }))
    const localName = dirTarget === null
      ? () => null
      : localNamer(
        (function*() {
          for (const id of kept.ids()) {
            const known = row<ListedFile>(id).known?.localName
            if (known !== undefined && known !== null) yield known
          }
        })(),
        [...dirTarget.existingNames, ...dirTarget.manifest.lines.keys()]
      )
    const run = yield* journal.beginPlanRun()
    let toCopy = 0
    let bytes = 0
    for (const ids of pagesOf(kept.ids(), PLAN_PAGE)) {
      const files = ids.map((id) => row<ListedFile>(id))
      const fresh = files.map((f): CopyPayload => ({
        v: 1,
        source: f.source,
        localName: localName({ source: f.source, knownName: f.known?.localName ?? null }),
        uploadName: options.to.kind === "workspace" ? uploadNameOf(f.source) : null
      }))
      const planned = yield* journal.planOps(run, files.map((f, i) => ({ key: f.key, kind: FILE_COPY_KIND, payload: fresh[i] })))
      kept.putAll(planned.map((p, i) => {
        const file: PlannedFile & { readonly id: string } = {
          id: ids[i]!,
          n: Number(ids[i]),
          key: p.key,
          payload: files[i]!.known ?? fresh[i]!,
          previousAttemptAt: files[i]!.attemptedAt
        }
        if (p.state !== "done") {
          toCopy++
          bytes += file.payload.source.size
        }
        return file
      }))
      // Files done already are marked: the copy reads only the others.
      planned.forEach((p, i) => p.state === "done" && kept.match(ids[i]!))
    }
    return {
      files: listed,
      toCopy,
      bytes,
      pending: listing.pending,
      unverified: listing.unverified,
      todo: function*() {
        for (const id of kept.unmatchedIds()) yield row<PlannedFile>(id)
      },
      fileAt: (n) => row<PlannedFile>(rowId(n))
    }
  })

/**
 * Runs `f` on each of `items` (taken as they are needed, not all at once), at most
 * `concurrency` at a time, starting them in order.
 */
const forEachTaken = <A, E>(
  items: Iterable<A>,
  f: (a: A) => Effect.Effect<void, E>,
  concurrency: number
): Effect.Effect<void, E> => Stream.runDrain(Stream.mapEffect(Stream.fromIterable(items, { chunkSize: 64 }), f, { concurrency }))

/** Copies one file into a directory: stream, check, rename, manifest line. */
const copyToDir = (
  options: CopyFilesOptions,
  target: DirTarget,
  payload: CopyPayload,
  reporter: CopyReporter
): Effect.Effect<CopyResult, unknown> => {
  const source = payload.source
  const name = nameOf(source)
  const localName = payload.localName!
  const attempt = (n: number): Effect.Effect<Digest, unknown> => {
    let moved = 0
    return target
      .write(localName, name, openSource(options.source, source), source.size, (b) => {
        moved += b
        reporter.bytes?.(b)
      })
      .pipe(
        Effect.catch((error) => {
          reporter.bytes?.(-moved)
          const again = n < MAX_WRITE_ATTEMPTS && (isTransient(error) || error instanceof SizeMismatch)
          if (!again) return Effect.fail(error)
          reporter.retrying?.(name, detailOf(error))
          return attempt(n + 1)
        })
      )
  }
  return Effect.gen(function*() {
    const digest = yield* attempt(1)
    yield* target.record({
      id: source.kind === "workspace" ? source.id : null,
      uid: source.kind === "workspace" ? source.uid : null,
      name,
      path: localName,
      size: digest.size,
      sha256: digest.sha256
    })
    return { path: localName, uid: null, size: digest.size, sha256: digest.sha256 }
  })
}

/**
 * Runs the copy. Per-file failures are recorded (journal `failed`, summary `failures`) and
 * the rest carries on; journal and listing failures end the run, except a listing that
 * could not be verified complete: its files are copied first (`ListingUnverified`).
 */
export const copyFiles = (options: CopyFilesOptions): Effect.Effect<CopySummary, unknown, Scope.Scope> =>
  Effect.gen(function*() {
    const { from, to, journal } = options
    if (from.kind === "workspace" && options.source === undefined) {
      return yield* Effect.fail(new CopySetupError("a workspace source needs a source connection"))
    }
    if (to.kind === "workspace" && options.target === undefined) {
      return yield* Effect.fail(new CopySetupError("a workspace target needs a target connection"))
    }
    if (from.kind === "dir" && to.kind === "dir" && path.resolve(from.path) === path.resolve(to.path)) {
      return yield* Effect.fail(new CopySetupError("source and target are the same directory"))
    }
    const reporter = options.reporter ?? {}
    const concurrency = Math.max(1, options.concurrency ?? DEFAULT_CONCURRENCY)
    const jobId = copyJobIdOf(options)

    // Ops a killed run left in flight become pending + uncertain; failed ones are retried.
    yield* journal.resetInFlight()
    yield* journal.retryFailed([FILE_COPY_KIND])

    const dirTarget = to.kind === "dir" ? yield* openDirTarget(to.path) : null
    const planned = yield* plan(options, jobId, dirTarget)
    reporter.planned?.({
      files: planned.files,
      toCopy: planned.toCopy,
      bytes: planned.bytes,
      pendingSource: planned.pending
    })

    let copied = 0
    let bytes = 0
    const failures: Array<CopyFailure> = []
    /** Files the source said are not there, held in flight until they are confirmed gone or failed, after the copy. */
    const missing: Array<{ readonly file: PlannedFile; readonly reason: string }> = []
    const deletedAtSource: Array<string> = []
    /** The failure that stops the run (nothing new starts after it), and files left unstarted. */
    let stop: string | undefined
    let notStarted = 0
    /** Files (their places in the listing) whose claim found them taken: another process of a spread job has them. */
    const takenElsewhere: Array<number> = []
    const stopped = () => {
      if (stop === undefined) return false
      notStarted++
      return true
    }

    const finish = (file: PlannedFile, outcome: Effect.Effect<CopyResult, unknown>) =>
      Effect.map(recordOutcome(journal, file, outcome, "hold"), (recorded) => {
        const name = nameOf(file.payload.source)
        if (recorded._tag === "Copied") {
          copied++
          bytes += recorded.result.size
          reporter.fileDone?.(name, recorded.result.size, recorded.result.path ?? recorded.result.uid ?? "")
        } else if (recorded._tag === "Missing") {
          missing.push({ file, reason: recorded.reason })
        } else {
          failures.push({ name, reason: recorded.reason })
          reporter.fileFailed?.(name, recorded.reason)
          if (recorded.abort) stop ??= recorded.reason
        }
      })

    let uploadContext: UploadContext | undefined
    if (to.kind === "dir") {
      yield* forEachTaken(
        planned.todo(),
        (file) =>
          Effect.gen(function*() {
            if (stopped()) return
            const claimed = yield* Effect.result(journal.claim(file.key))
            if (claimed._tag === "Failure") return void takenElsewhere.push(file.n)
            yield* finish(file, copyToDir(options, dirTarget!, file.payload, reporter))
          }),
        concurrency
      )
    } else {
      const target = options.target!
      const ctx: UploadContext = uploadContext = {
        journal,
        source: options.source,
        target,
        workspaceId: to.workspaceId,
        reporter,
        adopter: makeAdopter(journal, target, to.workspaceId)
      }
      const useBatches = (options.uploadStrategy ?? "auto") === "auto" && target.uploadBatch !== undefined
      type Unit = { readonly _tag: "one"; readonly file: PlannedFile } | { readonly _tag: "batch"; readonly files: Array<PlannedFile> }
      // The batches of the small files first, then the others one by one, each read from the plan as it is reached.
      const units = function*(): Generator<Unit> {
        if (useBatches) {
          const batched = (function*() {
            for (const file of planned.todo()) if (batchable(file)) yield file
          })()
          for (const files of batchesOf(batched)) yield files.length === 1 ? { _tag: "one", file: files[0]! } : { _tag: "batch", files }
        }
        for (const file of planned.todo()) if (!useBatches || !batchable(file)) yield { _tag: "one", file }
      }
      yield* forEachTaken(
        units(),
        (unit) =>
          Effect.gen(function*() {
            if (unit._tag === "one" ? stopped() : unit.files.every(() => stopped())) return
            if (unit._tag === "one") {
              const claimed = yield* Effect.result(journal.claim(unit.file.key))
              if (claimed._tag === "Failure") return void takenElsewhere.push(unit.file.n)
              yield* finish(unit.file, uploadOne(ctx, unit.file, claimed.success))
              return
            }
            const ops = yield* journal.claimMany(unit.files.map((f) => f.key))
            const byKey = new Map<string, Op>(ops.map((op) => [op.key, op]))
            const jobs = unit.files.flatMap((job) => {
              const op = byKey.get(job.key)
              if (op === undefined) takenElsewhere.push(job.n)
              return op === undefined ? [] : [{ job, op }]
            })
            const outcomes = yield* uploadBatch(ctx, jobs)
            yield* Effect.forEach(outcomes, (o, i) => finish(jobs[i]!.job as PlannedFile, o.result), { discard: true })
          }),
        concurrency
      )
    }

    // Files other processes took (helpers of a spread job, docs/scale.md): wait for each
    // to end, count what they copied, and copy what they gave back or left behind.
    // The files are read back from the plan a page at a time.
    let waiting = takenElsewhere
    while (waiting.length > 0) {
      const next: Array<number> = []
      let reset = false
      for (let from = 0; from < waiting.length; from += PLAN_PAGE) {
        const page = waiting.slice(from, from + PLAN_PAGE).map(planned.fileAt)
        const states = new Map((yield* journal.getMany(page.map((f) => f.key))).map((op) => [op.key, op]))
        if ([...states.values()].some((op) => op.state === "in_flight")) {
          // A dead process's claims go back to pending (uncertain: settled before resending).
          if ((yield* journal.resetInFlight()) > 0) {
            next.push(...waiting.slice(from))
            reset = true
            break
          }
        }
        for (const file of page) {
          const op = states.get(file.key)
          const name = nameOf(file.payload.source)
          if (op?.state === "done" && isDeletedAtSource(op.result)) {
            deletedAtSource.push(name)
            reporter.fileDeleted?.(name)
          } else if (op?.state === "done") {
            const r = op.result as CopyResult
            // Its helper reported the file as it finished; only the total moves here.
            copied++
            bytes += r.size
            reporter.bytes?.(r.size)
          } else if (op?.state === "failed") {
            const reason = op.error ?? "failed"
            failures.push({ name, reason })
            reporter.fileFailed?.(name, reason)
          } else if (op?.state === "pending" && stop === undefined) {
            const claimed = yield* Effect.result(journal.claim(file.key))
            // Settling what a dead helper sent (a batch leaves no upload uid) needs the time
            // of its attempt, not the one read at planning.
            const again = { ...file, previousAttemptAt: op.attemptedAt ?? file.previousAttemptAt }
            if (claimed._tag === "Failure") next.push(file.n)
            else if (to.kind === "dir") yield* finish(again, copyToDir(options, dirTarget!, file.payload, reporter))
            else yield* finish(again, uploadOne(uploadContext!, again, claimed.success))
          } else if (op?.state === "in_flight") {
            next.push(file.n)
          } else if (op?.state === "pending") {
            notStarted++
          }
        }
      }
      waiting = next
      if (!reset && waiting.length > 0) yield* Effect.sleep(SPREAD_POLL)
    }

    // Files the source said are not there: deleted at the source, or failed.
    if (missing.length > 0) {
      const verdicts = yield* confirmGone(options.source, missing.map((m) => m.file.payload.source))
      yield* Effect.forEach(missing, ({ file, reason }, i) => {
        const name = nameOf(file.payload.source)
        const verdict = verdicts[i]!
        if (verdict._tag === "Gone") {
          const result: DeletedAtSource = { deletedAtSource: true, detail: reason }
          return Effect.map(journal.complete(file.key, result), () => {
            deletedAtSource.push(name)
            reporter.fileDeleted?.(name)
          })
        }
        const failed = `${reason}; ${verdict.why}`
        return Effect.map(journal.fail(file.key, failed), () => {
          failures.push(verdict._tag === "Unconfirmed" ? { name, reason: failed, notFoundAtSource: true } : { name, reason: failed })
          reporter.fileFailed?.(name, failed)
        })
      }, { discard: true })
    }

    const summary: CopySummary = {
      files: planned.files,
      copied,
      skipped: planned.files - planned.toCopy,
      failed: failures.length,
      bytes,
      deleted: deletedAtSource.length,
      deletedAtSource,
      pendingSource: planned.pending,
      failures,
      ...(stop !== undefined ? { stopped: { reason: stop, notStarted } } : {})
    }
    if (planned.unverified !== null && from.kind === "workspace") {
      return yield* new ListingUnverified({ workspaceId: from.workspaceId, detail: planned.unverified.detail, summary })
    }
    return summary
  })
