/**
 * Throughput of list-records (pages of 100) against a 3x20000 emulator. This process is
 * the load generator (16 keep-alive requests in flight); the emulator runs in a process of
 * its own, a bundle of its source tree, so the CPU time it reports is the emulator's
 * alone. Prints, per scenario, requests per second (wall) and the emulator's CPU time per
 * request (user + system of its process): on a shared machine wall time says little, and
 * 1e6 / (µs of CPU per request) is the rate one idle core sustains. Asserts nothing.
 *
 *   npm run bench -- emulator-list-records
 *     SECONDS=4       length of one measured round (or the first argument)
 *     ROUNDS=1        rounds per scenario
 *     AGAINST=DIR     also run the emulator of the source tree at DIR (a `git worktree` of
 *                     another commit), alternating with this one round by round, and
 *                     print the ratios
 *     WORKSYNC_EMULATOR_VARIANT=alt   the other reading of the documents
 */
import { build } from "esbuild"
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { createInterface } from "node:readline"
import { fileURLToPath } from "node:url"
import { Pool } from "undici"
import type { ServerCpu, ServerReady } from "./_list-records-server.ts"
import { root, sourcesOf } from "./_source-tree.ts"

const IN_FLIGHT = 16
const SECONDS = Number(process.argv[2] ?? process.env.SECONDS ?? 4)
const ROUNDS = Number(process.env.ROUNDS ?? 1)
const here = path.dirname(fileURLToPath(import.meta.url))
const trees = [root, ...(process.env.AGAINST === undefined ? [] : [path.resolve(process.env.AGAINST)])]
const treeName = (tree: string) => (tree === root ? "this tree" : tree)

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

interface Server {
  readonly tree: string
  readonly ready: ServerReady
  cpuUs(): Promise<number>
  stop(): Promise<void>
}

/** The emulator of `tree`, bundled into `out` and started in a process of its own. */
const startServer = async (tree: string, out: string): Promise<Server> => {
  await build({
    entryPoints: { server: path.join(here, "_list-records-server.ts") },
    bundle: true,
    platform: "node",
    target: "node22",
    format: "esm",
    outdir: out,
    outExtension: { ".js": ".mjs" },
    external: ["better-sqlite3", "pg", "pg-native"],
    logLevel: "warning",
    nodePaths: [path.join(root, "node_modules")],
    plugins: [sourcesOf(tree)],
    banner: { js: "import { createRequire as __wsCreateRequire } from 'node:module'; const require = __wsCreateRequire(import.meta.url);" }
  })
  // Packages (better-sqlite3) resolve from the bundle's directory upwards.
  fs.symlinkSync(path.join(root, "node_modules"), path.join(out, "node_modules"))
  const child: ChildProcessWithoutNullStreams = spawn(process.execPath, [path.join(out, "server.mjs")], { stdio: "pipe" })
  child.stderr.pipe(process.stderr)
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]()
  const nextLine = async (): Promise<string> => {
    const line = await lines.next()
    if (line.done === true) throw new Error(`the emulator of ${treeName(tree)} exited`)
    return line.value
  }
  const ready = JSON.parse(await nextLine()) as ServerReady
  return {
    tree,
    ready,
    cpuUs: async () => {
      child.stdin.write("cpu\n")
      return (JSON.parse(await nextLine()) as ServerCpu).cpuUs
    },
    stop: () =>
      new Promise((resolve) => {
        child.once("exit", () => resolve())
        child.stdin.end("stop\n")
      })
  }
}

interface Load {
  done: number
  failed: number
  bytes: number
}

/** Requests of `scenario` against `server` for `seconds`, IN_FLIGHT at a time, numbered from `first`. */
const load = async (server: Server, scenario: Scenario, seconds: number, first: number): Promise<Load> => {
  const pool = new Pool(server.ready.baseUrl, { connections: IN_FLIGHT, pipelining: 1 })
  const headers = { authorization: `Bearer ${server.ready.token}`, "content-type": "application/json", "svc-org-id": server.ready.org }
  const result: Load = { done: 0, failed: 0, bytes: 0 }
  let next = first
  const until = performance.now() + seconds * 1000
  const worker = async () => {
    while (performance.now() < until) {
      const res = await pool.request({
        path: "/rest/v1/list-records",
        method: "POST",
        headers,
        body: JSON.stringify(scenario.body(next++, server.ready.workspaces))
      })
      const text = await res.body.text()
      if (res.statusCode !== 200) result.failed++
      result.bytes += text.length
      result.done++
    }
  }
  await Promise.all(Array.from({ length: IN_FLIGHT }, worker))
  await pool.close()
  return result
}

interface Figures extends Load {
  wallS: number
  cpuS: number
}

const line = (f: Figures) =>
  `${Math.round(f.done / f.wallS).toLocaleString("en-US")} requests/s wall, ` +
  `${((f.cpuS * 1e6) / f.done).toFixed(0)} µs emulator CPU per request ` +
  `(${Math.round(f.done / f.cpuS).toLocaleString("en-US")} requests per emulator CPU-second; ` +
  `${f.done} requests, ${f.failed} failed, ${(f.bytes / Math.max(1, f.done) / 1024).toFixed(1)} KiB/page)`

const main = async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "ws-bench-list-records-"))
  const servers: Array<Server> = []
  try {
    const t0 = performance.now()
    for (const [i, tree] of trees.entries()) servers.push(await startServer(tree, path.join(dir, `build-${i}`)))
    console.log(
      `${servers.length === 1 ? "emulator" : "emulators"} seeded ${process.env.SEED ?? "3x20000"} in ${((performance.now() - t0) / 1000).toFixed(1)} s; ` +
        `variant ${process.env.WORKSYNC_EMULATOR_VARIANT ?? "reference"}; ${os.cpus().length} cores, load average ${os.loadavg()[0]!.toFixed(1)}`
    )
    // Warm-up (JIT, caches), not reported.
    for (const server of servers) await load(server, scenarios[0]!, 2, 0)
    const totals = servers.map((): Figures => ({ done: 0, failed: 0, bytes: 0, wallS: 0, cpuS: 0 }))
    for (const scenario of scenarios) {
      const figures = servers.map((): Figures => ({ done: 0, failed: 0, bytes: 0, wallS: 0, cpuS: 0 }))
      for (let round = 0; round < ROUNDS; round++) {
        // Alternate which tree goes first, so a change in the machine's load falls on both.
        const order = round % 2 === 0 ? servers.keys() : [...servers.keys()].reverse()
        for (const s of order) {
          const server = servers[s]!
          const cpu0 = await server.cpuUs()
          const start = performance.now()
          const result = await load(server, scenario, SECONDS, round * 1_000_000)
          const wallS = (performance.now() - start) / 1000
          const cpuS = ((await server.cpuUs()) - cpu0) / 1e6
          for (const f of [figures[s]!, totals[s]!]) {
            f.done += result.done
            f.failed += result.failed
            f.bytes += result.bytes
            f.wallS += wallS
            f.cpuS += cpuS
          }
        }
      }
      for (const [s, f] of figures.entries()) console.log(`list-records limit 100, ${scenario.label}, ${treeName(servers[s]!.tree)}: ${line(f)}`)
      if (figures.length === 2) {
        const [a, b] = figures as [Figures, Figures]
        console.log(`  this tree / other: CPU per request ${(a.cpuS / a.done / (b.cpuS / b.done)).toFixed(2)}, requests/s wall ${(a.done / a.wallS / (b.done / b.wallS)).toFixed(2)}`)
      }
    }
    for (const [s, f] of totals.entries()) console.log(`all scenarios, ${treeName(servers[s]!.tree)}: ${line(f)}`)
    if (totals.length === 2) {
      const [a, b] = totals as [Figures, Figures]
      console.log(`  this tree / other: CPU per request ${(a.cpuS / a.done / (b.cpuS / b.done)).toFixed(2)}`)
    }
  } finally {
    await Promise.all(servers.map((s) => s.stop()))
    fs.rmSync(dir, { recursive: true, force: true })
  }
}

main().catch((e) => {
  console.error(e)
  process.exit(1)
})
