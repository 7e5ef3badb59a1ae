/**
 * Attachments an earlier run of the import did not fetch because of their host alone
 * (`--attachment-hosts` did not allow it, or a default host resolved to a non-public
 * address). Their upload op ended done with the refusal (`FileUploadResult.hostRefused`),
 * so the comment naming the file was written all the same and the run could finish. Each
 * later run looks at them again, before its replay:
 *
 * - this run's policy allows a host one was refused for: a second upload op
 *   (`extraKey.fileAgain`) and a comment embedding its file (the same words, keyed
 *   `extraKey.commentOfFile` of it) are planned, and the replay fetches and uploads the
 *   file once, as any other;
 * - it does not: nothing is planned or sent, and the attachment is reported as not
 *   fetched with the reason it was refused for, as the run that refused it did.
 *
 * An upload op that already has its second op is left to that one, which may itself be
 * refused (a redirect to another host) and get its own on a later run. The ops are read a
 * page at a time.
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { Schema } from "effect"
import { admitsRefused, type AttachmentPolicy } from "../presets/attachment-hosts.ts"
import type { JournalApi, JournalError, NewOp } from "../../store/journal.ts"
import { EXTRA_KINDS, extraKey, FileUploadResult } from "../../sync/plan-extras.ts"

const PAGE = 2000

export interface AttachmentRetries {
  /** Upload ops planned again: their host is allowed now. */
  readonly planned: number
  /** Attachments still refused for their host, with the reason they were refused for. */
  readonly stillRefused: ReadonlyArray<{ readonly name: string; readonly reason: string }>
}

/** Plans the second upload of each attachment refused for a host `policy` allows (see above). */
export const planAttachmentRetries = (journal: JournalApi, policy: AttachmentPolicy): Effect.Effect<AttachmentRetries, JournalError> =>
  Effect.gen(function*() {
    let planned = 0
    const stillRefused: Array<{ name: string; reason: string }> = []
    for (let after = 0;;) {
      const page = yield* journal.list({ afterSeq: after, limit: PAGE, kinds: [EXTRA_KINDS.fileUpload], states: ["done"] })
      const refused = page.flatMap((op) => {
        const result = Option.getOrUndefined(Schema.decodeUnknownOption(FileUploadResult)(op.result))
        return result !== undefined && "notFetched" in result && result.hostRefused !== undefined && result.hostRefused.length > 0
          ? [{ op, result, refusals: result.hostRefused }]
          : []
      })
      if (refused.length > 0) {
        const known = new Map(
          (yield* journal.getMany(refused.flatMap(({ op }) => [extraKey.fileAgain(op.key), extraKey.commentOfFile(op.key)]))).map((o) => [o.key, o])
        )
        const ops: Array<NewOp> = []
        for (const { op, refusals, result } of refused) {
          const again = extraKey.fileAgain(op.key)
          if (known.has(again)) continue
          const comment = known.get(extraKey.commentOfFile(op.key))
          if (!refusals.some((r) => admitsRefused(policy, r)) || comment === undefined) {
            stillRefused.push({ name: result.name, reason: result.notFetched })
            continue
          }
          ops.push({ key: again, kind: EXTRA_KINDS.fileUpload, payload: op.payload, dependsOn: op.dependsOn })
          ops.push({
            key: extraKey.commentOfFile(again),
            kind: EXTRA_KINDS.commentCreate,
            payload: { ...(comment.payload as Record<string, unknown>), fileRef: again },
            dependsOn: again
          })
          planned++
        }
        if (ops.length > 0) yield* journal.addOps(ops)
      }
      if (page.length < PAGE) break
      after = page[page.length - 1]!.seq
    }
    return { planned, stillRefused }
  })
