/** Shared by the pipeline tests: an emulator's client layer and running pipeline scripts. */
import * as Cause from "effect/Cause"
import * as Exit from "effect/Exit"
import { spawn } from "node:child_process"
import { clientLayer } from "../../src/client/layer.ts"
import type { EmulatorHandle } from "../../src/emulator/index.ts"

/** The client for the emulator's OWNER; `fast` turns retries off so injected faults fail at once. */
export const emulatorClient = (emu: EmulatorHandle, options: { readonly fast?: boolean } = {}) =>
  clientLayer({
    restUrl: emu.restUrl,
    baseUrl: emu.baseUrl,
    token: emu.token,
    tokenId: emu.tokenId,
    tokenSecret: emu.tokenSecret,
    org: emu.org,
    ...(options.fast === true ? { retry: { maxRetries: 0, baseDelayMs: 1, capDelayMs: 1 } } : {})
  })

/** The error of an exit that failed with one typed error and nothing else; otherwise undefined. */
export const soleError = <E>(exit: Exit.Exit<unknown, E>): E | undefined => {
  if (!Exit.isFailure(exit) || exit.cause.reasons.length !== 1) return undefined
  const reason = exit.cause.reasons[0]!
  return Cause.isFailReason(reason) ? reason.error : undefined
}

export const emulatorEnv = (emu: EmulatorHandle, prefix = "WORKSYNC_"): Record<string, string> => ({
  [`${prefix}REST_URL`]: emu.restUrl,
  [`${prefix}BASE_URL`]: emu.baseUrl,
  [`${prefix}TOKEN`]: emu.token,
  [`${prefix}TOKEN_ID`]: emu.tokenId,
  [`${prefix}TOKEN_SECRET`]: emu.tokenSecret,
  [`${prefix}ORG`]: emu.org
})

const ROOT = new URL("../..", import.meta.url).pathname

/** Runs a TypeScript script of the repository the way its header says (tsx), without WORKSYNC_* from the parent. */
export const runScript = (script: string, args: ReadonlyArray<string>, env: Record<string, string> = {}, cwd = ROOT) =>
  new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
    const clean: NodeJS.ProcessEnv = {}
    for (const [k, v] of Object.entries(process.env)) if (!k.startsWith("WORKSYNC_")) clean[k] = v
    const child = spawn(process.execPath, ["--import", `file://${ROOT}node_modules/tsx/dist/loader.mjs`, `${ROOT}${script}`, ...args], {
      cwd,
      env: { ...clean, ...env },
      stdio: ["ignore", "pipe", "pipe"]
    })
    let stdout = ""
    let stderr = ""
    child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d))
    child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d))
    child.once("error", reject)
    child.once("close", (code) => resolve({ code, stdout, stderr }))
  })
