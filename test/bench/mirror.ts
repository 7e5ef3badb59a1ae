/**
 * Benchmarks of `mirror` (prints figures, asserts nothing):
 *
 * 1. Throughput: events applied per second to a snapshot of RECORDS records (default
 *    100,000; target >= 5,000/s). EVENTS (default 20,000) synthetic TODO_NAME_CHANGED
 *    deliveries, each a whole record detail newer than the stored one, are signed with
 *    the mirror's own secret and posted straight to its receiver, 32 at a time over
 *    keep-alive connections; measured from the first POST to the last event the mirror
 *    reports. Also how long the records' background rereads (get-record and
 *    list-record-activity through the service) take to drain, and the CPU the mirror's
 *    thread spent until the last event was applied, per event (the machine's load moves it
 *    less than the rate).
 * 2. Delay at time scale 1: from an update's answer to the mirrored snapshot's latest
 *    complete run showing it, SAMPLES (default 10) times, one update at a time (target:
 *    the service's own 5 s delivery delay plus under 100 ms).
 *
 * The emulator of part 1 runs in its own process, as the service does, so the mirror's
 * event loop serves only the mirror; part 2 is small and runs the emulator in-process.
 *
 * CPU_PROF=FILE writes a .cpuprofile of this process (the mirror's) over part 1's
 * measurement, from the first POST to the rereads drained, for Chrome DevTools or any
 * reader of the format.
 *
 *   RECORDS=10000 EVENTS=5000 SAMPLES=10 npx tsx test/bench/mirror.ts
 *   STATE=.tmp/mirror-bench RECORDS=100000 EVENTS=20000 SAMPLES=0 npm run bench -- mirror
 */
import Database from "better-sqlite3"
import * as fs from "node:fs"
import * as net from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { Session } from "node:inspector/promises"
import { Worker } from "node:worker_threads"
import type { ConnectionInput } from "../../src/client/config.ts"
import { GraphqlClient } from "../../src/client/graphql-client.ts"
import { clientLayer } from "../../src/client/layer.ts"
import { RestClient, type RestClientApi } from "../../src/client/rest-client.ts"
import { startEmulator } from "../../src/emulator/index.ts"
import { SnapshotStore } from "../../src/store/snapshot.ts"
import { backup } from "../../src/sync/backup.ts"
import { mirror, type MirrorEvent } from "../../src/sync/mirror/mirror.ts"
import { readSecretFile, secretFileOf } from "../../src/sync/mirror/webhook.ts"
import { signBody } from "../../src/webhooks/signature.ts"
import { type EmulatorProcess, spawnEmulator } from "./_emulator-process.ts"

const RECORDS = Number(process.env.RECORDS ?? 100_000)
const EVENTS = Number(process.env.EVENTS ?? 20_000)
const SAMPLES = Number(process.env.SAMPLES ?? 10)
const CPU_PROF = process.env.CPU_PROF
/**
 * STATE=DIR keeps the seeded emulator's database and the first backup's snapshot in
 * DIR/RECORDS and starts later runs from copies of them: runs alternating two versions of
 * the code then differ only in the code, and skip the seeding and the backup (minutes at
 * 100,000 records).
 */
const STATE = process.env.STATE
/** Deliveries in flight at once, as a busy sender keeps them. */
const SENDERS = 32

const seconds = (ms: number) => `${(ms / 1000).toFixed(2)} s`
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms))

/**
 * The limiter opened wide and fixed: the emulator, not the client's pacing (nor its slow
 * adaptive start), bounds the backup and the mirror's rereads.
 */
const connection = (emu: Omit<EmulatorProcess, "stop" | "workspaces">): ConnectionInput => ({
  restUrl: emu.restUrl,
  baseUrl: emu.baseUrl,
  token: emu.token,
  tokenId: emu.tokenId,
  tokenSecret: emu.tokenSecret,
  org: emu.org,
  requestTimeoutMs: 30_000,
  limiter: { maxInFlight: 16, initialRps: 5_000, adaptive: false },
  retry: { maxRetries: 8, baseDelayMs: 5, capDelayMs: 100 }
})

const freePort = () =>
  new Promise<number>((resolve) => {
    const s = net.createServer()
    s.listen(0, "127.0.0.1", () => {
      const port = (s.address() as net.AddressInfo).port
      s.close(() => resolve(port))
    })
  })

/**
 * The sender runs in a worker thread: a real sender is another machine, so its HTTP work
 * must not take the mirror's event loop. Times come back on this thread's clock.
 */
const SENDER = `
const { parentPort, workerData } = require("node:worker_threads")
const { Agent, request } = require("undici")
const { url, deliveries, senders } = workerData
const agent = new Agent({ connections: senders, keepAliveTimeout: 30000 })
parentPort.once("message", async () => {
  const startedAt = performance.timeOrigin + performance.now()
  let next = 0
  let refused = 0
  const sender = async () => {
    for (;;) {
      const i = next++
      if (i >= deliveries.length) return
      const d = deliveries[i]
      const res = await request(url, {
        method: "POST",
        dispatcher: agent,
        headers: { "content-type": "application/json", "x-signature": d.signature },
        body: d.body
      })
      await res.body.dump()
      if (res.statusCode !== 200) refused++
    }
  }
  await Promise.all(Array.from({ length: senders }, sender))
  const answeredAt = performance.timeOrigin + performance.now()
  await agent.close()
  parentPort.postMessage({ startedAt, answeredAt, refused })
})
parentPort.postMessage("ready")
`

/**
 * Starts the sender with every delivery and resolves once it is ready, so that starting
 * its thread and copying the deliveries to it are not counted as the mirror's CPU; `go`
 * posts them all, SENDERS at a time over keep-alive connections; times on this thread's clock.
 */
const startSender = (url: string, deliveries: ReadonlyArray<{ readonly body: Uint8Array; readonly signature: string }>) =>
  new Promise<{ readonly go: () => Promise<{ startedAt: number; answeredAt: number; refused: number }> }>((ready, reject) => {
    const worker = new Worker(SENDER, { eval: true, workerData: { url, deliveries, senders: SENDERS } })
    let done: (sent: { startedAt: number; answeredAt: number; refused: number }) => void = () => undefined
    worker.on("error", reject)
    worker.on("message", (msg: "ready" | { startedAt: number; answeredAt: number; refused: number }) => {
      if (msg === "ready") {
        return ready({
          go: () =>
            new Promise((resolve) => {
              done = resolve
              worker.postMessage("go")
            })
        })
      }
      void worker.terminate()
      const local = (at: number) => at - performance.timeOrigin
      done({ startedAt: local(msg.startedAt), answeredAt: local(msg.answeredAt), refused: msg.refused })
    })
  })

interface Started {
  readonly url: string
  readonly runId: number
  readonly fiber: Fiber.Fiber<unknown, unknown>
  /** list-record-activity answers the mirror received since it was ready (one per reread). */
  readonly activityReads: () => number
}

/**
 * Runs the library `mirror` in this process on `snapshot` until its fiber is interrupted;
 * resolves once it listens and has reconciled. The REST client is wrapped to count the
 * rereads' activity reads.
 */
const startMirror = (
  conn: ConnectionInput,
  snapshot: string,
  workspaces: ReadonlyArray<string>,
  onEvent: (e: MirrorEvent) => void
): Promise<Started> =>
  new Promise((resolve, reject) => {
    let ready = false
    let activityReads = 0
    const fiber = Effect.runFork(
      Effect.scoped(
        Effect.gen(function*() {
          const ctx = yield* Layer.build(Layer.merge(clientLayer(conn), SnapshotStore.layer(snapshot)))
          const base = Context.get(ctx, RestClient)
          const rest: RestClientApi = {
            ...base,
            listRecordActivity: (input) =>
              Effect.tap(base.listRecordActivity(input), () =>
                Effect.sync(() => {
                  if (ready) activityReads++
                }))
          }
          const port = yield* Effect.promise(freePort)
          const publicUrl = `http://127.0.0.1:${port}/hooks`
          yield* mirror({
            store: Context.get(ctx, SnapshotStore),
            rest,
            graphql: Context.get(ctx, GraphqlClient),
            workspaces,
            host: "127.0.0.1",
            port,
            publicUrl,
            // No scheduled reconciliation or health check inside a measurement.
            reconcileEveryMs: 3_600_000,
            healthEveryMs: 3_600_000,
            onEvent,
            onReady: ({ runId }) => {
              ready = true
              resolve({ url: publicUrl, runId, fiber, activityReads: () => activityReads })
            }
          })
        })
      )
    )
    fiber.addObserver((exit) => {
      if (!ready) reject(new Error(`mirror ended before it was ready: ${JSON.stringify(exit)}`))
    })
  })

// Figures on a shared machine move with its load: say what it was.
console.log(`machine: ${os.cpus().length} CPUs, load average ${os.loadavg().map((l) => l.toFixed(1)).join(" ")} at the start`)

// 1. Throughput of applied events on a large snapshot.
{
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "ws-bench-mirror-"))
  const snapshot = path.join(dir, "snapshot.sqlite")
  const emulatorDb = path.join(dir, "emulator.sqlite")
  const kept = STATE === undefined ? undefined : path.join(STATE, `${RECORDS}`)
  const reused = kept !== undefined && fs.existsSync(path.join(kept, "snapshot.sqlite"))
  if (reused) {
    fs.copyFileSync(path.join(kept, "emulator.sqlite"), emulatorDb)
    fs.copyFileSync(path.join(kept, "snapshot.sqlite"), snapshot)
  }
  let t = performance.now()
  // Time scale 1000: whatever the emulator itself would deliver waits over an hour, so
  // only the synthetic deliveries reach the receiver.
  const emu = await spawnEmulator([...(reused ? [] : ["--seed", `1x${RECORDS}`]), "--db", emulatorDb, "--time-scale", "1000"])
  const ws = emu.workspaces[0]!
  console.log(`emulator (own process) ${reused ? `reopened from ${kept}` : `seeded with 1 x ${RECORDS} records`} in ${seconds(performance.now() - t)} (process start included)`)
  const conn = connection(emu)

  t = performance.now()
  const first = reused
    ? (() => {
      const db = new Database(snapshot, { readonly: true, fileMustExist: true })
      const records = (db.prepare("SELECT count(*) FROM run_records WHERE run_id = (SELECT max(id) FROM runs)").pluck().get()) as number
      db.close()
      return { records, activities: NaN }
    })()
    : await Effect.runPromise(
      Effect.provide(backup({ workspaces: [ws] }), Layer.merge(clientLayer(conn), SnapshotStore.layer(snapshot)))
    )
  if (!reused) console.log(`backup into the snapshot: ${first.records} records, ${first.activities} activity items in ${seconds(performance.now() - t)}`)
  if (kept !== undefined && !reused) {
    // Copies of both files as they are now, for the next runs (SQLite's online backup: the emulator still has its file open).
    fs.mkdirSync(kept, { recursive: true })
    const src = new Database(emulatorDb, { readonly: true, fileMustExist: true })
    await src.backup(path.join(kept, "emulator.sqlite"))
    src.close()
    fs.copyFileSync(snapshot, path.join(kept, "snapshot.sqlite"))
  }

  let told = 0
  let applied = 0
  let lastAt = 0
  let allTold: () => void = () => undefined
  const done = new Promise<void>((r) => (allTold = r))
  t = performance.now()
  const m = await startMirror(conn, snapshot, [ws], (e) => {
    told++
    if (e.applied) applied++
    if (told === EVENTS) {
      lastAt = performance.now()
      allTold()
    }
  })
  console.log(`mirror ready (start reconciliation included) in ${seconds(performance.now() - t)}; mirroring into run ${m.runId}`)

  // Real details of distinct records from the mirror's run, each sent back with a new
  // title and a later updatedAt, so every delivery is a write, none left as stale.
  const db = new Database(snapshot, { readonly: true, fileMustExist: true })
  const rows = db
    .prepare("SELECT rr.id AS id, r.detail AS detail FROM run_records rr JOIN records r ON r.vid = rr.vid WHERE rr.run_id = ? ORDER BY rr.id LIMIT ?")
    .all(m.runId, EVENTS) as Array<{ id: string; detail: string }>
  db.close()
  const secret = readSecretFile(secretFileOf(snapshot))!
  const hook = await Effect.runPromise(
    Effect.flatMap(GraphqlClient, (g) => g.webhook(secret.webhookId)).pipe(Effect.provide(clientLayer(conn)))
  )
  const webhook = Option.match(hook, {
    onNone: () => ({ id: secret.webhookId, uid: secret.webhookId, url: secret.url, status: "HEALTHY", enabled: true, metadata: null }),
    onSome: (w) => ({ id: w.id, uid: w.uid, url: w.url, status: w.status, enabled: w.enabled, metadata: w.metadata })
  })
  const base = Date.now() + 60_000
  // Signed before the clock starts: signing is the sender's work, not the mirror's.
  const deliveries = Array.from({ length: EVENTS }, (_, i) => {
    const row = rows[i % rows.length]!
    const detail = JSON.parse(row.detail) as Record<string, unknown>
    // The snapshot adds the workspace to what it stores; a delivery does not carry it.
    delete detail.workspaceId
    const previousValue = { ...detail }
    // Rising with i: a record sent again (EVENTS > RECORDS) is newer each time.
    const updatedAt = new Date(base + i).toISOString()
    const body = Buffer.from(JSON.stringify({
      event: "TODO_NAME_CHANGED",
      webhook,
      previousValue,
      currentValue: { ...detail, title: `${String(detail.title)} (bench ${i})`, updatedAt }
    }))
    return { body, signature: signBody(body, secret.secrets[0]!) }
  })
  const distinct = rows.length

  const sender = await startSender(m.url, deliveries)
  const profiler = CPU_PROF === undefined ? undefined : new Session()
  if (profiler !== undefined) {
    profiler.connect()
    await profiler.post("Profiler.enable")
    await profiler.post("Profiler.setSamplingInterval", { interval: 200 })
    await profiler.post("Profiler.start")
  }
  // The CPU of this thread alone (the mirror's: the sender and the emulator run elsewhere),
  // a figure a shared machine's load moves less than the rate.
  const cpuBefore = process.threadCpuUsage()
  const sent = await sender.go()
  const started = sent.startedAt
  const refused = sent.refused
  const answeredMs = sent.answeredAt - started
  await done
  const cpu = process.threadCpuUsage(cpuBefore)
  if (profiler !== undefined && process.env.CPU_PROF_UNTIL === "applied") {
    const { profile } = await profiler.post("Profiler.stop")
    fs.writeFileSync(CPU_PROF!, JSON.stringify(profile))
    console.log(`  CPU profile until the last event applied written to ${CPU_PROF}`)
  }
  const appliedMs = lastAt - started
  console.log(
    `mirror: ${applied} events applied in ${seconds(appliedMs)} = ${Math.round(applied / (appliedMs / 1000))} events/s ` +
      `(snapshot of ${first.records} records; target >= 5000/s)${told > applied ? `; ${told - applied} more left as stale` : ""}`
  )
  const cpuMs = (cpu.user + cpu.system) / 1000
  console.log(
    `  mirror's thread: ${Math.round(cpuMs)} ms of CPU until the last event applied = ${Math.round((cpuMs * 1000) / EVENTS)} us an event ` +
      `(${Math.round((cpu.system / 1000 / cpuMs) * 100)}% in the system)`
  )
  console.log(
    `  receiver: ${EVENTS} deliveries answered in ${seconds(answeredMs)} = ${Math.round(EVENTS / (answeredMs / 1000))}/s ` +
      `(${SENDERS} in flight, keep-alive); ${refused} not answered 200`
  )
  // Every written record is read again (get-record, list-record-activity) by a pool of
  // workers; each reread reads the activity once. A record named again while its reread
  // waits is read once, so with EVENTS > RECORDS this counts to the distinct records.
  const cap = Math.max(120_000, distinct * 20)
  while (m.activityReads() < distinct && performance.now() - started < cap) await sleep(20)
  const drainedMs = performance.now() - started
  const cpuAll = process.threadCpuUsage(cpuBefore)
  const reads = m.activityReads()
  console.log(
    reads >= distinct
      ? `  rereads: ${reads} records read again, drained ${seconds(drainedMs)} after the first POST = ${Math.round(reads / (drainedMs / 1000))} rereads/s`
      : `  rereads: only ${reads} of ${distinct} records read again after ${seconds(drainedMs)}`
  )
  // The whole of each event's work, its reread included: the figure above counts only the
  // rereads done by the last event, more of them the faster they go.
  const cpuAllMs = (cpuAll.user + cpuAll.system) / 1000
  console.log(`  mirror's thread until the rereads drained: ${Math.round(cpuAllMs)} ms of CPU = ${Math.round((cpuAllMs * 1000) / EVENTS)} us an event`)
  if (profiler !== undefined && process.env.CPU_PROF_UNTIL !== "applied") {
    const { profile } = await profiler.post("Profiler.stop")
    fs.writeFileSync(CPU_PROF!, JSON.stringify(profile))
    profiler.disconnect()
    console.log(`  CPU profile of the measurement written to ${CPU_PROF}`)
  }
  await Effect.runPromise(Fiber.interrupt(m.fiber))
  emu.stop()
  fs.rmSync(dir, { recursive: true, force: true })
}

// 2. Delay from a change on the service to the snapshot, at time scale 1.
{
  const emu = await startEmulator({ seed: { workspaces: 1, recordsPerWorkspace: 20 }, timeScale: 1 })
  const ws = emu.workspaces[0]!
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "ws-bench-mirror-delay-"))
  const snapshot = path.join(dir, "snapshot.sqlite")
  const conn = connection(emu)
  const m = await startMirror(conn, snapshot, [ws], () => undefined)
  const ids = emu.ctx.db
    .prepare("SELECT id FROM records WHERE workspace_id = ? AND deleted_at IS NULL ORDER BY id")
    .pluck()
    .all(ws) as Array<string>
  const db = new Database(snapshot, { readonly: true, fileMustExist: true })
  const current = db.prepare(
    "SELECT r.detail FROM run_records rr JOIN records r ON r.vid = rr.vid WHERE rr.run_id = (SELECT max(id) FROM runs WHERE status='complete') AND rr.id = ?"
  ).pluck()
  const update = (recordId: string, title: string) =>
    Effect.runPromise(
      Effect.flatMap(RestClient, (c) => c.updateRecord({ workspaceId: ws, recordId, title })).pipe(Effect.provide(clientLayer(conn)))
    )
  const delays: Array<number> = []
  for (let k = 0; k < SAMPLES; k++) {
    const id = ids[k % ids.length]!
    const title = `delay sample ${k}`
    await update(id, title)
    const answered = performance.now()
    let seen: number | undefined
    while (seen === undefined && performance.now() - answered < 30_000) {
      const detail = current.get(id) as string | undefined
      if (detail !== undefined && (JSON.parse(detail) as { title?: unknown }).title === title) seen = performance.now()
      else await sleep(2)
    }
    if (seen === undefined) {
      console.log(`  sample ${k + 1}: not mirrored within 30 s`)
      continue
    }
    delays.push(seen - answered)
    console.log(`  sample ${k + 1}: ${(seen - answered).toFixed(1)} ms`)
    // Let the record's reread finish so the next sample starts from a quiet mirror.
    await sleep(200)
  }
  db.close()
  const sorted = [...delays].sort((a, b) => a - b)
  const median = sorted.length === 0 ? NaN : sorted.length % 2 === 1
    ? sorted[(sorted.length - 1) / 2]!
    : (sorted[sorted.length / 2 - 1]! + sorted[sorted.length / 2]!) / 2
  console.log(
    `mirror delay at time scale 1 over ${delays.length} updates: median ${median.toFixed(1)} ms, max ${(sorted.at(-1) ?? NaN).toFixed(1)} ms; ` +
      `median minus the service's 5000 ms delay: ${(median - 5000).toFixed(1)} ms (target < 100 ms)`
  )
  await Effect.runPromise(Fiber.interrupt(m.fiber))
  await emu.close()
  fs.rmSync(dir, { recursive: true, force: true })
}
