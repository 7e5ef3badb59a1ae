/**
 * SIGKILL while a large file is being planned on two threads (plan-writer.ts), several
 * times, then a rerun: the journal holds every row's op exactly once, in file order, as
 * planning on one thread without interruption leaves it. Nothing planned is lost and
 * nothing is planned twice.
 */
import Database from "better-sqlite3"
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import type { ImportOptions } from "../../src/connectors/csv/options.ts"
import type { EmulatorHandle } from "../../src/emulator/index.ts"
import { emulatorEnv } from "../pipelines/helpers.ts"
import { Emulator, emulatorLayer, tempDir } from "../support/effect.ts"
import { journalOps } from "../store/journal-ops.ts"
import { planInto } from "./csv-plan-helpers.ts"


const ROOT = new URL("../..", import.meta.url).pathname

const countOps = (journalFile: string): number => {
  if (!fs.existsSync(journalFile)) return 0
  const db = new Database(journalFile, { readonly: true })
  try {
    return (db.prepare("SELECT COUNT(*) AS n FROM ops").get() as { n: number }).n
  } finally {
    db.close()
  }
}

/** Starts the planning child; resolves once it reads rows, with a promise of its end. */
const startChild = (handle: EmulatorHandle, args: ReadonlyArray<string>) =>
  new Promise<{ kill: () => void; ended: Promise<{ signal: NodeJS.Signals | null; stdout: string; stderr: string }> }>((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", `file://${ROOT}node_modules/tsx/dist/loader.mjs`, `${ROOT}test/support/plan-child.ts`, ...args], {
      env: { ...process.env, ...emulatorEnv(handle) },
      stdio: ["ignore", "pipe", "pipe"]
    })
    let stdout = ""
    let stderr = ""
    const ended = new Promise<{ signal: NodeJS.Signals | null; stdout: string; stderr: string }>((res) =>
      child.once("close", (_code, signal) => res({ signal, stdout, stderr }))
    )
    child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d))
    child.stdout.setEncoding("utf8").on("data", (d: string) => {
      stdout += d
      if (stdout.includes("reading")) resolve({ kill: () => child.kill("SIGKILL"), ended })
    })
    child.once("error", reject)
    void ended.then(() => {
      if (!stdout.includes("reading")) reject(new Error(`the planning child ended before reading: ${stderr}`))
    })
  })

// The planning children and the kills run in real time against a real emulator: the
// layer's tests run on the live clock (`excludeTestServices`), never a TestClock.
layer(emulatorLayer({ seed: "empty" }), { timeout: 30_000, excludeTestServices: true })("import-csv planning on two threads, killed", (it) => {
  it.effect("SIGKILL at random points of a threaded plan, then a rerun: every row's op once, in file order, as one uninterrupted thread plans it", () =>
    Effect.gen(function*() {
      const handle = yield* Emulator
      const ws = handle.admin.createWorkspace({ name: "plan-thread-kill" }).id
      const dir = yield* tempDir("ws-plan-thread-kill-")
      const csv = path.join(dir, "big.csv")
      // 200,000 rows (about 9 MB): keys with a repeat every 997 rows (rejected), two lists.
      const rows = Array.from({ length: 200_000 }, (_, i) => `${i % 997 === 996 ? i - 500 : i},Row ${i},${i % 2 ? "A" : "B"},2024-05-0${1 + (i % 9)}`)
      fs.writeFileSync(csv, ["key,title,list,duedAt", ...rows].join("\n") + "\n")
      const journal = path.join(dir, "journal.sqlite")

      let seed = 7
      const random = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31)
      const opsAtKill: Array<number> = []
      for (let i = 0; i < 4; i++) {
        const child = yield* Effect.promise(() => startChild(handle, [journal, csv, ws]))
        // The kill lands by progress, not by the clock: once the journal holds a random
        // number more ops than before this run (a loaded machine only makes it later).
        const target = countOps(journal) + 1 + Math.floor(random() * 60_000)
        const watch = setInterval(() => {
          try {
            if (countOps(journal) >= target) child.kill()
          } catch {
            // the journal's tables are not there yet
          }
        }, 5)
        const end = yield* Effect.promise(() => child.ended)
        clearInterval(watch)
        if (end.signal !== "SIGKILL") {
          expect(end.stdout).toContain("planned")
          break
        }
        opsAtKill.push(countOps(journal))
      }
      const options = (file: string, planThread: boolean): ImportOptions => ({
        workspaceId: ws,
        csv: { file },
        mapping: { preset: "generic" },
        planThread
      })
      const rerun = yield* planInto(handle, journal, options(csv, true))
      const reference = path.join(dir, "reference.sqlite")
      const once = yield* planInto(handle, reference, options(csv, false))

      // Some kill landed mid-plan: part of the ops in the journal, not all.
      const total = once.plan!.ops["record.create"]! + once.plan!.ops["list.ensure"]!
      expect(opsAtKill.some((n) => n > 0 && n < total)).toBe(true)
      expect(rerun.rows).toBe(200_000)
      expect(rerun.rejected).toBe(once.rejected)
      expect(journalOps(journal)).toEqual(journalOps(reference))
    }), 120_000)
})
