/**
 * Throughput of list-records (pages of 100) against a 3x20000 emulator: a child process
 * keeps 16 keep-alive requests in flight for a few seconds per scenario. Prints requests
 * per second (wall) and requests per CPU-second of the emulator process (its rate on one
 * dedicated core, even when the machine is busy). Asserts nothing.
 *
 *   npx tsx test/bench/emulator-list-records.ts [seconds]
 */
import { spawn } from "node:child_process"
import { fileURLToPath } from "node:url"
import { Pool } from "undici"

const IN_FLIGHT = 16

interface Scenario {
  readonly label: string
  /** Body of request n. */
  readonly body: (n: number, workspaces: ReadonlyArray<string>) => unknown
}

const scenarios: ReadonlyArray<Scenario> = [
  {
    // A backup pages one workspace at a time from the front.
    label: "one workspace, sequential pages, skip 0..19900",
    body: (n, ws) => ({ workspaceId: ws[Math.floor(n / 200) % ws.length], limit: 100, skip: (n % 200) * 100 })
  },
  {
    label: "one workspace, random pages, skip 0..19900",
    body: (n, ws) => ({ workspaceId: ws[n % ws.length], limit: 100, skip: ((n * 7919) % 200) * 100 })
  },
  {
    label: "all workspaces, sequential pages, skip 0..4900",
    body: (n) => ({ limit: 100, skip: (n % 50) * 100 })
  }
]

/** The load generator (child process): runs one scenario, prints its counts as JSON. */
const client = async (baseUrl: string, token: string, org: string, index: number, seconds: number, workspaces: Array<string>) => {
  const scenario = scenarios[index]!
  const pool = new Pool(baseUrl, { connections: IN_FLIGHT, pipelining: 1 })
  const headers = { authorization: `Bearer ${token}`, "content-type": "application/json", "svc-org-id": org }
  let done = 0
  let failed = 0
  let bytes = 0
  let next = 0
  const until = performance.now() + seconds * 1000
  const worker = async () => {
    while (performance.now() < until) {
      const n = next++
      const res = await pool.request({
        path: "/rest/v1/list-records",
        method: "POST",
        headers,
        body: JSON.stringify(scenario.body(n, workspaces))
      })
      const text = await res.body.text()
      if (res.statusCode !== 200) failed++
      bytes += text.length
      done++
    }
  }
  await Promise.all(Array.from({ length: IN_FLIGHT }, worker))
  await pool.close()
  process.stdout.write(JSON.stringify({ done, failed, bytes }))
}

const runChild = (args: ReadonlyArray<string>): Promise<{ done: number; failed: number; bytes: number }> =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", fileURLToPath(import.meta.url), "client", ...args], {
      stdio: ["ignore", "pipe", "inherit"]
    })
    let out = ""
    child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()))
    child.on("error", reject)
    child.on("exit", (code) => (code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`load generator exited ${code}`))))
  })

const main = async () => {
  const seconds = Number(process.argv[2] ?? 4)
  const { startEmulator } = await import("../../src/emulator/index.ts")
  const t0 = performance.now()
  const emulator = await startEmulator({ seed: "3x20000" })
  console.log(`seeded 3x20000 in ${((performance.now() - t0) / 1000).toFixed(2)} s`)
  // Warm-up (JIT, caches), not reported.
  await runChild([emulator.baseUrl, emulator.token, emulator.org, "0", "2", ...emulator.workspaces])
  for (let i = 0; i < scenarios.length; i++) {
    const cpu0 = process.cpuUsage()
    const start = performance.now()
    const result = await runChild([emulator.baseUrl, emulator.token, emulator.org, String(i), String(seconds), ...emulator.workspaces])
    const elapsed = (performance.now() - start) / 1000
    const cpu = process.cpuUsage(cpu0)
    const cpuSeconds = (cpu.user + cpu.system) / 1e6
    console.log(
      `list-records limit 100, ${scenarios[i]!.label}: ${(result.done / elapsed).toFixed(0)} requests/s wall, ` +
        `${(result.done / cpuSeconds).toFixed(0)} requests per emulator CPU-second ` +
        `(${result.done} requests, ${result.failed} failed, ${(result.bytes / Math.max(1, result.done) / 1024).toFixed(1)} KiB/page)`
    )
  }
  await emulator.close()
}

if (process.argv[2] === "client") {
  const [, , , baseUrl, token, org, index, seconds, ...workspaces] = process.argv
  await client(baseUrl!, token!, org!, Number(index), Number(seconds), workspaces)
} else {
  await main()
}
