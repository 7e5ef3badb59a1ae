/**
 * `--plan` with a PostgreSQL journal (contract: "Delta passes and plans": `--plan` reads
 * everything, writes nothing). migrate copies the journal's schema and the source
 * snapshot's (`NAME_source`) to schemas of their own in the same database, plans against
 * the copies and drops them when the command ends, also when it fails or is interrupted;
 * import-csv reads the journal without writing it. The user's schemas are compared before
 * and after, table by table (columns, every row, identity sequences), and the run that
 * follows does what the plan said. The emulator, the real CLI, a real PostgreSQL.
 */
import * as Effect from "effect/Effect"
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import type pg from "pg"
import { expect, layer } from "@effect/vitest"
import { insertList } from "../../src/emulator/core/lists.ts"
import type { EmulatorHandle } from "../../src/emulator/index.ts"
import { cleanEnv, runCli } from "../support/cli.ts"
import { Emulator, emulatorLayer, tempDir } from "../support/effect.ts"
import { freshSchema, pgClient, query } from "../support/postgres.ts"
import { rpcAs } from "../support/mirror-cli.ts"

const BIN = new URL("../../bin/worksync.js", import.meta.url).pathname

let seq = 0
const fresh = (name: string) => `${name}-${++seq}-${process.pid}`

/** Titles of the live records of a workspace. */
const titles = (handle: EmulatorHandle, ws: string) =>
  (handle.ctx.db.prepare("SELECT title FROM records WHERE workspace_id = ? AND deleted_at IS NULL ORDER BY title").pluck().all(ws) as Array<string>)

/** A source workspace of four records, a target organization and workspace, and the CLI's environment. */
const seed = async (handle: EmulatorHandle) => {
  const source = { token: handle.token, org: handle.org }
  const ws = handle.admin.createWorkspace({ name: fresh("source") }).id
  // Made directly: the alt reading's list create makes no list (CREATE_LIST_READING).
  const backlog = insertList(handle.ctx, ws, "Backlog")
  const ids: Record<string, string> = {}
  for (const title of ["Alpha", "Bravo", "Charlie", "Delta"]) {
    ids[title] = (await rpcAs(handle, source, "create-record", { workspaceId: ws, title, listId: backlog.id })).id
  }
  const org = handle.admin.createOrganization({ name: "Target", slug: fresh("target") })
  const owner = handle.admin.createUser({ email: `owner-${org}@target.example`, firstName: "Tara", lastName: "Owner", orgLevel: "OWNER", orgId: org })
  const target = handle.admin.createWorkspace({ name: fresh("target"), orgId: org }).id
  const env = {
    WORKSYNC_REST_URL: handle.restUrl,
    WORKSYNC_BASE_URL: handle.baseUrl,
    WORKSYNC_TOKEN: handle.token,
    WORKSYNC_TOKEN_ID: handle.tokenId,
    WORKSYNC_TOKEN_SECRET: handle.tokenSecret,
    WORKSYNC_ORG: handle.org,
    WORKSYNC_TARGET_TOKEN: owner.token,
    WORKSYNC_TARGET_TOKEN_ID: owner.tokenId,
    WORKSYNC_TARGET_TOKEN_SECRET: owner.tokenSecret,
    WORKSYNC_TARGET_ORG: org
  }
  return { ws, ids, source, target, env }
}

/**
 * Everything of the given schemas: each relation's kind and columns, each table's rows
 * (count and a digest of them all, in a fixed order), the largest value of each identity
 * column, and each sequence's state. Equal before and after: nothing in them changed.
 */
const dump = (client: pg.Client, schemas: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const relations = yield* query<{ schema: string; name: string; kind: string }>(
      client,
      "SELECT n.nspname AS schema, c.relname AS name, c.relkind::text AS kind FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = ANY($1) ORDER BY 1, 2",
      [schemas]
    )
    const out: Record<string, unknown> = {}
    for (const r of relations) {
      const q = `"${r.schema}"."${r.name}"`
      const columns = yield* query(
        client,
        "SELECT column_name, data_type, collation_name, column_default, is_nullable, is_identity FROM information_schema.columns WHERE table_schema = $1 AND table_name = $2 ORDER BY ordinal_position",
        [r.schema, r.name]
      )
      const entry: Record<string, unknown> = { kind: r.kind, columns }
      if (r.kind === "r") {
        entry.rows = (yield* query(client, `SELECT count(*)::int AS n, md5(coalesce(string_agg(t::text, E'\\n' ORDER BY t::text), '')) AS digest FROM ${q} AS t`))[0]
        for (const c of columns.filter((c) => c.is_identity === "YES")) {
          entry[`max ${c.column_name}`] = (yield* query(client, `SELECT max("${c.column_name}")::text AS max FROM ${q}`))[0]!.max
        }
      }
      if (r.kind === "S") entry.state = (yield* query(client, `SELECT last_value::text, is_called FROM ${q}`))[0]
      if (r.kind === "v") entry.definition = (yield* query(client, "SELECT pg_get_viewdef($1::regclass) AS d", [q]))[0]!.d
      out[`${r.schema}.${r.name}`] = entry
    }
    return out
  })

/** The schemas of the database, the server's own left out. */
const schemasOf = (client: pg.Client) =>
  Effect.map(
    query<{ name: string }>(client, "SELECT nspname AS name FROM pg_namespace WHERE nspname NOT LIKE 'pg\\_%' AND nspname <> 'information_schema' ORDER BY 1"),
    (rows) => rows.map((r) => r.name)
  )

const until = (condition: () => Promise<boolean>) =>
  Effect.promise(async () => {
    while (!(await condition())) await new Promise((resolve) => setTimeout(resolve, 10))
  })

layer(emulatorLayer({ seed: "empty" }), { timeout: 60_000, excludeTestServices: true })("--plan with a PostgreSQL journal", (it) => {
  it.effect("migrate plans against copies of the journal's and the source's schemas, changes neither, leaves no copy behind (done, failed or interrupted), and the run that follows does what it said", () =>
    Effect.gen(function*() {
      const handle = yield* Emulator
      const s = yield* Effect.promise(() => seed(handle))
      const journal = yield* freshSchema
      const client = yield* pgClient(journal)
      const mine = ["worksync", "worksync_source"]
      const args = ["migrate", "--from", `workspace:${s.ws}`, "--to", `workspace:${s.target}`, "--journal", journal, "--people", "skip", "--json"]
      const cli = (extra: ReadonlyArray<string> = []) => Effect.promise(() => runCli([...args, ...extra], { env: s.env }))
      const writes = () => ["create-record", "update-record", "move-record", "delete-record", "create-list"].map((w) => handle.stats().byRoute[w] ?? 0)
      /** A plan: the contract's shape; the schemas as they were, no copy left, nothing written to the target. */
      const plan = Effect.gen(function*() {
        const schemas = yield* schemasOf(client)
        const before = yield* dump(client, mine)
        const sent = writes()
        const r = yield* cli(["--plan"])
        expect(r.code, r.stderr).toBe(0)
        const out = JSON.parse(r.stdout)
        expect(Object.keys(out)).toEqual(["plan"])
        expect(writes()).toEqual(sent)
        expect(yield* schemasOf(client)).toEqual(schemas)
        expect(yield* dump(client, mine)).toEqual(before)
        return out.plan
      })

      // Planned on no journal at all: no schema is made.
      const first = yield* plan
      expect(first).toMatchObject({ create: 4, update: 0, unchanged: 0, delete: 0, conflicts: [] })
      expect(yield* schemasOf(client)).toEqual(["public"])
      const one = yield* cli()
      expect(one.code, one.stderr).toBe(0)
      expect(JSON.parse(one.stdout)).toMatchObject({ verified: true, pass: 1, records: { created: 4 } })
      expect(yield* schemasOf(client)).toEqual(["public", ...mine])

      // The source renames Alpha, marks Bravo done and adds Echo.
      yield* Effect.promise(async () => {
        await rpcAs(handle, s.source, "update-record", { workspaceId: s.ws, recordId: s.ids.Alpha, title: "Alpha at the source" })
        await rpcAs(handle, s.source, "update-record", { workspaceId: s.ws, recordId: s.ids.Bravo, done: true })
        await rpcAs(handle, s.source, "create-record", { workspaceId: s.ws, title: "Echo" })
      })
      const second = yield* plan
      expect(second).toMatchObject({ create: 1, update: 2, unchanged: 2, delete: 0, conflicts: [] })
      // The same plan again: the first plan wrote nothing the second read.
      expect(yield* plan).toEqual(second)

      // A schema of the user's named like a copy (but not made as one) is never dropped.
      yield* query(client, "CREATE SCHEMA worksync_plan_0123456789ab")
      yield* query(client, "CREATE TABLE worksync_plan_0123456789ab.kept AS SELECT 1 AS one")
      const before = yield* dump(client, mine)
      const schemas = yield* schemasOf(client)
      // Interrupted (SIGINT) while the source is read: the copies are dropped.
      handle.faults.inject({ route: "list-records", kind: "hold" })
      const child = spawn(process.execPath, [BIN, ...args, "--plan"], { env: { ...cleanEnv(), ...s.env }, stdio: ["ignore", "pipe", "pipe"] })
      const closed = new Promise<number | null>((resolve) => child.on("close", (code) => resolve(code)))
      yield* until(async () => handle.faults.heldRequests.size > 0)
      const copies = (yield* schemasOf(client)).filter((n) => !schemas.includes(n))
      expect(copies).toHaveLength(2)
      expect(copies.every((n) => n.startsWith("worksync_plan_"))).toBe(true)
      child.kill("SIGINT")
      const interrupted = yield* Effect.promise(() => closed)
      handle.faults.reset()
      expect(interrupted).toBe(130)
      expect(yield* schemasOf(client)).toEqual(schemas)

      // Failed after the copies were made: dropped too.
      handle.faults.inject({ route: "list-records", kind: "401" })
      const failed = yield* cli(["--plan"])
      handle.faults.reset()
      expect(failed.code).not.toBe(0)
      expect(yield* schemasOf(client)).toEqual(schemas)

      // Killed outright: its copies stay until the next plan drops them.
      handle.faults.inject({ route: "list-records", kind: "hold" })
      const killed = spawn(process.execPath, [BIN, ...args, "--plan"], { env: { ...cleanEnv(), ...s.env }, stdio: "ignore" })
      const gone = new Promise<void>((resolve) => killed.on("close", () => resolve()))
      yield* until(async () => handle.faults.heldRequests.size > 0)
      killed.kill("SIGKILL")
      yield* Effect.promise(() => gone)
      handle.faults.reset()
      expect((yield* schemasOf(client)).filter((n) => !schemas.includes(n))).toHaveLength(2)
      const again = yield* cli(["--plan"])
      expect(again.code, again.stderr).toBe(0)
      expect(JSON.parse(again.stdout).plan).toEqual(second)
      expect(yield* schemasOf(client)).toEqual(schemas)
      expect(yield* dump(client, mine)).toEqual(before)
      expect(yield* query(client, "SELECT one FROM worksync_plan_0123456789ab.kept")).toEqual([{ one: 1 }])

      // The run does what the plan said.
      const two = yield* cli()
      expect(two.code, two.stderr).toBe(0)
      expect(JSON.parse(two.stdout)).toMatchObject({
        verified: true,
        pass: 2,
        updated: second.update,
        records: { created: second.create, updated: second.update, skipped: second.unchanged }
      })
      expect(titles(handle, s.target)).toEqual(["Alpha at the source", "Bravo", "Charlie", "Delta", "Echo"])
      expect(yield* plan).toMatchObject({ create: 0, update: 0, unchanged: 5, delete: 0 })
    }), 240_000)

  it.effect("migrate --plan without --json: the short summary on stderr, with a PostgreSQL journal as with a file", () =>
    Effect.gen(function*() {
      const handle = yield* Emulator
      const s = yield* Effect.promise(() => seed(handle))
      const journal = yield* freshSchema
      const r = yield* Effect.promise(() =>
        runCli(["migrate", "--from", `workspace:${s.ws}`, "--to", `workspace:${s.target}`, "--people", "skip", "--plan", "--journal", journal], { env: s.env })
      )
      expect(r.code, r.stderr).toBe(0)
      expect(r.stdout).toBe("")
      expect(r.stderr).toContain("migrate: plan: 4 to create, 0 to update, 0 unchanged, 0 to delete")
    }), 120_000)

  it.effect("import-csv reads the journal without writing it: a later export's changed row is planned as an update, and the run does what the plan said", () =>
    Effect.gen(function*() {
      const handle = yield* Emulator
      const ws = handle.admin.createWorkspace({ name: fresh("jira") }).id
      const dir = yield* tempDir("ws-plan-pg-")
      const csv = path.join(dir, "jira.csv")
      const original = fs.readFileSync("examples/data/jira-export.csv", "utf8")
      fs.writeFileSync(csv, original)
      const journal = yield* freshSchema
      const client = yield* pgClient(journal)
      const env = {
        WORKSYNC_REST_URL: handle.restUrl,
        WORKSYNC_BASE_URL: handle.baseUrl,
        WORKSYNC_TOKEN: handle.token,
        WORKSYNC_TOKEN_ID: handle.tokenId,
        WORKSYNC_TOKEN_SECRET: handle.tokenSecret,
        WORKSYNC_ORG: handle.org
      }
      const cli = (extra: ReadonlyArray<string>) =>
        Effect.promise(() => runCli(["import-csv", "--workspace", ws, "--csv", csv, "--preset", "jira", "--journal", journal, "--json", ...extra], { env }))
      const plan = Effect.gen(function*() {
        const schemas = yield* schemasOf(client)
        const before = yield* dump(client, ["worksync"])
        const r = yield* cli(["--plan"])
        expect(r.code, r.stderr).toBe(0)
        expect(yield* schemasOf(client)).toEqual(schemas)
        expect(yield* dump(client, ["worksync"])).toEqual(before)
        return JSON.parse(r.stdout).plan
      })

      expect(yield* plan).toMatchObject({ create: 3, update: 0, unchanged: 0, delete: 0 })
      expect(yield* schemasOf(client)).toEqual(["public"])
      const first = yield* cli([])
      expect(first.code, first.stderr).toBe(0)
      expect(JSON.parse(first.stdout)).toMatchObject({ rows: 3, created: 3, pass: 1 })

      // A later export: one issue renamed. The journal as an older worksync left it (version
      // 4, no ops.before): the plan reads it as it is and does not bring it to the newest.
      fs.writeFileSync(csv, original.replace("Upgrade the database", "Upgrade the database to 17"))
      yield* query(client, "ALTER TABLE worksync.ops DROP COLUMN before")
      yield* query(client, "UPDATE worksync.worksync_schema SET version = 4 WHERE store = 'journal'")
      const later = yield* plan
      expect(later).toMatchObject({ create: 0, update: 1, unchanged: 2, delete: 0 })
      const delta = yield* cli([])
      expect(delta.code, delta.stderr).toBe(0)
      expect(JSON.parse(delta.stdout)).toMatchObject({ rows: 3, created: 0, skipped: 3, updated: later.update, pass: 2 })
      expect(titles(handle, ws)).toContain("Upgrade the database to 17")
    }), 120_000)
})
