/**
 * The REST client: every call is `POST {restUrl}/v1/<operation>` with a JSON body (`{}`
 * when there is no input), or one of the resource-style paths for records, workspaces and
 * lists. Every call goes through the connection's pipeline (pipeline.ts): its headers,
 * the shared Limiter and the one retry policy.
 * Answers are decoded with the schemas of src/schema (extra keys kept; a bad field fails
 * with a DecodeError naming its path), following the decoding policy of
 * docs/architecture.md: documented fields are required, the rest optional and raw, and
 * answers the documents do not show are read for what they offer, never required.
 * Operations beyond the documents fail with NotAvailable when the service lacks them.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as HttpClientRequest from "effect/http/HttpClientRequest"
import * as Layer from "effect/Layer"
import type * as Option from "effect/Option"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import { ActivityPage } from "../schema/activity.ts"
import { encodeEither, formatIssues, formatPath } from "../schema/decode.ts"
import { FilesPage } from "../schema/files.ts"
import type {
  CountRecordsInput,
  CreateListInput,
  CreateRecordInput,
  CreateTagInput,
  CreateWorkspaceInput,
  ListFilesInput,
  ListRecordActivityInput,
  ListRecordsInput,
  ListUsersInput,
  MoveRecordInput,
  SearchRecordsInput,
  UpdateRecordInput
} from "../schema/inputs.ts"
import * as Inputs from "../schema/inputs.ts"
import { answerIfShaped, refIdOf, stringOf } from "../schema/open.ts"
import { RecordsPage, UsersPage } from "../schema/paging.ts"
import {
  CountRecordsAnswer,
  CreateRecordResponse,
  RecordDetail,
  SearchResults,
  SuccessResponse,
  UpdateRecordAnswer
} from "../schema/records.ts"
import {
  CustomFieldsResponse,
  type List,
  ListsResponse,
  type Tag,
  TagsResponse,
  Workspace,
  WorkspacesPage
} from "../schema/workspaces.ts"
import { Connection, type ConnectionConfig } from "./config.ts"
import {
  ConflictingInput,
  DecodeError,
  type HttpFailure,
  InputRejected,
  isNotFound,
  NotAvailable,
  type OutcomeUnknown
} from "./errors.ts"
import { Pipeline, type PipelineApi } from "./pipeline.ts"
import { beyondDocumentsFailure, restFailure } from "./responses.ts"
import { summarizeInput } from "./retry.ts"
import { readAnswer } from "./transport.ts"

/** Everything a REST call can fail with. */
export type RestError = HttpFailure | OutcomeUnknown | ConflictingInput | InputRejected | NotAvailable

// Inputs are the schemas of src/schema/inputs.ts (optional fields may be omitted).
export type {
  CountRecordsInput,
  CreateListInput,
  CreateRecordInput,
  CreateTagInput,
  CreateWorkspaceInput,
  GetRecordInput,
  ListFilesInput,
  ListListsInput,
  ListRecordActivityInput,
  ListRecordsInput,
  ListTagsInput,
  ListUsersInput,
  MoveRecordInput,
  SearchRecordsInput,
  UpdateRecordInput
} from "../schema/inputs.ts"

/** A record addressed by workspace and id (get-record, delete-record). */
export type RecordRef = Inputs.GetRecordInput
export type WorkspaceScoped = Inputs.ListListsInput

export interface CallOptions {
  /** Safe to repeat (reads; updates, moves, deletes to a fixed value). */
  readonly idempotent: boolean
  /**
   * The operation is beyond the documents (assumptions.ts EXTRA_OPERATIONS): a 404, 405,
   * 501 or unknown-operation 400 fails with NotAvailable, not as a not-found.
   */
  readonly beyondDocuments?: boolean
}

/** A resource-style (or any non-RPC) request. */
export interface RawRequest {
  /** Operation name used in errors, e.g. `GET /v1/records`. */
  readonly operation: string
  readonly method: "GET" | "POST" | "PATCH" | "DELETE" | "PUT"
  /** Path under the REST base, starting with `/`. */
  readonly path: string
  readonly query?: QueryInput
  readonly body?: unknown
  readonly idempotent: boolean
  /** As in CallOptions. */
  readonly beyondDocuments?: boolean
}

export type QueryValue = string | number | boolean | ReadonlyArray<string> | undefined
export type QueryInput = Readonly<Record<string, QueryValue>>

export interface ResourceApi {
  /** `GET /v1/records` with the list-records arguments as query parameters. */
  readonly listRecords: (input?: ListRecordsInput) => Effect.Effect<RecordsPage, RestError>
  /** `GET /v1/records/{id}?workspaceId=`. */
  readonly getRecord: (input: RecordRef) => Effect.Effect<RecordDetail, RestError>
  /** `POST /v1/records` (create-record body). */
  readonly createRecord: (input: CreateRecordInput) => Effect.Effect<CreateRecordResponse, RestError>
  /** `PATCH /v1/records/{id}` (update-record body without recordId); the answer is not shown, see `updateRecord`. */
  readonly updateRecord: (input: UpdateRecordInput) => Effect.Effect<UpdateRecordAnswer, RestError>
  /** `DELETE /v1/records/{id}?workspaceId=`. */
  readonly deleteRecord: (input: RecordRef) => Effect.Effect<SuccessResponse, RestError>
  /** `POST /v1/records/{id}/move` with body `{workspaceId, listId}`. */
  readonly moveRecord: (input: MoveRecordInput) => Effect.Effect<SuccessResponse, RestError>
  /** `GET /v1/workspaces`. */
  readonly listWorkspaces: () => Effect.Effect<WorkspacesPage, RestError>
  /** `POST /v1/workspaces`; the answer is not shown: the workspace when it is one. */
  readonly createWorkspace: (input: CreateWorkspaceInput) => Effect.Effect<Option.Option<Workspace>, RestError>
  /** `GET /v1/lists?workspaceId=`. */
  readonly listLists: (input: WorkspaceScoped) => Effect.Effect<ListsResponse, RestError>
  /** `POST /v1/lists`; see `createList`. */
  readonly createList: (input: CreateListInput) => Effect.Effect<List, RestError>
}

export interface RestClientApi {
  /** `POST {restUrl}/v1/<operation>` with `body` (`{}` when undefined), decoded with `responseSchema`. */
  readonly call: <A, I>(
    operation: string,
    body: unknown,
    responseSchema: Schema.Codec<A, I>,
    options: CallOptions
  ) => Effect.Effect<A, RestError>
  /** Any other REST request (resource style), same limiter, retry and error mapping. */
  readonly request: <A, I>(spec: RawRequest, responseSchema: Schema.Codec<A, I>) => Effect.Effect<A, RestError>

  readonly listRecords: (input?: ListRecordsInput) => Effect.Effect<RecordsPage, RestError>
  readonly getRecord: (input: RecordRef) => Effect.Effect<RecordDetail, RestError>
  readonly createRecord: (input: CreateRecordInput) => Effect.Effect<CreateRecordResponse, RestError>
  /**
   * update-record. Its answer is not shown by the documents: a 2xx is the success, and
   * the record detail is returned only when the answer is one (`{success: true}`, `{}`
   * or anything else give none). Callers must not depend on it.
   */
  readonly updateRecord: (input: UpdateRecordInput) => Effect.Effect<UpdateRecordAnswer, RestError>
  readonly moveRecord: (input: MoveRecordInput) => Effect.Effect<SuccessResponse, RestError>
  readonly deleteRecord: (input: RecordRef) => Effect.Effect<SuccessResponse, RestError>
  /**
   * count-records. Its answer is not shown: `{count}`, `{totalCount}` or a bare number
   * give the count, anything else none (callers then go on without a total).
   */
  readonly countRecords: (input?: CountRecordsInput) => Effect.Effect<CountRecordsAnswer, RestError>
  readonly searchRecords: (input: SearchRecordsInput) => Effect.Effect<SearchResults, RestError>
  readonly listRecordActivity: (input: ListRecordActivityInput) => Effect.Effect<ActivityPage, RestError>
  readonly listFiles: (input: ListFilesInput) => Effect.Effect<FilesPage, RestError>
  readonly listWorkspaces: () => Effect.Effect<WorkspacesPage, RestError>
  readonly listUsers: (input?: ListUsersInput) => Effect.Effect<UsersPage, RestError>
  /** Not paged: every list of the workspace, in the service's order. */
  readonly listLists: (input: WorkspaceScoped) => Effect.Effect<ListsResponse, RestError>
  /**
   * Creates a list: RPC `create-list` (beyond the documents), else the documented
   * `POST /v1/lists`; NotAvailable when the service has neither. Their answers are not
   * shown: the id is read from the answer, else the list is found by title.
   */
  readonly createList: (input: CreateListInput) => Effect.Effect<List, RestError>
  /** list-tags (beyond the documents): NotAvailable when the service lacks it. */
  readonly listTags: (input: WorkspaceScoped) => Effect.Effect<TagsResponse, RestError>
  /** create-tag (beyond the documents), read like `createList`'s answer. */
  readonly createTag: (input: CreateTagInput) => Effect.Effect<Tag, RestError>
  /** list-custom-fields (beyond the documents): NotAvailable when the service lacks it. */
  readonly listCustomFields: (input: WorkspaceScoped) => Effect.Effect<CustomFieldsResponse, RestError>
  /** create-workspace (beyond the documents); the workspace when the answer is one. */
  readonly createWorkspace: (input: CreateWorkspaceInput) => Effect.Effect<Option.Option<Workspace>, RestError>

  readonly resource: ResourceApi
}

export class RestClient extends Context.Service<RestClient, RestClientApi>()("worksync/RestClient") {}

// ----------------------------------------------------------------------------------------
// Client-side input checks.

/**
 * Validates an input with its schema before anything is sent: description and
 * descriptionHtml not together (R-REST-RECORD-33) → ConflictingInput; anything else
 * (dates bare or ISO with a zone, paging numbers, required strings) → InputRejected.
 * Returns the encoded body.
 */
export const checkInput = <A, I>(
  operation: string,
  schema: Schema.Codec<A, I>,
  input: A
): Effect.Effect<I, ConflictingInput | InputRejected> => Effect.fromResult(checkedInput(operation, schema, input))

/** Each input schema's encoder, made once: inputs are checked at every call. */
const encoders = new WeakMap<Schema.Codec<unknown, unknown>, (a: unknown) => Result.Result<unknown, Schema.SchemaError>>()
const encoderOf = <A, I>(schema: Schema.Codec<A, I>): (a: A) => Result.Result<I, Schema.SchemaError> => {
  let encoder = encoders.get(schema as Schema.Codec<unknown, unknown>)
  if (encoder === undefined) {
    encoder = encodeEither(schema as Schema.Codec<unknown, unknown>)
    encoders.set(schema as Schema.Codec<unknown, unknown>, encoder)
  }
  return encoder as (a: A) => Result.Result<I, Schema.SchemaError>
}

/** `checkInput` as a Result, for the calls that go on at once. */
const checkedInput = <A, I>(
  operation: string,
  schema: Schema.Codec<A, I>,
  input: A
): Result.Result<I, ConflictingInput | InputRejected> =>
  Result.mapError(encoderOf(schema)(input), (error) => {
    const issues = formatIssues(error)
    const conflict = issues.find((i) => i.message.includes(Inputs.DESCRIPTION_CONFLICT_MESSAGE))
    if (conflict !== undefined) {
      return new ConflictingInput({ operation, fields: ["description", "descriptionHtml"], detail: Inputs.DESCRIPTION_CONFLICT_MESSAGE })
    }
    const first = issues[0]
    return new InputRejected({
      operation,
      path: first === undefined ? "" : formatPath(first.path),
      detail: issues.map((i) => `${formatPath(i.path)}: ${i.message}`).join("; ") || "invalid input"
    })
  })

/** Drops undefined values so they are never sent. */
const compact = (o: object): Record<string, unknown> =>
  Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined))

// ----------------------------------------------------------------------------------------

const appendQuery = (url: string, query: QueryInput | undefined): string => {
  if (query === undefined) return url
  const params = new URLSearchParams()
  for (const [k, v] of Object.entries(query)) {
    if (v === undefined) continue
    if (Array.isArray(v)) for (const item of v as ReadonlyArray<string>) params.append(k, item)
    else params.append(k, String(v))
  }
  const qs = params.toString()
  return qs === "" ? url : `${url}?${qs}`
}

export const makeRestClient = (config: ConnectionConfig, pipeline: PipelineApi): RestClientApi => {
  const run = <A, I>(
    operation: string,
    build: () => HttpClientRequest.HttpClientRequest,
    schema: Schema.Codec<A, I>,
    idempotent: boolean,
    body: unknown,
    /** What a repeated attempt's failure means when an earlier attempt may have applied the call. */
    afterRepeat?: (e: RestError) => A | undefined,
    beyondDocuments = false
  ): Effect.Effect<A, RestError> =>
    Effect.suspend(() => {
      let attempts = 0
      return pipeline.call(pipeline.rest, {
        operation,
        request: () => {
          attempts++
          return build()
        },
        idempotent,
        // Read only for a call not safe to repeat (its OutcomeUnknown names the input).
        inputSummary: idempotent ? "" : summarizeInput(body),
        failureOf: (answer, now): HttpFailure | NotAvailable =>
          beyondDocuments ? beyondDocumentsFailure(operation, answer, now) : restFailure(operation, answer, now)
      }).pipe(
        Effect.matchEffect({
          onFailure: (e): Effect.Effect<A, RestError> => {
            const recovered = attempts > 1 && afterRepeat !== undefined ? afterRepeat(e) : undefined
            return recovered === undefined ? Effect.fail(e) : Effect.succeed(recovered)
          },
          onSuccess: (answer) => readAnswer(operation, schema, answer.text)
        })
      )
    })

  /**
   * A delete repeated after a lost answer may find the record already gone: that is the
   * outcome asked for, not a failure.
   */
  const deletedAlready = (e: RestError): SuccessResponse | undefined => (isNotFound(e) ? { success: true } : undefined)

  const call = <A, I>(
    operation: string,
    body: unknown,
    responseSchema: Schema.Codec<A, I>,
    options: CallOptions,
    afterRepeat?: (e: RestError) => A | undefined
  ): Effect.Effect<A, RestError> => {
    const payload = body === undefined || body === null ? {} : typeof body === "object" ? compact(body) : body
    const text = JSON.stringify(payload)
    return run(
      operation,
      () =>
        HttpClientRequest.post(`${config.restUrl}/v1/${operation}`).pipe(HttpClientRequest.bodyText(text, "application/json")),
      responseSchema,
      options.idempotent,
      payload,
      afterRepeat,
      options.beyondDocuments === true
    )
  }

  const request = <A, I>(
    spec: RawRequest,
    responseSchema: Schema.Codec<A, I>,
    afterRepeat?: (e: RestError) => A | undefined
  ): Effect.Effect<A, RestError> => {
    const hasBody = spec.body !== undefined
    const text = hasBody ? JSON.stringify(typeof spec.body === "object" && spec.body !== null ? compact(spec.body) : spec.body) : ""
    const url = appendQuery(`${config.restUrl}${spec.path}`, spec.query)
    return run(
      spec.operation,
      () => {
        const req = HttpClientRequest.make(spec.method)(url)
        return hasBody ? HttpClientRequest.bodyText(req, text, "application/json") : req
      },
      responseSchema,
      spec.idempotent,
      spec.body,
      afterRepeat,
      spec.beyondDocuments === true
    )
  }

  /** Checks the input with its schema, then calls the RPC operation. */
  const rpc = <In, EncIn, A, I>(
    operation: string,
    inputSchema: Schema.Codec<In, EncIn>,
    input: In,
    schema: Schema.Codec<A, I>,
    idempotent: boolean,
    afterRepeat?: (e: RestError) => A | undefined
  ): Effect.Effect<A, RestError> => {
    const checked = checkedInput(operation, inputSchema, input)
    return Result.isSuccess(checked)
      ? call(operation, checked.success, schema, { idempotent }, afterRepeat)
      : Effect.fail(checked.failure)
  }

  /** An RPC operation beyond the documents (assumptions.ts EXTRA_OPERATIONS). */
  const rpcBeyond = <In, EncIn, A, I>(
    operation: string,
    inputSchema: Schema.Codec<In, EncIn>,
    input: In,
    schema: Schema.Codec<A, I>,
    idempotent: boolean
  ): Effect.Effect<A, RestError> =>
    Effect.flatMap(
      checkInput(operation, inputSchema, input),
      (body) => call(operation, body, schema, { idempotent, beyondDocuments: true })
    )

  /**
   * What a create of a titled item (list, tag) answered, whose shape the documents do
   * not show: the id when the answer carries one (the item itself), else the item of
   * that title found by listing again. Neither: a DecodeError, so a journal looks
   * before creating again.
   */
  const createdByTitle = <T extends { readonly id: string; readonly title: string }>(
    operation: string,
    title: string,
    answer: unknown,
    relist: Effect.Effect<ReadonlyArray<T>, RestError>
  ): Effect.Effect<T | { readonly id: string; readonly title: string }, RestError> => {
    const id = refIdOf(answer)
    if (id !== undefined) {
      const rest = typeof answer === "object" && answer !== null ? answer : {}
      return Effect.succeed({ ...rest, id, title: stringOf((answer as { title?: unknown }).title) ?? title })
    }
    return Effect.flatMap(relist, (items) => {
      const found = items.find((i) => i.title === title)
      return found !== undefined
        ? Effect.succeed(found)
        : Effect.fail(new DecodeError({ operation, path: "id", detail: "the answer names no id, and no item of that title was found" }))
    })
  }

  const listListsRpc = (input: WorkspaceScoped) => rpc("list-lists", Inputs.ListListsInput, input, ListsResponse, true)
  const listTagsRpc = (input: WorkspaceScoped) => rpcBeyond("list-tags", Inputs.ListTagsInput, input, TagsResponse, true)

  /** create-workspace's answer is not shown: the workspace when it is one. */
  const optionalWorkspace = answerIfShaped(Workspace)

  const enc = encodeURIComponent

  const resource: ResourceApi = {
    listRecords: (input = {}) =>
      Effect.flatMap(checkInput("GET /v1/records", Inputs.ListRecordsInput, input), (query) =>
        request(
          { operation: "GET /v1/records", method: "GET", path: "/v1/records", query: query as QueryInput, idempotent: true },
          RecordsPage
        )),
    getRecord: (input) =>
      Effect.flatMap(checkInput("GET /v1/records/{id}", Inputs.GetRecordInput, input), ({ recordId, workspaceId }) =>
        request(
          {
            operation: "GET /v1/records/{id}",
            method: "GET",
            path: `/v1/records/${enc(recordId)}`,
            query: { workspaceId },
            idempotent: true
          },
          RecordDetail
        )),
    createRecord: (input) =>
      Effect.flatMap(checkInput("POST /v1/records", Inputs.CreateRecordInput, input), (body) =>
        request(
          { operation: "POST /v1/records", method: "POST", path: "/v1/records", body, idempotent: false },
          CreateRecordResponse
        )),
    updateRecord: (input) =>
      Effect.flatMap(checkInput("PATCH /v1/records/{id}", Inputs.UpdateRecordInput, input), ({ recordId, ...body }) =>
        request(
          {
            operation: "PATCH /v1/records/{id}",
            method: "PATCH",
            path: `/v1/records/${enc(recordId)}`,
            // Where the workspace goes is not shown (assumptions.ts RESOURCE_STYLE_SHAPES):
            // in the body like update-record's, and in the query like GET's and DELETE's.
            query: { workspaceId: body.workspaceId },
            body,
            idempotent: true
          },
          UpdateRecordAnswer
        )),
    deleteRecord: (input) =>
      Effect.flatMap(checkInput("DELETE /v1/records/{id}", Inputs.DeleteRecordInput, input), ({ recordId, workspaceId }) =>
        request(
          {
            operation: "DELETE /v1/records/{id}",
            method: "DELETE",
            path: `/v1/records/${enc(recordId)}`,
            query: { workspaceId },
            idempotent: true
          },
          SuccessResponse,
          deletedAlready
        )),
    moveRecord: (input) =>
      Effect.flatMap(checkInput("POST /v1/records/{id}/move", Inputs.MoveRecordInput, input), ({ listId, recordId, workspaceId }) =>
        request(
          {
            operation: "POST /v1/records/{id}/move",
            method: "POST",
            path: `/v1/records/${enc(recordId)}/move`,
            body: { workspaceId, listId },
            idempotent: true
          },
          SuccessResponse
        )),
    listWorkspaces: () =>
      request({ operation: "GET /v1/workspaces", method: "GET", path: "/v1/workspaces", idempotent: true }, WorkspacesPage),
    createWorkspace: (input) =>
      Effect.flatMap(checkInput("POST /v1/workspaces", Inputs.CreateWorkspaceInput, input), (body) =>
        request(
          { operation: "POST /v1/workspaces", method: "POST", path: "/v1/workspaces", body, idempotent: false },
          optionalWorkspace
        )),
    listLists: (input) =>
      Effect.flatMap(checkInput("GET /v1/lists", Inputs.ListListsInput, input), ({ workspaceId }) =>
        request(
          { operation: "GET /v1/lists", method: "GET", path: "/v1/lists", query: { workspaceId }, idempotent: true },
          ListsResponse
        )),
    createList: (input) => createListVia("POST /v1/lists", input)
  }

  /** `create-list` or `POST /v1/lists`, the answer read by `createdByTitle`. */
  function createListVia(operation: "create-list" | "POST /v1/lists", input: CreateListInput): Effect.Effect<List, RestError> {
    const send = operation === "create-list"
      ? rpcBeyond(operation, Inputs.CreateListInput, input, Schema.Unknown, false)
      : Effect.flatMap(checkInput(operation, Inputs.CreateListInput, input), (body) =>
        request(
          { operation, method: "POST", path: "/v1/lists", body, idempotent: false, beyondDocuments: true },
          Schema.Unknown
        ))
    return Effect.flatMap(send, (answer) => createdByTitle(operation, input.title, answer, listListsRpc({ workspaceId: input.workspaceId })))
  }


  return {
    call: (operation, body, responseSchema, options) => call(operation, body, responseSchema, options),
    request: (spec, responseSchema) => request(spec, responseSchema),
    listRecords: (input = {}) => rpc("list-records", Inputs.ListRecordsInput, input, RecordsPage, true),
    getRecord: (input) => rpc("get-record", Inputs.GetRecordInput, input, RecordDetail, true),
    createRecord: (input) => rpc("create-record", Inputs.CreateRecordInput, input, CreateRecordResponse, false),
    updateRecord: (input) => rpc("update-record", Inputs.UpdateRecordInput, input, UpdateRecordAnswer, true),
    moveRecord: (input) => rpc("move-record", Inputs.MoveRecordInput, input, SuccessResponse, true),
    deleteRecord: (input) => rpc("delete-record", Inputs.DeleteRecordInput, input, SuccessResponse, true, deletedAlready),
    countRecords: (input = {}) => rpc("count-records", Inputs.CountRecordsInput, input, CountRecordsAnswer, true),
    searchRecords: (input) => rpc("search-records", Inputs.SearchRecordsInput, input, SearchResults, true),
    listRecordActivity: (input) =>
      rpc("list-record-activity", Inputs.ListRecordActivityInput, input, ActivityPage, true),
    listFiles: (input) => rpc("list-files", Inputs.ListFilesInput, input, FilesPage, true),
    listWorkspaces: () => rpc("list-workspaces", Inputs.ListWorkspacesInput, {}, WorkspacesPage, true),
    listUsers: (input = {}) => rpc("list-users", Inputs.ListUsersInput, input, UsersPage, true),
    listLists: listListsRpc,
    // The RPC name is not shown; the resource-style POST /v1/lists is documented to exist.
    createList: (input) =>
      createListVia("create-list", input).pipe(
        Effect.catchTag("NotAvailable", () => createListVia("POST /v1/lists", input)),
        Effect.catchTag("NotAvailable", (e) => Effect.fail(new NotAvailable({ ...e, operation: "create-list" })))
      ),
    listTags: listTagsRpc,
    listCustomFields: (input) => rpcBeyond("list-custom-fields", Inputs.ListTagsInput, input, CustomFieldsResponse, true),
    createTag: (input) =>
      Effect.flatMap(
        rpcBeyond("create-tag", Inputs.CreateTagInput, input, Schema.Unknown, false),
        (answer) => createdByTitle("create-tag", input.title, answer, listTagsRpc({ workspaceId: input.workspaceId }))
      ),
    createWorkspace: (input) => rpcBeyond("create-workspace", Inputs.CreateWorkspaceInput, input, optionalWorkspace, false),
    resource
  }
}

export const restClientLayer: Layer.Layer<RestClient, never, Connection | Pipeline> = Layer.effect(
  RestClient,
  Effect.gen(function*() {
    return makeRestClient(yield* Connection, yield* Pipeline)
  })
)
