/**
 * Another process holding the store lock of a file (test/support/lock-child.ts), for the
 * tests of one writer per journal and per snapshot.
 */
import { type ChildProcess, spawn } from "node:child_process"

const ROOT = new URL("../../", import.meta.url).pathname

/** Resolves once the child says it holds the lock of `file`. */
export const lockHolder = (file: string): Promise<ChildProcess> =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", `file://${ROOT}node_modules/tsx/dist/loader.mjs`, `${ROOT}test/support/lock-child.ts`, file], {
      stdio: ["pipe", "pipe", "inherit"]
    })
    child.stdout!.on("data", (d: Buffer) => {
      if (d.toString().includes("locked")) resolve(child)
    })
    child.once("exit", (code) => reject(new Error(`lock holder exited with ${code} before taking the lock`)))
  })

/** Resolves once the child has exited (at once if it already has). */
export const exited = (child: ChildProcess): Promise<void> =>
  new Promise((resolve) => (child.exitCode !== null || child.signalCode !== null ? resolve() : child.once("exit", () => resolve())))
