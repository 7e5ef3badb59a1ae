/**
 * A `WorkspaceFiles` over the client's services: list-files paging, downloads through
 * the serving URL and its redirect, the presigned flow and GraphQL `uploadFiles`.
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import { Connection } from "../../client/config.ts"
import { GraphqlClient, type GraphqlClientApi } from "../../client/graphql-client.ts"
import { fromStream } from "../../client/multipart.ts"
import { RestClient, type RestClientApi } from "../../client/rest-client.ts"
import { Uploads, type UploadsApi } from "../../client/uploads.ts"
import { stableFileScan } from "../../streams/stable-scan.ts"
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
  // The stable scan, as for records: files deleted or added meanwhile never hide another.
  const listFiles = (workspaceId: string) =>
    Stream.unwrap(Effect.map(stableFileScan(workspaceId), (scan) => scan.records)).pipe(
      Stream.provideService(RestClient, rest)
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
