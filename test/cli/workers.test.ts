/**
 * The pool of workers (`worksync worker --engine`, and `--engine` on the commands), the
 * way an operator runs it: three worker processes on a PostgreSQL engine, commands that
 * queue their job and wait, workers killed with SIGKILL and stopped with SIGTERM.
 */
import { describe, expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { type ChildProcess, spawn } from "node:child_process"
import type { EmulatorHandle } from "../../src/emulator/index.ts"
import { Emulator, emulatorLayer, tempDir } from "../support/effect.ts"
import { cleanEnv, connectionEnv } from "../support/cli.ts"
import { freshDatabase, pgClient, query, withSchema } from "../support/postgres.ts"
import { PgBoss } from "pg-boss"
import { QUEUE, QUEUE_OPTIONS } from "../../src/engine/engine.ts"
import { accountKeyOf, type EngineCommand, jobSpecOf } from "../../src/engine/job.ts"
import { seedConfirmedFiles } from "../connectors/files/_helpers.ts"
import { cli } from "./cli-effect.ts"

const BIN = new URL("../../bin/worksync.js", import.meta.url).pathname

const env = (emu: EmulatorHandle) => connectionEnv(emu, { app: true })

interface Proc {
  readonly child: ChildProcess
  readonly stderr: () => string
  readonly stdout: () => string
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>
}

const start = (args: ReadonlyArray<string>, extraEnv: Record<string, string>): Proc => {
  const child = spawn(process.execPath, [BIN, ...args], { env: { ...cleanEnv(), ...extraEnv }, stdio: ["ignore", "pipe", "pipe"] })
  let stderr = ""
  let stdout = ""
  child.stderr!.setEncoding("utf8").on("data", (d: string) => (stderr += d))
  child.stdout!.setEncoding("utf8").on("data", (d: string) => (stdout += d))
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once("close", (code, signal) => resolve({ code, signal }))
  )
  return { child, stderr: () => stderr, stdout: () => stdout, exited }
}

/**
 * Waits until `check` holds, polling. No deadline of its own: a busy machine only makes
 * the wait longer, and the test's timeout ends a wait for what never comes.
 */
const until = (check: () => boolean) =>
  Effect.promise(async () => {
    while (!check()) await new Promise((r) => setTimeout(r, 50))
  })

/** Workers on the engine (three by default), stopped (SIGKILL) with the scope. */
const pool = (engine: string, emu: EmulatorHandle, n = 3) =>
  Effect.gen(function*() {
    const workers = yield* Effect.acquireRelease(
      Effect.sync(() =>
        Array.from({ length: n }, (_, i) =>
          start(["worker", "--engine", engine, "--name", `w${i + 1}`, "--concurrency", "1"], env(emu)))
      ),
      (workers) =>
        Effect.promise(async () => {
          for (const w of workers) if (w.child.exitCode === null && w.child.signalCode === null) w.child.kill("SIGKILL")
          await Promise.all(workers.map((w) => w.exited))
        })
    )
    yield* until(() => workers.every((w) => w.stderr().includes("joined the pool")))
    return workers
  })

/**
 * Holds the account lock of a command's job, as a worker running another job of that
 * account would, until `release` (or the scope's end): the job is taken and waits.
 */
const holdAccount = (engine: string, args: ReadonlyArray<string>, emu: EmulatorHandle) =>
  Effect.gen(function*() {
    const [command, ...rest] = args
    const key = accountKeyOf(jobSpecOf(command as EngineCommand, rest, process.cwd(), env(emu)))
    const db = yield* pgClient(engine)
    yield* query(db, "SELECT pg_advisory_lock(hashtext('worksync-account'), hashtext($1))", [key])
    return { release: Effect.asVoid(query(db, "SELECT pg_advisory_unlock(hashtext('worksync-account'), hashtext($1))", [key])) }
  })

const liveTitles = (emu: EmulatorHandle, ws: string) =>
  emu.ctx.db.prepare("SELECT title FROM records WHERE workspace_id = ? AND deleted_at IS NULL ORDER BY title").pluck().all(ws) as Array<string>


/** A new workspace of `n` small confirmed files, stored directly in the emulator. */
const filesWorkspace = (emu: EmulatorHandle, name: string, n: number) => {
  const ws = emu.admin.createWorkspace({ name }).id
  seedConfirmedFiles(emu, ws, n)
  return ws
}

/** The names of a workspace's confirmed files, sorted. */
const confirmedNames = (emu: EmulatorHandle, ws: string) =>
  emu.ctx.db.prepare("SELECT name FROM files WHERE workspace_id = ? AND status = 'CONFIRMED' ORDER BY name").pluck().all(ws)

/** Every request answered `ms` later for the rest of the test: jobs last long enough to be caught mid-way. */
const slowService = (emu: EmulatorHandle, ms: number) =>
  Effect.acquireRelease(
    Effect.sync(() => emu.faults.configure({ latencyMs: ms })),
    () => Effect.sync(() => emu.faults.configure({ latencyMs: 0 }))
  )

/**
 * A new workspace and the arguments of an import of `rows` titles into it, with a journal
 * file. A run stopped or killed mid-way leaves creates whose answer it never read; the run
 * that takes the job over looks for each during one request timeout before sending it
 * again: 5 s rather than the default 30 (the service here answers within milliseconds).
 */
const importJob = (emu: EmulatorHandle, dir: string, name: string, rows: number, engine: string) => {
  const ws = emu.admin.createWorkspace({ name }).id
  const csv = path.join(dir, "tasks.csv")
  fs.writeFileSync(csv, "title\n" + Array.from({ length: rows }, (_, i) => `Task ${String(i).padStart(4, "0")}`).join("\n") + "\n")
  return {
    ws,
    args: ["import-csv", "--workspace", ws, "--csv", csv, "--journal", path.join(dir, "import.sqlite"), "--request-timeout", "5", "--engine", engine]
  }
}

layer(emulatorLayer({ seed: "demo" }), { timeout: 120_000, excludeTestServices: true })((it) => {
  describe("worksync worker and --engine", () => {
    it.effect("a backup and a file copy through three workers equal the same backup and copy in one process", () =>
      Effect.gen(function*() {
        const emu = yield* Emulator
        const engine = yield* freshDatabase
        const dir = yield* tempDir("ws-workers-")
        yield* pool(engine, emu)
        const pooled = yield* cli(["backup", "--snapshot", path.join(dir, "pooled.sqlite"), "--engine", engine, "--json"], { env: env(emu) })
        expect(pooled.code, pooled.stderr).toBe(0)
        expect(pooled.stderr).toMatch(/backup queued on the pool as job [0-9a-f-]{36}/)
        expect(pooled.stderr).toMatch(/backup: run 1 complete/)
        const local = yield* cli(["backup", "--snapshot", path.join(dir, "local.sqlite"), "--json"], { env: env(emu) })
        expect(JSON.parse(pooled.stdout)).toEqual(JSON.parse(local.stdout))
        for (const name of ["pooled", "local"]) {
          const ex = yield* cli(["export", "--snapshot", path.join(dir, `${name}.sqlite`), "--out", path.join(dir, `out-${name}`)])
          expect(ex.code).toBe(0)
        }
        for (const file of ["records", "activity", "files", "workspaces"]) {
          expect(fs.readFileSync(path.join(dir, "out-pooled", `${file}.ndjson`), "utf8"))
            .toBe(fs.readFileSync(path.join(dir, "out-local", `${file}.ndjson`), "utf8"))
        }

        // A file copy, on the same pool (its workers are idle again).
        const ws = emu.workspaces[0]!
        const copy = (name: string, extra: ReadonlyArray<string>) =>
          cli(["copy-files", "--from", `workspace:${ws}`, "--to", `dir:${path.join(dir, name)}`, "--journal", path.join(dir, `${name}.sqlite`), "--json", ...extra], {
            env: env(emu)
          })
        const pooledCopy = yield* copy("pooled-copy", ["--engine", engine])
        expect(pooledCopy.code, pooledCopy.stderr).toBe(0)
        const localCopy = yield* copy("local-copy", [])
        expect(JSON.parse(pooledCopy.stdout)).toEqual(JSON.parse(localCopy.stdout))
        const tree = (root: string) =>
          (fs.readdirSync(root, { recursive: true }) as Array<string>).sort().map((f) => {
            const full = path.join(root, f)
            if (!fs.statSync(full).isFile()) return f
            // The manifest lists files in the order their copies finished.
            const bytes = fs.readFileSync(full)
            return f.endsWith(".ndjson") ? `${f} ${bytes.toString("utf8").split("\n").sort().join("\n")}` : `${f} ${bytes.toString("base64")}`
          })
        const files = tree(path.join(dir, "pooled-copy"))
        expect(files.length).toBeGreaterThan(0)
        expect(files).toEqual(tree(path.join(dir, "local-copy")))
      }), 240_000)

    it.effect("a workspace-to-workspace copy is spread: helpers on other workers copy part of it; a helper's worker SIGKILLed mid-copy loses nothing; every file lands once", () =>
      Effect.gen(function*() {
        const emu = yield* Emulator
        const engine = yield* freshDatabase
        const dir = yield* tempDir("ws-workers-")
        const from = filesWorkspace(emu, "spread source", 100)
        const pooledTarget = emu.admin.createWorkspace({ name: "spread target" }).id
        const localTarget = emu.admin.createWorkspace({ name: "local target" }).id
        // One batch of small files at a time, so the main process is slow enough to be helped.
        const copyArgs = (to: string, journal: string) => [
          "copy-files", "--from", `workspace:${from}`, "--to", `workspace:${to}`, "--journal", journal,
          "--concurrency", "1", "--json"
        ]
        const workers = yield* pool(engine, emu)
        yield* slowService(emu, 100)
        const command = start([...copyArgs(pooledTarget, withSchema(engine, "copy_journal")), "--engine", engine], env(emu))
        // A helper (its lines carry its worker's name) has copied a file: kill that worker.
        yield* until(() => /^w\d: copied /m.test(command.stderr()))
        const helperName = /^(w\d): copied /m.exec(command.stderr())![1]!
        const victim = workers[Number(helperName.slice(1)) - 1]!
        victim.child.kill("SIGKILL")
        yield* Effect.promise(() => victim.exited)
        emu.faults.configure({ latencyMs: 0 })
        const done = yield* Effect.promise(() => command.exited)
        expect(done.code, command.stderr()).toBe(0)
        expect(command.stderr()).toMatch(/helper\(s\) asked to take part of this job's 100 file\(s\)/)
        const local = yield* cli(copyArgs(localTarget, path.join(dir, "local.sqlite")), { env: env(emu) })
        expect(local.code, local.stderr).toBe(0)
        expect(JSON.parse(command.stdout())).toEqual(JSON.parse(local.stdout))
        expect(JSON.parse(command.stdout())).toMatchObject({ files: 100, copied: 100, failed: 0 })
        // Exactly once: each source file is one confirmed file of the target.
        expect(confirmedNames(emu, pooledTarget)).toEqual(confirmedNames(emu, from))
        expect(confirmedNames(emu, localTarget)).toEqual(confirmedNames(emu, from))
        // The helpers' work is in the main job's journal, each op done once.
        const db = yield* pgClient(engine)
        const ops = yield* query<{ state: string; n: number }>(db, "SELECT state, count(*)::int AS n FROM copy_journal.ops GROUP BY state")
        expect(ops).toEqual([{ state: "done", n: 100 }])
      }), 240_000)

    it.effect("a migrate's file step is spread: helpers on other workers copy part of its files; the result equals the same migrate in one process", () =>
      Effect.gen(function*() {
        const emu = yield* Emulator
        const engine = yield* freshDatabase
        const dir = yield* tempDir("ws-workers-")
        const from = filesWorkspace(emu, "migrate source", 400)
        const pooledTarget = emu.admin.createWorkspace({ name: "migrated on the pool" }).id
        const localTarget = emu.admin.createWorkspace({ name: "migrated in one process" }).id
        const migrateArgs = (to: string, journal: string) => [
          "migrate", "--from", `workspace:${from}`, "--to", `workspace:${to}`, "--journal", journal, "--people", "skip", "--json"
        ]
        yield* pool(engine, emu)
        // The file step lasts long enough (4 lanes, 40 batches, every request 100 ms late)
        // for helpers to start and take part.
        yield* slowService(emu, 100)
        const command = start([...migrateArgs(pooledTarget, withSchema(engine, "migrate_journal")), "--engine", engine], env(emu))
        yield* until(() => /^w\d: copied /m.test(command.stderr()))
        emu.faults.configure({ latencyMs: 0 })
        const done = yield* Effect.promise(() => command.exited)
        expect(done.code, command.stderr()).toBe(0)
        expect(command.stderr()).toMatch(/helper\(s\) asked to take part of this job's 400 file\(s\)/)
        const local = yield* cli(migrateArgs(localTarget, path.join(dir, "local.sqlite")), { env: env(emu) })
        expect(local.code, local.stderr).toBe(0)
        expect(JSON.parse(command.stdout())).toEqual(JSON.parse(local.stdout))
        expect(JSON.parse(command.stdout())).toMatchObject({ verified: true, files: { copied: 400, failed: 0 } })
        expect(confirmedNames(emu, pooledTarget)).toEqual(confirmedNames(emu, from))
      }), 240_000)

    it.effect("a worker SIGKILLed mid-job: another takes the job over; every row is imported exactly once", () =>
      Effect.gen(function*() {
        const emu = yield* Emulator
        const engine = yield* freshDatabase
        const dir = yield* tempDir("ws-workers-")
        const { args, ws } = importJob(emu, dir, "pooled import", 120, engine)
        const workers = yield* pool(engine, emu)
        yield* slowService(emu, 40)
        const command = start([...args, "--json"], env(emu))
        // The worker running the job, once the job has created some records.
        yield* until(() => workers.some((w) => w.stderr().includes("running job")) && liveTitles(emu, ws).length >= 15)
        const victim = workers.find((w) => w.stderr().includes("running job"))!
        victim.child.kill("SIGKILL")
        const done = yield* Effect.promise(() => command.exited)
        expect(done.code, command.stderr()).toBe(0)
        expect(command.stderr()).toMatch(/the worker running this job is gone; w\d handed it back to the pool/)
        const taken = workers.filter((w) => w !== victim && w.stderr().includes("running job"))
        expect(taken).toHaveLength(1)
        const titles = liveTitles(emu, ws)
        expect(titles).toHaveLength(120)
        expect(new Set(titles).size).toBe(120)
      }), 180_000)

    it.effect("two commands for the same job attach to one job; killing the waiting command leaves it running", () =>
      Effect.gen(function*() {
        const emu = yield* Emulator
        const engine = yield* freshDatabase
        const dir = yield* tempDir("ws-workers-")
        const { args, ws } = importJob(emu, dir, "attached import", 60, engine)
        yield* pool(engine, emu)
        // The job is taken but waits for its account: it stays in progress while both commands come.
        const account = yield* holdAccount(engine, args, emu)
        const first = start(args, env(emu))
        yield* until(() => first.stderr().includes("waiting for another job of the same account"))
        const id = /queued on the pool as job ([0-9a-f-]{36})/.exec(first.stderr())![1]!
        const second = start([...args, "--json"], env(emu))
        yield* until(() => second.stderr().includes("already running on the pool"))
        expect(second.stderr()).toContain(`as job ${id}`)
        first.child.kill("SIGKILL")
        yield* Effect.promise(() => first.exited)
        yield* account.release
        const done = yield* Effect.promise(() => second.exited)
        expect(done.code, second.stderr()).toBe(0)
        expect(JSON.parse(second.stdout())).toMatchObject({ created: 60 })
        expect(liveTitles(emu, ws)).toHaveLength(60)
        const db = yield* pgClient(engine)
        const jobs = yield* query<{ n: number }>(db, "SELECT count(*)::int AS n FROM worksync_engine.job WHERE name = 'worksync-jobs'")
        expect(jobs[0]!.n).toBe(1)
      }), 180_000)

    it.effect("SIGTERM to a worker hands its job back and exits 0; another worker finishes the job", () =>
      Effect.gen(function*() {
        const emu = yield* Emulator
        const engine = yield* freshDatabase
        const dir = yield* tempDir("ws-workers-")
        const { args, ws } = importJob(emu, dir, "handed back", 80, engine)
        const workers = yield* pool(engine, emu, 2)
        yield* slowService(emu, 40)
        const command = start(args, env(emu))
        yield* until(() => workers.some((w) => w.stderr().includes("running job")) && liveTitles(emu, ws).length >= 10)
        const stopping = workers.find((w) => w.stderr().includes("running job"))!
        stopping.child.kill("SIGTERM")
        const stopped = yield* Effect.promise(() => stopping.exited)
        expect(stopped.code).toBe(0)
        expect(stopping.stderr()).toMatch(/handed back job .*: stopping/)
        const done = yield* Effect.promise(() => command.exited)
        expect(done.code, command.stderr()).toBe(0)
        expect(command.stderr()).toMatch(/is stopping; the job goes back to the pool/)
        const titles = liveTitles(emu, ws)
        expect(titles).toHaveLength(80)
        expect(new Set(titles).size).toBe(80)
      }), 180_000)

    it.effect("one job per service account at a time across the pool: a job whose account is busy waits, then runs", () =>
      Effect.gen(function*() {
        const emu = yield* Emulator
        const engine = yield* freshDatabase
        const dir = yield* tempDir("ws-workers-")
        yield* pool(engine, emu)
        const args = ["backup", "--snapshot", path.join(dir, "a.sqlite"), "--engine", engine]
        // Another job of the same token is running (its worker holds the account).
        const account = yield* holdAccount(engine, args, emu)
        const before = emu.stats().total
        const command = start(args, env(emu))
        yield* until(() => command.stderr().includes("waiting for another job of the same account to finish"))
        // Taken, holding its worker, and sending nothing while the account is busy.
        yield* Effect.sleep("1 second")
        expect(emu.stats().total).toBe(before)
        expect(command.child.exitCode).toBeNull()
        yield* account.release
        const done = yield* Effect.promise(() => command.exited)
        expect(done.code, command.stderr()).toBe(0)
        expect(command.stderr()).toMatch(/backup: run 1 complete/)
        expect(emu.stats().total).toBeGreaterThan(before)
      }), 180_000)

    it.effect("SIGTERM to a worker whose job waits for its account: the job goes straight back, and runs on the next worker", () =>
      Effect.gen(function*() {
        const emu = yield* Emulator
        const engine = yield* freshDatabase
        const dir = yield* tempDir("ws-workers-")
        const [only] = yield* pool(engine, emu, 1)
        const args = ["backup", "--snapshot", path.join(dir, "a.sqlite"), "--engine", engine]
        const account = yield* holdAccount(engine, args, emu)
        const command = start(args, env(emu))
        yield* until(() => command.stderr().includes("waiting for another job of the same account to finish"))
        only!.child.kill("SIGTERM")
        expect((yield* Effect.promise(() => only!.exited)).code).toBe(0)
        // Back in the queue at once: no other worker was there to sweep it.
        const db = yield* pgClient(engine)
        const states = yield* query<{ state: string }>(db, "SELECT state FROM worksync_engine.job WHERE name = 'worksync-jobs'")
        expect(states.map((r) => r.state)).toEqual(["retry"])
        yield* account.release
        yield* pool(engine, emu, 1)
        const done = yield* Effect.promise(() => command.exited)
        expect(done.code, command.stderr()).toBe(0)
        expect(command.stderr()).toMatch(/is stopping; the job goes back to the pool/)
        expect(command.stderr()).toMatch(/backup: run 1 complete/)
      }), 180_000)

    it.effect("a job that outlives pg-boss's expiry: its worker keeps renewing it, so it is neither expired nor run twice", () =>
      Effect.gen(function*() {
        const emu = yield* Emulator
        const engine = yield* freshDatabase
        const dir = yield* tempDir("ws-workers-")
        // The queue, made before the workers do, with an expiry of 6 s instead of 23 hours:
        // a running job is renewed every 1.5 s.
        const boss = yield* Effect.acquireRelease(
          Effect.promise(async () => {
            const b = new PgBoss({ connectionString: engine, schema: "worksync_engine", supervise: false, schedule: false })
            b.on("error", () => undefined)
            await b.start()
            await b.createQueue(QUEUE, { ...QUEUE_OPTIONS, expireInSeconds: 6 })
            return b
          }),
          (b) => Effect.promise(() => b.stop({ graceful: false }))
        )
        const { args, ws } = importJob(emu, dir, "outlives its expiry", 60, engine)
        const workers = yield* pool(engine, emu)
        yield* slowService(emu, 100)
        // One row at a time: about 6 s, several of its worker's renewals (every 1.5 s).
        const command = start([...args, "--concurrency", "1"], env(emu))
        yield* until(() => workers.some((w) => w.stderr().includes("running job")))
        // The job's start moved an hour back, as if it had run that long: its worker's next
        // renewal brings it forward again, and then pg-boss's maintenance (run now rather
        // than on its 30 s timer), which fails every active job started longer ago than its
        // expiry, finds nothing to fail. Without the renewal the start stays an hour back.
        const db = yield* pgClient(engine)
        const job = () => query<{ state: string; retry_count: number }>(db, "SELECT state, retry_count FROM worksync_engine.job WHERE name = $1", [QUEUE])
        yield* query(db, "UPDATE worksync_engine.job SET started_on = now() - interval '1 hour' WHERE name = $1 AND state = 'active'", [QUEUE])
        const renewed = () =>
          query<{ renewed: boolean }>(db, "SELECT started_on > now() - interval '6 seconds' AS renewed FROM worksync_engine.job WHERE name = $1", [QUEUE])
        let isRenewed = false
        while (!isRenewed && command.child.exitCode === null) {
          isRenewed = (yield* renewed())[0]?.renewed === true
          if (!isRenewed) yield* Effect.promise(() => new Promise((r) => setTimeout(r, 100)))
        }
        expect(isRenewed).toBe(true)
        expect(yield* job()).toEqual([{ state: "active", retry_count: 0 }])
        yield* Effect.promise(() => boss.supervise())
        expect(yield* job()).toEqual([{ state: "active", retry_count: 0 }])
        // Checked while it ran: the rest of the import need not be slow.
        emu.faults.configure({ latencyMs: 0 })
        const done = yield* Effect.promise(() => command.exited)
        expect(done.code, command.stderr()).toBe(0)
        expect(workers.filter((w) => w.stderr().includes("running job"))).toHaveLength(1)
        const titles = liveTitles(emu, ws)
        expect(titles).toHaveLength(60)
        expect(new Set(titles).size).toBe(60)
      }), 180_000)

    it.effect("a job pg-boss expired while its worker still runs it: the next worker waits for that run, which finishes the job, and runs nothing", () =>
      Effect.gen(function*() {
        const emu = yield* Emulator
        const engine = yield* freshDatabase
        const dir = yield* tempDir("ws-workers-")
        const boss = yield* Effect.acquireRelease(
          Effect.promise(async () => {
            const b = new PgBoss({ connectionString: engine, schema: "worksync_engine", supervise: false, schedule: false })
            b.on("error", () => undefined)
            await b.start()
            return b
          }),
          (b) => Effect.promise(() => b.stop({ graceful: false }))
        )
        const { args, ws } = importJob(emu, dir, "expired while running", 200, engine)
        const workers = yield* pool(engine, emu)
        yield* slowService(emu, 100)
        const command = start([...args, "--concurrency", "1", "--json"], env(emu))
        yield* until(() => workers.some((w) => w.stderr().includes("running job")) && liveTitles(emu, ws).length >= 10)
        // What a worker that stopped renewing its job for a whole expiry period leaves: the
        // job's start a day back (its heartbeat renews it only hours from now), so pg-boss's
        // maintenance fails it while it runs and an idle worker fetches it again.
        const db = yield* pgClient(engine)
        yield* query(db, "UPDATE worksync_engine.job SET started_on = now() - interval '1 day' WHERE name = $1", [QUEUE])
        yield* Effect.promise(() => boss.supervise())
        // An idle worker fetches the failed job again (active, its retry counted) while the
        // first run still runs; from then on that run may go at full speed to its end.
        const job = () => query<{ state: string; retry_count: number }>(db, "SELECT state, retry_count FROM worksync_engine.job WHERE name = $1", [QUEUE])
        let fetchedAgain = false
        while (!fetchedAgain && command.child.exitCode === null) {
          fetchedAgain = (yield* job()).some((j) => j.state === "active" && j.retry_count === 1)
          if (!fetchedAgain) yield* Effect.promise(() => new Promise((r) => setTimeout(r, 100)))
        }
        expect(fetchedAgain).toBe(true)
        expect(command.child.exitCode).toBeNull()
        emu.faults.configure({ latencyMs: 0 })
        const done = yield* Effect.promise(() => command.exited)
        expect(done.code, command.stderr()).toBe(0)
        const retries = yield* query<{ retry_count: number }>(db, "SELECT retry_count FROM worksync_engine.job WHERE name = $1", [QUEUE])
        expect(retries).toEqual([{ retry_count: 1 }])
        // The first run finished the job; the second fetch ran no command of its own.
        expect(workers.filter((w) => w.stderr().includes("running job"))).toHaveLength(1)
        expect(JSON.parse(command.stdout())).toMatchObject({ rows: 200, created: 200 })
        const titles = liveTitles(emu, ws)
        expect(titles).toHaveLength(200)
        expect(new Set(titles).size).toBe(200)
      }), 180_000)

    it.effect("bad invocations: a secret as a flag, a database password in a URL, an engine that is not PostgreSQL (exit 64, one line, nothing queued)", () =>
      Effect.gen(function*() {
        const emu = yield* Emulator
        const engine = yield* freshDatabase
        const dir = yield* tempDir("ws-workers-")
        const secret = yield* cli(
          ["backup", "--snapshot", path.join(dir, "s.sqlite"), "--engine", engine, "--token", "pat_flag-secret-value"],
          { env: env(emu) }
        )
        expect(secret.code).toBe(64)
        expect(secret.stderr).toMatch(/--token: with --engine the job is stored/)
        expect(secret.stderr).not.toContain("pat_flag-secret-value")
        const password = yield* cli(
          ["backup", "--snapshot", "postgres://u:db-password-value@127.0.0.1:1/x", "--engine", engine],
          { env: env(emu) }
        )
        expect(password.code).toBe(64)
        expect(password.stderr).toMatch(/PGPASSWORD/)
        expect(password.stderr).not.toContain("db-password-value")
        const notPg = yield* cli(["backup", "--snapshot", path.join(dir, "s.sqlite"), "--engine", "mysql://x@y/z"], { env: env(emu) })
        expect(notPg.code).toBe(64)
        expect(notPg.stderr.trim().split("\n")).toHaveLength(1)
        const worker = yield* cli(["worker", "--engine", engine, "--concurrency", "0"])
        expect(worker.code).toBe(64)
      }), 180_000)
  })
})
