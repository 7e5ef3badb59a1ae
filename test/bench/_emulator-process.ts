/**
 * The emulator in its own process (`worksync emulator`, from the sources), for the benches
 * that measure a client: one process per side, as in real use, so the emulator's work
 * neither competes with the client's event loop nor counts in its peak RSS.
 */
import { spawn } from "node:child_process"
import { createInterface } from "node:readline"

/** The connection the emulator prints as its first line, and how to stop it. */
export interface EmulatorProcess {
  readonly restUrl: string
  readonly baseUrl: string
  readonly token: string
  readonly tokenId: string
  readonly tokenSecret: string
  readonly org: string
  readonly workspaces: ReadonlyArray<string>
  /** SIGTERM; resolves once the process has exited. */
  readonly stop: () => Promise<void>
}

/** Starts `worksync emulator --port 0 ARGS...`; resolves once it listens. */
export const spawnEmulator = (args: ReadonlyArray<string>): Promise<EmulatorProcess> =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", "src/cli/main.ts", "emulator", "--port", "0", ...args], {
      stdio: ["ignore", "pipe", "inherit"]
    })
    const exited = new Promise<void>((r) => child.once("exit", () => r()))
    createInterface({ input: child.stdout! }).once("line", (line) => {
      resolve({
        ...(JSON.parse(line) as Omit<EmulatorProcess, "stop">),
        stop: () => {
          child.kill("SIGTERM")
          return exited
        }
      })
    })
    child.once("exit", (code) => reject(new Error(`emulator exited ${code}`)))
  })
