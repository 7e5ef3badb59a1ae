/**
 * The pool's engine: a job queue in PostgreSQL kept by pg-boss (docs/scale.md says why
 * pg-boss), plus what the pool needs beside the queue: each job's output lines, so the
 * command that waits shows progress, and a liveness lock per running job, so a killed
 * worker's job is handed to another within seconds rather than at pg-boss's expiry.
 *
 * Everything lives in one schema of the engine's database (`?schema=NAME`, default
 * `worksync_engine`): pg-boss's tables and `job_lines`.
 */
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Schedule from "effect/Schedule"
import type * as Scope from "effect/Scope"
import Pg from "pg"
import PgBoss from "pg-boss"
import { redactUrl, SCHEMA_NAME } from "../store/postgres-url.ts"
import { type JobOutcome, type JobSpec, jobKeyOf } from "./job.ts"

/** The queue every worksync job goes through. */
export const QUEUE = "worksync-jobs"

/**
 * pg-boss's expiry is a backstop only (liveness locks hand a dead worker's job on within
 * seconds); pg-boss caps it below 24 hours. A job may run longer: its worker keeps
 * renewing it (the heartbeat in worker.ts), so only a job whose worker stopped renewing
 * it for this long expires.
 */
const EXPIRE_SECONDS = 23 * 60 * 60
/** Attempts of one job: each lost worker or hand-back is one. */
const RETRY_LIMIT = 100

/** The queue as the engine creates it on a new database. */
export const QUEUE_OPTIONS = {
  name: QUEUE,
  // One job per key in each state: concurrent submits of one command make one job.
  policy: "stately",
  retryLimit: RETRY_LIMIT,
  retryDelay: 0,
  expireInSeconds: EXPIRE_SECONDS
} as const satisfies PgBoss.Queue

/** The engine's database could not be reached or used. */
export class EngineError extends Data.TaggedError("EngineError")<{
  readonly engine: string
  readonly operation: string
  readonly detail: string
}> {
  override get message(): string {
    return `engine ${this.engine}: ${this.operation} failed: ${this.detail}`
  }
}

export interface EngineLocation {
  readonly url: string
  readonly schema: string
  /** For messages: the URL without its password. */
  readonly display: string
}

export const parseEngineUrl = (location: string): EngineLocation | string => {
  let u: URL
  try {
    u = new URL(location)
  } catch {
    return `--engine ${redactUrl(location)}: not a PostgreSQL URL (postgres://USER@HOST:PORT/DB)`
  }
  if (u.protocol !== "postgres:" && u.protocol !== "postgresql:") {
    return `--engine ${redactUrl(location)}: not a PostgreSQL URL (postgres://USER@HOST:PORT/DB)`
  }
  const schema = u.searchParams.get("schema") ?? "worksync_engine"
  if (!SCHEMA_NAME.test(schema)) return `--engine: schema "${schema}" is not a plain name (lower-case letters, digits and _)`
  u.searchParams.delete("schema")
  return { url: u.toString(), schema, display: redactUrl(location) }
}

/** A job as the engine tracks it. */
export interface JobState {
  readonly id: string
  readonly state: "created" | "retry" | "active" | "completed" | "cancelled" | "failed"
  readonly outcome: JobOutcome | undefined
}

export interface EngineApi {
  readonly location: EngineLocation
  readonly boss: PgBoss
  /** A plain pool on the same database, for the job lines and the liveness locks. */
  readonly pool: Pg.Pool
  /** Runs a pg-boss or pool call, failures named by `operation`. */
  readonly call: <A>(operation: string, f: () => Promise<A>) => Effect.Effect<A, EngineError>
  /**
   * The job doing what `spec` does: the one queued or running (attached), else a new one.
   * Two commands racing for the same new job end up on one (the queue admits one job
   * per key in each state).
   */
  readonly submit: (spec: JobSpec) => Effect.Effect<{ readonly id: string; readonly attached: boolean }, EngineError>
  readonly jobState: (id: string) => Effect.Effect<JobState | undefined, EngineError>
  /** Lines a job printed after `afterSeq`, oldest first. */
  readonly lines: (id: string, afterSeq: number) => Effect.Effect<Array<{ readonly seq: number; readonly line: string }>, EngineError>
  readonly addLine: (id: string, line: string) => Effect.Effect<void, EngineError>
}

const detailOf = (e: unknown): string => (e instanceof Error ? e.message : String(e))

/**
 * Opens the engine for the scope. `worker` turns on pg-boss's maintenance (expiry,
 * archiving); a waiting command only sends and reads.
 */
export const openEngine = (
  location: EngineLocation,
  options: { readonly worker: false } | { readonly worker: true; readonly concurrency: number }
): Effect.Effect<EngineApi, EngineError, Scope.Scope> =>
  Effect.gen(function*() {
    const engine = location.display
    const call = <A>(operation: string, f: () => Promise<A>) =>
      Effect.tryPromise({ try: f, catch: (e) => new EngineError({ engine, operation, detail: detailOf(e) }) })
    // Connections are the server's scarcest resource when hundreds of commands wait: a
    // waiting command reads one thing at a time; a worker holds one per running job (its
    // liveness lock) and one for its presence, and needs more for sweeps and job lines.
    const poolSize = options.worker ? options.concurrency + 3 : 1
    const pool = yield* Effect.acquireRelease(
      Effect.sync(() => new Pg.Pool({ connectionString: location.url, max: poolSize, application_name: "worksync engine" })),
      (p) => Effect.promise(() => p.end().catch(() => undefined))
    )
    // A broken idle connection must not crash the process; the next query reports it.
    pool.on("error", () => undefined)
    const boss = yield* Effect.acquireRelease(
      call("start", async () => {
        const b = new PgBoss({
          connectionString: location.url,
          schema: location.schema,
          application_name: "worksync engine",
          max: options.worker ? 4 : 2,
          supervise: options.worker,
          schedule: false,
          maintenanceIntervalSeconds: 30
        })
        b.on("error", () => undefined)
        await b.start()
        return b
      }),
      (b) => Effect.promise(() => b.stop({ graceful: false, wait: true }).catch(() => undefined))
    )
    const q = (sql: string) => `${sql.replaceAll("$schema", location.schema)}`
    // Workers started together on a new database race to create the same objects; the
    // server may answer one of them "deadlock detected", which a second try gets past.
    yield* call("prepare the queue", async () => {
      if ((await boss.getQueue(QUEUE)) === null) {
        await boss.createQueue(QUEUE, QUEUE_OPTIONS).catch(async (e: unknown) => {
          // Another process created it first.
          if ((await boss.getQueue(QUEUE)) === null) throw e
        })
      }
      await pool.query(q(
        `CREATE TABLE IF NOT EXISTS $schema.job_lines (
           seq    BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
           job_id UUID   NOT NULL,
           at     TIMESTAMPTZ NOT NULL DEFAULT now(),
           line   TEXT   NOT NULL
         );
         CREATE INDEX IF NOT EXISTS job_lines_job ON $schema.job_lines (job_id, seq);`
      )).catch(async (e: unknown) => {
        // Two processes creating it at once: the loser's duplicate is harmless.
        if (!/already exists|duplicate key/.test(detailOf(e))) throw e
      })
    }).pipe(Effect.retry({ times: 4, schedule: Schedule.spaced("200 millis"), while: (e) => /deadlock detected/.test(e.detail) }))

    const findOpen = (key: string) =>
      call("look up the job", async () => {
        const { rows } = await pool.query<{ id: string }>(
          q(`SELECT id FROM $schema.job WHERE name = $1 AND singleton_key = $2 AND state < 'completed'
             ORDER BY created_on LIMIT 1`),
          [QUEUE, key]
        )
        return rows[0]?.id
      })

    const api: EngineApi = {
      location,
      boss,
      pool,
      call,
      submit: (spec) =>
        Effect.gen(function*() {
          const key = jobKeyOf(spec)
          for (let attempt = 0; attempt < 5; attempt++) {
            const open = yield* findOpen(key)
            if (open !== undefined) return { id: open, attached: true }
            const id = yield* call("queue the job", () => boss.send(QUEUE, spec, { singletonKey: key }))
            if (id !== null) return { id, attached: false }
            // Refused: another command queued the same job a moment ago; attach to it.
          }
          return yield* new EngineError({ engine, operation: "queue the job", detail: "the queue kept refusing it" })
        }),
      jobState: (id) =>
        call("read the job", async () => {
          const job = await boss.getJobById<JobSpec>(QUEUE, id, { includeArchive: true })
          if (job === null) return undefined
          return { id, state: job.state, outcome: (job.output ?? undefined) as JobOutcome | undefined }
        }),
      lines: (id, afterSeq) =>
        call("read the job's output", async () => {
          const { rows } = await pool.query<{ seq: string; line: string }>(
            q("SELECT seq, line FROM $schema.job_lines WHERE job_id = $1 AND seq > $2 ORDER BY seq"),
            [id, afterSeq]
          )
          return rows.map((r) => ({ seq: Number(r.seq), line: r.line }))
        }),
      addLine: (id, line) =>
        call("write the job's output", () =>
          pool.query(q("INSERT INTO $schema.job_lines (job_id, line) VALUES ($1, $2)"), [id, line]).then(() => undefined))
    }
    return api
  })
