/**
 * A helper of a spread copy (docs/scale.md): a second process, usually on another
 * machine, that takes files of a copy whose main process planned them into a shared
 * PostgreSQL journal. It plans nothing and lists nothing: it claims the copy's files one
 * at a time from the end of the plan (the main process works from the start), each claim
 * committed before any byte moves, and stops when none is left.
 *
 * It takes only files never tried before: a file an earlier attempt left behind may need
 * the time of that attempt to be settled (workspace-upload.ts, `settleEarlier`), which
 * the main process read before its run began. What the helpers copy, the main process
 * counts and reports (copy.ts), so the command's result is the same however many helped.
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { isAbort } from "../../client/predicates.ts"
import { copyJobIdOf, type CopyFilesOptions, CopySetupError, DEFAULT_CONCURRENCY } from "./copy.ts"
import { detailOf } from "./errors.ts"
import { decodePayload, FILE_COPY_KIND, FILE_NAMESPACE, nameOf, sourceKeyOf } from "./plan.ts"
import { makeAdopter, type UploadContext, uploadOne } from "./workspace-upload.ts"

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

    const takeOne: Effect.Effect<boolean, unknown> = Effect.gen(function*() {
      if (stop !== undefined) return false
      const next = yield* journal.claimNext({ kinds: [FILE_COPY_KIND], keyPrefix, descending: true, untried: true })
      if (Option.isNone(next)) return false
      const op = next.value
      const payload = decodePayload(op.payload)
      const name = nameOf(payload.source)
      const outcome = yield* Effect.either(uploadOne(ctx, { key: op.key, payload, previousAttemptAt: null }, op))
      if (outcome._tag === "Right") {
        const r = outcome.right
        const mappings = r.uid === null ? [] : [{ namespace: FILE_NAMESPACE, sourceKey: sourceKeyOf(payload.source), targetId: r.uid }]
        yield* journal.complete(op.key, r, mappings)
        copied++
        bytes += r.size
        reporter.fileDone?.(name, r.size, r.uid ?? "")
      } else {
        const reason = detailOf(outcome.left)
        yield* journal.fail(op.key, reason)
        failed++
        reporter.fileFailed?.(name, reason)
        if (isAbort(outcome.left)) stop ??= reason
      }
      return true
    })

    const lane = Effect.iterate(true, { while: (more) => more, body: () => takeOne })
    yield* Effect.all(Array.from({ length: Math.max(1, options.concurrency ?? DEFAULT_CONCURRENCY) }, () => lane), {
      concurrency: "unbounded",
      discard: true
    })
    return { copied, failed, bytes, ...(stop !== undefined ? { stopped: stop } : {}) } satisfies HelpSummary
  })
