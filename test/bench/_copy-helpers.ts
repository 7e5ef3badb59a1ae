/**
 * Shared pieces of the copy benchmarks: run the CLI as a child under /usr/bin/time
 * (wall time and peak RSS), presign through the real client.
 */
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import type { EmulatorHandle } from "../../src/emulator/index.ts"
import { connectionEnv } from "../support/cli.ts"

export interface Timed {
  readonly code: number | null
  readonly ms: number
  readonly maxRssKb: number | null
  readonly stdout: string
  readonly stderr: string
}

/** Runs `node bin/worksync.js args` against the emulator; peak RSS from /usr/bin/time when present. */
export const runCli = (emu: EmulatorHandle, args: ReadonlyArray<string>): Promise<Timed> =>
  new Promise((resolve) => {
    const env = { ...process.env, ...connectionEnv(emu, { app: true }) }
    const timeBin = fs.existsSync("/usr/bin/time") ? "/usr/bin/time" : null
    const cmd = timeBin ?? process.execPath
    const argv = timeBin ? ["-f", "maxrss_kb=%M", process.execPath, "bin/worksync.js", ...args] : ["bin/worksync.js", ...args]
    const t0 = performance.now()
    const child = spawn(cmd, argv, { env, stdio: ["ignore", "pipe", "pipe"] })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (d) => (stdout += d))
    child.stderr.on("data", (d) => (stderr += d))
    child.on("close", (code) => {
      const ms = performance.now() - t0
      const m = /maxrss_kb=(\d+)/.exec(stderr)
      resolve({ code, ms, maxRssKb: m ? Number(m[1]) : null, stdout, stderr: stderr.replace(/maxrss_kb=\d+\n?/, "") })
    })
  })

export const mbps = (bytes: number, ms: number) => (bytes / 1024 / 1024) / (ms / 1000)
