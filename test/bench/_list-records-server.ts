/**
 * The emulator of emulator-list-records.ts, run in a process of its own from a bundle of a
 * source tree (this one, or the one compared with), so its CPU time is its own and not the
 * load generator's. Starts a seeded emulator ($SEED, default 3x20000; the variant from
 * WORKSYNC_EMULATOR_VARIANT), prints its connection as one JSON line, then answers each
 * "cpu" line of stdin with its process's CPU time so far, and stops on "stop".
 */
import { createInterface } from "node:readline"
import { startEmulator } from "../../src/emulator/index.ts"

export interface ServerReady {
  readonly baseUrl: string
  readonly token: string
  readonly org: string
  readonly workspaces: ReadonlyArray<string>
}

export interface ServerCpu {
  /** User + system CPU time of the emulator's process since it started, in µs. */
  readonly cpuUs: number
}

const emulator = await startEmulator({ seed: process.env.SEED ?? "3x20000" })
const ready: ServerReady = { baseUrl: emulator.baseUrl, token: emulator.token, org: emulator.org, workspaces: emulator.workspaces }
process.stdout.write(`${JSON.stringify(ready)}\n`)
for await (const line of createInterface({ input: process.stdin })) {
  if (line === "stop") break
  if (line === "cpu") {
    const usage = process.cpuUsage()
    const answer: ServerCpu = { cpuUs: usage.user + usage.system }
    process.stdout.write(`${JSON.stringify(answer)}\n`)
  }
}
await emulator.close()
