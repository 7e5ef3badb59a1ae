/**
 * Uploading into a workspace, exactly once per file.
 *
 * One file: presign (its uid written to the journal before any byte goes), PUT the
 * stream with exactly the returned headers, confirm, check CONFIRMED. A PUT whose answer
 * is lost is settled by confirming (the bytes may have landed); a confirm whose answer
 * is lost is repeated (it is safe to repeat); a confirm that finds no object or one of
 * the wrong size (400) leads to a fresh presign and a new PUT, since a presigned URL is
 * single-use.
 *
 * Small files: GraphQL `uploadFiles`, up to 10 per request. A batch whose answer is lost
 * may have been applied, so the workspace is listed and each file of the batch that is
 * there (same name and size, created since the batch was sent, not the copy of another
 * source) is taken as its copy; the rest go through the presigned flow.
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import { PRESIGN_MAX_FILE_BYTES } from "../../schema/limits.ts"
import type { FileItem } from "../../schema/files.ts"
import type { JournalApi, Op } from "../../store/journal.ts"
import type { ObjectStoreApi } from "../../store/object-store.ts"
import { tapDigestStream } from "./digest.ts"
import { OutcomeUnknown } from "../../client/errors.ts"
import { detailOf, FileTooLarge, NotConfirmed, SizeMismatch, SourceMissing, UploadNotLanded } from "./errors.ts"
import {
  type CopyPayload,
  type CopyResult,
  FILE_ATTEMPT_NAMESPACE,
  FILE_NAMESPACE,
  nameOf,
  uploadNameOf
} from "./plan.ts"
import { isTransient, needsReupload, type WorkspaceFiles } from "./ports.ts"
import { openSource } from "./source.ts"

/**
 * An upload whose answer was lost, when looking for what landed failed too: still of
 * unknown outcome (the op stays uncertain), but the reason names why the check failed,
 * which is often the real problem (a 401 answered before the body was read closes the
 * connection, and the sender sees only the broken pipe).
 */
const uncheckable = (sent: unknown, check: unknown): unknown =>
  sent instanceof OutcomeUnknown
    ? new OutcomeUnknown({
      operation: sent.operation,
      attemptedAt: sent.attemptedAt,
      inputSummary: sent.inputSummary,
      reason: `${sent.reason}; checking what landed failed: ${detailOf(check)}`
    })
    : sent

/** Fresh presign + PUT attempts per file before it counts as failed. */
export const MAX_UPLOAD_ATTEMPTS = 4
/** Confirm repeats per upload when its answer is lost. */
export const MAX_CONFIRM_ATTEMPTS = 5

/**
 * Files up to this size go through `uploadFiles` batches when the target offers it.
 * Measured on the emulator over loopback at concurrency 4 (files per second,
 * presign-only vs batches of 10): 10 KB 105 vs 485, 100 KB 100 vs 346, 1 MB 37 vs 159,
 * 8 MB 28 vs 48, 32 MB 11 vs 17. Batches win at every size measured; the cap keeps a
 * failed batch cheap to resend and stays far below the 256 MB multipart limit.
 */
export const BATCH_FILE_MAX_BYTES = 16 * 1024 * 1024
/** Files per batch (R-LIMIT-02) and our cap on a batch's bytes (the service allows 1 GB). */
export const BATCH_MAX_FILES = 10
export const BATCH_MAX_TOTAL_BYTES = 64 * 1024 * 1024

/** Clock skew allowed between us and the service when matching creation times. */
const SKEW_MS = 60_000

export interface UploadReporter {
  readonly bytes?: (n: number) => void
  readonly retrying?: (name: string, reason: string) => void
}

export interface UploadContext {
  readonly journal: JournalApi
  readonly source: WorkspaceFiles | undefined
  readonly target: WorkspaceFiles
  readonly workspaceId: string
  readonly reporter: UploadReporter
  readonly adopter: Adopter
  /** Where object sources are read from (`restore --files DIR`); the caller holds its lock. */
  readonly objects?: ObjectStoreApi | undefined
}

/** A planned op as the uploader sees it. */
export interface UploadJob {
  readonly key: string
  readonly payload: CopyPayload
  /** `attempted_at` of the op before this run claimed it (null when never tried). */
  readonly previousAttemptAt: string | null
}

// ---------------------------------------------------------------------------------------
// Adoption: finding the copy an earlier attempt made without our learning its uid.

export interface Adopter {
  /**
   * The uid of a CONFIRMED target file named `name` of `size` bytes, created at or after
   * `since`, that no source file is mapped to yet; null when there is none. Uses the
   * listing taken by the first call or the latest `refresh`.
   */
  readonly adopt: (name: string, size: number, since: string) => Effect.Effect<string | null, unknown>
  /** Lists the workspace again (after a batch whose answer was lost). */
  readonly refresh: Effect.Effect<void, unknown>
}

export const makeAdopter = (journal: JournalApi, target: WorkspaceFiles, workspaceId: string): Adopter => {
  const list = Stream.runCollect(target.listFiles(workspaceId)).pipe(Effect.map((c): Array<FileItem> => [...c]))
  let current: Array<FileItem> | null = null
  const taken = new Set<string>()
  const refresh = Effect.map(list, (items) => {
    current = items
  })
  return {
    refresh,
    adopt: (name, size, since) =>
      Effect.gen(function*() {
        if (current === null) yield* refresh
        const after = Date.parse(since) - SKEW_MS
        const candidates = (current ?? []).filter((f) =>
          f.status === "CONFIRMED" && f.name === name && f.size === size && !taken.has(f.uid) &&
          !(Date.parse(f.createdAt) < after)
        )
        if (candidates.length === 0) return null
        const mapped = yield* journal.mappedTargets(FILE_NAMESPACE, candidates.map((c) => c.uid))
        const found = candidates.find((c) => !mapped.has(c.uid))
        if (found === undefined) return null
        taken.add(found.uid)
        return found.uid
      })
  }
}

// ---------------------------------------------------------------------------------------
// One file through the presigned flow.

type ConfirmOutcome = { readonly _tag: "Confirmed" } | { readonly _tag: "Reupload"; readonly reason: string }

/** Confirms `uid`, repeating while its answer is lost (confirm is safe to repeat). */
const confirmUpload = (ctx: UploadContext, uid: string, name: string): Effect.Effect<ConfirmOutcome, unknown> => {
  const go = (n: number): Effect.Effect<ConfirmOutcome, unknown> =>
    ctx.target.confirm(ctx.workspaceId, uid).pipe(
      Effect.flatMap((status) =>
        status === "CONFIRMED"
          ? Effect.succeed<ConfirmOutcome>({ _tag: "Confirmed" })
          : Effect.fail(new NotConfirmed({ name, uid, status }))
      ),
      Effect.catch((error): Effect.Effect<ConfirmOutcome, unknown> => {
        if (needsReupload(error)) return Effect.succeed({ _tag: "Reupload", reason: detailOf(error) })
        if (n < MAX_CONFIRM_ATTEMPTS && isTransient(error)) {
          ctx.reporter.retrying?.(name, `confirm: ${detailOf(error)}`)
          return Effect.sleep(`${50 * 2 ** n} millis`).pipe(Effect.andThen(go(n + 1)))
        }
        return Effect.fail(error)
      })
    )
  return go(1)
}

/** Settles an earlier attempt at this op, if it left a trace: the uid of its copy, or null. */
const settleEarlier = (ctx: UploadContext, job: UploadJob, op: Op): Effect.Effect<string | null, unknown> =>
  Effect.gen(function*() {
    if (op.attempts <= 1) return null
    const source = job.payload.source
    const name = nameOf(source)
    const earlier = yield* ctx.journal.lookup(FILE_ATTEMPT_NAMESPACE, job.key)
    if (Option.isSome(earlier)) {
      // A presigned upload: if its bytes landed, confirming it settles the file. Only a
      // definite answer (no object, or not the declared size) lets a new upload go: any
      // other failure (401, a drop) leaves the uid to the next run, since its object may
      // still land and be confirmed by the service's reconciliation.
      const outcome = yield* confirmUpload(ctx, earlier.value, name)
      return outcome._tag === "Confirmed" ? earlier.value : null
    }
    // A batch upload (no uid learnt before sending): look for its result in the workspace.
    if (job.previousAttemptAt === null) return null
    return yield* ctx.adopter.adopt(job.payload.uploadName ?? uploadNameOf(source), source.size, job.previousAttemptAt)
  })

/** Copies one claimed op into the workspace through presign, PUT and confirm. */
export const uploadOne = (ctx: UploadContext, job: UploadJob, op: Op): Effect.Effect<CopyResult, unknown> => {
  const { journal, reporter, target } = ctx
  const source = job.payload.source
  const name = nameOf(source)
  const uploadName = job.payload.uploadName ?? uploadNameOf(source)
  const size = source.size

  const attempt = (n: number): Effect.Effect<CopyResult, unknown> =>
    Effect.gen(function*() {
      const slot = yield* target.presign(ctx.workspaceId, uploadName, size)
      // Durable before the bytes go: a rerun after a crash confirms this upload instead of repeating it.
      yield* journal.setMapping({ namespace: FILE_ATTEMPT_NAMESPACE, sourceKey: job.key, targetId: slot.uid })
      let moved = 0
      // How the source's bytes failed, if they did: a PUT fails with its own error when
      // its body fails, and a file gone from the source is not uploaded again.
      let sourceFailure: unknown = undefined
      const body = Stream.tapError(openSource(ctx.source, source, ctx.objects), (e) => Effect.sync(() => void (sourceFailure = e)))
      const tapped = tapDigestStream(body, (b) => {
        moved += b
        reporter.bytes?.(b)
      })
      const takeBack = () => {
        reporter.bytes?.(-moved)
        moved = 0
      }
      const put = yield* Effect.result(target.put(slot, tapped.stream, size))
      if (put._tag === "Failure") {
        // The answer may be lost while the bytes landed: ask before sending them again.
        // Only a definite "not stored" lets a new upload go; a confirm that fails otherwise
        // fails the file with this uid kept in the journal, for the next run to settle.
        const probe = yield* confirmUpload(ctx, slot.uid, name)
        if (probe._tag === "Confirmed") {
          const digest = tapped.digest()
          return { path: null, uid: slot.uid, size, sha256: digest.size === size ? digest.sha256 : null }
        }
        takeBack()
        if (sourceFailure instanceof SourceMissing) return yield* Effect.fail(sourceFailure)
        // A presigned URL is single-use: the next attempt presigns afresh.
        return yield* again(n, put.failure)
      }
      const digest = tapped.digest()
      if (digest.size !== size) {
        takeBack()
        const stage = source.kind === "workspace" ? "download" : "read"
        return yield* again(n, new SizeMismatch({ name, stage, expected: size, actual: digest.size }))
      }
      const confirmed = yield* confirmUpload(ctx, slot.uid, name)
      if (confirmed._tag === "Reupload") {
        takeBack()
        return yield* again(n, new UploadNotLanded({ name, uid: slot.uid, reason: confirmed.reason }))
      }
      return { path: null, uid: slot.uid, size, sha256: digest.sha256 }
    })

  const again = (n: number, error: unknown): Effect.Effect<CopyResult, unknown> => {
    if (n >= MAX_UPLOAD_ATTEMPTS) return Effect.fail(error)
    reporter.retrying?.(name, detailOf(error))
    return attempt(n + 1)
  }

  return Effect.gen(function*() {
    // Rejected before any byte is sent (R-LIMIT-04, R-UPLOAD-PRESIGN-21).
    if (size > PRESIGN_MAX_FILE_BYTES) {
      return yield* Effect.fail(new FileTooLarge({ name, size, max: PRESIGN_MAX_FILE_BYTES }))
    }
    const settled = yield* settleEarlier(ctx, job, op)
    if (settled !== null) return { path: null, uid: settled, size, sha256: null } satisfies CopyResult
    if (op.uncertain) yield* journal.markResolved(job.key)
    return yield* attempt(1)
  })
}

// ---------------------------------------------------------------------------------------
// Small files in batches.

/**
 * Whether a job may travel in a batch: small, never tried before (those are settled one
 * by one), and named without a path separator (a multipart file name keeps only its last
 * path segment; the presign step keeps the whole name).
 */
export const batchable = (job: UploadJob): boolean => {
  const name = job.payload.uploadName ?? uploadNameOf(job.payload.source)
  return job.previousAttemptAt === null && job.payload.source.size <= BATCH_FILE_MAX_BYTES && !/[/\\]/.test(name)
}

/** Groups batchable jobs into batches of at most 10 files and BATCH_MAX_TOTAL_BYTES, each yielded when full. */
export function* batchesOf<J extends UploadJob>(jobs: Iterable<J>): Generator<Array<J>> {
  let current: Array<J> = []
  let bytes = 0
  for (const job of jobs) {
    const size = job.payload.source.size
    if (current.length > 0 && (current.length >= BATCH_MAX_FILES || bytes + size > BATCH_MAX_TOTAL_BYTES)) {
      yield current
      current = []
      bytes = 0
    }
    current.push(job)
    bytes += size
  }
  if (current.length > 0) yield current
}

/** A failure after which the batch may still have been applied. */
const mayHaveApplied = (e: unknown): boolean => {
  const tag = typeof e === "object" && e !== null && "_tag" in e ? String(e._tag) : ""
  if (tag === "TransportError") return (e as { sent?: boolean }).sent !== false
  return tag === "OutcomeUnknown" || tag === "ServerError" || tag === "Timeout" || tag === "DecodeError"
}

/**
 * Uploads claimed ops in one `uploadFiles` call. Returns each op's outcome, in order: a
 * result, or the failure of its presigned fallback.
 */
export const uploadBatch = (
  ctx: UploadContext,
  jobs: ReadonlyArray<{ readonly job: UploadJob; readonly op: Op }>
): Effect.Effect<ReadonlyArray<{ readonly key: string; readonly result: Effect.Effect<CopyResult, unknown> }>, never> =>
  Effect.gen(function*() {
    const { reporter, target } = ctx
    let moved = 0
    // A source that failed: the batch fails with it, and a file gone from the source is
    // not sent again on its own.
    const sourceFailures: Array<unknown> = jobs.map(() => undefined)
    const taps = jobs.map(({ job }, i) =>
      tapDigestStream(
        Stream.tapError(openSource(ctx.source, job.payload.source, ctx.objects), (e) => Effect.sync(() => void (sourceFailures[i] = e))),
        (b) => {
          moved += b
          reporter.bytes?.(b)
        }
      )
    )
    const sentAt = new Date().toISOString()
    const sent = yield* Effect.result(
      target.uploadBatch!(
        ctx.workspaceId,
        jobs.map(({ job }, i) => ({
          name: job.payload.uploadName ?? uploadNameOf(job.payload.source),
          size: job.payload.source.size,
          body: taps[i]!.stream
        }))
      )
    )
    const fallback = (i: number) => uploadOne(ctx, jobs[i]!.job, jobs[i]!.op)
    if (sent._tag === "Success") {
      const uploaded = sent.success
      const used = new Set<number>()
      // Results in input order (UPLOAD_FILES_RESULT_ORDER); matched by name and size as well.
      const resultFor = (i: number, name: string, size: number) => {
        const same = (j: number) => {
          const u = uploaded[j]
          return u !== undefined && !used.has(j) && u.name === name && u.size === size
        }
        const j = same(i) ? i : uploaded.findIndex((_, k) => same(k))
        if (j < 0) return undefined
        used.add(j)
        return uploaded[j]
      }
      return jobs.map(({ job }, i) => {
        const u = resultFor(i, job.payload.uploadName ?? uploadNameOf(job.payload.source), job.payload.source.size)
        const digest = taps[i]!.digest()
        const size = job.payload.source.size
        // uploadFiles creates files CONFIRMED (R-FILE-STATUS-02).
        const ok = u !== undefined && (u.status === null || u.status === "CONFIRMED") && u.size === size &&
          digest.size === size
        return {
          key: job.key,
          result: ok
            ? Effect.succeed<CopyResult>({ path: null, uid: u.uid, size, sha256: digest.sha256 })
            : fallback(i)
        }
      })
    }
    reporter.bytes?.(-moved)
    const ambiguous = mayHaveApplied(sent.failure)
    reporter.retrying?.(
      jobs.map(({ job }) => nameOf(job.payload.source)).join(", "),
      `batch upload: ${detailOf(sent.failure)}${ambiguous ? "; checking what landed" : ""}`
    )
    const out: Array<{ key: string; result: Effect.Effect<CopyResult, unknown> }> = []
    const listed = ambiguous ? yield* Effect.result(ctx.adopter.refresh) : null
    for (let i = 0; i < jobs.length; i++) {
      const { job } = jobs[i]!
      const size = job.payload.source.size
      const sourceFailure = sourceFailures[i]
      if (sourceFailure instanceof SourceMissing) {
        out.push({ key: job.key, result: Effect.fail(sourceFailure) })
        continue
      }
      const adopted = listed !== null && listed._tag === "Success"
        ? yield* ctx.adopter
          .adopt(job.payload.uploadName ?? uploadNameOf(job.payload.source), size, sentAt)
          .pipe(Effect.orElseSucceed(() => null))
        : null
      out.push({
        key: job.key,
        result: adopted !== null
          ? Effect.succeed<CopyResult>({ path: null, uid: adopted, size, sha256: null })
          : listed !== null && listed._tag === "Failure"
          // Cannot tell what landed: sending again could duplicate. A rerun settles it.
          ? Effect.fail(uncheckable(sent.failure, listed.failure))
          : fallback(i)
      })
    }
    return out
  })
