/**
 * The GraphQL client: `POST {baseUrl}/graphql` with the token id/secret headers, JSON
 * for ordinary calls and the multipart convention for uploads. An `errors` array becomes
 * a GraphqlError carrying the code (`extensions.code`, else `code`). Every attempt goes
 * through the shared Limiter and the one retry policy; queries are safe to repeat,
 * creating mutations are not.
 *
 * Decoding follows docs/architecture.md ("Decoding policy"): documents select only
 * documented fields, which are required; operations whose return the documents do not
 * show (role reads and updates, every webhook operation but `webhooks`) answer an
 * Option (the shape when it is one) or, for deletes, true unless the answer is `false`.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as HttpClientRequest from "effect/http/HttpClientRequest"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as SchemaTransformation from "effect/SchemaTransformation"
import {
  type AttachmentElement,
  Comment,
  type CommentCategory,
  CreateCommentInput as CreateCommentInputSchema,
  renderAttachment
} from "../schema/comments.ts"
import { GraphqlErrorEntry, graphqlErrorCode } from "../schema/errors.ts"
import {
  type CreateFileInput,
  type CreateRecordCustomFieldFileInput,
  FileProjectRef,
  GraphqlFile
} from "../schema/files.ts"
import { BATCH_MAX_BYTES, BATCH_MAX_FILES, MULTIPART_MAX_FILE_BYTES } from "../schema/limits.ts"
import { answerIfShaped, openStruct } from "../schema/open.ts"
import {
  type CreateWorkspaceUserRoleInput,
  GraphqlUser,
  Invitation,
  type InviteUserInput,
  MutationResult,
  ProjectUserList,
  ProjectUserRole,
  type RemoveOrganizationUserInput,
  type RemoveProjectUserInput
} from "../schema/users.ts"
import { type CreateWebhookInput, type UpdateWebhookInput, Webhook, WebhooksPage } from "../schema/webhooks.ts"
import { Connection, type ConnectionConfig, headerNames, redact } from "./config.ts"
import {
  DecodeError,
  Forbidden,
  GraphqlError,
  type HttpFailure,
  InputRejected,
  InvalidInput,
  LimitExceeded,
  type OutcomeUnknown,
  Unauthorized
} from "./errors.ts"
import { buildMultipart, type UploadSource } from "./multipart.ts"
import { Pipeline, type PipelineApi } from "./pipeline.ts"
import { errorPartsOf, failureOfStatus } from "./responses.ts"
import { summarizeInput } from "./retry.ts"
import { type Answer, decodeWith, parseJson } from "./transport.ts"

export type GraphqlCallError = HttpFailure | GraphqlError | OutcomeUnknown | LimitExceeded | InputRejected

export interface ExecuteOptions {
  /** Name used in errors; defaults to the operation name in the document. */
  readonly operation?: string
  /** Sent as `<p>-workspace-id` (workspace-scoped operations). */
  readonly workspaceId?: string | undefined
  /** Safe to repeat; default: true for queries, false for mutations. */
  readonly idempotent?: boolean
}

/** A File as the GraphQL client reads it: `project` is null for an organization-level file. */
export const UploadedFile = openStruct({ ...GraphqlFile.fields, project: Schema.NullOr(FileProjectRef) })
export type UploadedFile = typeof UploadedFile.Type

export interface UploadFileInput {
  readonly file: UploadSource
  /** Organization id or slug; defaults to the configured org. */
  readonly companyId?: string
  /** Workspace id or slug; omit for an organization-level file. */
  readonly projectId?: string
}

export interface UploadFilesInput {
  /** At most 10 files, at most 1 GB in total. */
  readonly files: ReadonlyArray<UploadSource>
  readonly companyId?: string
  readonly projectId: string
}

/** What `createComment` takes: the documented input plus attachments to embed. */
export interface NewComment {
  readonly html: string
  readonly text: string
  readonly category: CommentCategory
  readonly categoryId: string
  readonly parentId?: string
  /** Appended to `html` as attachment elements; the comment is sent with `tiptap: true`. */
  readonly attachments?: ReadonlyArray<AttachmentElement>
  /** Defaults to true so attachment markup is parsed. */
  readonly tiptap?: boolean
}

export interface WorkspaceUserListInput {
  readonly projectId: string
  /** Page size. */
  readonly first?: number
  readonly skip?: number
  readonly search?: string
  /** Select each user's `projectLevel` in this workspace. */
  readonly withLevel?: boolean
}

export interface UpdateWorkspaceUserRoleInput {
  readonly id: string
  readonly name?: string
  readonly isRecordsEnabled?: boolean
  readonly canCreateRecords?: boolean
  readonly canDeleteRecords?: boolean
  readonly [toggle: string]: string | boolean | undefined
}

export interface GraphqlClientApi {
  /** Runs one GraphQL document; `dataSchema` decodes `data`. */
  readonly execute: <A, I>(
    query: string,
    variables: Readonly<Record<string, unknown>>,
    dataSchema: Schema.Codec<A, I>,
    options?: ExecuteOptions
  ) => Effect.Effect<A, GraphqlCallError>
  /**
   * Runs one GraphQL document as a multipart upload. Each file's variable paths (e.g.
   * `variables.input.file`) must hold null in `variables`.
   */
  readonly executeMultipart: <A, I>(
    query: string,
    variables: Readonly<Record<string, unknown>>,
    files: ReadonlyArray<{ readonly source: UploadSource; readonly paths: ReadonlyArray<string> }>,
    dataSchema: Schema.Codec<A, I>,
    options?: ExecuteOptions
  ) => Effect.Effect<A, GraphqlCallError>

  readonly uploadFile: (input: UploadFileInput) => Effect.Effect<UploadedFile, GraphqlCallError>
  readonly uploadFiles: (input: UploadFilesInput) => Effect.Effect<ReadonlyArray<UploadedFile>, GraphqlCallError>
  readonly createFile: (
    input: Omit<CreateFileInput, "companyId"> & { readonly companyId?: string }
  ) => Effect.Effect<UploadedFile, GraphqlCallError>
  readonly createRecordCustomFieldFile: (input: CreateRecordCustomFieldFileInput) => Effect.Effect<boolean, GraphqlCallError>
  readonly createComment: (input: NewComment) => Effect.Effect<Comment, GraphqlCallError>

  readonly workspaceUserList: (input: WorkspaceUserListInput) => Effect.Effect<ProjectUserList, GraphqlCallError>
  readonly assignees: (input: { readonly projectId: string }) => Effect.Effect<ReadonlyArray<GraphqlUser>, GraphqlCallError>
  readonly currentUser: () => Effect.Effect<GraphqlUser, GraphqlCallError>
  readonly inviteUser: (input: InviteUserInput) => Effect.Effect<boolean, GraphqlCallError>
  readonly removeProjectUser: (input: RemoveProjectUserInput) => Effect.Effect<MutationResult, GraphqlCallError>
  readonly removeOrganizationUser: (input: RemoveOrganizationUserInput) => Effect.Effect<boolean | null, GraphqlCallError>
  readonly invitations: (
    input: { readonly projectId: string; readonly pending?: boolean }
  ) => Effect.Effect<ReadonlyArray<Invitation>, GraphqlCallError>
  readonly myInvitations: () => Effect.Effect<ReadonlyArray<Invitation>, GraphqlCallError>
  readonly resendInvitation: (id: string) => Effect.Effect<Invitation, GraphqlCallError>
  readonly cancelInvitation: (id: string) => Effect.Effect<boolean, GraphqlCallError>

  /** Documented to return a ProjectUserRole. */
  readonly createWorkspaceUserRole: (input: CreateWorkspaceUserRoleInput) => Effect.Effect<ProjectUserRole, GraphqlCallError>
  // The returns of the other role operations are not shown: the role when the answer is one.
  readonly updateWorkspaceUserRole: (
    input: UpdateWorkspaceUserRoleInput
  ) => Effect.Effect<Option.Option<ProjectUserRole>, GraphqlCallError>
  /** True unless the service answered `false`. */
  readonly deleteWorkspaceUserRole: (id: string) => Effect.Effect<boolean, GraphqlCallError>
  readonly workspaceUserRole: (id: string) => Effect.Effect<Option.Option<ProjectUserRole>, GraphqlCallError>
  readonly workspaceUserRoles: (
    projectId: string
  ) => Effect.Effect<Option.Option<ReadonlyArray<ProjectUserRole>>, GraphqlCallError>

  // The returns of the webhook operations are not shown (but `webhooks`, an object with items).
  readonly createWebhook: (input: CreateWebhookInput) => Effect.Effect<Option.Option<Webhook>, GraphqlCallError>
  readonly updateWebhook: (input: UpdateWebhookInput) => Effect.Effect<Option.Option<Webhook>, GraphqlCallError>
  readonly disableWebhook: (id: string) => Effect.Effect<Option.Option<Webhook>, GraphqlCallError>
  /** True unless the service answered `false`. */
  readonly deleteWebhook: (id: string) => Effect.Effect<boolean, GraphqlCallError>
  readonly webhooks: () => Effect.Effect<WebhooksPage, GraphqlCallError>
  readonly webhook: (id: string) => Effect.Effect<Option.Option<Webhook>, GraphqlCallError>
}

export class GraphqlClient extends Context.Service<GraphqlClient, GraphqlClientApi>()("worksync/GraphqlClient") {}

// ----------------------------------------------------------------------------------------
// Documents. Only documented fields are selected, so the documents stay valid against
// the real service.

const FILE_FIELDS = "id uid name size type extension shared status createdAt project { id } folder { id }"
const USER_FIELDS = "id fullName email image { medium }"
const INVITATION_FIELDS = "id email accessLevel expiredAt invitedBy { fullName }"
const ROLE_FIELDS = "id name canCreateRecords canDeleteRecords"
const WEBHOOK_FIELDS = "id uid name url secret status events projectIds enabled metadata createdAt updatedAt"
const COMMENT_FIELDS = "id html text createdAt"

const UPLOAD_FILE = `mutation uploadFile($input: UploadFileInput!) { uploadFile(input: $input) { ${FILE_FIELDS} } }`
const UPLOAD_FILES = `mutation uploadFiles($input: UploadFilesInput!) { uploadFiles(input: $input) { ${FILE_FIELDS} } }`
const CREATE_FILE = `mutation createFile($input: CreateFileInput!) { createFile(input: $input) { ${FILE_FIELDS} } }`
const CREATE_CF_FILE =
  `mutation createRecordCustomFieldFile($input: CreateRecordCustomFieldFileInput!) { createRecordCustomFieldFile(input: $input) }`
const CREATE_COMMENT =
  `mutation createComment($input: CreateCommentInput!) { createComment(input: $input) { ${COMMENT_FIELDS} } }`
const CURRENT_USER = `query currentUser { currentUser { ${USER_FIELDS} } }`
const ASSIGNEES = `query assignees($projectId: String!) { assignees(projectId: $projectId) { ${USER_FIELDS} } }`
const INVITE_USER = `mutation inviteUser($input: InviteUserInput!) { inviteUser(input: $input) }`
const REMOVE_PROJECT_USER =
  `mutation removeProjectUser($input: RemoveProjectUserInput!) { removeProjectUser(input: $input) { success operationId } }`
const REMOVE_ORG_USER =
  `mutation removeOrganizationUser($input: RemoveOrganizationUserInput!) { removeOrganizationUser(input: $input) }`
const MY_INVITATIONS = `query myInvitations { myInvitations { ${INVITATION_FIELDS} } }`
const RESEND_INVITATION = `mutation resendInvitation($id: String!) { resendInvitation(id: $id) { ${INVITATION_FIELDS} } }`
const CANCEL_INVITATION = `mutation cancelInvitation($id: String!) { cancelInvitation(id: $id) }`
const CREATE_ROLE =
  `mutation createWorkspaceUserRole($input: CreateWorkspaceUserRoleInput!) { createWorkspaceUserRole(input: $input) { ${ROLE_FIELDS} } }`
const UPDATE_ROLE =
  `mutation updateWorkspaceUserRole($input: UpdateWorkspaceUserRoleInput!) { updateWorkspaceUserRole(input: $input) { ${ROLE_FIELDS} } }`
const DELETE_ROLE = `mutation deleteWorkspaceUserRole($id: String!) { deleteWorkspaceUserRole(id: $id) }`
const ROLE = `query workspaceUserRole($id: String!) { workspaceUserRole(id: $id) { ${ROLE_FIELDS} } }`
const ROLES = `query workspaceUserRoles($projectId: String!) { workspaceUserRoles(projectId: $projectId) { ${ROLE_FIELDS} } }`
const CREATE_WEBHOOK = `mutation createWebhook($input: CreateWebhookInput!) { createWebhook(input: $input) { ${WEBHOOK_FIELDS} } }`
const UPDATE_WEBHOOK = `mutation updateWebhook($input: UpdateWebhookInput!) { updateWebhook(input: $input) { ${WEBHOOK_FIELDS} } }`
const DISABLE_WEBHOOK = `mutation disableWebhook($id: String!) { disableWebhook(id: $id) { ${WEBHOOK_FIELDS} } }`
const DELETE_WEBHOOK = `mutation deleteWebhook($id: String!) { deleteWebhook(id: $id) }`
const WEBHOOKS = `query webhooks { webhooks { items { ${WEBHOOK_FIELDS} } } }`
const WEBHOOK = `query webhook($id: String!) { webhook(id: $id) { ${WEBHOOK_FIELDS} } }`

const field = <K extends string, S extends Schema.Top>(key: K, schema: S) =>
  Schema.Struct({ [key]: schema } as { [P in K]: S })

/** A Boolean answer whose type is not shown: true unless the service said `false`. */
const NotFalse = Schema.Unknown.pipe(
  Schema.decodeTo(
    Schema.Boolean,
    SchemaTransformation.transform({
      decode: (u: unknown) => u !== false,
      encode: (b: boolean): unknown => b
    })
  )
)

/**
 * The service returns a scalar where the document selected fields (graphql-js words it
 * "must not have a selection"): a validation failure, so nothing ran.
 */
const selectionOnScalar = (e: GraphqlCallError): boolean =>
  e._tag === "GraphqlError" && /must not have a selection|has no subfields/i.test(e.serverMessage)

/** `mutation name(...) { field(...) { ... } }` without the field's selection set. */
const withoutSelection = (document: string): string => document.replace(/\)\s*\{[^{}]*(?:\{[^{}]*\}[^{}]*)*\}\s*\}\s*$/, ") }")

const MaybeRole = answerIfShaped(ProjectUserRole)
const MaybeRoles = answerIfShaped(Schema.Array(ProjectUserRole))
const MaybeWebhook = answerIfShaped(Webhook)

/** Operation name of a document (`mutation uploadFile(...)` → `uploadFile`). */
export const operationNameOf = (query: string): string =>
  /\b(?:query|mutation|subscription)\s+([_A-Za-z][_0-9A-Za-z]*)/.exec(query)?.[1] ?? "graphql"

const isMutation = (query: string): boolean => /^\s*(?:#[^\n]*\n\s*)*mutation\b/.test(query)

// ----------------------------------------------------------------------------------------
// Answers.

const decodeEntries = Schema.decodeUnknownResult(Schema.Array(GraphqlErrorEntry))

/** The GraphqlError for a non-empty `errors` array, or null. */
export const graphqlErrorOf = (operation: string, json: unknown): GraphqlError | null => {
  if (json === null || typeof json !== "object") return null
  const raw = (json as { errors?: unknown }).errors
  if (!Array.isArray(raw) || raw.length === 0) return null
  const entries = Result.getOrNull(decodeEntries(raw))
  const first = entries?.[0]
  if (first === undefined) {
    const msg = raw[0] !== null && typeof raw[0] === "object" && typeof (raw[0] as { message?: unknown }).message === "string"
      ? (raw[0] as { message: string }).message
      : "unreadable error entry"
    return new GraphqlError({ operation, code: "UNKNOWN", serverMessage: redact(msg), path: null, others: raw.length - 1 })
  }
  return new GraphqlError({
    operation,
    code: redact(graphqlErrorCode(first) ?? "UNKNOWN"),
    serverMessage: redact(first.message),
    path: first.path?.map((p) => (typeof p === "string" ? redact(p) : p)) ?? null,
    others: raw.length - 1
  })
}

/** Maps a non-2xx answer of the GraphQL endpoint. */
const graphqlFailure = (operation: string, answer: Answer, nowMs: number): HttpFailure | GraphqlError => {
  let json: unknown = null
  try {
    json = JSON.parse(answer.text)
  } catch {
    // not JSON; fall through to the status
  }
  const gql = graphqlErrorOf(operation, json)
  const parts = errorPartsOf(answer.text)
  const detail = gql?.serverMessage ?? parts.message
  return failureOfStatus(operation, answer, nowMs, detail, (status): HttpFailure | GraphqlError | undefined => {
    switch (status) {
      case 400:
        return gql ?? new InvalidInput({ operation, issues: parts.issues, detail })
      case 401:
        return new Unauthorized({ operation, detail })
      case 403:
        return new Forbidden({ operation, code: gql?.code ?? parts.code, detail })
      default:
        // Another status with a GraphQL error in its body: that error says more than the status.
        return gql ?? undefined
    }
  })
}

// ----------------------------------------------------------------------------------------

const MB_TEXT = "256 MB per multipart file"

/** Client-side upload limits (R-LIMIT-01..03), checked before any byte is sent. */
export const checkMultipartLimits = (
  operation: string,
  files: ReadonlyArray<UploadSource>
): Effect.Effect<void, LimitExceeded> =>
  Effect.suspend(() => {
    if (operation === "uploadFiles" && files.length > BATCH_MAX_FILES) {
      return Effect.fail(
        new LimitExceeded({
          operation,
          limit: `${BATCH_MAX_FILES} files per batch`,
          subject: `a batch of ${files.length} files`,
          actual: files.length,
          max: BATCH_MAX_FILES
        })
      )
    }
    for (const f of files) {
      if (f.size !== undefined && f.size > MULTIPART_MAX_FILE_BYTES) {
        return Effect.fail(
          new LimitExceeded({ operation, limit: MB_TEXT, subject: `file ${f.name}`, actual: f.size, max: MULTIPART_MAX_FILE_BYTES })
        )
      }
    }
    const total = files.reduce((n, f) => n + (f.size ?? 0), 0)
    if (operation === "uploadFiles" && total > BATCH_MAX_BYTES) {
      return Effect.fail(
        new LimitExceeded({
          operation,
          limit: "1 GB per batch",
          subject: `the batch of ${files.map((f) => f.name).join(", ")}`,
          actual: total,
          max: BATCH_MAX_BYTES
        })
      )
    }
    return Effect.void
  })

const compact = <T extends object>(o: T): T =>
  Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T

export const makeGraphqlClient = (config: ConnectionConfig, pipeline: PipelineApi): GraphqlClientApi => {
  const names = headerNames(config.headerPrefix)
  const url = `${config.baseUrl}/graphql`

  /** The workspace header of workspace-scoped operations; the credentials come from the pipeline. */
  const scopeHeaders = (workspaceId: string | undefined): Record<string, string> =>
    workspaceId === undefined ? {} : { [names.workspaceId]: workspaceId }

  const run = <A, I>(
    operation: string,
    build: () => HttpClientRequest.HttpClientRequest,
    dataSchema: Schema.Codec<A, I>,
    idempotent: boolean,
    summary: string
  ): Effect.Effect<A, GraphqlCallError> =>
    pipeline.call(pipeline.app, {
      operation,
      request: build,
      idempotent,
      inputSummary: summary,
      failureOf: (answer, now) => graphqlFailure(operation, answer, now)
    }).pipe(
      Effect.flatMap((answer) => parseJson(operation, answer.text)),
      Effect.flatMap((json): Effect.Effect<A, GraphqlError | DecodeError> => {
        const gql = graphqlErrorOf(operation, json)
        if (gql !== null) return Effect.fail(gql)
        const data = json !== null && typeof json === "object" ? (json as { data?: unknown }).data : undefined
        if (data === undefined || data === null) {
          return Effect.fail(new DecodeError({ operation, path: "data", detail: "no data and no errors" }))
        }
        return decodeWith(operation, dataSchema, data).pipe(
          Effect.mapError((e) => new DecodeError({ operation, path: `data.${e.path}`, detail: e.detail }))
        )
      })
    )

  const execute = <A, I>(
    query: string,
    variables: Readonly<Record<string, unknown>>,
    dataSchema: Schema.Codec<A, I>,
    options?: ExecuteOptions
  ): Effect.Effect<A, GraphqlCallError> => {
    const operation = options?.operation ?? operationNameOf(query)
    const body = JSON.stringify({ query, variables })
    return run(
      operation,
      () =>
        HttpClientRequest.post(url).pipe(
          HttpClientRequest.setHeaders(scopeHeaders(options?.workspaceId)),
          HttpClientRequest.bodyText(body, "application/json")
        ),
      dataSchema,
      options?.idempotent ?? !isMutation(query),
      summarizeInput(variables)
    )
  }

  const executeMultipart = <A, I>(
    query: string,
    variables: Readonly<Record<string, unknown>>,
    files: ReadonlyArray<{ readonly source: UploadSource; readonly paths: ReadonlyArray<string> }>,
    dataSchema: Schema.Codec<A, I>,
    options?: ExecuteOptions
  ): Effect.Effect<A, GraphqlCallError> => {
    const operation = options?.operation ?? operationNameOf(query)
    const summary = `${summarizeInput(variables)}; files=${files.map((f) => f.source.name).join(",")}`
    return run(
      operation,
      () => {
        // A fresh body (and boundary) per attempt: file streams are re-read from the start.
        const body = buildMultipart({ query, variables }, files)
        return HttpClientRequest.post(url).pipe(
          HttpClientRequest.setHeaders(scopeHeaders(options?.workspaceId)),
          HttpClientRequest.bodyStream(body.stream, { contentType: body.contentType, contentLength: body.contentLength })
        )
      },
      dataSchema,
      options?.idempotent ?? false,
      summary
    )
  }

  const org = (companyId: string | undefined): string | undefined => companyId ?? Option.getOrUndefined(config.org)

  /**
   * A mutation whose return the documents do not show: the object when the service
   * returns one; when it returns a scalar instead (the selection is refused before
   * anything runs), the same mutation without a selection, and none.
   */
  const maybeObject = <A>(
    document: string,
    variables: Readonly<Record<string, unknown>>,
    key: string,
    schema: Schema.Decoder<Option.Option<A>>,
    options?: ExecuteOptions
  ): Effect.Effect<Option.Option<A>, GraphqlCallError> =>
    execute(document, variables, Schema.Record(Schema.String, Schema.Unknown), options).pipe(
      // `schema` reads any value (none when it is not the object), so this never fails.
      Effect.map((data) => Schema.decodeUnknownSync(schema)(data[key])),
      Effect.catchIf(selectionOnScalar, () => execute(withoutSelection(document), variables, Schema.Unknown, options).pipe(Effect.as(Option.none<A>())))
    )

  const uploadFile = (input: UploadFileInput) =>
    Effect.andThen(
      checkMultipartLimits("uploadFile", [input.file]),
      executeMultipart(
        UPLOAD_FILE,
        { input: compact({ file: null, companyId: org(input.companyId), projectId: input.projectId }) },
        [{ source: input.file, paths: ["variables.input.file"] }],
        field("uploadFile", UploadedFile),
        { workspaceId: input.projectId }
      )
    ).pipe(Effect.map((d) => d.uploadFile))

  const uploadFiles = (input: UploadFilesInput) =>
    Effect.andThen(
      checkMultipartLimits("uploadFiles", input.files),
      executeMultipart(
        UPLOAD_FILES,
        { input: compact({ files: input.files.map(() => null), companyId: org(input.companyId), projectId: input.projectId }) },
        input.files.map((source, i) => ({ source, paths: [`variables.input.files.${i}`] })),
        field("uploadFiles", Schema.Array(UploadedFile)),
        { workspaceId: input.projectId }
      )
    ).pipe(Effect.map((d) => d.uploadFiles))

  const decodeCommentInput = Schema.encodeResult(CreateCommentInputSchema)

  const createComment = (input: NewComment): Effect.Effect<Comment, GraphqlCallError> => {
    const html = input.html + (input.attachments ?? []).map(renderAttachment).join("")
    const payload = compact({
      html,
      text: input.text,
      category: input.category,
      categoryId: input.categoryId,
      tiptap: input.tiptap ?? true,
      parentId: input.parentId
    })
    return Result.match(decodeCommentInput(payload), {
      onFailure: (e) => Effect.fail(new InputRejected({ operation: "createComment", path: "input", detail: e.message })),
      onSuccess: (encoded) =>
        execute(CREATE_COMMENT, { input: encoded }, field("createComment", Comment)).pipe(Effect.map((d) => d.createComment))
    })
  }

  const workspaceUserList = (input: WorkspaceUserListInput) => {
    // Only the arguments given are declared, so the document fits services without skip/search.
    const args: Array<[string, string, unknown]> = [["projectId", "String!", input.projectId]]
    if (input.first !== undefined) args.push(["first", "Int", input.first])
    if (input.skip !== undefined) args.push(["skip", "Int", input.skip])
    if (input.search !== undefined) args.push(["search", "String", input.search])
    const decl = args.map(([n, t]) => `$${n}: ${t}`).join(", ")
    const pass = args.map(([n]) => `${n}: $${n}`).join(", ")
    // Each user's level in this workspace (documented on User) only when asked: it costs the service a lookup per user.
    const level = input.withLevel === true ? " projectLevel(projectId: $projectId)" : ""
    const query = `query workspaceUserList(${decl}) { workspaceUserList(${pass}) { users { ${USER_FIELDS}${level} } pageInfo { totalItems hasNextPage } totalCount } }`
    return execute(query, Object.fromEntries(args.map(([n, , v]) => [n, v])), field("workspaceUserList", ProjectUserList), {
      workspaceId: input.projectId
    }).pipe(Effect.map((d) => d.workspaceUserList))
  }

  const invitations = (input: { readonly projectId: string; readonly pending?: boolean }) => {
    const withPending = input.pending !== undefined
    const query = withPending
      ? `query invitations($projectId: String!, $pending: Boolean) { invitations(projectId: $projectId, pending: $pending) { ${INVITATION_FIELDS} } }`
      : `query invitations($projectId: String!) { invitations(projectId: $projectId) { ${INVITATION_FIELDS} } }`
    return execute(query, compact({ projectId: input.projectId, pending: input.pending }), field("invitations", Schema.Array(Invitation)), {
      workspaceId: input.projectId
    }).pipe(Effect.map((d) => d.invitations))
  }

  return {
    execute,
    executeMultipart,
    uploadFile,
    uploadFiles,
    createFile: (input) =>
      execute(CREATE_FILE, { input: compact({ ...input, companyId: org(input.companyId) }) }, field("createFile", UploadedFile), {
        workspaceId: input.projectId
      }).pipe(Effect.map((d) => d.createFile)),
    createRecordCustomFieldFile: (input) =>
      execute(CREATE_CF_FILE, { input }, field("createRecordCustomFieldFile", Schema.Boolean)).pipe(
        Effect.map((d) => d.createRecordCustomFieldFile)
      ),
    createComment,
    workspaceUserList,
    assignees: ({ projectId }) =>
      execute(ASSIGNEES, { projectId }, field("assignees", Schema.Array(GraphqlUser)), { workspaceId: projectId }).pipe(
        Effect.map((d) => d.assignees)
      ),
    currentUser: () => execute(CURRENT_USER, {}, field("currentUser", GraphqlUser)).pipe(Effect.map((d) => d.currentUser)),
    inviteUser: (input) =>
      execute(INVITE_USER, { input: compact({ ...input }) }, field("inviteUser", Schema.Boolean), {
        workspaceId: input.projectId
      }).pipe(Effect.map((d) => d.inviteUser)),
    removeProjectUser: (input) =>
      execute(REMOVE_PROJECT_USER, { input }, field("removeProjectUser", MutationResult), {
        workspaceId: input.projectId,
        idempotent: true
      }).pipe(Effect.map((d) => d.removeProjectUser)),
    removeOrganizationUser: (input) =>
      execute(REMOVE_ORG_USER, { input }, field("removeOrganizationUser", Schema.NullOr(Schema.Boolean)), {
        idempotent: true
      }).pipe(Effect.map((d) => d.removeOrganizationUser)),
    invitations,
    myInvitations: () =>
      execute(MY_INVITATIONS, {}, field("myInvitations", Schema.Array(Invitation))).pipe(Effect.map((d) => d.myInvitations)),
    resendInvitation: (id) =>
      execute(RESEND_INVITATION, { id }, field("resendInvitation", Invitation)).pipe(Effect.map((d) => d.resendInvitation)),
    cancelInvitation: (id) =>
      execute(CANCEL_INVITATION, { id }, field("cancelInvitation", Schema.Boolean), { idempotent: true }).pipe(
        Effect.map((d) => d.cancelInvitation)
      ),
    createWorkspaceUserRole: (input) =>
      execute(CREATE_ROLE, { input }, field("createWorkspaceUserRole", ProjectUserRole), { workspaceId: input.projectId }).pipe(
        Effect.map((d) => d.createWorkspaceUserRole)
      ),
    updateWorkspaceUserRole: (input) =>
      maybeObject(UPDATE_ROLE, { input: compact({ ...input }) }, "updateWorkspaceUserRole", MaybeRole, { idempotent: true }),
    deleteWorkspaceUserRole: (id) =>
      execute(DELETE_ROLE, { id }, field("deleteWorkspaceUserRole", NotFalse), { idempotent: true }).pipe(
        Effect.map((d) => d.deleteWorkspaceUserRole)
      ),
    workspaceUserRole: (id) =>
      execute(ROLE, { id }, field("workspaceUserRole", MaybeRole)).pipe(Effect.map((d) => d.workspaceUserRole)),
    workspaceUserRoles: (projectId) =>
      execute(ROLES, { projectId }, field("workspaceUserRoles", MaybeRoles), { workspaceId: projectId }).pipe(
        Effect.map((d) => d.workspaceUserRoles)
      ),
    createWebhook: (input) => maybeObject(CREATE_WEBHOOK, { input: compact({ ...input }) }, "createWebhook", MaybeWebhook),
    updateWebhook: (input) =>
      maybeObject(UPDATE_WEBHOOK, { input: compact({ ...input }) }, "updateWebhook", MaybeWebhook, { idempotent: true }),
    disableWebhook: (id) => maybeObject(DISABLE_WEBHOOK, { id }, "disableWebhook", MaybeWebhook, { idempotent: true }),
    deleteWebhook: (id) =>
      execute(DELETE_WEBHOOK, { id }, field("deleteWebhook", NotFalse), { idempotent: true }).pipe(
        Effect.map((d) => d.deleteWebhook)
      ),
    webhooks: () => execute(WEBHOOKS, {}, field("webhooks", WebhooksPage)).pipe(Effect.map((d) => d.webhooks)),
    webhook: (id) => execute(WEBHOOK, { id }, field("webhook", MaybeWebhook)).pipe(Effect.map((d) => d.webhook))
  }
}

export const graphqlClientLayer: Layer.Layer<GraphqlClient, never, Connection | Pipeline> = Layer.effect(
  GraphqlClient,
  Effect.gen(function*() {
    return makeGraphqlClient(yield* Connection, yield* Pipeline)
  })
)
