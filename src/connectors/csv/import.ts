/**
 * A CSV import run: plan (plan.ts), then replay exactly once what is not done yet (see
 * src/sync/replay.ts), and report what the service did with it.
 */
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import type { RestClientApi, RestError } from "../../client/rest-client.ts"
import type { JournalApi, JournalError, JournalStateError } from "../../store/journal.ts"
import { CAPABILITY, listsNotMade, missingCapabilities } from "../../sync/capabilities.ts"
import { EXTRA_KINDS, EXTRA_PHASES } from "../../sync/plan-extras.ts"
import { OP_KINDS, originOf, PHASES } from "../../sync/plan.ts"
import { makeExtraExecutors } from "../../sync/replay-extras.ts"
import { makeRecordExecutors } from "../../sync/replay-records.ts"
import { makeReferencesExecutor } from "../../sync/replay-references.ts"
import { replay, type ReplayAborted, type ReplayReport } from "../../sync/replay.ts"
import { attachmentPolicy } from "../presets/attachment-hosts.ts"
import { AttachmentFetchPolicy } from "../presets/attachments.ts"
import { isToolPreset } from "../presets/index.ts"
import { planAttachmentRetries } from "./attachment-retries.ts"
import { PASSES_META } from "./delta.ts"
import { type ImportFailed, ImportUsageError } from "./errors.ts"
import type { ImportOptions } from "./options.ts"
import { planCsvImport } from "./plan.ts"
import type { ImportResult } from "./result.ts"

/** A pass's update of a row (delta.ts `deltaKey.update`), not the `done` of a create in older journals. */
const DELTA_UPDATE_KEY = /\/update\/\d+$/

/**
 * Runs a CSV import: plan, then (unless `dryRun`) replay. `journal` is required unless
 * `dryRun` (then it may name an existing journal file, read only, or be undefined).
 */
export const importCsv = (
  client: RestClientApi,
  journal: JournalApi | { readonly dryRunJournalFile: string | undefined },
  options: ImportOptions
): Effect.Effect<ImportResult, ImportUsageError | ImportFailed | JournalError | JournalStateError | RestError | ReplayAborted> =>
  Effect.gen(function*() {
    const policy = attachmentPolicy(isToolPreset(options.mapping.preset) ? options.mapping.preset : undefined, {
      hosts: options.attachmentHosts,
      maxBytes: options.attachmentMaxBytes
    })
    if (Result.isFailure(policy)) return yield* Effect.fail(new ImportUsageError({ message: policy.failure }))
    const planned = yield* planCsvImport(client, journal, options)
    if (options.dryRun === true || "dryRunJournalFile" in journal) return planned
    const j = journal
    // A rerun retries what failed before (uncertain ones are reconciled first).
    yield* j.retryFailed()
    // Attachments refused for their host before: planned again if it is allowed now, else reported again.
    const refusedBefore = planned.census !== undefined ? (yield* planAttachmentRetries(j, policy.success)).stillRefused : []
    const counts = yield* j.counts()
    if (options.onReplayStart) yield* options.onReplayStart(counts.pending + counts.in_flight)
    const notices = [...planned.notices]
    const onNotice = (line: string) => {
      if (!notices.includes(line)) notices.push(line)
    }
    const notFetched: Array<{ name: string; reason: string }> = [...refusedBefore]
    let attachments = 0
    /** References this run wrote into descriptions and comments. */
    let rewritten = 0
    const onRewritten = (n: number) => {
      rewritten += n
    }
    const executors = [
      ...makeRecordExecutors(client, { ...(options.skewMs !== undefined ? { skewMs: options.skewMs } : {}), onNotice }),
      makeReferencesExecutor(client, { onNotice, onRewritten }),
      ...(options.graphql !== undefined
        ? makeExtraExecutors(client, options.graphql, {
          attachmentsDir: options.attachmentsDir,
          onNotice,
          onReferences: onRewritten,
          onAttachment: (a) => {
            if (a.reason === undefined) attachments++
            else notFetched.push({ name: a.name, reason: a.reason })
          }
        })
        : withoutGraphql(client, onNotice))
    ]
    const adoptedBefore = yield* j.lastAdoptionId()
    let comments = 0
    /** Rows of an earlier pass updated by this run: their pass's update op (see delta.ts). */
    let updated = 0
    const report: ReplayReport = yield* replay(j, executors, {
      phases: [...PHASES, ...EXTRA_PHASES],
      concurrency: options.concurrency ?? 8,
      ...(options.settleWindowMs !== undefined ? { settleWindowMs: options.settleWindowMs } : {}),
      onOpEnd: (op, end) =>
        Effect.suspend(() => {
          if (end === "sent" || end === "reconciled") {
            const fromFile = typeof op.payload === "object" && op.payload !== null && "fileRef" in op.payload
            if (op.kind === EXTRA_KINDS.commentCreate && !fromFile) comments++
            if (op.kind === OP_KINDS.recordUpdate && DELTA_UPDATE_KEY.test(op.key)) updated++
          }
          return options.onOpEnd ? options.onOpEnd(end) : Effect.void
        })
    }).pipe(Effect.provideService(AttachmentFetchPolicy, policy.success))
    // Still pending: waiting on a failed op, or deferred behind an unknown one.
    const after = yield* j.counts()
    const failures = (yield* j.failed(5)).map((op) => {
      const origin = originOf(op.kind, op.payload)
      return `${origin !== undefined ? `${origin}: ` : ""}${op.kind} ${op.key}: ${op.error ?? "failed"}`
    })
    // Every list the journal's runs could not make, named in one line with the reason.
    const notMade = yield* listsNotMade(j, options.workspaceId)
    if (notMade.length > 0) {
      const why = (yield* missingCapabilities(j)).get(CAPABILITY.lists) ?? "lists: not made on this service; records go to the first list"
      const line = `${why}: ${notMade.map((t) => JSON.stringify(t)).join(", ")}`
      notices.splice(0, notices.length, ...notices.filter((n) => !n.startsWith("lists:")), line)
    }
    // A pass is finished when nothing of it is left: the next run is the next pass.
    if (report.failed + report.unknown + after.pending + after.in_flight === 0) {
      yield* j.setMeta(PASSES_META, String(planned.pass))
    }
    return {
      ...planned,
      created: report.doneByKind[OP_KINDS.recordCreate] ?? 0,
      updated,
      deleted: report.doneByKind[OP_KINDS.recordDelete] ?? 0,
      failed: report.failed,
      unknown: report.unknown,
      blocked: after.pending + after.in_flight,
      failures,
      notices,
      ...(notMade.length > 0 ? { listsNotMade: notMade } : {}),
      adopted: (yield* j.adoptions(adoptedBefore)).map(({ detail, namespace, opKey, sourceKey, targetId }) => ({
        opKey,
        namespace,
        sourceKey,
        targetId,
        detail
      })),
      ...(planned.census !== undefined ? { comments, attachments, attachmentsNotFetched: notFetched } : {}),
      ...(planned.census !== undefined ? { references: { rewritten, outside: planned.references?.outside ?? 0 } } : {})
    } satisfies ImportResult
  })

/**
 * Without a GraphQL client, comments and attachments cannot be written: their ops fail
 * naming what is missing (a rerun with the app connection sends them); checklists and the
 * archive still go through REST.
 */
const withoutGraphql = (client: RestClientApi, onNotice: (line: string) => void) => {
  const missing = (kind: string) => ({
    kind,
    execute: () =>
      Effect.fail({
        _tag: "NotConfigured",
        message: "comments and attachments are written through GraphQL: give the app connection (--base-url, --token-id, --token-secret) and rerun"
      })
  })
  // Without the client, makeExtraExecutors leaves out the comment and upload executors.
  return [...makeExtraExecutors(client, undefined, { onNotice }), missing(EXTRA_KINDS.commentCreate), missing(EXTRA_KINDS.fileUpload)]
}
