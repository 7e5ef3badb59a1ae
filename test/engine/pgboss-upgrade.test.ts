/**
 * A pool whose queue was created by pg-boss 10 keeps working after the upgrade to pg-boss 12.
 *
 * Why this needs a test of its own: pg-boss 12's migrations start at schema version 25
 * (pg-boss 11's), and pg-boss 10 leaves version 24 (pg-boss 11 shipped no step from it), so
 * pg-boss 12 on its own refuses the database of a pool set up under 10. `openEngine` carries
 * such a database over itself (src/engine/engine.ts). The database here is built by the real
 * pg-boss 10 (the `pg-boss-10` devDependency), the way worksync's engine used it, then
 * opened by the current engine. A real PostgreSQL server (test/support/postgres.ts), no mocks.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import type * as Scope from "effect/Scope"
import { PgBoss } from "pg-boss"
import pgBoss12Package from "pg-boss/package.json" with { type: "json" }
import PgBoss10 from "pg-boss-10"
import pgBoss10Schema from "pg-boss-10/version.json" with { type: "json" }
import { type EngineLocation, openEngine, parseEngineUrl, QUEUE, QUEUE_OPTIONS } from "../../src/engine/engine.ts"
import { type JobOutcome, jobKeyOf, type JobSpec, jobSpecOf } from "../../src/engine/job.ts"
import { freshDatabase, pgClient, query } from "../support/postgres.ts"

/** The schema version pg-boss 12 installs and expects. */
const PG_BOSS_12_SCHEMA = pgBoss12Package.pgboss.schema

const locationOf = (url: string): EngineLocation => {
  const location = parseEngineUrl(url)
  if (typeof location === "string") throw new Error(location)
  return location
}

/** A job as a command queues it: a backup to a snapshot of its own, so each has its own key. */
const specFor = (name: string): JobSpec =>
  jobSpecOf("backup", ["--snapshot", `${name}.sqlite`], "/srv/worksync", { WORKSYNC_ORGANIZATION: "acme" })

const DONE: JobOutcome = { code: 0, stdout: "{\"records\":3}\n" }
const ARCHIVED: JobOutcome = { code: 2, stdout: "{\"records\":1,\"failed\":1}\n" }

/** What pg-boss's job table says of a job; the same columns in pg-boss 10's job and archive and in 12's job. */
interface JobRow {
  readonly id: string
  readonly state: string
  readonly retry_count: number
  readonly retry_limit: number
  readonly singleton_key: string | null
  readonly data: unknown
  readonly output: unknown
  readonly created_on: Date
  readonly started_on: Date | null
  readonly completed_on: Date | null
}
const JOB_COLUMNS =
  "id::text AS id, state::text AS state, retry_count, retry_limit, singleton_key, data, output, created_on, started_on, completed_on"

/** The queue's jobs in pg-boss 12's schema, by id. */
const jobRows = (url: string, schema: string) =>
  Effect.scoped(Effect.flatMap(pgClient(url), (db) =>
    query<JobRow>(db, `SELECT ${JOB_COLUMNS} FROM ${schema}.job WHERE name = $1 ORDER BY id`, [QUEUE])))

/** What a test reads of the schema as a whole: pg-boss's recorded version and the schema's tables (partitions aside). */
const schemaShape = (url: string, schema: string) =>
  Effect.scoped(Effect.gen(function*() {
    const db = yield* pgClient(url)
    const version = yield* query<{ version: number }>(db, `SELECT version FROM ${schema}.version`)
    const tables = yield* query<{ name: string }>(
      db,
      `SELECT c.relname AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
       WHERE n.nspname = $1 AND c.relkind IN ('r', 'p') AND NOT c.relispartition ORDER BY 1`,
      [schema]
    )
    return { versions: version.map((r) => r.version), tables: tables.map((r) => r.name) }
  }))

/** A pool's database as pg-boss 10 left it, and the ids of the jobs queued in it. */
interface MadeByPgBoss10 {
  readonly url: string
  readonly location: EngineLocation
  /** Completed with an output a moment before the upgrade: still in pg-boss 10's job table. */
  readonly done: string
  /** Completed 13 hours before the upgrade: pg-boss 10 had moved it to its archive. */
  readonly archived: string
  /** Failed for good (no attempts left). */
  readonly failed: string
  /** Handed back twice by workers that went away: waiting for its third attempt. */
  readonly handedBack: string
  /** Queued, never started. */
  readonly waiting: string
  /** Every job of the queue as pg-boss 10 left it (job and archive), by id. */
  readonly rows: ReadonlyArray<JobRow>
}

/**
 * A fresh database where worksync's pool ran under pg-boss 10: the queue created with the
 * engine's settings, jobs queued, taken, finished and handed back through pg-boss 10's own
 * calls (send with the job's key, fetch, complete, fail), and a line of output in the
 * engine's `job_lines`. pg-boss 10 is stopped before this returns.
 */
const madeByPgBoss10: Effect.Effect<MadeByPgBoss10, Error, Scope.Scope> = Effect.gen(function*() {
  const url = yield* freshDatabase
  const location = locationOf(url)
  const schema = location.schema
  const made = yield* Effect.promise(async () => {
    // As worksync's engine opened pg-boss 10 (a waiting command's settings).
    const boss = new PgBoss10({ connectionString: location.url, schema, supervise: false, schedule: false })
    boss.on("error", () => undefined)
    await boss.start()
    try {
      const db = boss.getDb()
      // A copy: pg-boss 10 writes its defaults into the options object it is given.
      await boss.createQueue(QUEUE, { ...QUEUE_OPTIONS })
      // The engine's own table, as it created it beside pg-boss 10's.
      await db.executeSql(
        `CREATE TABLE IF NOT EXISTS ${schema}.job_lines (
           seq    BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
           job_id UUID   NOT NULL,
           at     TIMESTAMPTZ NOT NULL DEFAULT now(),
           line   TEXT   NOT NULL
         );
         CREATE INDEX IF NOT EXISTS job_lines_job ON ${schema}.job_lines (job_id, seq);`,
        []
      )
      // As the engine's `submit` queued a job: one per key.
      const send = async (name: string, options: { readonly retryLimit?: number } = {}) => {
        const spec = specFor(name)
        const id = await boss.send(QUEUE, spec, { singletonKey: jobKeyOf(spec), ...options })
        if (id === null) throw new Error(`pg-boss 10 refused the job ${name}`)
        return id
      }
      // As a worker took a job; exactly the one expected.
      const take = async (id: string) => {
        const jobs = await boss.fetch<JobSpec>(QUEUE, { batchSize: 1 })
        expect(jobs.map((j) => j.id)).toEqual([id])
      }

      const done = await send("done")
      await take(done)
      await db.executeSql(`INSERT INTO ${schema}.job_lines (job_id, line) VALUES ($1, $2)`, [done, "3 records backed up"])
      await boss.complete(QUEUE, done, DONE)

      const archived = await send("archived")
      await take(archived)
      await boss.complete(QUEUE, archived, ARCHIVED)
      // Finished past pg-boss 10's archive interval (12 hours): its own archive pass moves it.
      await db.executeSql(`UPDATE ${schema}.job SET completed_on = completed_on - interval '13 hours' WHERE id = $1`, [archived])
      await boss.archive()

      // A job with no attempts to spare (the queue allows 100): one failure fails it for good.
      const failed = await send("failed", { retryLimit: 0 })
      await take(failed)
      await boss.fail(QUEUE, failed, { error: "its worker stopped" })

      // Swept twice: each worker running it went away and another handed it back.
      const handedBack = await send("handed back")
      await take(handedBack)
      await boss.fail(QUEUE, handedBack, { error: "its worker stopped answering" })
      await take(handedBack)
      await boss.fail(QUEUE, handedBack, { error: "its worker stopped answering" })

      const waiting = await send("waiting")

      const rows: Array<JobRow> = (await db.executeSql(
        `SELECT ${JOB_COLUMNS} FROM ${schema}.job WHERE name = $1
         UNION ALL SELECT ${JOB_COLUMNS} FROM ${schema}.archive WHERE name = $1
         ORDER BY id`,
        [QUEUE]
      )).rows
      const archivedIds = (await db.executeSql(`SELECT id::text AS id FROM ${schema}.archive`, [])).rows
      return { done, archived, failed, handedBack, waiting, rows, archivedIds, version: await boss.schemaVersion() }
    } finally {
      await boss.stop({ graceful: false, wait: true })
    }
  })
  // What the upgrade starts from: pg-boss 10's last schema, every state a pool's job can be in.
  expect(made.version).toBe(pgBoss10Schema.schema)
  expect(made.archivedIds).toEqual([{ id: made.archived }])
  const stateOf = (id: string) => made.rows.find((r) => r.id === id)
  expect(stateOf(made.done)).toMatchObject({ state: "completed", output: DONE })
  expect(stateOf(made.failed)).toMatchObject({ state: "failed", retry_limit: 0 })
  expect(stateOf(made.handedBack)).toMatchObject({ state: "retry", retry_count: 1, retry_limit: QUEUE_OPTIONS.retryLimit })
  expect(stateOf(made.waiting)).toMatchObject({ state: "created", retry_count: 0 })
  const { archivedIds: _a, version: _v, ...ids } = made
  return { url, location, ...ids }
})

/** What a fresh pool's schema looks like under the current engine. */
const freshEngineShape = Effect.gen(function*() {
  const url = yield* freshDatabase
  const location = locationOf(url)
  yield* Effect.scoped(openEngine(location, { worker: false }))
  return yield* schemaShape(url, location.schema)
})

describe("engine: a pool's database made by pg-boss 10, opened with pg-boss 12", () => {
  it.live(`pg-boss 12 alone refuses the schema pg-boss 10 leaves (version ${pgBoss10Schema.schema}), so openEngine must carry it over`, () =>
    Effect.gen(function*() {
      const { location } = yield* madeByPgBoss10
      const error = yield* Effect.promise(async () => {
        const boss = new PgBoss({ connectionString: location.url, schema: location.schema, supervise: false, schedule: false })
        boss.on("error", () => undefined)
        try {
          await boss.start()
          return undefined
        } catch (e) {
          return e instanceof Error ? e.message : String(e)
        } finally {
          await boss.stop({ graceful: false }).catch(() => undefined)
        }
      })
      expect(error).toMatch(new RegExp(`Cannot migrate pg-boss schema from version ${pgBoss10Schema.schema}\\b`))
    }))

  it.live("openEngine installs pg-boss 12's schema, keeps the queue's settings, and keeps every job's id, state, attempts and output", () =>
    Effect.gen(function*() {
      const v10 = yield* madeByPgBoss10
      const fresh = yield* freshEngineShape
      const engine = yield* openEngine(v10.location, { worker: false })

      // Exactly what a new pool gets: pg-boss 12's version, its tables and the engine's, nothing of 10's left.
      const shape = yield* schemaShape(v10.url, v10.location.schema)
      expect(shape.versions).toEqual([PG_BOSS_12_SCHEMA])
      expect(shape).toEqual(fresh)
      expect(yield* engine.call("schema version", () => engine.boss.schemaVersion())).toBe(PG_BOSS_12_SCHEMA)

      const queue = yield* engine.call("queue", () => engine.boss.getQueue(QUEUE))
      expect(queue).toMatchObject(QUEUE_OPTIONS)

      // Archived ones included, each job once, as pg-boss 10 left it.
      expect(yield* jobRows(v10.url, v10.location.schema)).toEqual(v10.rows)

      // As a waiting command reads them through the engine.
      expect(yield* engine.jobState(v10.done)).toEqual({ id: v10.done, state: "completed", outcome: DONE })
      expect(yield* engine.jobState(v10.archived)).toEqual({ id: v10.archived, state: "completed", outcome: ARCHIVED })
      expect((yield* engine.jobState(v10.failed))?.state).toBe("failed")
      expect((yield* engine.jobState(v10.handedBack))?.state).toBe("retry")
      expect(yield* engine.jobState(v10.waiting)).toEqual({ id: v10.waiting, state: "created", outcome: undefined })
      expect(yield* engine.lines(v10.done, 0)).toEqual([{ seq: 1, line: "3 records backed up" }])
    }))

  it.live("after the upgrade a rerun attaches to the job pg-boss 10 left waiting, and the pg-boss 12 engine fetches and completes it", () =>
    Effect.gen(function*() {
      const v10 = yield* madeByPgBoss10
      const engine = yield* openEngine(v10.location, { worker: false })

      // The job's key came over: the same command typed again joins the job rather than queue a second.
      expect(yield* engine.submit(specFor("waiting"))).toEqual({ id: v10.waiting, attached: true })
      expect(yield* engine.submit(specFor("handed back"))).toEqual({ id: v10.handedBack, attached: true })

      // As a worker takes jobs: the two pg-boss 10 left to run, the handed-back one on its third attempt.
      const taken = yield* engine.call("take jobs", () => engine.boss.fetch<JobSpec>(QUEUE, { batchSize: 10 }))
      const byId = new Map(taken.map((j) => [j.id, j]))
      expect([...byId.keys()].sort()).toEqual([v10.waiting, v10.handedBack].sort())
      expect(byId.get(v10.waiting)).toMatchObject({ data: specFor("waiting"), retryCount: 0 })
      expect(byId.get(v10.handedBack)).toMatchObject({ data: specFor("handed back"), retryCount: 2 })
      expect((yield* engine.jobState(v10.waiting))?.state).toBe("active")

      const outcome: JobOutcome = { code: 0, stdout: "{\"records\":7}\n" }
      yield* engine.call("finish the job", () => engine.boss.complete(QUEUE, v10.waiting, outcome))
      expect(yield* engine.jobState(v10.waiting)).toEqual({ id: v10.waiting, state: "completed", outcome })
      // Finished, so a new run of the command is a new job.
      const rerun = yield* engine.submit(specFor("waiting"))
      expect(rerun.attached).toBe(false)
      expect(rerun.id).not.toBe(v10.waiting)
    }))

  it.live("a second openEngine on the upgraded database changes nothing", () =>
    Effect.gen(function*() {
      const v10 = yield* madeByPgBoss10
      yield* Effect.scoped(openEngine(v10.location, { worker: false }))
      const shape = yield* schemaShape(v10.url, v10.location.schema)
      const rows = yield* jobRows(v10.url, v10.location.schema)
      expect(rows).toEqual(v10.rows)

      const again = yield* openEngine(v10.location, { worker: false })
      expect(yield* schemaShape(v10.url, v10.location.schema)).toEqual(shape)
      expect(yield* jobRows(v10.url, v10.location.schema)).toEqual(rows)
      expect(yield* again.call("queue", () => again.boss.getQueue(QUEUE))).toMatchObject(QUEUE_OPTIONS)
      expect(yield* again.submit(specFor("waiting"))).toEqual({ id: v10.waiting, attached: true })
      expect(yield* again.lines(v10.done, 0)).toEqual([{ seq: 1, line: "3 records backed up" }])
    }))

  it.live("a worker and a command that both find pg-boss 10's schema before either moves it both open the engine, and each job is carried over once", () =>
    Effect.gen(function*() {
      const v10 = yield* madeByPgBoss10
      const schema = v10.location.schema
      const fresh = yield* freshEngineShape
      // Started together, as after an upgrade of a whole pool: both are let go only once each
      // has found pg-boss 10's schema and is reading its version (held here by a lock on that
      // table), so neither can see the other's move finished before it looks.
      const gate = yield* pgClient(v10.url)
      yield* query(gate, "BEGIN")
      yield* query(gate, `LOCK TABLE ${schema}.version IN ACCESS EXCLUSIVE MODE`)
      const opening = yield* Effect.forkChild(Effect.all(
        [openEngine(v10.location, { worker: true, concurrency: 1 }), openEngine(v10.location, { worker: false })],
        { concurrency: "unbounded" }
      ))
      const watcher = yield* pgClient(v10.url)
      const waiting = query<{ n: number }>(
        watcher,
        "SELECT count(*)::int AS n FROM pg_locks WHERE relation = $1::regclass AND NOT granted",
        [`${schema}.version`]
      )
      for (let polls = 0; (yield* waiting)[0]?.n !== 2; polls++) {
        if (polls === 500) return yield* Effect.die(new Error("the two openEngine calls never both read pg-boss 10's version"))
        yield* Effect.sleep("20 millis")
      }
      yield* query(gate, "COMMIT")
      const [worker, command] = yield* Fiber.join(opening)

      expect(yield* schemaShape(v10.url, schema)).toEqual(fresh)
      expect(yield* jobRows(v10.url, schema)).toEqual(v10.rows)
      expect(yield* worker.call("queue", () => worker.boss.getQueue(QUEUE))).toMatchObject(QUEUE_OPTIONS)
      expect(yield* command.jobState(v10.done)).toEqual({ id: v10.done, state: "completed", outcome: DONE })
      expect(yield* worker.jobState(v10.waiting)).toEqual({ id: v10.waiting, state: "created", outcome: undefined })
    }))
})
