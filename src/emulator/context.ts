/**
 * The emulator's internal seams: what every area (REST records, GraphQL, uploads,
 * webhooks) receives, and how an area plugs itself into the server. Areas never
 * import each other; they meet here.
 */
import type Database from "better-sqlite3"
import type { Schema } from "effect"
import type { IncomingMessage, ServerResponse } from "node:http"
import type { EmulatorVariant } from "./options.ts"

/** Access levels, descending capability (R-USER-01). */
export type AccessLevel = "OWNER" | "ADMIN" | "MEMBER" | "CLIENT" | "COMMENT_ONLY" | "VIEW_ONLY"

/** The authenticated caller of one request. */
export interface Principal {
  readonly userId: string
  readonly tokenKey: string
  /** Organization resolved from the org header (id or slug); null when none was sent. */
  readonly orgId: string | null
  /** Workspace resolved from the workspace header (id or slug); null when none was sent. */
  readonly workspaceId: string | null
  /** The organization header as sent (id or slug), null when absent; lets a caller tell "not sent" from "did not resolve". */
  readonly orgRef?: string | null
  /** The workspace header as sent (id or slug), null when absent. */
  readonly workspaceRef?: string | null
}

/** A change the service announces to webhooks (see the GraphQL document, Events). */
export interface DomainEvent {
  readonly event: string
  readonly workspaceId: string
  readonly previousValue: unknown
  readonly currentValue: unknown
}

export interface EventBus {
  emit(event: DomainEvent): void
  subscribe(listener: (event: DomainEvent) => void): () => void
}

/** Deterministic ids and time, so seeds and tests repeat exactly. */
export interface Ids {
  /** A new database id (24 lowercase hex characters). */
  id(): string
  /** A new short public uid (12 characters, [a-z0-9]). */
  uid(): string
  /** A secret of the given byte length as hex. */
  secret(bytes?: number): string
}

export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number
  iso(): string
}

export interface RequestStats {
  readonly total: number
  readonly byRoute: Readonly<Record<string, number>>
  readonly byStatus: Readonly<Record<string, number>>
}

/** Everything an area handler gets. */
export interface EmulatorContext {
  readonly db: Database.Database
  readonly ids: Ids
  readonly clock: Clock
  readonly events: EventBus
  /** Header prefix, default `svc`. */
  readonly prefix: string
  /** Which reading of the documents this emulator serves (see EmulatorVariant). */
  readonly variant: EmulatorVariant
  /** Multiplies every documented delay (webhook 5 s delay, 7 s timeout, backoff, reconciliation). */
  readonly timeScale: number
  /** Public URLs, known once the servers listen. */
  readonly urls: { readonly restUrl: string; readonly baseUrl: string; readonly storageUrl: string }
  /** Stored objects (file bytes), on disk so large files cost no memory. */
  readonly objects: ObjectStore
  /** Plan limits; null is unlimited. */
  readonly limits: {
    storageBytes: number | null
    perFileBytes: number | null
    seats: number | null
  }
}

/** Bytes of stored objects, keyed by storage key. */
export interface ObjectStore {
  /** Streams `body` into the object `key` (replacing it); resolves with its size and sha256 hex. */
  put(key: string, body: NodeJS.ReadableStream): Promise<{ size: number; sha256: string }>
  /** Size in bytes, or null when there is no such object. */
  stat(key: string): { size: number } | null
  /** A stream of the object's bytes; throws when missing. */
  read(key: string, range?: { start: number; end: number }): NodeJS.ReadableStream
  remove(key: string): void
}

/** What a seed asks for; each area seeds its own part. */
export interface SeedPlan {
  readonly kind: "empty" | "demo" | "sized"
  readonly workspaces: number
  readonly recordsPerWorkspace: number
  /** The seeded organization, workspaces (in order) and the OWNER user. */
  readonly orgId: string
  readonly workspaceIds: ReadonlyArray<string>
  readonly ownerUserId: string
}

/** One RPC operation of the REST interface. */
export interface RestOperation {
  readonly name: string
  /** Writes are subject to the ambiguous-write fault and need write access. */
  readonly write: boolean
  /**
   * Handles a decoded JSON body and returns the response body (status 200).
   * Throws an `HttpError` (from ./http.ts) for error answers.
   */
  readonly handle: (ctx: EmulatorContext, principal: Principal, body: Record<string, unknown>) => unknown
  /** The input schema (for openapi.json); the handler still validates. */
  readonly input?: Schema.Decoder<unknown>
  /** One line for openapi.json. */
  readonly summary?: string
  /** The operation family (records, tags, ...), the OpenAPI tag. */
  readonly family?: string
}

/**
 * A raw route for paths outside `/v1` RPC (GraphQL, uploads, serving). Returns false when
 * it does not handle the request, so the next route is tried.
 *
 * `url` is relative to the mount: a request to `/rest/uploads?x=1` arrives with
 * `url.pathname === "/uploads"` and `mount === "rest"`; `/uploads` arrives with the same
 * pathname and `mount === "base"`. `req.url` keeps the original path. Storage routes get
 * the storage server's path unchanged and `mount === "base"`.
 */
export type RawRoute = (
  ctx: EmulatorContext,
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
  mount: "rest" | "base"
) => Promise<boolean> | boolean

/** What an area contributes to the emulator. */
export interface EmulatorArea {
  readonly name: string
  /** SQL run once at start-up (CREATE TABLE ...). */
  readonly ddl?: string
  readonly operations?: ReadonlyArray<RestOperation>
  readonly routes?: ReadonlyArray<RawRoute>
  /** Storage-server routes (separate origin). */
  readonly storageRoutes?: ReadonlyArray<RawRoute>
  /** Seeds this area's part of the data, after the core has seeded org, users, workspaces. */
  readonly seed?: (ctx: EmulatorContext, plan: SeedPlan) => void
  /** Starts background work (webhook queue, reconciliation); returns a stopper. */
  readonly start?: (ctx: EmulatorContext) => () => void
}
