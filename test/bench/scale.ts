/**
 * Benchmark of the pool of workers and the PostgreSQL stores (docs/scale.md), against a
 * throwaway PostgreSQL cluster (scripts/postgres-cluster.sh) started and stopped here.
 * Prints figures; asserts nothing.
 *
 * 1. Pool throughput across service accounts: `tokens` organizations, each its own
 *    emulator (3 workspaces x `records` records, `rate` requests/s per token), one
 *    profile per token in a config file. All backups are submitted at once
 *    (`backup --profile pK --snapshot PG --engine PG`), first to 1 worker with
 *    --concurrency `concurrency` (default 2), then to 3 such workers. Per token: requests its emulator answered
 *    during the job, 429s, the span from its first to its last request (the job as the
 *    service saw it; the command's wall time also holds its wait in the queue), and
 *    requests/s as a share of the limit (the emulator's bucket starts full, a burst of
 *    `rate` requests, so a short job may show over 100%). The pool runs one job per
 *    service account at a time, by design, so the limit caps each job and only more
 *    accounts add throughput.
 * 2. Files copied workspace to workspace (`copy-files --engine`, journal in PostgreSQL) by
 *    1 worker, then by 3: `files` files of `mb` MB, every request answered `latency` ms
 *    late (50: a service across a network; 0: loopback). With 3 workers the job is
 *    spread: the two other workers each run a helper that copies files of the same plan.
 *    A third round runs 3 workers with the token limited to `copyrate` requests/s at the
 *    emulator: requests, 429s and requests/s as a share of the limit, for all the job's
 *    processes together.
 * 3. Store costs: two runs of `diff` records (1% changed) written through the snapshot
 *    API on SQLite and on PostgreSQL, then diffCounts and diffIds between them.
 *
 * The emulators run in this process; the workers and the commands are `bin/worksync.js`
 * children (build dist/ first: npm run build).
 *
 *   npm run bench -- scale
 *   node --import tsx test/bench/scale.ts [tokens=6] [records=60] [rate=20] [concurrency=2] [files=40] [mb=2] [latency=50] [copyrate=10] [diff=100000] [only=pool,copy,diff]
 *   node --import tsx test/bench/scale.ts tokens=20 records=5000 concurrency=10 files=500 mb=10 diff=1000000   # the issue's full size
 *
 * Each value may also come from the environment (SCALE_TOKENS=20, ...), for runs through
 * `npm run bench`. A backup of 3 x R records sends about 2.1 x 3R requests, so a job
 * takes about 6.3 R / rate seconds: the default of 60 records keeps the whole run near
 * three minutes on a busy 2-core machine (150 would take about four for phase 1 alone).
 * At the full size each job takes about 26 minutes: with concurrency=10 the single-worker
 * round takes about 51 minutes and the pool phase 77 (about 4 hours for the single-worker
 * round at the default of 2); the full copy needs about 15 GB free in the temporary
 * directory.
 */
import * as Effect from "effect/Effect"
import { type ChildProcess, execFile, spawn, spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { clientLayer } from "../../src/client/layer.ts"
import { fromBytes } from "../../src/client/multipart.ts"
import { Uploads } from "../../src/client/uploads.ts"
import { type EmulatorHandle, startEmulator } from "../../src/emulator/index.ts"
import { openSnapshot, type RecordEntry } from "../../src/store/snapshot.ts"
import { diffCounts, diffIds } from "../../src/sync/diff.ts"
import { benchDetail } from "./diff-fill.ts"
import { cleanEnv } from "../support/cli.ts"

// ---------------------------------------------------------------------------------------
// Settings: `name=value` arguments, else SCALE_NAME, else the default (small enough for
// a busy 2-core machine in about three minutes).

const argv = new Map(
  process.argv.slice(2).flatMap((a) => {
    const m = /^([a-z]+)=(.*)$/.exec(a)
    return m === null ? [] : [[m[1]!, m[2]!] as const]
  })
)
const setting = (name: string, fallback: string): string => argv.get(name) ?? process.env[`SCALE_${name.toUpperCase()}`] ?? fallback
const numberSetting = (name: string, fallback: number): number => {
  const n = Number(setting(name, String(fallback)))
  if (!Number.isFinite(n) || n <= 0) throw new Error(`${name}: expected a positive number`)
  return n
}

const TOKENS = numberSetting("tokens", 6)
const RECORDS = numberSetting("records", 60)
const RATE = numberSetting("rate", 20)
/** Jobs each worker of the pool phase runs at once. */
const CONCURRENCY = numberSetting("concurrency", 2)
const FILES = numberSetting("files", 40)
const FILE_MB = numberSetting("mb", 2)
/** Latency of every request at the copy's emulator, in ms: a service across a network (0: loopback). */
const LATENCY = Number(setting("latency", "50"))
/** The token's limit in the copy's third round, requests/s: below what 3 workers send unlimited. */
const COPY_RATE = numberSetting("copyrate", 10)
const DIFF_N = numberSetting("diff", 100_000)
const ONLY = new Set(setting("only", "pool,copy,diff").split(",").map((s) => s.trim()))

const BIN = path.resolve("bin/worksync.js")
const work = fs.mkdtempSync(path.join(os.tmpdir(), "ws-bench-scale-"))
// The cluster's directory must be reachable by the unprivileged `postgres` user when we
// run as root, and empty: a new name beside ours, not inside our private one.
const pgDir = path.join(os.tmpdir(), `ws-bench-scale-pg-${process.pid}`)

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`
const pct = (x: number) => `${(x * 100).toFixed(0)}%`

/** Columns padded to their widest cell, so the figures line up. */
const printTable = (head: ReadonlyArray<string>, rows: ReadonlyArray<ReadonlyArray<string>>) => {
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)))
  const line = (cells: ReadonlyArray<string>) =>
    "  " + cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join("  ")
  console.log(line(head))
  for (const r of rows) console.log(line(r))
}

const withSchema = (url: string, schema: string): string => {
  const u = new URL(url)
  u.searchParams.set("schema", schema)
  return u.href
}

// ---------------------------------------------------------------------------------------
// Child processes: every one is tracked, so an error or ^C never leaves a worker behind.

interface Proc {
  readonly child: ChildProcess
  readonly stdout: () => string
  readonly stderr: () => string
  readonly exited: Promise<{ readonly code: number | null; readonly at: number }>
}

const running = new Set<ChildProcess>()


const startCli = (args: ReadonlyArray<string>, env: Record<string, string>): Proc => {
  const child = spawn(process.execPath, [BIN, ...args], { env: { ...cleanEnv(), ...env }, stdio: ["ignore", "pipe", "pipe"] })
  running.add(child)
  let stdout = ""
  let stderr = ""
  child.stdout!.setEncoding("utf8").on("data", (d: string) => (stdout += d))
  child.stderr!.setEncoding("utf8").on("data", (d: string) => (stderr += d))
  const exited = new Promise<{ code: number | null; at: number }>((resolve) =>
    child.once("close", (code) => {
      running.delete(child)
      resolve({ code, at: performance.now() })
    })
  )
  return { child, stdout: () => stdout, stderr: () => stderr, exited }
}

const alive = (c: ChildProcess) => c.exitCode === null && c.signalCode === null

/** SIGTERM (a worker hands its jobs back and exits 0), then SIGKILL after `graceMs`. */
const stopProcs = async (procs: ReadonlyArray<Proc>, graceMs = 10_000) => {
  for (const p of procs) if (alive(p.child)) p.child.kill("SIGTERM")
  const timer = setTimeout(() => {
    for (const p of procs) if (alive(p.child)) p.child.kill("SIGKILL")
  }, graceMs)
  await Promise.all(procs.map((p) => p.exited))
  clearTimeout(timer)
}

/** Rejects after `ms`: a hung job must not hang the benchmark. */
const deadline = <A>(promise: Promise<A>, ms: number, what: string): Promise<A> => {
  let timer: NodeJS.Timeout | undefined
  return Promise.race([
    promise,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what}: no end after ${seconds(ms)}`)), ms)
    })
  ]).finally(() => clearTimeout(timer))
}

const until = async (check: () => boolean, ms: number, what: string) => {
  const end = Date.now() + ms
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 50))
  }
}

/** `n` workers on `engine`, each running `concurrency` jobs at once, once all have joined. */
const startPool = async (engine: string, n: number, concurrency: number, env: Record<string, string>) => {
  const workers = Array.from({ length: n }, (_, i) =>
    startCli(["worker", "--engine", engine, "--name", `w${i + 1}`, "--concurrency", String(concurrency)], env))
  try {
    await until(() => workers.every((w) => w.stderr().includes("joined the pool") || !alive(w.child)), 60_000, "the workers to join")
    const dead = workers.find((w) => !alive(w.child))
    if (dead !== undefined) throw new Error(`a worker exited at start: ${dead.stderr().trim().split("\n").pop() ?? ""}`)
  } catch (e) {
    await stopProcs(workers)
    throw e
  }
  return workers
}

/** How many jobs each worker took, from its own log lines. */
const jobsPerWorker = (workers: ReadonlyArray<Proc>) =>
  workers.map((w, i) => `w${i + 1} ${(w.stderr().match(/running job /g) ?? []).length}`).join(", ")

const lastLine = (text: string) => text.trim().split("\n").pop() ?? ""

// ---------------------------------------------------------------------------------------
// The PostgreSQL cluster.

const startCluster = () =>
  new Promise<string>((resolve, reject) => {
    execFile("bash", ["scripts/postgres-cluster.sh", "start", pgDir], { encoding: "utf8" }, (error, stdout, stderr) => {
      if (error !== null) reject(new Error(`postgres-cluster.sh start: ${lastLine(stderr) || error.message}`))
      else resolve(stdout.trim())
    })
  })

// Synchronous, so the exit handlers can call it too.
const stopCluster = () => {
  spawnSync("bash", ["scripts/postgres-cluster.sh", "stop", pgDir], { stdio: ["ignore", "ignore", "ignore"] })
}

const cleanupNow = () => {
  for (const c of running) if (alive(c)) c.kill("SIGKILL")
  stopCluster()
  fs.rmSync(work, { recursive: true, force: true })
}
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, () => {
    console.error(`\n${signal}: stopping the children and the cluster`)
    cleanupNow()
    process.exit(130)
  })
}

// ---------------------------------------------------------------------------------------
// 1. Pool throughput across service accounts.

interface PoolRound {
  readonly label: string
  readonly wallMs: number
  readonly records: number
}

const poolPhase = async (pg: string): Promise<Array<PoolRound>> => {
  const emus: Array<EmulatorHandle> = []
  try {
    for (let k = 0; k < TOKENS; k++) {
      emus.push(await startEmulator({ seed: `3x${RECORDS}`, faults: { rateLimit: RATE }, idSeed: k + 1 }))
    }
    // One profile per token: the workers read the tokens from this file; the jobs name
    // only the profile, so no secret reaches the queue.
    const config = path.join(work, "worksync.config.json")
    const profiles = Object.fromEntries(emus.map((emu, k) => [`p${k + 1}`, {
      restUrl: emu.restUrl,
      baseUrl: emu.baseUrl,
      token: emu.token,
      tokenId: emu.tokenId,
      tokenSecret: emu.tokenSecret,
      org: emu.org
    }]))
    fs.writeFileSync(config, JSON.stringify({ profiles }, null, 2), { mode: 0o600 })
    const env = { WORKSYNC_CONFIG: config }
    console.log(
      `${TOKENS} organizations (one token and one emulator each), 3 x ${RECORDS} records each, ` +
        `rate limit ${RATE} requests/s per token; all backups submitted at once`
    )
    // About 2.1 requests per record (detail and activity) at the limit, plus starting up.
    const jobEstimateMs = ((2.2 * 3 * RECORDS) / RATE + 10) * 1000

    const rounds: Array<PoolRound> = []
    for (const { label, workers: n } of [{ label: "w1", workers: 1 }, { label: "w3", workers: 3 }]) {
      const slots = n * CONCURRENCY
      console.log(`\n${n} worker${n > 1 ? "s" : ""} x --concurrency ${CONCURRENCY}:`)
      const workers = await startPool(withSchema(pg, `pool_${label}`), n, CONCURRENCY, env)
      const commands: Array<Proc> = []
      const watch: Array<{ first: number | undefined; last: number | undefined; total: number }> = []
      let poller: NodeJS.Timeout | undefined
      try {
        for (const emu of emus) emu.resetStats()
        for (let k = 0; k < TOKENS; k++) watch.push({ first: undefined, last: undefined, total: 0 })
        // Each emulator's request count, sampled: the span of a job as its service saw it.
        poller = setInterval(() => {
          const now = performance.now()
          emus.forEach((emu, k) => {
            const total = emu.stats().total
            const w = watch[k]!
            if (total !== w.total) {
              w.first ??= now
              w.last = now
              w.total = total
            }
          })
        }, 100)
        const t0 = performance.now()
        for (let k = 0; k < TOKENS; k++) {
          commands.push(startCli([
            "backup", "--profile", `p${k + 1}`, "--snapshot", withSchema(pg, `${label}_p${k + 1}`),
            "--engine", withSchema(pg, `pool_${label}`), "--json"
          ], env))
        }
        const budget = 3 * Math.ceil(TOKENS / slots) * jobEstimateMs + 60_000
        const ends = await deadline(Promise.all(commands.map((c) => c.exited)), budget, `the ${label} round`)
        clearInterval(poller)
        const wallMs = Math.max(...ends.map((e) => e.at)) - t0
        let totalRecords = 0
        const rows = emus.map((emu, k) => {
          const c = commands[k]!
          const end = ends[k]!
          const stats = emu.stats()
          const limited = stats.byStatus["429"] ?? 0
          const w = watch[k]!
          const spanMs = w.first !== undefined && w.last !== undefined ? w.last - w.first : 0
          let records = "-"
          if (end.code === 0) {
            try {
              const n = (JSON.parse(c.stdout()) as { records: number }).records
              totalRecords += n
              records = String(n)
            } catch {
              records = "?"
            }
          }
          const rps = spanMs > 0 ? stats.total / (spanMs / 1000) : 0
          return [
            `p${k + 1}`, end.code === 0 ? "ok" : `exit ${end.code}`, records, String(stats.total), String(limited),
            seconds(spanMs), seconds(end.at - t0), rps.toFixed(1), pct(rps / RATE)
          ]
        })
        printTable(["token", "result", "records", "requests", "429s", "job span", "command", "req/s", "of limit"], rows)
        for (const [k, e] of ends.entries()) {
          if (e.code !== 0) console.log(`  p${k + 1} failed: ${lastLine(commands[k]!.stderr())}`)
        }
        console.log(
          `  wall ${seconds(wallMs)}, ${totalRecords} records, ${(totalRecords / (wallMs / 1000)).toFixed(1)} records/s in all; ` +
            `jobs per worker: ${jobsPerWorker(workers)}`
        )
        rounds.push({ label, wallMs, records: totalRecords })
      } finally {
        if (poller !== undefined) clearInterval(poller)
        await stopProcs(commands, 2_000)
        await stopProcs(workers)
      }
    }
    const [one, three] = rounds
    if (one !== undefined && three !== undefined) {
      const ratio = (three.records / three.wallMs) / (one.records / one.wallMs)
      console.log(
        `\naggregate records/s, 3 workers vs 1: ${ratio.toFixed(2)}x ` +
          `(${TOKENS} equal jobs in ${3 * CONCURRENCY} slots vs ${CONCURRENCY}: ` +
          `ideally ${(Math.ceil(TOKENS / CONCURRENCY) / Math.ceil(TOKENS / (3 * CONCURRENCY))).toFixed(1)}x, ` +
          "each job held to its account's limit)"
      )
    }
    return rounds
  } finally {
    for (const emu of emus) await emu.close()
  }
}

// ---------------------------------------------------------------------------------------
// 2. Files copied workspace to workspace by 1 and by 3 workers.

interface CopyRound {
  readonly workers: number
  readonly ms: number
}

const copyPhase = async (pg: string): Promise<Array<CopyRound>> => {
  const size = Math.round(FILE_MB * 1024 * 1024)
  const bytes = FILES * size
  // No plan limits: the full size holds 5 GB in each of three workspaces.
  const emu = await startEmulator({ seed: "empty", limits: { storageBytes: null, perFileBytes: null } })
  try {
    const from = emu.workspaces[0]!
    const layer = clientLayer({
      restUrl: emu.restUrl,
      baseUrl: emu.baseUrl,
      token: emu.token,
      tokenId: emu.tokenId,
      tokenSecret: emu.tokenSecret,
      org: emu.org
    })
    // A patterned block, its first bytes the file's number, so no two files are equal.
    const pattern = Buffer.alloc(size)
    for (let i = 0; i + 4 <= size; i += 4) pattern.writeUInt32LE((i * 2654435761) >>> 0, i)
    const t0 = performance.now()
    await Effect.runPromise(
      Effect.gen(function*() {
        const uploads = yield* Uploads
        yield* Effect.forEach(Array.from({ length: FILES }, (_, i) => i), (i) => {
          const body = Buffer.from(pattern)
          body.writeUInt32LE(i, 0)
          const name = `file-${String(i).padStart(4, "0")}.bin`
          return uploads.upload(fromBytes(name, body, "application/octet-stream"), { workspaceId: from, filename: name })
        }, { concurrency: 4, discard: true })
      }).pipe(Effect.provide(layer), Effect.scoped)
    )
    console.log(`${FILES} files of ${FILE_MB} MB (${(bytes / 1024 / 1024).toFixed(0)} MB) uploaded to the source workspace in ${seconds(performance.now() - t0)}`)
    if (LATENCY > 0) emu.faults.configure({ latencyMs: LATENCY })
    console.log(`every request answered ${LATENCY} ms late from here on (latency=${LATENCY})`)
    const env = {
      WORKSYNC_REST_URL: emu.restUrl,
      WORKSYNC_BASE_URL: emu.baseUrl,
      WORKSYNC_TOKEN: emu.token,
      WORKSYNC_TOKEN_ID: emu.tokenId,
      WORKSYNC_TOKEN_SECRET: emu.tokenSecret,
      WORKSYNC_ORG: emu.org
    }
    const rounds: Array<CopyRound> = []
    const rows: Array<Array<string>> = []
    // The third round: 3 workers again, the token limited to `rate` requests/s at the
    // emulator; the spread job's processes must share that limit.
    for (const [n, limited] of [[1, false], [3, false], [3, true]] as const) {
      const label = `${n}${limited ? "_limited" : ""}`
      const engine = withSchema(pg, `copy_pool_w${label}`)
      const to = emu.admin.createWorkspace({ name: `copy target, ${n} workers${limited ? ", limited" : ""}` }).id
      emu.faults.configure({ rateLimit: limited ? COPY_RATE : undefined })
      emu.resetStats()
      const workers = await startPool(engine, n, 2, env)
      let command: Proc | undefined
      try {
        const t = performance.now()
        command = startCli([
          "copy-files", "--from", `workspace:${from}`, "--to", `workspace:${to}`,
          "--journal", withSchema(pg, `copy_w${label}`), "--engine", engine, "--json",
          // Limited: each file through presign and confirm, two requests of the token per
          // file (a batch carries ten files in one), so the limit binds.
          ...(limited ? ["--upload-strategy", "presign"] : [])
        ], env)
        // Generous: loopback copies run at tens of MB/s or more.
        const end = await deadline(command.exited, 120_000 + (bytes / (1024 * 1024)) * 1000, `copy-files with ${n} worker(s)`)
        const ms = end.at - t
        if (end.code !== 0) throw new Error(`copy-files with ${n} worker(s) exited ${end.code}: ${lastLine(command.stderr())}`)
        const result = JSON.parse(command.stdout()) as { copied?: number }
        const stats = emu.stats()
        // The token's requests: not the storage server's (presigned URLs) nor downloads
        // (`/uploads/...` needs no authentication, R-FILE-SERVE-01): neither carries it.
        const unauthenticated = (route: string) =>
          route.startsWith("storage:") || (/^\/uploads\/[^/]+\/./.test(route) && !route.endsWith("/confirm"))
        const tokenRequests = Object.entries(stats.byRoute).reduce((t, [route, c]) => unauthenticated(route) ? t : t + c, 0)
        // Over the command's wall time, its wait in the queue included: a lower bound.
        const rps = tokenRequests / (ms / 1000)
        rows.push([
          `${n} worker${n > 1 ? "s" : " "}${limited ? `, presign, ${COPY_RATE} req/s` : ""}`, String(result.copied ?? "?"), seconds(ms),
          ((bytes / 1024 / 1024) / (ms / 1000)).toFixed(1), String(tokenRequests), String(stats.byStatus["429"] ?? 0),
          rps.toFixed(1), limited ? pct(rps / COPY_RATE) : "-", jobsPerWorker(workers)
        ])
        if (!limited) rounds.push({ workers: n, ms })
      } finally {
        if (command !== undefined) await stopProcs([command], 2_000)
        await stopProcs(workers)
      }
    }
    emu.faults.configure({ rateLimit: undefined })
    printTable(["pool", "copied", "wall", "MB/s", "token requests", "429s", "req/s", "of limit", "jobs per worker"], rows)
    const [one, three] = rounds
    console.log(
      `Limited round: the emulator refuses a token's requests beyond ${COPY_RATE}/s (429); the job's processes share one ` +
        "bucket in PostgreSQL, so their requests together stay under it (req/s over the command's whole wall time)."
    )
    if (one !== undefined && three !== undefined) {
      console.log(
        `3 workers vs 1: ${(one.ms / three.ms).toFixed(2)}x. With 3 workers the copy is spread: its main process ` +
          "works from the start of the plan, a helper on each other worker from the end (docs/scale.md). Every process " +
          "here shares this machine's cores with the emulator, which stores and hashes every byte."
      )
    }
    return rounds
  } finally {
    await emu.close()
  }
}

// ---------------------------------------------------------------------------------------
// 3. Store costs: filling two runs and diffing them, SQLite vs PostgreSQL.

const versionOf = (i: number, version: number): RecordEntry => {
  const id = `rec${String(i).padStart(9, "0")}`
  const d = benchDetail(id, i, version)
  return { kind: "version", workspaceId: `ws${i % 3}`, summary: { id, updatedAt: d.updatedAt }, detail: d, activity: [] }
}

interface StoreCost {
  readonly backend: string
  readonly fillMs: number
  readonly countsMs: number
  readonly idsMs: number
}

/**
 * As test/bench/diff-fill.ts does, but through the store's API so both backends take the
 * same path: run 1 holds `n` records, run 2 the same with 1% changed (60% of those
 * updated, 20% created, 20% deleted). Writes go in batches, one transaction each, as a
 * backup writes them.
 */
const fillRuns = (location: string, n: number) =>
  Effect.scoped(Effect.gen(function*() {
    const store = yield* openSnapshot(location)
    yield* store.lockWriter
    const BATCH = 1000
    const changed = Math.max(1, Math.round(n / 100))
    const every = Math.max(1, Math.floor(n / changed))
    const pickOf = (i: number) => (i % every === 0 ? (i / every) % 5 : -1) // 0..2 updated, 3 created, 4 deleted
    const expected = { created: 0, updated: 0, deleted: 0 }
    const r1 = yield* store.beginRun("*", false)
    for (let start = 0; start < n; start += BATCH) {
      const entries: Array<RecordEntry> = []
      for (let i = start; i < Math.min(n, start + BATCH); i++) if (pickOf(i) !== 3) entries.push(versionOf(i, 0))
      yield* store.putRecords(r1, entries)
    }
    yield* store.completeRun(r1, {})
    const r2 = yield* store.beginRun("*", false)
    for (let start = 0; start < n; start += BATCH) {
      const end = Math.min(n, start + BATCH)
      // Run 1's versions of this batch, for the records kept unchanged.
      const rows = yield* store.select<{ id: string; vid: number }>("read run 1", {
        sql: "SELECT id, vid FROM run_records WHERE run_id = ? AND id >= ? AND id < ?",
        params: [r1, `rec${String(start).padStart(9, "0")}`, `rec${String(end).padStart(9, "0")}`]
      })
      const vids = new Map(rows.map((r) => [r.id, Number(r.vid)]))
      const entries: Array<RecordEntry> = []
      for (let i = start; i < end; i++) {
        const pick = pickOf(i)
        if (pick === 4) {
          expected.deleted++
          continue
        }
        if (pick >= 0) {
          if (pick === 3) expected.created++
          else expected.updated++
          entries.push(versionOf(i, 1))
          continue
        }
        const id = `rec${String(i).padStart(9, "0")}`
        entries.push({ kind: "keep", id, vid: vids.get(id)! })
      }
      yield* store.putRecords(r2, entries)
    }
    yield* store.completeRun(r2, {})
    return { r1, r2, expected }
  }))

const diffPhase = async (pg: string | undefined): Promise<Array<StoreCost>> => {
  const backends: Array<{ backend: string; location: string }> = [{ backend: "SQLite", location: path.join(work, "diff.sqlite") }]
  if (pg !== undefined) backends.push({ backend: "PostgreSQL", location: withSchema(pg, "diff") })
  console.log(`two runs of ${DIFF_N} records, 1% changed, written through the snapshot API; then the diff between them`)
  const costs: Array<StoreCost> = []
  const rows: Array<Array<string>> = []
  for (const { backend, location } of backends) {
    try {
      let t = performance.now()
      const filled = await Effect.runPromise(fillRuns(location, DIFF_N))
      const fillMs = performance.now() - t
      const timed = await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
        const store = yield* openSnapshot(location, { mustExist: true })
        t = performance.now()
        const counts = yield* diffCounts(store, "records", filled.r1, filled.r2)
        const countsMs = performance.now() - t
        t = performance.now()
        const ids = yield* diffIds(store, "records", filled.r1, filled.r2)
        const idsMs = performance.now() - t
        return { counts, ids, countsMs, idsMs }
      })))
      const e = filled.expected
      const ok = timed.counts.created === e.created && timed.counts.updated === e.updated && timed.counts.deleted === e.deleted &&
        timed.ids.created.length === e.created && timed.ids.updated.length === e.updated && timed.ids.deleted.length === e.deleted
      rows.push([
        backend, seconds(fillMs), `${timed.countsMs.toFixed(0)} ms`, `${timed.idsMs.toFixed(0)} ms`,
        `${timed.counts.created}/${timed.counts.updated}/${timed.counts.deleted}`, ok ? "yes" : "NO"
      ])
      costs.push({ backend, fillMs, countsMs: timed.countsMs, idsMs: timed.idsMs })
    } catch (e) {
      rows.push([backend, "failed", "", "", "", ""])
      console.log(`  ${backend} failed: ${e instanceof Error ? e.message : String(e)}`)
    }
  }
  printTable(["store", "fill 2 runs", "diffCounts", "diffIds", "created/updated/deleted", "as filled"], rows)
  const [lite, post] = costs
  if (lite !== undefined && post !== undefined) {
    console.log(
      `PostgreSQL vs SQLite: fill ${(post.fillMs / lite.fillMs).toFixed(1)}x, diffCounts ${(post.countsMs / lite.countsMs).toFixed(1)}x, ` +
        `diffIds ${(post.idsMs / lite.idsMs).toFixed(1)}x the time (PostgreSQL answers over loopback, in batched statements; SQLite writes in process)`
    )
  }
  return costs
}

// ---------------------------------------------------------------------------------------

const phase = async <A>(title: string, run: () => Promise<A>): Promise<A | undefined> => {
  console.log(`\n== ${title}`)
  const t = performance.now()
  try {
    const a = await run()
    console.log(`(${title}: ${seconds(performance.now() - t)})`)
    return a
  } catch (e) {
    console.log(`${title} failed: ${e instanceof Error ? e.message : String(e)}`)
    return undefined
  }
}

const main = async () => {
  if (!fs.existsSync(path.resolve("dist/cli.cjs"))) console.log("dist/cli.cjs is missing: run npm run build first")
  let pg: string | undefined
  try {
    try {
      const t = performance.now()
      pg = await startCluster()
      console.log(`PostgreSQL: throwaway cluster on ${new URL(pg).host}, started in ${seconds(performance.now() - t)}`)
    } catch (e) {
      console.log(`no PostgreSQL cluster, so only the SQLite figures: ${e instanceof Error ? e.message : String(e)}`)
    }
    const pool = ONLY.has("pool") && pg !== undefined ? await phase("1. pool throughput across service accounts", () => poolPhase(pg!)) : undefined
    const copy = ONLY.has("copy") && pg !== undefined ? await phase("2. files copied by 1 vs 3 workers", () => copyPhase(pg!)) : undefined
    const diff = ONLY.has("diff") ? await phase("3. store costs: diff on SQLite vs PostgreSQL", () => diffPhase(pg)) : undefined

    const parts: Array<string> = []
    const [p1, p3] = pool ?? []
    if (p1 !== undefined && p3 !== undefined && p1.records > 0) {
      parts.push(`pool 3 vs 1 worker ${((p3.records / p3.wallMs) / (p1.records / p1.wallMs)).toFixed(2)}x records/s (${TOKENS} accounts)`)
    }
    const [c1, c3] = copy ?? []
    if (c1 !== undefined && c3 !== undefined) parts.push(`copy 3 vs 1 worker ${(c1.ms / c3.ms).toFixed(2)}x MB/s`)
    const [dl, dp] = diff ?? []
    if (dl !== undefined && dp !== undefined) {
      parts.push(`PostgreSQL vs SQLite: fill ${(dp.fillMs / dl.fillMs).toFixed(1)}x, diffCounts ${(dp.countsMs / dl.countsMs).toFixed(1)}x, diffIds ${(dp.idsMs / dl.idsMs).toFixed(1)}x the time`)
    }
    console.log(`\nsummary: ${parts.length > 0 ? parts.join("; ") : "no ratio measured"}`)
  } finally {
    for (const c of running) if (alive(c)) c.kill("SIGKILL")
    stopCluster()
    fs.rmSync(work, { recursive: true, force: true })
  }
}

main().then(
  () => process.exit(0),
  (e) => {
    console.error(e)
    cleanupNow()
    process.exit(1)
  }
)
