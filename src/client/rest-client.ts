/**
 * The REST client: every call is `POST {restUrl}/v1/<operation>` with a JSON body (`{}`
 * when there is no input), or one of the resource-style paths for records, workspaces and
 * lists. Every attempt passes the shared Limiter; the one retry policy decides repeats.
 * Answers are decoded with the schemas of src/schema (extra keys kept; a bad field fails
 * with a DecodeError naming its path).
 */
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import { ActivityPage } from "../schema/activity.ts"
import { formatIssues, formatPath } from "../schema/decode.ts"
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
import { RecordsPage, UsersPage } from "../schema/paging.ts"
import {
  CountRecordsResponse,
  CreateRecordResponse,
  RecordDetail,
  SearchResults,
  SuccessResponse
} from "../schema/records.ts"
import { List, ListsResponse, Tag, TagsResponse, Workspace, WorkspacesPage } from "../schema/workspaces.ts"
import { Connection, type ConnectionConfig, headerNames } from "./config.ts"
import { ConflictingInput, type HttpFailure, InputRejected, type OutcomeUnknown } from "./errors.ts"
import { Limiter, type LimiterApi } from "./limiter.ts"
import { limitedAttempt, restFailure } from "./responses.ts"
import { summarizeInput, withRetry } from "./retry.ts"
import { decodeWith, exchange, parseJson, plainClient } from "./transport.ts"

/** Everything a REST call can fail with. */
export type RestError = HttpFailure | OutcomeUnknown | ConflictingInput | InputRejected

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
  /** `PATCH /v1/records/{id}` (update-record body without recordId). */
  readonly updateRecord: (input: UpdateRecordInput) => Effect.Effect<RecordDetail, RestError>
  /** `DELETE /v1/records/{id}?workspaceId=`. */
  readonly deleteRecord: (input: RecordRef) => Effect.Effect<SuccessResponse, RestError>
  /** `POST /v1/records/{id}/move` with body `{workspaceId, listId}`. */
  readonly moveRecord: (input: MoveRecordInput) => Effect.Effect<SuccessResponse, RestError>
  /** `GET /v1/workspaces`. */
  readonly listWorkspaces: () => Effect.Effect<WorkspacesPage, RestError>
  /** `POST /v1/workspaces`. */
  readonly createWorkspace: (input: CreateWorkspaceInput) => Effect.Effect<Workspace, RestError>
  /** `GET /v1/lists?workspaceId=`. */
  readonly listLists: (input: WorkspaceScoped) => Effect.Effect<ListsResponse, RestError>
  /** `POST /v1/lists`. */
  readonly createList: (input: CreateListInput) => Effect.Effect<List, RestError>
}

export interface RestClientApi {
  /** `POST {restUrl}/v1/<operation>` with `body` (`{}` when undefined), decoded with `responseSchema`. */
  readonly call: <A, I>(
    operation: string,
    body: unknown,
    responseSchema: Schema.Schema<A, I, never>,
    options: CallOptions
  ) => Effect.Effect<A, RestError>
  /** Any other REST request (resource style), same limiter, retry and error mapping. */
  readonly request: <A, I>(spec: RawRequest, responseSchema: Schema.Schema<A, I, never>) => Effect.Effect<A, RestError>

  readonly listRecords: (input?: ListRecordsInput) => Effect.Effect<RecordsPage, RestError>
  readonly getRecord: (input: RecordRef) => Effect.Effect<RecordDetail, RestError>
  readonly createRecord: (input: CreateRecordInput) => Effect.Effect<CreateRecordResponse, RestError>
  readonly updateRecord: (input: UpdateRecordInput) => Effect.Effect<RecordDetail, RestError>
  readonly moveRecord: (input: MoveRecordInput) => Effect.Effect<SuccessResponse, RestError>
  readonly deleteRecord: (input: RecordRef) => Effect.Effect<SuccessResponse, RestError>
  readonly countRecords: (input?: CountRecordsInput) => Effect.Effect<CountRecordsResponse, RestError>
  readonly searchRecords: (input: SearchRecordsInput) => Effect.Effect<SearchResults, RestError>
  readonly listRecordActivity: (input: ListRecordActivityInput) => Effect.Effect<ActivityPage, RestError>
  readonly listFiles: (input: ListFilesInput) => Effect.Effect<FilesPage, RestError>
  readonly listWorkspaces: () => Effect.Effect<WorkspacesPage, RestError>
  readonly listUsers: (input?: ListUsersInput) => Effect.Effect<UsersPage, RestError>
  /** Not paged: every list of the workspace. */
  readonly listLists: (input: WorkspaceScoped) => Effect.Effect<ListsResponse, RestError>
  readonly createList: (input: CreateListInput) => Effect.Effect<List, RestError>
  readonly listTags: (input: WorkspaceScoped) => Effect.Effect<TagsResponse, RestError>
  readonly createTag: (input: CreateTagInput) => Effect.Effect<Tag, RestError>
  readonly createWorkspace: (input: CreateWorkspaceInput) => Effect.Effect<Workspace, RestError>

  readonly resource: ResourceApi
}

export class RestClient extends Context.Tag("worksync/RestClient")<RestClient, RestClientApi>() {}

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
  schema: Schema.Schema<A, I, never>,
  input: A
): Effect.Effect<I, ConflictingInput | InputRejected> =>
  Either.match(Schema.encodeEither(schema, { onExcessProperty: "preserve", errors: "all" })(input), {
    onRight: (encoded) => Effect.succeed(encoded),
    onLeft: (error) => {
      const issues = formatIssues(error)
      const conflict = issues.find((i) => i.message.includes(Inputs.DESCRIPTION_CONFLICT_MESSAGE))
      if (conflict !== undefined) {
        return Effect.fail(
          new ConflictingInput({ operation, fields: ["description", "descriptionHtml"], detail: Inputs.DESCRIPTION_CONFLICT_MESSAGE })
        )
      }
      const first = issues[0]
      return Effect.fail(
        new InputRejected({
          operation,
          path: first === undefined ? "" : formatPath(first.path),
          detail: issues.map((i) => `${formatPath(i.path)}: ${i.message}`).join("; ") || "invalid input"
        })
      )
    }
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

export const makeRestClient = (
  config: ConnectionConfig,
  limiter: LimiterApi,
  httpClient: HttpClient.HttpClient
): RestClientApi => {
  const client = plainClient(httpClient)
  const names = headerNames(config.headerPrefix)

  const baseHeaders = (withBody: boolean): Record<string, string> => {
    const h: Record<string, string> = {}
    if (Option.isSome(config.token)) h["authorization"] = `Bearer ${Redacted.value(config.token.value)}`
    if (Option.isSome(config.org)) h[names.orgId] = config.org.value
    if (withBody) h["content-type"] = "application/json"
    return h
  }

  const run = <A, I>(
    operation: string,
    build: () => HttpClientRequest.HttpClientRequest,
    schema: Schema.Schema<A, I, never>,
    idempotent: boolean,
    body: unknown,
    /** What a repeated attempt's failure means when an earlier attempt may have applied the call. */
    afterRepeat?: (e: RestError) => A | undefined
  ): Effect.Effect<A, RestError> =>
    Effect.gen(function*() {
      let attempts = 0
      const attempt = limitedAttempt(
        limiter,
        Effect.suspend(() => {
          attempts++
          return exchange(client, build(), operation, config.requestTimeoutMs)
        }),
        (answer, now) => restFailure(operation, answer, now)
      )
      return yield* withRetry(attempt, {
        operation,
        idempotent,
        settings: config.retry,
        inputSummary: summarizeInput(body)
      }).pipe(
        Effect.matchEffect({
          onFailure: (e): Effect.Effect<A, RestError> => {
            const recovered = attempts > 1 && afterRepeat !== undefined ? afterRepeat(e) : undefined
            return recovered === undefined ? Effect.fail(e) : Effect.succeed(recovered)
          },
          onSuccess: (answer) =>
            Effect.flatMap(parseJson(operation, answer.text), (json) => decodeWith(operation, schema, json))
        })
      )
    })

  /**
   * A delete repeated after a lost answer may find the record already gone: that is the
   * outcome asked for, not a failure.
   */
  const deletedAlready = (e: RestError): SuccessResponse | undefined =>
    e._tag === "ValidationFailed" && e.code === "NOT_FOUND" ? { success: true } : undefined

  const call = <A, I>(
    operation: string,
    body: unknown,
    responseSchema: Schema.Schema<A, I, never>,
    options: CallOptions,
    afterRepeat?: (e: RestError) => A | undefined
  ): Effect.Effect<A, RestError> => {
    const payload = body === undefined || body === null ? {} : typeof body === "object" ? compact(body) : body
    const text = JSON.stringify(payload)
    return run(
      operation,
      () =>
        HttpClientRequest.post(`${config.restUrl}/v1/${operation}`).pipe(
          HttpClientRequest.setHeaders(baseHeaders(true)),
          HttpClientRequest.bodyText(text, "application/json")
        ),
      responseSchema,
      options.idempotent,
      payload,
      afterRepeat
    )
  }

  const request = <A, I>(
    spec: RawRequest,
    responseSchema: Schema.Schema<A, I, never>,
    afterRepeat?: (e: RestError) => A | undefined
  ): Effect.Effect<A, RestError> => {
    const hasBody = spec.body !== undefined
    const text = hasBody ? JSON.stringify(typeof spec.body === "object" && spec.body !== null ? compact(spec.body) : spec.body) : ""
    const url = appendQuery(`${config.restUrl}${spec.path}`, spec.query)
    return run(
      spec.operation,
      () => {
        const req = HttpClientRequest.make(spec.method)(url).pipe(HttpClientRequest.setHeaders(baseHeaders(hasBody)))
        return hasBody ? HttpClientRequest.bodyText(req, text, "application/json") : req
      },
      responseSchema,
      spec.idempotent,
      spec.body,
      afterRepeat
    )
  }

  /** Checks the input with its schema, then calls the RPC operation. */
  const rpc = <In, EncIn, A, I>(
    operation: string,
    inputSchema: Schema.Schema<In, EncIn, never>,
    input: In,
    schema: Schema.Schema<A, I, never>,
    idempotent: boolean,
    afterRepeat?: (e: RestError) => A | undefined
  ): Effect.Effect<A, RestError> =>
    Effect.flatMap(checkInput(operation, inputSchema, input), (body) => call(operation, body, schema, { idempotent }, afterRepeat))

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
            body,
            idempotent: true
          },
          RecordDetail
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
        request({ operation: "POST /v1/workspaces", method: "POST", path: "/v1/workspaces", body, idempotent: false }, Workspace)),
    listLists: (input) =>
      Effect.flatMap(checkInput("GET /v1/lists", Inputs.ListListsInput, input), ({ workspaceId }) =>
        request(
          { operation: "GET /v1/lists", method: "GET", path: "/v1/lists", query: { workspaceId }, idempotent: true },
          ListsResponse
        )),
    createList: (input) =>
      Effect.flatMap(checkInput("POST /v1/lists", Inputs.CreateListInput, input), (body) =>
        request({ operation: "POST /v1/lists", method: "POST", path: "/v1/lists", body, idempotent: false }, List))
  }

  return {
    call: (operation, body, responseSchema, options) => call(operation, body, responseSchema, options),
    request: (spec, responseSchema) => request(spec, responseSchema),
    listRecords: (input = {}) => rpc("list-records", Inputs.ListRecordsInput, input, RecordsPage, true),
    getRecord: (input) => rpc("get-record", Inputs.GetRecordInput, input, RecordDetail, true),
    createRecord: (input) => rpc("create-record", Inputs.CreateRecordInput, input, CreateRecordResponse, false),
    updateRecord: (input) => rpc("update-record", Inputs.UpdateRecordInput, input, RecordDetail, true),
    moveRecord: (input) => rpc("move-record", Inputs.MoveRecordInput, input, SuccessResponse, true),
    deleteRecord: (input) => rpc("delete-record", Inputs.DeleteRecordInput, input, SuccessResponse, true, deletedAlready),
    countRecords: (input = {}) => rpc("count-records", Inputs.CountRecordsInput, input, CountRecordsResponse, true),
    searchRecords: (input) => rpc("search-records", Inputs.SearchRecordsInput, input, SearchResults, true),
    listRecordActivity: (input) =>
      rpc("list-record-activity", Inputs.ListRecordActivityInput, input, ActivityPage, true),
    listFiles: (input) => rpc("list-files", Inputs.ListFilesInput, input, FilesPage, true),
    listWorkspaces: () => rpc("list-workspaces", Inputs.ListWorkspacesInput, {}, WorkspacesPage, true),
    listUsers: (input = {}) => rpc("list-users", Inputs.ListUsersInput, input, UsersPage, true),
    listLists: (input) => rpc("list-lists", Inputs.ListListsInput, input, ListsResponse, true),
    createList: (input) => rpc("create-list", Inputs.CreateListInput, input, List, false),
    listTags: (input) => rpc("list-tags", Inputs.ListTagsInput, input, TagsResponse, true),
    createTag: (input) => rpc("create-tag", Inputs.CreateTagInput, input, Tag, false),
    createWorkspace: (input) => rpc("create-workspace", Inputs.CreateWorkspaceInput, input, Workspace, false),
    resource
  }
}

export const restClientLayer: Layer.Layer<RestClient, never, Connection | Limiter | HttpClient.HttpClient> = Layer.effect(
  RestClient,
  Effect.gen(function*() {
    const config = yield* Connection
    const limiter = yield* Limiter
    const http = yield* HttpClient.HttpClient
    return makeRestClient(config, limiter, http)
  })
)
