/**
 * `worksync worker`: takes jobs from the engine's queue and runs each as the command it
 * is, in a child process of this worker (the same binary, the job's arguments and working
 * directory, the worker's own secrets), so a job does exactly what the command would do
 * on the command's machine and resumes the way a rerun resumes: through its journal and
 * its snapshot.
 *
 * Liveness: while a job runs, its worker holds a PostgreSQL advisory lock named after the
 * job on a connection of its own. The server drops the lock when that connection closes,
 * however the worker dies; every worker sweeps for running jobs whose lock is free and
 * hands them back to the queue, so another worker takes them within seconds. The child
 * dies with its worker (WORKSYNC_EXIT_WITH_PARENT), so the job's stores are free again
 * by then.
 *
 * SIGTERM or SIGINT: each running child is asked to stop (it exits 130 with its journal
 * and snapshot consistent), its job is handed back to the queue, and the worker exits 0.
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import { type ChildProcess, spawn } from "node:child_process"
import * as fs from "node:fs"
import { createInterface } from "node:readline"
import type Pg from "pg"
import { joinWorkers, jobLockFree, liveWorkers, lockJob, tryLockAccount, unlockAll } from "../store/engine-locks.ts"
import { activeJobsStartedBefore, addJobLine, jobExpiry, renewJob } from "../store/engine-queue.ts"
import { type EngineApi, QUEUE } from "./engine.ts"
import {
  accountKeyOf,
  HELPER_ENV,
  isPlannedMessage,
  JobSpec,
  missingSecrets,
  SHARED_LIMITER_ENV,
  spreadable
} from "./job.ts"

export interface WorkerOptions {
  /** This worker's name in the job's output lines (host and pid by default). */
  readonly name: string
  /** Jobs run at once. */
  readonly concurrency: number
  /** The worksync entry point the children run (this process's own). */
  readonly bin: string
  /** Lines about the worker itself (taken, finished, handed back), for its stderr. */
  readonly log: (line: string) => void
}

/** Helpers of one job at most (each takes a slot of another worker). */
const MAX_HELPERS = 16
/** How often each worker looks for running jobs whose worker is gone. */
const SWEEP_EVERY = Duration.seconds(1)
/** A job is swept only once it has run this long: its worker takes the lock right after fetching it. */
const SWEEP_GRACE_SECONDS = 3
/** How long an idle slot waits before asking the queue again. */
const IDLE_POLL = Duration.millis(500)

const decodeSpec = Schema.decodeUnknownOption(JobSpec)

/** Runs until interrupted: `concurrency` slots taking jobs, and the sweeper. */
export const runWorker = (engine: EngineApi, options: WorkerOptions): Effect.Effect<never> => {
  const { boss, call, pool } = engine
  const schema = engine.location.schema

  const sweep = call("sweep for lost jobs", async () => {
    for (const id of await activeJobsStartedBefore(pool, schema, QUEUE, SWEEP_GRACE_SECONDS)) {
      const client = await pool.connect()
      try {
        if (!(await jobLockFree(client, id))) continue
        // Its worker is gone: back to the queue (pg-boss counts it as one attempt).
        await boss.fail(QUEUE, id, { error: "its worker stopped answering" })
        await addJobLine(pool, schema, id, `worksync worker: the worker running this job is gone; ${options.name} handed it back to the pool`)
        options.log(`handed back job ${id}: its worker is gone`)
      } finally {
        client.release()
      }
    }
  }).pipe(Effect.catch((e) => Effect.sync(() => options.log(e.message))))

  const slot = Effect.forever(
    Effect.flatMap(
      call("take a job", () => boss.fetch<unknown>(QUEUE, { batchSize: 1 })),
      (jobs) => {
        const job = jobs[0]
        return job === undefined ? Effect.sleep(IDLE_POLL) : runJob(engine, options, job.id, job.data)
      }
    ).pipe(Effect.catch((e) => Effect.andThen(Effect.sync(() => options.log(e.message)), Effect.sleep(IDLE_POLL))))
  )

  // This worker's presence, counted when a job's work is spread (`liveWorkers`).
  const present = Effect.acquireRelease(
    call("join the pool", async () => {
      const c = await pool.connect()
      await joinWorkers(c)
      return c
    }),
    (c) => Effect.sync(() => c.release(true))
  ).pipe(Effect.catch((e) => Effect.sync(() => options.log(`${e.message} (spread jobs will count one worker fewer)`))))

  return Effect.andThen(
    Effect.andThen(present, Effect.forkScoped(Effect.forever(Effect.andThen(sweep, Effect.sleep(SWEEP_EVERY))))),
    Effect.all(Array.from({ length: Math.max(1, options.concurrency) }, () => slot), { concurrency: "unbounded" })
  ).pipe(Effect.scoped, Effect.andThen(Effect.never))
}

/** The engine's database as the limiter's store: its URL with the engine's schema. */
const sharedLimiterUrl = (engine: EngineApi): string => {
  const u = new URL(engine.location.url)
  u.searchParams.set("schema", engine.location.schema)
  return u.toString()
}

/** How a child ended: its exit code (1 when a signal ended it) and the signal, if any. */
const childExit = (child: ChildProcess) =>
  Effect.callback<{ readonly code: number; readonly signal: NodeJS.Signals | null }>((resume) => {
    if (child.exitCode !== null || child.signalCode !== null) {
      resume(Effect.succeed({ code: child.exitCode ?? 1, signal: child.signalCode }))
      return
    }
    child.once("close", (code, signal) => resume(Effect.succeed({ code: code ?? 1, signal })))
  })

/**
 * Asks for helpers of a spread job (`spreadable`) whose child has stored its plan: one per
 * other live worker, at most one per file beyond the first. Each is a job of its own
 * (`helper.of` names the main job), so a worker takes it as it takes any job; the same
 * helpers asked again (the main job resumed elsewhere) attach to those still queued.
 */
const askHelpers = (engine: EngineApi, job: JobSpec, id: string, toDo: number) =>
  Effect.gen(function*() {
    const live = yield* engine.call("count the workers", () => liveWorkers(engine.pool))
    const n = Math.min((live ?? 1) - 1, toDo - 1, MAX_HELPERS)
    if (n <= 0) return
    for (let i = 1; i <= n; i++) yield* engine.submit({ ...job, helper: { of: id, n: i } })
    yield* engine.addLine(id, `worksync worker: ${n} helper(s) asked to take part of this job's ${toDo} file(s)`)
  })

/**
 * Keeps pg-boss from expiring a job its worker still runs: pg-boss fails an active job
 * once `started_on + expire_in` has passed (at most 24 hours, engine.ts), and a copy of
 * terabytes may run longer. While the worker lives it moves the job's start forward, four
 * times per expiry period; once it dies, the liveness lock's sweep hands the job on.
 */
const heartbeat = (engine: EngineApi, id: string, expireSeconds: number) =>
  Effect.repeat(
    Effect.ignore(engine.call("renew the job", () => renewJob(engine.pool, engine.location.schema, QUEUE, id))),
    Schedule.spaced(Duration.seconds(Math.max(1, expireSeconds / 4)))
  )

const runJob = (engine: EngineApi, options: WorkerOptions, id: string, data: unknown) =>
  Effect.gen(function*() {
    const { boss, call, pool } = engine
    // A helper's lines go to the job it helps, where its command is waiting.
    const helps = (data as { helper?: { of?: unknown } } | null)?.helper?.of
    const lineTo = typeof helps === "string" ? helps : id
    const prefix = typeof helps === "string" ? `${options.name}: ` : ""
    const line = (text: string) => Effect.ignore(engine.addLine(lineTo, prefix + text))
    const spec = decodeSpec(data)
    if (spec._tag === "None") {
      yield* line("worksync worker: this job is not one this version of worksync can run")
      return yield* call("finish the job", () => boss.complete(QUEUE, id, { code: 64, stdout: "" }))
    }
    const job = spec.value
    const missing = missingSecrets(job, process.env)
    if (missing.length > 0) {
      yield* line(
        `worksync: worker ${options.name} lacks the command's ${missing.join(", ")} (or has another value): ` +
          "start workers with the same connection settings as the commands"
      )
      return yield* call("finish the job", () => boss.complete(QUEUE, id, { code: 64, stdout: "" }))
    }

    // The liveness lock, on a connection held for as long as the job runs.
    const client: Pg.PoolClient = yield* Effect.acquireRelease(
      call("hold the job's lock", async () => {
        const c = await pool.connect()
        await lockJob(c, id)
        return c
      }),
      // Both locks (the job's and its account's) go with the session's advisory locks.
      (c) => Effect.promise(() => unlockAll(c).then(() => c.release(), () => c.release(true)))
    )
    // Holding the lock, the job is this run's alone. An earlier run of it that pg-boss
    // expired while it still ran held the lock until it ended, and may have finished the
    // job meanwhile: then there is nothing left to run.
    const expiry = yield* call("read the job", () => jobExpiry(pool, engine.location.schema, QUEUE, id))
    if (expiry?.state !== "active") return
    yield* Effect.forkScoped(heartbeat(engine, id, expiry.expire))
    if (job.helper !== undefined) {
      // Too late to help: the job it helps has ended (its files are all taken).
      const main = yield* engine.jobState(job.helper.of)
      if (main?.state !== "active") return yield* call("finish the job", () => boss.complete(QUEUE, id, { code: 0, stdout: "" }))
    }
    // One job per service account at a time across the pool (accountKeyOf): wait for
    // another job of the same account to finish, polling, so a stopping worker can leave.
    // A helper is part of a job that holds its account already.
    const account = accountKeyOf(job)
    const held = () =>
      call("wait for the account", () => tryLockAccount(client, account))
    if (job.helper === undefined && !(yield* held())) {
      yield* line(`worksync worker: waiting for another job of the same account to finish (one at a time keeps its rate limit)`)
      yield* Effect.repeat(Effect.andThen(Effect.sleep(IDLE_POLL), held()), { until: (free) => free }).pipe(
        // Stopping while it waits: nothing has run, so the job goes straight back.
        Effect.onInterrupt(() =>
          Effect.andThen(
            line(`worksync worker: ${options.name} is stopping; the job goes back to the pool`),
            Effect.ignore(call("hand the job back", () => boss.fail(QUEUE, id, { error: "its worker stopped" })))
          )
        )
      )
    }
    options.log(`running job ${id}: ${job.command}`)

    const child = spawn(process.execPath, [options.bin, job.command, ...job.args, "--json"], {
      cwd: fs.existsSync(job.cwd) ? job.cwd : process.cwd(),
      env: {
        ...process.env,
        ...job.env,
        WORKSYNC_EXIT_WITH_PARENT: "1",
        // The processes of a spread job share one token's limit: their limiters keep its
        // state in the engine's database. Any other job has its account to itself.
        ...(spreadable(job) || job.helper !== undefined ? { [SHARED_LIMITER_ENV]: sharedLimiterUrl(engine) } : {}),
        ...(job.helper !== undefined ? { [HELPER_ENV]: "1" } : {})
      },
      stdio: ["ignore", "pipe", "pipe", "ipc"]
    })
    if (spreadable(job)) {
      child.on("message", (m) => {
        if (isPlannedMessage(m) && m.toDo > 1) {
          Effect.runFork(Effect.catch(askHelpers(engine, job, id, m.toDo), (e) => line(`worksync worker: no helpers: ${e.message}`)))
        }
      })
    }
    let stdout = ""
    child.stdout!.setEncoding("utf8").on("data", (d: string) => (stdout += d))
    // Each stderr line goes to the job's output in order; the exit waits for the last.
    let written: Promise<unknown> = Promise.resolve()
    createInterface({ input: child.stderr! }).on("line", (text) => {
      written = written.then(() => Effect.runPromise(line(text)))
    })
    child.on("error", (e) => {
      written = written.then(() => Effect.runPromise(line(`worksync worker: cannot start the command: ${e.message}`)))
    })

    const exit = yield* childExit(child).pipe(
      Effect.onInterrupt(() =>
        Effect.gen(function*() {
          // Stopping: the child stops at its next safe point, then the job goes back.
          child.kill("SIGTERM")
          yield* childExit(child)
          yield* Effect.promise(() => written)
          yield* line(`worksync worker: ${options.name} is stopping; the job goes back to the pool`)
          yield* Effect.ignore(call("hand the job back", () => boss.fail(QUEUE, id, { error: "its worker stopped" })))
          options.log(`handed back job ${id}: stopping`)
        })
      )
    )
    yield* Effect.promise(() => written)
    yield* call("finish the job", () => boss.complete(QUEUE, id, { code: exit.code, stdout }))
    options.log(`finished job ${id}: exit ${exit.code}`)
  }).pipe(Effect.scoped, Effect.asVoid)
