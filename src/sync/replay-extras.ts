/**
 * Executors of a migration's follow-ups (plan-extras.ts): comments through GraphQL
 * `createComment` (category TODO), attachments fetched without credentials and uploaded
 * with `uploadFile`, then embedded in a comment; checklists and their items through the
 * operations beyond the documents (assumptions.ts EXTRA_OPERATIONS); the archive through
 * update-record (ARCHIVE_VIA_UPDATE_RECORD), read back before it counts as carried.
 *
 * Exactly once: a comment or a checklist whose answer was lost is looked for on the
 * service before anything is sent again (reconcile); an upload whose answer was lost is
 * uploaded again, which may leave one unreferenced file but never a second attachment (the
 * comment embeds the uid the journal holds).
 *
 * What the service cannot hold, or an attachment that cannot be fetched, ends its op done
 * with the reason in the result (a notice, or `notFetched`): the import reports it, and
 * the comment of an attachment not fetched still says which file it was and where. One
 * refused for its host alone also says so (`hostRefused`): a later run that allows the
 * host uploads it then (csv/attachment-retries.ts).
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { Schema } from "effect"
import { notAvailableLine } from "../client/errors.ts"
import type { GraphqlClientApi } from "../client/graphql-client.ts"
import { guessContentType } from "../client/multipart.ts"
import type { RestClientApi } from "../client/rest-client.ts"
import { fetchAttachment } from "../connectors/presets/attachments.ts"
import { commentVisibleText, textToHtml } from "../schema/comments.ts"
import { ACTIVITY_MAX_LIMIT } from "../schema/limits.ts"
import { Checklist } from "../schema/records.ts"
import { allPages, Paging } from "../streams/paging.ts"
import type { JournalApi, Op } from "../store/journal.ts"
import { recordNamespace } from "./plan.ts"
import {
  ChecklistCreatePayload,
  ChecklistItemCreatePayload,
  checklistNamespace,
  CommentCreatePayload,
  commentNamespace,
  EXTRA_KINDS,
  FileUploadPayload,
  FileUploadResult,
  RecordArchivePayload
} from "./plan-extras.ts"
import type { ExecFailure, Executor, OpOutcome } from "./replay.ts"
import { rewriteHtml, rewriteText } from "./references.ts"
import { referenceTargets } from "./replay-references.ts"
import { capabilityMemory } from "./capabilities.ts"
import { type ArchivedWrites, archivedWrites, decode, isNotAvailable, journalFailure, lookupOrFail, noticeOnce, unresolved } from "./replay-records.ts"

export interface ExtraExecutorOptions {
  /** Where attachments named in the export are looked for by file name. */
  readonly attachmentsDir?: string | undefined
  /** Told once per kind of thing the service cannot hold (one line). */
  readonly onNotice?: (line: string) => void
  /** Told of each attachment this run: uploaded, or not fetched and why. */
  readonly onAttachment?: (a: { readonly name: string; readonly reason: string | undefined }) => void
  /** Told of the references a comment carried this run rewrote (references.ts). */
  readonly onReferences?: (n: number) => void
}

const recordOf = (p: { readonly workspaceId: string; readonly recordRef: string }, journal: JournalApi) =>
  lookupOrFail(journal, recordNamespace(p.workspaceId), p.recordRef, `the record of ${p.recordRef} was not created`)

const done = (result: unknown, mappings: OpOutcome["mappings"] = []): OpOutcome => ({ result, mappings })

const failure = (e: { readonly _tag: string; readonly message: string }): ExecFailure => e

/** The upload op's result, as the comment embedding it needs it. */
const uploadedFile = (journal: JournalApi, key: string) =>
  Effect.gen(function*() {
    const op = yield* journal.get(key).pipe(Effect.mapError(journalFailure))
    if (Option.isNone(op) || op.value.state !== "done") return yield* Effect.fail(unresolved(`the upload ${key} is not done`))
    return yield* Schema.decodeUnknownEffect(FileUploadResult)(op.value.result).pipe(
      Effect.mapError((e) => unresolved(`the upload ${key} has an unreadable result: ${e.message}`))
    )
  })

const commentTextOf = (p: CommentCreatePayload, file: FileUploadResult | undefined): string =>
  file !== undefined && "notFetched" in file ? `${p.text}\n(not attached: ${file.notFetched})` : p.text

/** Every comment of a record, as list-record-activity gives them. */
export const commentsOf = (client: RestClientApi, workspaceId: string, recordId: string) =>
  allPages(
    (skip, limit) =>
      Effect.map(
        client.listRecordActivity({ workspaceId, recordId, type: "comments", skip, limit }),
        (page) => Paging.totalCount(page.items, page.totalCount, skip)
      ),
    ACTIVITY_MAX_LIMIT
  )

/** The body a comment op sends: its text as HTML, or the attribution line then the moved body. */
const bodyOf = (p: CommentCreatePayload, text: string): { readonly html: string; readonly text: string } =>
  p.html === undefined
    ? { html: textToHtml(text), text }
    : p.text === ""
    ? { html: p.html, text: commentVisibleText(p.html) }
    : { html: `${textToHtml(p.text)}${p.html}`, text: `${p.text}\n${commentVisibleText(p.html)}` }

/** The comment with the records its text names written in (references.ts); fails while one is not created yet. */
const withReferences = (p: CommentCreatePayload, journal: JournalApi) =>
  p.refs === undefined || p.refs.length === 0
    ? Effect.succeed(p)
    : Effect.map(referenceTargets(journal, p.workspaceId, p.refs), (targets) => ({
      ...p,
      text: rewriteText(p.text, targets),
      ...(p.html !== undefined ? { html: rewriteHtml(p.html, targets) } : {})
    }))

const commentExecutor = (client: RestClientApi, graphql: GraphqlClientApi, options: ExtraExecutorOptions): Executor => {
  const prepare = (op: Op, journal: JournalApi) =>
    Effect.gen(function*() {
      const p = yield* withReferences(yield* decode(CommentCreatePayload, op), journal)
      const recordId = yield* recordOf(p, journal)
      const file = p.fileRef === undefined ? undefined : yield* uploadedFile(journal, p.fileRef)
      const parentId = p.parentRef === undefined
        ? undefined
        : yield* lookupOrFail(journal, commentNamespace(p.workspaceId), p.parentRef, `the comment ${p.parentRef} replied to was not created`)
      return { p, recordId, file, parentId, body: bodyOf(p, commentTextOf(p, file)) }
    })
  const outcome = (p: CommentCreatePayload, id: string, recordId: string) => {
    if (p.refs !== undefined && p.refs.length > 0) options.onReferences?.(p.refs.length)
    return done({ id, recordId }, p.sourceKey === undefined ? [] : [{ namespace: commentNamespace(p.workspaceId), sourceKey: p.sourceKey, targetId: id }])
  }
  return {
    kind: EXTRA_KINDS.commentCreate,
    // Comments of one record one at a time: they keep the export's order, and a
    // reconciliation can tell which of them it found.
    group: (op) => {
      const ref = (op.payload as { recordRef?: unknown } | null)?.recordRef
      return typeof ref === "string" ? `comments:${ref}` : undefined
    },
    execute: (op, journal) =>
      Effect.gen(function*() {
        const { body, file, p, parentId, recordId } = yield* prepare(op, journal)
        const attachments = file !== undefined && "uid" in file ? [file] : []
        const comment = yield* graphql
          .createComment({
            html: body.html,
            text: body.text,
            category: "TODO",
            categoryId: recordId,
            attachments,
            ...(parentId !== undefined ? { parentId } : {})
          })
          .pipe(Effect.mapError(failure))
        return outcome(p, comment.id, recordId)
      }),
    reconcile: (op, journal) =>
      Effect.gen(function*() {
        const { body, p, recordId } = yield* prepare(op, journal)
        const wanted = commentVisibleText(body.html)
        const items = yield* commentsOf(client, p.workspaceId, recordId).pipe(Effect.mapError(failure))
        // A comment already taken for another source comment (same words) is not this one.
        const taken = p.sourceKey === undefined
          ? new Set<string>()
          : yield* journal.mappedTargets(commentNamespace(p.workspaceId), items.map((c) => c.id)).pipe(Effect.mapError(journalFailure))
        const found = items.find((c) =>
          c.deletedAt === null && c.html !== null && !taken.has(c.id) && commentVisibleText(c.html) === wanted
        )
        return found === undefined ? Option.none() : Option.some(outcome(p, found.id, recordId))
      })
  }
}

const fileExecutor = (graphql: GraphqlClientApi, options: ExtraExecutorOptions): Executor => ({
  kind: EXTRA_KINDS.fileUpload,
  execute: (op, journal) =>
    Effect.gen(function*() {
      const p = yield* decode(FileUploadPayload, op)
      // The record must exist before its file is worth fetching.
      yield* recordOf(p, journal)
      const got = yield* fetchAttachment(p.name, p.sources, options.attachmentsDir)
      if (got._tag === "NotFetched") {
        options.onAttachment?.({ name: p.name, reason: got.reason })
        return done({ notFetched: got.reason, name: p.name, ...(got.hostRefusals !== undefined ? { hostRefused: got.hostRefusals } : {}) })
      }
      const uploaded = yield* graphql
        .uploadFile({
          projectId: p.workspaceId,
          file: { name: p.name, contentType: guessContentType(p.name), size: got.bytes.byteLength, body: { _tag: "Bytes", bytes: got.bytes } }
        })
        .pipe(Effect.mapError(failure))
      options.onAttachment?.({ name: p.name, reason: undefined })
      return done({ uid: uploaded.uid, name: uploaded.name, size: uploaded.size, type: uploaded.type, extension: uploaded.extension })
    })
})

/** create-checklist and create-checklist-item answer the object; the id is all that is read. */
const Created = Schema.Struct({ id: Schema.optional(Schema.String) })

const checklistsOf = (client: RestClientApi, workspaceId: string, recordId: string) =>
  Effect.map(client.getRecord({ workspaceId, recordId }), (detail) => {
    const raw = (detail as { checklists?: unknown }).checklists
    return Array.isArray(raw) ? raw.flatMap((c) => Option.toArray(Schema.decodeUnknownOption(Checklist)(c))) : []
  })

const LEFT_OUT_CHECKLIST = ""

const checklistExecutor = (client: RestClientApi, notice: (line: string) => void): Executor => {
  const find = (p: ChecklistCreatePayload, recordId: string) =>
    Effect.map(checklistsOf(client, p.workspaceId, recordId), (lists) => lists.find((c) => c.title === p.title))
  return {
    kind: EXTRA_KINDS.checklistCreate,
    group: (op) => {
      const ref = (op.payload as { recordRef?: unknown } | null)?.recordRef
      return typeof ref === "string" ? `checklists:${ref}` : undefined
    },
    execute: (op, journal) =>
      Effect.gen(function*() {
        const p = yield* decode(ChecklistCreatePayload, op)
        const recordId = yield* recordOf(p, journal)
        const created = yield* client
          .call("create-checklist", { workspaceId: p.workspaceId, recordId, title: p.title }, Created, { idempotent: false, beyondDocuments: true })
          .pipe(
            Effect.map(Option.some),
            Effect.catchIf(isNotAvailable, (e) => {
              notice(`${notAvailableLine("checklists", e)}; records are created without them`)
              return Effect.succeed(Option.none<{ readonly id?: string | undefined }>())
            }),
            Effect.mapError(failure)
          )
        if (Option.isNone(created)) {
          return done({ leftOut: true }, [{ namespace: checklistNamespace(p.workspaceId), sourceKey: op.key, targetId: LEFT_OUT_CHECKLIST }])
        }
        // The answer's shape is not documented: without an id, the checklist is found by title.
        const id = created.value.id ?? (yield* find(p, recordId).pipe(Effect.mapError(failure)))?.id
        if (id === undefined) return yield* Effect.fail(unresolved(`checklist ${JSON.stringify(p.title)} was created but not found`))
        return done({ id }, [{ namespace: checklistNamespace(p.workspaceId), sourceKey: op.key, targetId: id }])
      }),
    reconcile: (op, journal) =>
      Effect.gen(function*() {
        const p = yield* decode(ChecklistCreatePayload, op)
        const recordId = yield* recordOf(p, journal)
        const found = yield* find(p, recordId).pipe(Effect.mapError(failure))
        return found === undefined
          ? Option.none()
          : Option.some(done({ id: found.id }, [{ namespace: checklistNamespace(p.workspaceId), sourceKey: op.key, targetId: found.id }]))
      })
  }
}

const checklistItemExecutor = (client: RestClientApi): Executor => {
  const target = (op: Op, journal: JournalApi) =>
    Effect.gen(function*() {
      const p = yield* decode(ChecklistItemCreatePayload, op)
      const checklistId = yield* lookupOrFail(journal, checklistNamespace(p.workspaceId), p.checklistRef, `the checklist of ${p.checklistRef} was not created`)
      return { p, checklistId }
    })
  return {
    kind: EXTRA_KINDS.checklistItemCreate,
    group: (op) => {
      const ref = (op.payload as { checklistRef?: unknown } | null)?.checklistRef
      return typeof ref === "string" ? `items:${ref}` : undefined
    },
    execute: (op, journal) =>
      Effect.gen(function*() {
        const { checklistId, p } = yield* target(op, journal)
        if (checklistId === LEFT_OUT_CHECKLIST) return done({ leftOut: true })
        const created = yield* client
          .call(
            "create-checklist-item",
            { workspaceId: p.workspaceId, checklistId, title: p.title, ...(p.done ? { done: true } : {}) },
            Created,
            { idempotent: false, beyondDocuments: true }
          )
          .pipe(Effect.mapError(failure))
        return done({ id: created.id ?? null })
      }),
    reconcile: (op, journal) =>
      Effect.gen(function*() {
        const { checklistId, p } = yield* target(op, journal)
        if (checklistId === LEFT_OUT_CHECKLIST) return Option.some(done({ leftOut: true }))
        const recordId = yield* recordOf(p, journal)
        const lists = yield* checklistsOf(client, p.workspaceId, recordId).pipe(Effect.mapError(failure))
        const item = lists.find((c) => c.id === checklistId)?.checklistItems.find((i) => i.title === p.title)
        return item === undefined ? Option.none() : Option.some(done({ id: item.id }))
      })
  }
}

/**
 * The archive (update-record `archived: true`, beyond its documented fields): read back as
 * `archivedWrites` says; a service that refuses or ignores it gets the item live, told once.
 */
const archiveExecutor = (client: RestClientApi, archived: ArchivedWrites): Executor => ({
  kind: EXTRA_KINDS.recordArchive,
  execute: (op, journal) =>
    Effect.gen(function*() {
      const p = yield* decode(RecordArchivePayload, op)
      const recordId = yield* recordOf(p, journal)
      const leftOut = done({ id: recordId, archivedLeftOut: true })
      if (!(yield* archived.settable(journal))) return leftOut
      const sent = yield* client
        .updateRecord({ workspaceId: p.workspaceId, recordId, archived: true } as Parameters<RestClientApi["updateRecord"]>[0])
        .pipe(
          Effect.as(true),
          Effect.catchIf(
            // The op sends nothing else: any refusal is the field's.
            (e) => e._tag === "InvalidInput" || isNotAvailable(e),
            () => Effect.as(archived.refused(journal), false)
          ),
          Effect.mapError(failure)
        )
      const carried = sent && (yield* archived.confirm(journal, p.workspaceId, recordId, true))
      return carried ? done({ id: recordId }) : leftOut
    })
})

/** Every follow-up executor of a migration. */
export const makeExtraExecutors = (
  client: RestClientApi,
  graphql: GraphqlClientApi | undefined,
  options: ExtraExecutorOptions = {}
): Array<Executor> => {
  const notice = noticeOnce(options.onNotice)
  return [
    ...(graphql !== undefined ? [commentExecutor(client, graphql, options), fileExecutor(graphql, options)] : []),
    checklistExecutor(client, notice),
    checklistItemExecutor(client),
    archiveExecutor(client, archivedWrites(client, capabilityMemory(), notice, "archived items are imported live"))
  ]
}
