/**
 * A `WorkspaceFiles` over the client's services: list-files paging, downloads through
 * the serving URL and its redirect, the presigned flow and GraphQL `uploadFiles`.
 */
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import { Connection } from "../../client/config.ts"
import { GraphqlClient, type GraphqlClientApi } from "../../client/graphql-client.ts"
import { fromStream } from "../../client/multipart.ts"
import { RestClient, type RestClientApi } from "../../client/rest-client.ts"
import { Uploads, type UploadsApi } from "../../client/uploads.ts"
import { PAGE_MAX_LIMIT } from "../../schema/limits.ts"
import { NameNotAddressable } from "./errors.ts"
import type { WorkspaceFiles } from "./ports.ts"

export interface WorkspaceFilesDeps {
  readonly rest: RestClientApi
  readonly uploads: UploadsApi
  /** Offers `uploadFiles` batches; leave out when the connection has no GraphQL token. */
  readonly graphql?: GraphqlClientApi | undefined
  /** Names the account in journal keys: base URL and organization, never a secret. */
  readonly origin: string
}

export const makeWorkspaceFiles = (deps: WorkspaceFilesDeps): WorkspaceFiles => {
  const { rest, uploads, graphql } = deps
  const listFiles = (workspaceId: string) =>
    Stream.paginateChunkEffect(0, (skip: number) =>
      rest.listFiles({ workspaceId, skip, limit: PAGE_MAX_LIMIT }).pipe(
        Effect.map((page) => {
          // The last page: hasNextPage false, or fewer items than asked (R-REST-PAGE-04/05).
          const last = !page.pageInfo.hasNextPage || page.items.length < PAGE_MAX_LIMIT || page.items.length === 0
          return [Chunk.fromIterable(page.items), last ? Option.none() : Option.some(skip + page.items.length)] as const
        })
      )
    )

  return {
    origin: deps.origin,
    listFiles,
    download: (file) =>
      file.name === "." || file.name === ".."
        ? Stream.fail(new NameNotAddressable({ name: file.name, uid: file.uid }))
        : uploads.download(file.uid, file.name),
    presign: (workspaceId, filename, size) =>
      uploads.presign({ filename, size, workspaceId }).pipe(
        Effect.map((presigned) => ({ uid: presigned.fields["X-Key"], presigned }))
      ),
    put: (target, body, size) => uploads.putToStorage(target.presigned, body, size),
    confirm: (workspaceId, uid) => uploads.confirm({ uid, workspaceId }).pipe(Effect.map((r) => r.status)),
    ...(graphql === undefined
      ? {}
      : {
        uploadBatch: (workspaceId, files) =>
          graphql
            .uploadFiles({
              projectId: workspaceId,
              files: files.map((f) => fromStream(f.name, f.body, f.size))
            })
            .pipe(
              Effect.map((uploaded) =>
                uploaded.map((u) => ({ uid: u.uid, name: u.name, size: u.size, status: u.status ?? null }))
              )
            )
      })
  }
}

/** The `WorkspaceFiles` of the client services in context. */
export const workspaceFilesFromServices: Effect.Effect<
  WorkspaceFiles,
  never,
  RestClient | Uploads | GraphqlClient | Connection
> = Effect.gen(function*() {
  const config = yield* Connection
  const graphql = yield* GraphqlClient
  const hasGraphqlToken = Option.isSome(config.tokenId) && Option.isSome(config.tokenSecret)
  return makeWorkspaceFiles({
    rest: yield* RestClient,
    uploads: yield* Uploads,
    graphql: hasGraphqlToken ? graphql : undefined,
    origin: `${config.baseUrl}#${Option.getOrElse(config.org, () => "")}`
  })
})
