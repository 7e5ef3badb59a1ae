/**
 * A helper of a spread copy (docs/scale.md): a second process, usually on another
 * machine, that takes files of a copy whose main process planned them into a shared
 * PostgreSQL journal. It plans nothing and lists nothing: it claims the copy's files from
 * the end of the plan (the main process works from the start), small ones a batch at a
 * time as the main process sends them, each claim committed before any byte moves, and
 * stops when none is left.
 *
 * It takes only files never tried before: a file an earlier attempt left behind may need
 * the time of that attempt to be settled (workspace-upload.ts, `settleEarlier`), which
 * the main process read before its run began. What the helpers copy, the main process
 * counts and reports (copy.ts), so the command's result is the same however many helped.
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { copyJobIdOf, type CopyFilesOptions, CopySetupError, DEFAULT_CONCURRENCY, recordOutcome } from "./copy.ts"
import type { Op } from "../../store/journal.ts"
import { type CopyResult, decodePayload, FILE_COPY_KIND, nameOf } from "./plan.ts"
import {
  BATCH_FILE_MAX_BYTES,
  BATCH_MAX_FILES,
  BATCH_MAX_TOTAL_BYTES,
  batchable,
  makeAdopter,
  uploadBatch,
  type UploadContext,
  type UploadJob,
  uploadOne
} from "./workspace-upload.ts"

/** What one helper did. */
export interface HelpSummary {
  readonly copied: number
  readonly failed: number
  readonly bytes: number
  /** Set when a failure every file would meet (see CopySummary.stopped) ended the help. */
  readonly stopped?: string
}

/** Helps the copy `options` describes until no untried file of it is left. */
export const helpCopy = (options: CopyFilesOptions): Effect.Effect<HelpSummary, unknown> =>
  Effect.gen(function*() {
    const { from, to, journal } = options
    if (from.kind !== "workspace" || to.kind !== "workspace" || options.source === undefined || options.target === undefined) {
      return yield* Effect.fail(new CopySetupError("only a copy from a workspace to a workspace can be helped"))
    }
    const reporter = options.reporter ?? {}
    const ctx: UploadContext = {
      journal,
      source: options.source,
      target: options.target,
      workspaceId: to.workspaceId,
      reporter,
      adopter: makeAdopter(journal, options.target, to.workspaceId)
    }
    const keyPrefix = `${FILE_COPY_KIND}:${copyJobIdOf(options)}:`
    let copied = 0
    let failed = 0
    let bytes = 0
    let stop: string | undefined

    const useBatches = (options.uploadStrategy ?? "auto") === "auto" && options.target.uploadBatch !== undefined
    const claimOne = Effect.map(
      journal.claimNext({ kinds: [FILE_COPY_KIND], keyPrefix, descending: true, untried: true }),
      Option.map((op): { readonly job: UploadJob; readonly op: Op } => ({
        job: { key: op.key, payload: decodePayload(op.payload), previousAttemptAt: null },
        op
      }))
    )
    /**
     * The next files to send together: one file, or up to a batch's worth of small ones
     * claimed in a row (a file that cannot travel in a batch ends the run and goes alone).
     */
    const claimUnit = Effect.gen(function*() {
      const claimed: Array<{ readonly job: UploadJob; readonly op: Op }> = []
      let claimedBytes = 0
      while (claimed.length < (useBatches ? BATCH_MAX_FILES : 1)) {
        const next = yield* claimOne
        if (Option.isNone(next)) break
        claimed.push(next.value)
        claimedBytes += next.value.job.payload.source.size
        // One more small file could pass the batch's cap on bytes.
        if (!batchable(next.value.job) || claimedBytes + BATCH_FILE_MAX_BYTES > BATCH_MAX_TOTAL_BYTES) break
      }
      return claimed
    })

    const finish = (job: UploadJob, outcome: Effect.Effect<CopyResult, unknown>) =>
      // A file the source says is not there goes back to the main process, which
      // confirms it was deleted with one listing at the end of the copy.
      Effect.map(recordOutcome(journal, job, outcome, "give back"), (recorded) => {
        const name = nameOf(job.payload.source)
        if (recorded._tag === "Copied") {
          copied++
          bytes += recorded.result.size
          reporter.fileDone?.(name, recorded.result.size, recorded.result.uid ?? "")
        } else if (recorded._tag === "Failed") {
          failed++
          reporter.fileFailed?.(name, recorded.reason)
          if (recorded.abort) stop ??= recorded.reason
        }
      })

    const takeSome: Effect.Effect<boolean, unknown> = Effect.gen(function*() {
      if (stop !== undefined) return false
      const unit = yield* claimUnit
      if (unit.length === 0) return false
      const together = unit.filter((u) => batchable(u.job))
      const alone = together.length > 1 ? unit.filter((u) => !batchable(u.job)) : unit
      if (together.length > 1) {
        const outcomes = yield* uploadBatch(ctx, together)
        yield* Effect.forEach(outcomes, (o, i) => finish(together[i]!.job, o.result), { discard: true })
      }
      yield* Effect.forEach(alone, (u) => finish(u.job, uploadOne(ctx, u.job, u.op)), { discard: true })
      return true
    })

    // Takes files until none is left (or the help stops).
    const lane = Effect.gen(function*() {
      while (yield* takeSome) {
        // next unit
      }
    })
    yield* Effect.all(Array.from({ length: Math.max(1, options.concurrency ?? DEFAULT_CONCURRENCY) }, () => lane), {
      concurrency: "unbounded",
      discard: true
    })
    return { copied, failed, bytes, ...(stop !== undefined ? { stopped: stop } : {}) } satisfies HelpSummary
  })
