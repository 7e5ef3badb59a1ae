/**
 * Runs the real `worksync` binary as a child process, the way cron and acceptance
 * checks do, and collects what it printed.
 */
import { spawn, type ChildProcess } from "node:child_process"
import { createInterface } from "node:readline"
import type { EmulatorHandle } from "../../src/emulator/index.ts"

export interface CliResult {
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
  readonly stdout: string
  readonly stderr: string
}

const BIN = new URL("../../bin/worksync.js", import.meta.url).pathname

/**
 * What stops a command from outside: polled every 2 ms; once `when` holds, the child gets
 * `signal`, so a kill lands by the work done (records the service holds, a journal's
 * state, what the command printed so far), never by the clock.
 */
export interface StopWhen {
  readonly when: (printed: { readonly stdout: string; readonly stderr: string }) => boolean
  readonly signal: NodeJS.Signals
}

export const runCli = (
  args: ReadonlyArray<string>,
  options: { env?: NodeJS.ProcessEnv; cwd?: string; input?: string; stop?: StopWhen } = {}
) =>
  new Promise<CliResult>((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      cwd: options.cwd ?? process.cwd(),
      env: { ...cleanEnv(), ...options.env },
      stdio: ["pipe", "pipe", "pipe"]
    })
    let stdout = ""
    let stderr = ""
    child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d))
    child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d))
    const stop = options.stop
    const watch = stop === undefined ? undefined : setInterval(() => {
      if (!stop.when({ stdout, stderr })) return
      clearInterval(watch)
      child.kill(stop.signal)
    }, 2)
    child.on("error", (e) => {
      clearInterval(watch)
      reject(e)
    })
    child.on("close", (code, signal) => {
      clearInterval(watch)
      resolve({ code, signal, stdout, stderr })
    })
    child.stdin.end(options.input ?? "")
  })

/** Starts a long-running command and resolves with its first stdout line. */
export const startCli = (args: ReadonlyArray<string>, options: { env?: NodeJS.ProcessEnv } = {}) =>
  new Promise<{ child: ChildProcess; firstLine: string; stderr: () => string }>((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      env: { ...cleanEnv(), ...options.env },
      stdio: ["ignore", "pipe", "pipe"]
    })
    let stderr = ""
    child.stderr!.setEncoding("utf8").on("data", (d: string) => (stderr += d))
    const lines = createInterface({ input: child.stdout! })
    lines.once("line", (line) => resolve({ child, firstLine: line, stderr: () => stderr }))
    child.once("exit", (code) => reject(new Error(`exited ${code} before printing: ${stderr}`)))
    child.once("error", reject)
  })

export const waitForExit = (child: ChildProcess) =>
  new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve({ code: child.exitCode, signal: child.signalCode })
    child.once("exit", (code, signal) => resolve({ code, signal }))
  })

/**
 * The parent's environment without any WORKSYNC_* connection variables. The emulator
 * variant is kept: a suite rerun against the other reading reruns its children too.
 */
export const cleanEnv = (): NodeJS.ProcessEnv => {
  const env: NodeJS.ProcessEnv = {}
  for (const [k, v] of Object.entries(process.env)) {
    if (!k.startsWith("WORKSYNC_") || k === "WORKSYNC_EMULATOR_VARIANT") env[k] = v
  }
  return env
}

/**
 * The connection variables a command needs to reach `emu`: its URLs, REST token and
 * organization; with `app`, the GraphQL token id and secret too (uploads, users, roles).
 */
export const connectionEnv = (emu: EmulatorHandle, options: { readonly app?: boolean } = {}): Record<string, string> => ({
  WORKSYNC_REST_URL: emu.restUrl,
  WORKSYNC_BASE_URL: emu.baseUrl,
  WORKSYNC_TOKEN: emu.token,
  WORKSYNC_ORG: emu.org,
  ...(options.app === true ? { WORKSYNC_TOKEN_ID: emu.tokenId, WORKSYNC_TOKEN_SECRET: emu.tokenSecret } : {})
})

/**
 * The variables of a command's second end (`--to` of migrate): a user of the emulator and
 * their organization, with the GraphQL token id and secret.
 */
export const targetConnectionEnv = (
  user: { readonly token: string; readonly tokenId: string; readonly tokenSecret: string },
  org: string
): Record<string, string> => ({
  WORKSYNC_TARGET_TOKEN: user.token,
  WORKSYNC_TARGET_TOKEN_ID: user.tokenId,
  WORKSYNC_TARGET_TOKEN_SECRET: user.tokenSecret,
  WORKSYNC_TARGET_ORG: org
})
