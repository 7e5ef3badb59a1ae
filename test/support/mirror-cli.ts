/**
 * `worksync mirror` as a child process against an emulator, for the CLI tests of the
 * mirror: its environment, the service's RPCs, a free port, and a started mirror whose
 * output is collected.
 */
import { type ChildProcess, spawn } from "node:child_process"
import * as net from "node:net"
import { expect } from "@effect/vitest"
import * as Effect from "effect/Effect"
import type { EmulatorHandle } from "../../src/emulator/index.ts"

const BIN = new URL("../../bin/worksync.js", import.meta.url).pathname

export const mirrorEnv = (handle: EmulatorHandle) => ({
  WORKSYNC_REST_URL: handle.restUrl,
  WORKSYNC_BASE_URL: handle.baseUrl,
  WORKSYNC_TOKEN: handle.token,
  WORKSYNC_TOKEN_ID: handle.tokenId,
  WORKSYNC_TOKEN_SECRET: handle.tokenSecret,
  WORKSYNC_ORG: handle.org
})

/** A REST operation of the service as `auth` (a user's token and organization), which must succeed. */
export const rpcAs = async (
  handle: EmulatorHandle,
  auth: { readonly token: string; readonly org: string },
  op: string,
  body: Record<string, unknown>
): Promise<any> => {
  const res = await fetch(`${handle.restUrl}/v1/${op}`, {
    method: "POST",
    headers: { authorization: `Bearer ${auth.token}`, "content-type": "application/json", "svc-org-id": auth.org },
    body: JSON.stringify(body)
  })
  expect(res.status, `${op}: ${res.status} ${await res.clone().text()}`).toBeLessThan(300)
  return res.json()
}

/** A REST operation of the service as the emulator's own user, which must succeed. */
export const rpc = (handle: EmulatorHandle, op: string, body: Record<string, unknown>): Promise<any> => rpcAs(handle, handle, op, body)

export const freePort = () =>
  new Promise<number>((resolve) => {
    const s = net.createServer()
    s.listen(0, "127.0.0.1", () => {
      const port = (s.address() as net.AddressInfo).port
      s.close(() => resolve(port))
    })
  })

/**
 * Waits until a condition of the test's own state (the emulator's tables, files, output)
 * holds, polling. No deadline of its own: a busy machine only makes the wait longer, and the
 * test's timeout ends a wait for what never comes, stopping the polling; `what` names the
 * wait in the log of a test cut short while waiting.
 */
export const until = (condition: () => boolean, what = "condition") =>
  Effect.promise(async (signal) => {
    while (!condition() && !signal.aborted) await new Promise((r) => setTimeout(r, 10))
  }).pipe(Effect.onInterrupt(() => Effect.logError(`stopped while waiting for ${what}`)))

export interface MirrorChild {
  readonly child: ChildProcess
  readonly stdout: () => string
  readonly stderr: () => string
  /** The `--json` lines printed so far. */
  readonly events: () => Array<{ event: string; recordId: string | null; applied: boolean; queued?: boolean }>
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>
}

/** Starts `worksync mirror --json` of one workspace; resolves once it listens. */
export const startMirror = async (handle: EmulatorHandle, snapshot: string, port: number, ws: string): Promise<MirrorChild> => {
  const child = spawn(process.execPath, [
    BIN,
    "mirror",
    "--snapshot",
    snapshot,
    "--listen",
    `127.0.0.1:${port}`,
    "--public-url",
    `http://127.0.0.1:${port}/hooks`,
    "--workspace",
    ws,
    "--json"
  ], { env: { ...process.env, ...mirrorEnv(handle) }, stdio: ["ignore", "pipe", "pipe"] })
  let stdout = ""
  let stderr = ""
  let listens = () => {}
  const listening = new Promise<void>((resolve) => (listens = resolve))
  child.stdout!.setEncoding("utf8").on("data", (d: string) => (stdout += d))
  child.stderr!.setEncoding("utf8").on("data", (d: string) => {
    stderr += d
    if (stderr.includes("listening on")) listens()
  })
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on("exit", (code, signal) => resolve({ code, signal }))
  )
  // Waits on the line itself (or the exit of a mirror that fails to start), no deadline.
  await Promise.race([listening, exited])
  expect(child.exitCode, stderr).toBeNull()
  const events = () => stdout.split("\n").filter((l) => l.trim() !== "").map((l) => JSON.parse(l))
  return { child, stdout: () => stdout, stderr: () => stderr, events, exited }
}
