/**
 * A real PostgreSQL server for the tests, in Effect's style: the run's server
 * (postgres-global-setup.ts starts one, or takes WORKSYNC_TEST_POSTGRES), a fresh database
 * per test (`freshDatabase`, or `freshSchema` for a store URL with `?schema=`), dropped when
 * the test's scope closes, and small client helpers.
 *
 * ```ts
 * import { expect, it } from "@effect/vitest"
 * it.live("stores a snapshot in PostgreSQL", () =>
 *   Effect.gen(function*() {
 *     const url = yield* freshDatabase
 *     const client = yield* pgClient(url)
 *     const rows = yield* query(client, "SELECT 1 AS one")
 *     ...
 *   }))
 * ```
 */
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import { randomBytes } from "node:crypto"
import pg from "pg"
import { inject } from "vitest"

const describe = (cause: unknown) => (cause instanceof Error ? cause.message : String(cause))

/**
 * The URL of the run's PostgreSQL server (its user may create databases). Throws, saying how
 * to provide one, when the run has none.
 */
export const postgresUrl = (): string => {
  const url = inject("postgresUrl") ?? process.env.WORKSYNC_TEST_POSTGRES
  if (url === undefined || url === "") {
    throw new Error(
      "this test needs a PostgreSQL server and the run has none: set WORKSYNC_TEST_POSTGRES=postgres://USER@HOST:PORT/DB " +
        "(a user that may create databases), or install PostgreSQL 15 so the test setup starts a throwaway one " +
        "(scripts/postgres-cluster.sh)"
    )
  }
  return url
}

/** `url` with `?schema=NAME`, as the CLI accepts a PostgreSQL store: postgres://USER@HOST:PORT/DB?schema=NAME. */
export const withSchema = (url: string, schema: string): string => {
  const parsed = new URL(url)
  parsed.searchParams.set("schema", schema)
  return parsed.href
}

/** A connected client, ended when the scope closes. */
export const pgClient = (url: string): Effect.Effect<pg.Client, Error, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.tryPromise({
      try: async () => {
        const client = new pg.Client({ connectionString: url })
        // A connection the server ends (a database dropped WITH (FORCE), a server stopping)
        // is reported as an 'error' event, which crashes the process when nobody listens;
        // the next query on this client fails instead.
        client.on("error", () => undefined)
        await client.connect()
        return client
      },
      catch: (cause) => new Error(`cannot connect to ${url}: ${describe(cause)}`, { cause })
    }),
    (client) => Effect.promise(() => client.end().catch(() => undefined))
  )

/** Runs one statement, giving its rows. */
export const query = <R extends pg.QueryResultRow = Record<string, unknown>>(
  client: pg.Client,
  text: string,
  values: ReadonlyArray<unknown> = []
): Effect.Effect<Array<R>, Error> =>
  Effect.tryPromise({
    try: () => client.query<R>(text, [...values]).then((result) => result.rows),
    catch: (cause) => new Error(`${text}: ${describe(cause)}`, { cause })
  })

/** One statement on a connection of its own, closed after it. */
const once = (url: string, text: string) => Effect.scoped(Effect.flatMap(pgClient(url), (client) => query(client, text)))

/** The name of the database a PostgreSQL URL points at. */
export const databaseName = (url: string): string => decodeURIComponent(new URL(url).pathname.slice(1))

/**
 * A new, empty database on the run's server, named `worksync_test_<random hex>`; yields its
 * URL. When the scope closes it is dropped, connections still open to it included.
 */
export const freshDatabase: Effect.Effect<string, Error, Scope.Scope> = Effect.gen(function*() {
  const admin = yield* Effect.try({
    try: postgresUrl,
    catch: (cause) => (cause instanceof Error ? cause : new Error(String(cause)))
  })
  const name = `worksync_test_${randomBytes(8).toString("hex")}`
  yield* Effect.acquireRelease(
    once(admin, `CREATE DATABASE "${name}"`),
    () => Effect.orDie(once(admin, `DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`))
  )
  const url = new URL(admin)
  url.pathname = `/${name}`
  return url.href
})

/**
 * A new, empty store location for one test: a fresh database's URL with `?schema=worksync`
 * (a schema other than `public`, not created yet). Dropped with the scope, like
 * `freshDatabase`; a server that cannot give one is a defect of the test run.
 */
export const freshSchema: Effect.Effect<string, never, Scope.Scope> = Effect.orDie(
  Effect.map(freshDatabase, (url) => withSchema(url, "worksync"))
)
