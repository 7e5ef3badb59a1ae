import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { databaseName, freshDatabase, pgClient, postgresUrl, query, withSchema } from "../support/postgres.ts"

/** Whether the run's server has a database of this name, asked on a connection of its own. */
const databaseExists = (name: string) =>
  Effect.scoped(
    Effect.flatMap(pgClient(postgresUrl()), (admin) =>
      query(admin, "SELECT 1 FROM pg_database WHERE datname = $1", [name])
    )
  ).pipe(Effect.map((rows) => rows.length === 1))

// A real server and real connections: the live clock.
describe("the tests' PostgreSQL server", () => {
  it.live("a fresh database takes a table, rows and a query", () =>
    Effect.gen(function*() {
      const url = yield* freshDatabase
      expect(databaseName(url)).toMatch(/^worksync_test_[0-9a-f]{16}$/)
      expect(withSchema(url, "ws")).toBe(`${url}?schema=ws`)
      const client = yield* pgClient(url)
      yield* query(client, "CREATE TABLE item (id integer PRIMARY KEY, title text NOT NULL)")
      yield* query(client, "INSERT INTO item (id, title) VALUES ($1, $2), ($3, $4)", [1, "one", 2, "two"])
      const rows = yield* query<{ id: number; title: string }>(client, "SELECT id, title FROM item ORDER BY id")
      expect(rows).toEqual([{ id: 1, title: "one" }, { id: 2, title: "two" }])
    }))

  it.live("the database is dropped when its scope closes", () =>
    Effect.gen(function*() {
      const name = yield* Effect.scoped(
        Effect.gen(function*() {
          const url = yield* freshDatabase
          const name = databaseName(url)
          expect(yield* databaseExists(name)).toBe(true)
          return name
        })
      )
      expect(yield* databaseExists(name)).toBe(false)
    }))
})
