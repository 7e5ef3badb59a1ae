/**
 * The ops a migration plans after a record's create: what the record holds beyond its
 * fields (comments, attachments, checklists, its archived state). Each depends on the op
 * it needs (`depends_on`), so a record that failed to be created blocks its follow-ups,
 * and each is keyed under the create's key, so a rerun finds every one of them done.
 *
 * Comments cannot be written in another's name or at another time: each opens with one
 * attribution line (`attributionLine`) naming the original author and date, which is
 * also what reconciliation looks for on the service.
 */
import { Schema } from "effect"
import type { SourceAttachment, SourceComment } from "../connectors/presets/model.ts"
import { Reference, REFERENCES_KIND } from "./references.ts"

export const EXTRA_KINDS = {
  fileUpload: "file.upload",
  checklistCreate: "checklist.create",
  commentCreate: "comment.create",
  checklistItemCreate: "checklist.item.create",
  recordArchive: "record.archive"
} as const

/**
 * After the records: uploads, checklists and the descriptions' references (every record
 * they may name exists by then), then what embeds or fills them, then the archive, last,
 * since a service may refuse writes to an archived record.
 */
export const EXTRA_PHASES: ReadonlyArray<ReadonlyArray<string>> = [
  [EXTRA_KINDS.fileUpload, EXTRA_KINDS.checklistCreate, REFERENCES_KIND],
  [EXTRA_KINDS.commentCreate, EXTRA_KINDS.checklistItemCreate],
  [EXTRA_KINDS.recordArchive]
]

/** id_map namespaces of the follow-ups (per target workspace), keyed by op key. */
export const checklistNamespace = (workspaceId: string) => `checklist:${workspaceId}`
/** Source comment id -> target comment id (replies find their parent through it). */
export const commentNamespace = (workspaceId: string) => `comment:${workspaceId}`

const Str = Schema.String
const opt = <S extends Schema.Constraint>(s: S) => Schema.optional(s)

/** The record a follow-up belongs to: the source key of its create op (the op's key). */
const Target = { workspaceId: Str, recordRef: Str, origin: opt(Str) }

/**
 * A comment; `fileRef` names the `file.upload` op whose file it embeds. A comment moved
 * from another workspace carries its body as `html` (attachment elements already pointing
 * at the target's files; `text` is then the attribution line sent before it), its own id
 * as `sourceKey` (mapped in `commentNamespace`) and its parent's as `parentRef`. `refs`:
 * the records its text names (references.ts), resolved as it is sent.
 */
export const CommentCreatePayload = Schema.Struct({
  ...Target,
  text: Str,
  fileRef: opt(Str),
  html: opt(Str),
  sourceKey: opt(Str),
  parentRef: opt(Str),
  refs: opt(Schema.Array(Reference))
})
export type CommentCreatePayload = typeof CommentCreatePayload.Type

/** Where an attachment's bytes come from: a URL fetched without credentials, or a file under `--attachments`. */
export const FileSource = Schema.Union([
  Schema.Struct({ url: Str }),
  Schema.Struct({ dirName: Str })
])
export type FileSource = typeof FileSource.Type

/** One attachment: fetched, uploaded to the workspace; the comment embedding it follows. */
export const FileUploadPayload = Schema.Struct({ ...Target, name: Str, sources: Schema.Array(FileSource) })
export type FileUploadPayload = typeof FileUploadPayload.Type

/**
 * What a `file.upload` op ends with: the uploaded file, or why it could not be fetched;
 * `hostRefused`: the URLs refused for their host alone (presets/attachment-hosts.ts
 * `HostRefusal`), which a later run allowing the host fetches (csv/attachment-retries.ts).
 */
export const FileUploadResult = Schema.Union([
  Schema.Struct({ uid: Str, name: Str, size: Schema.Number, type: Str, extension: Str }),
  Schema.Struct({ notFetched: Str, name: Str, hostRefused: opt(Schema.Array(Schema.Struct({ origin: Str, named: Schema.Boolean }))) })
])
export type FileUploadResult = typeof FileUploadResult.Type

export const ChecklistCreatePayload = Schema.Struct({ ...Target, title: Str })
export type ChecklistCreatePayload = typeof ChecklistCreatePayload.Type

export const ChecklistItemCreatePayload = Schema.Struct({ ...Target, checklistRef: Str, title: Str, done: Schema.Boolean })
export type ChecklistItemCreatePayload = typeof ChecklistItemCreatePayload.Type

export const RecordArchivePayload = Schema.Struct(Target)
export type RecordArchivePayload = typeof RecordArchivePayload.Type

/** Keys of the follow-ups of the create keyed `createKey`. */
export const extraKey = {
  comment: (createKey: string, n: number) => `${createKey}/comment/${n}`,
  file: (createKey: string, n: number) => `${createKey}/file/${n}`,
  fileComment: (createKey: string, n: number) => `${createKey}/file/${n}/comment`,
  /** The comment that embeds the file of the upload op keyed `fileKey` (`fileComment` of `file`). */
  commentOfFile: (fileKey: string) => `${fileKey}/comment`,
  /** The upload of an attachment again, once a later run allows the host it was refused for. */
  fileAgain: (fileKey: string) => `${fileKey}/again`,
  checklist: (createKey: string, n: number) => `${createKey}/checklist/${n}`,
  checklistItem: (createKey: string, n: number, m: number) => `${createKey}/checklist/${n}/${m}`,
  archive: (createKey: string) => `${createKey}/archive`,
  /** The parent's "Sub-tasks" checklist, and one item per sub-task (keyed by the sub-task's create). */
  subtasks: (parentKey: string) => `${parentKey}/subtasks`,
  subtaskItem: (parentKey: string, childKey: string) => `${parentKey}/subtasks/${childKey}`
} as const

/** The title of the checklist that lists a record's sub-tasks. */
export const SUBTASKS_CHECKLIST = "Sub-tasks"

/** "Alice Example wrote on 2025-11-05T17:18:00Z (Jira):" — the first line of a migrated comment. */
export const attributionLine = (tool: string, comment: Pick<SourceComment, "author" | "date">): string =>
  `${comment.author} wrote${comment.date !== undefined ? ` on ${comment.date}` : ""} (${tool}):`

/** The whole text of a migrated comment: attribution line, then the body. */
export const commentText = (tool: string, comment: SourceComment): string =>
  `${attributionLine(tool, comment)}\n${comment.body}`

/** The text of the comment that carries an attachment: who attached what, when, from where. */
export const attachmentText = (tool: string, a: SourceAttachment): string =>
  `${a.author ?? "Someone"} attached ${a.name}${a.date !== undefined ? ` on ${a.date}` : ""} (${tool})${a.url !== undefined ? `:\n${a.url}` : ""}`
