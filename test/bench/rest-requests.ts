/**
 * Benchmark of the REST client's own cost a request (prints figures, asserts nothing):
 * REQUESTS (default 20,000) reads of one record's activity (list-record-activity, one
 * page) and as many of its detail (get-record), CONCURRENCY (default 8, the mirror's
 * rereads) at a time, against the emulator in its own process. The figure is the CPU
 * this thread spent a request: building it, the limiter, the retry policy, the HTTP
 * exchange over keep-alive connections, parsing and decoding the answer. The emulator's
 * work is not in it, and the machine's load moves it less than the rate.
 *
 * CPU_PROF=FILE writes a .cpuprofile of the measured requests.
 *
 *   REQUESTS=20000 npm run bench -- rest-requests
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as Effect from "effect/Effect"
import { Session } from "node:inspector/promises"
import { clientLayer } from "../../src/client/layer.ts"
import { RestClient } from "../../src/client/rest-client.ts"
import { connectionFor } from "../client/helpers.ts"
import { spawnEmulator } from "./_emulator-process.ts"

const REQUESTS = Number(process.env.REQUESTS ?? 20_000)
const CONCURRENCY = Number(process.env.CONCURRENCY ?? 8)
const CPU_PROF = process.env.CPU_PROF

console.log(`machine: ${os.cpus().length} CPUs, load average ${os.loadavg().map((l) => l.toFixed(1)).join(" ")} at the start`)

const emu = await spawnEmulator(["--seed", "1x50"])
const workspaceId = emu.workspaces[0]!

const measure = Effect.gen(function*() {
  const rest = yield* RestClient
  // The record with the most activity among the first page: a realistic answer to decode.
  const page = yield* rest.listRecords({ workspaceId, limit: 50 })
  let recordId = page.items[0]!.id
  let most = -1
  for (const r of page.items) {
    const a = yield* rest.listRecordActivity({ workspaceId, recordId: r.id, skip: 0, limit: 24 })
    if (a.items.length > most) {
      most = a.items.length
      recordId = r.id
    }
  }
  const detailBytes = JSON.stringify(yield* rest.getRecord({ workspaceId, recordId })).length
  console.log(`record ${recordId}: ${most} activity items a page, a detail of ${detailBytes} bytes`)

  const run = (label: string, one: Effect.Effect<unknown, unknown>, n: number, profile: boolean) =>
    Effect.gen(function*() {
      const profiler = profile && CPU_PROF !== undefined ? new Session() : undefined
      if (profiler !== undefined) {
        profiler.connect()
        yield* Effect.promise(() => profiler.post("Profiler.enable"))
        yield* Effect.promise(() => profiler.post("Profiler.setSamplingInterval", { interval: 200 }))
        yield* Effect.promise(() => profiler.post("Profiler.start"))
      }
      const cpuBefore = process.threadCpuUsage()
      const t = performance.now()
      yield* Effect.forEach(Array.from({ length: n }), () => one, { concurrency: CONCURRENCY, discard: true })
      const ms = performance.now() - t
      const cpu = process.threadCpuUsage(cpuBefore)
      if (profiler !== undefined) {
        const { profile: p } = yield* Effect.promise(() => profiler.post("Profiler.stop"))
        fs.writeFileSync(CPU_PROF!, JSON.stringify(p))
        profiler.disconnect()
        console.log(`  CPU profile written to ${CPU_PROF}`)
      }
      if (label === "") return
      const us = (cpu.user + cpu.system) / n
      console.log(
        `${label}: ${n} requests in ${(ms / 1000).toFixed(2)} s = ${Math.round(n / (ms / 1000))}/s; ` +
          `${Math.round(us)} us of CPU a request (${Math.round((cpu.system / (cpu.user + cpu.system)) * 100)}% in the system)`
      )
    })

  const activity = rest.listRecordActivity({ workspaceId, recordId, skip: 0, limit: 24 })
  const detail = rest.getRecord({ workspaceId, recordId })
  // Warm up (the JIT, the connection pool) before measuring.
  yield* run("", Effect.andThen(activity, detail), 2_000, false)
  yield* run("list-record-activity", activity, REQUESTS, true)
  yield* run("get-record", detail, REQUESTS, false)
})

await Effect.runPromise(
  Effect.provide(
    measure,
    clientLayer(connectionFor(emu, {
      requestTimeoutMs: 30_000,
      // Opened wide and fixed: the client's cost is measured, not its pacing.
      limiter: { maxInFlight: 16, initialRps: 100_000, adaptive: false },
      retry: { maxRetries: 8, baseDelayMs: 5, capDelayMs: 100 }
    }))
  )
).finally(() => emu.stop())
