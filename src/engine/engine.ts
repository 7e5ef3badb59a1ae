/**
 * The pool's engine: a job queue in PostgreSQL kept by pg-boss (docs/scale.md says why
 * pg-boss), plus what the pool needs beside the queue: each job's output lines, so the
 * command that waits shows progress, and a liveness lock per running job, so a killed
 * worker's job is handed to another within seconds rather than at pg-boss's expiry.
 *
 * Everything lives in one schema of the engine's database (`?schema=NAME`, default
 * `worksync_engine`): pg-boss's tables and `job_lines`.
 *
 * pg-boss 12 cannot migrate the schema pg-boss 10 made (its migrations start at pg-boss
 * 11's schema, and 11 itself shipped none from 10): `start()` would fail with "Cannot
 * migrate pg-boss schema from version 24". `openEngine` moves such a schema over itself
 * (`retirePgBoss10`, `restorePgBoss10Jobs`), keeping the queue's settings and its jobs
 * with their ids, states and attempts, so commands waiting on them carry on.
 */
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Schedule from "effect/Schedule"
import type * as Scope from "effect/Scope"
import Pg from "pg"
import { PgBoss, type Queue } from "pg-boss"
import { addJobLine, createJobLines, jobLinesAfter, openJobOf } from "../store/engine-queue.ts"
import { restorePgBoss10Jobs, retirePgBoss10, stashedQueue } from "../store/engine-pgboss10.ts"
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
} as const satisfies Queue

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

/** The queue's settings in pg-boss 10's queue row (QUEUE_OPTIONS where it has none), as createQueue options. */
const queueOptionsOf10 = (row: Record<string, unknown>): Omit<Queue, "name"> => {
  const { name: _name, ...defaults } = QUEUE_OPTIONS
  return {
    ...defaults,
    ...(typeof row.policy === "string" ? { policy: row.policy } : {}),
    ...(typeof row.retry_limit === "number" ? { retryLimit: row.retry_limit } : {}),
    ...(typeof row.retry_delay === "number" ? { retryDelay: row.retry_delay } : {}),
    ...(typeof row.retry_backoff === "boolean" ? { retryBackoff: row.retry_backoff } : {}),
    ...(typeof row.expire_seconds === "number" ? { expireInSeconds: row.expire_seconds } : {}),
    ...(typeof row.retention_minutes === "number" ? { retentionSeconds: row.retention_minutes * 60 } : {})
  }
}

/**
 * Opens the engine for the scope. `worker` turns on pg-boss's maintenance (expiry,
 * deleting old jobs); a waiting command only sends and reads.
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
        await retirePgBoss10(pool, location.schema, QUEUE)
        const b = new PgBoss({
          connectionString: location.url,
          schema: location.schema,
          application_name: "worksync engine",
          max: options.worker ? 4 : 2,
          supervise: options.worker,
          schedule: false,
          // Expiry, a backstop only, runs in pg-boss 12's monitor pass (10 ran it with its
          // maintenance): both every 30 s, as before.
          superviseIntervalSeconds: 30,
          monitorIntervalSeconds: 30,
          maintenanceIntervalSeconds: 30,
          // No row per process in pg-boss's instance registry: hundreds of waiting commands
          // would each keep one fresh.
          registerInstance: false
        })
        b.on("error", () => undefined)
        await b.start()
        return b
      }),
      // stop() waits for pg-boss's own work to end (10 needed `wait: true` for that).
      (b) => Effect.promise(() => b.stop({ graceful: false }).catch(() => undefined))
    )
    // Workers started together on a new database race to create the same objects; the
    // server may answer one of them "deadlock detected", which a second try gets past.
    yield* call("prepare the queue", async () => {
      const old = await stashedQueue(pool, location.schema)
      if ((await boss.getQueue(QUEUE)) === null) {
        // A queue pg-boss 10 made comes back with its own settings.
        const settings = old === undefined ? QUEUE_OPTIONS : queueOptionsOf10(old)
        await boss.createQueue(QUEUE, settings).catch(async (e: unknown) => {
          // Another process created it first.
          if ((await boss.getQueue(QUEUE)) === null) throw e
        })
      }
      if (old !== undefined) await restorePgBoss10Jobs(pool, location.schema)
      await createJobLines(pool, location.schema)
    }).pipe(Effect.retry({ times: 4, schedule: Schedule.spaced("200 millis"), while: (e) => /deadlock detected/.test(e.detail) }))

    const findOpen = (key: string) => call("look up the job", () => openJobOf(pool, location.schema, QUEUE, key))

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
          // pg-boss 12 keeps finished jobs in the job table (10 moved them to an archive).
          const [job] = await boss.findJobs<JobSpec>(QUEUE, { id })
          if (job === undefined) return undefined
          return { id, state: job.state, outcome: (job.output ?? undefined) as JobOutcome | undefined }
        }),
      lines: (id, afterSeq) =>
        call("read the job's output", () => jobLinesAfter(pool, location.schema, id, afterSeq)),
      addLine: (id, line) =>
        call("write the job's output", () => addJobLine(pool, location.schema, id, line))
    }
    return api
  })
