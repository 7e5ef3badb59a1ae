/**
 * Everything the client offers in one layer: `Effect.provide(clientLayer(cfg))` gives
 * Connection, Limiter, Pipeline, RestClient, GraphqlClient, Uploads and the HttpClient
 * (undici, keep-alive pool sized to the limiter).
 */
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import type * as Config from "effect/Config"
import * as Effect from "effect/Effect"
import * as HttpClient from "effect/http/HttpClient"
import * as Layer from "effect/Layer"
import { Agent } from "undici"
import { Connection, connectionFromEnv, type ConnectionConfig, type ConnectionInput, connectionLayer } from "./config.ts"
import { GraphqlClient, graphqlClientLayer } from "./graphql-client.ts"
import { Limiter, limiterLayer } from "./limiter.ts"
import { Pipeline, pipelineLayer } from "./pipeline.ts"
import { RestClient, restClientLayer } from "./rest-client.ts"
import { Uploads, uploadsLayer } from "./uploads.ts"

/** Idle keep-alive sockets are kept this long for the next request. */
const KEEP_ALIVE_MS = 10_000

/**
 * One undici Agent per client: a pool per origin of a few more connections than may be in
 * flight (storage transfers do not hold limiter slots), closed with the layer's scope.
 */
export const dispatcherLayer: Layer.Layer<NodeHttpClient.Dispatcher, never, Connection> = Layer.effect(
  NodeHttpClient.Dispatcher,
  Effect.flatMap(Connection, (config) =>
    Effect.acquireRelease(
      Effect.sync(
        () =>
          new Agent({
            connections: Math.max(4, config.limiter.maxInFlight * 2),
            keepAliveTimeout: KEEP_ALIVE_MS,
            keepAliveMaxTimeout: KEEP_ALIVE_MS * 6,
            // Timeouts are ours (per request, via Effect); undici's would cut long transfers.
            headersTimeout: 0,
            bodyTimeout: 0
          })
      ),
      (agent) => Effect.promise(() => agent.close().catch(() => agent.destroy()))
    ))
)

/** The undici-backed HttpClient over our pooled Agent (`NodeHttpClient.layerUndici` with our dispatcher). */
export const httpClientLayer: Layer.Layer<HttpClient.HttpClient, never, Connection> = NodeHttpClient.layerUndiciNoDispatcher.pipe(
  Layer.provide(dispatcherLayer)
)

export type ClientServices = Connection | Limiter | Pipeline | RestClient | GraphqlClient | Uploads | HttpClient.HttpClient

/**
 * Everything above over an existing Connection: one limiter, one pipeline, three clients on it.
 * Fresh on every use: Effect memoizes a layer across `Effect.provide` calls (by identity), so
 * without it a second client built while a first is open (a copy to another service) would
 * get the first one's connection, limiter and pool.
 */
export const clientLayerFromConnection: Layer.Layer<ClientServices, never, Connection> = Layer.fresh(
  Layer.mergeAll(
    restClientLayer,
    graphqlClientLayer,
    uploadsLayer
  ).pipe(
    Layer.provideMerge(pipelineLayer),
    Layer.provideMerge(Layer.merge(limiterLayer, httpClientLayer)),
    Layer.provideMerge(Layer.effect(Connection, Connection))
  )
)

export const clientLayer = (config: ConnectionInput | ConnectionConfig): Layer.Layer<ClientServices> =>
  clientLayerFromConnection.pipe(Layer.provide(connectionLayer(config)))

/** The client configured from the `WORKSYNC_*` environment variables. */
export const clientLayerFromEnv: Layer.Layer<ClientServices, Config.ConfigError> = clientLayerFromConnection.pipe(
  Layer.provide(connectionFromEnv)
)
