/**
 * One measured plan of import-plan.ts, run in a child process from a bundle of a source
 * tree (this one, or the one compared with): reads the CSV at $CSV, plans it into a fresh
 * journal against an emulator of its own, and prints its figures as one JSON line.
 */
import * as Effect from "effect/Effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { clientLayer } from "../../src/client/layer.ts"
import { RestClient } from "../../src/client/rest-client.ts"
import { planCsvImport } from "../../src/connectors/csv/plan.ts"
import { startEmulator } from "../../src/emulator/index.ts"
import { Journal } from "../../src/store/journal.ts"

export interface PlanFigures {
  readonly rows: number
  readonly wallS: number
  /** CPU seconds of the whole process (user + system, every thread). */
  readonly cpuS: number
  /** CPU seconds of the calling thread alone. */
  readonly mainCpuS: number
  /**
   * CPU seconds of the process's other threads still running at the end (the engine's
   * garbage collector helpers, libuv's pool), on Linux; the rest of `cpuS` is the
   * planning thread's (it has ended by then).
   */
  readonly helpersCpuS?: number
  readonly ops: Readonly<Record<string, number>>
}

const csv = process.env.CSV!
const planThread = process.env.PLAN_THREAD === undefined ? undefined : process.env.PLAN_THREAD !== "0"
const dryRun = process.env.DRY === "1"
const cpuOf = (u: NodeJS.CpuUsage) => (u.user + u.system) / 1e6

/** CPU seconds of each live thread but the calling one (Linux: /proc/self/task), or undefined. */
const otherThreadsCpu = (): number | undefined => {
  try {
    let ticks = 0
    for (const tid of fs.readdirSync("/proc/self/task")) {
      if (Number(tid) === process.pid) continue
      const stat = fs.readFileSync(`/proc/self/task/${tid}/stat`, "utf8")
      // Fields after the command name (which may hold spaces): state is the 3rd field, utime the 14th.
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
      ticks += Number(fields[11]) + Number(fields[12])
    }
    return ticks / 100
  } catch {
    return undefined
  }
}

const main = async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "ws-bench-plan-"))
  const emulator = await startEmulator({ seed: "empty" })
  try {
    const client = clientLayer({ restUrl: emulator.restUrl, baseUrl: emulator.baseUrl, token: emulator.token, org: emulator.org })
    const options = {
      workspaceId: emulator.workspaces[0]!,
      csv: { file: csv },
      mapping: { preset: "generic" as const },
      ...(planThread === undefined ? {} : { planThread }),
      ...(dryRun ? { dryRun: true } : {})
    }
    const t0 = performance.now()
    const c0 = process.cpuUsage()
    const m0 = process.threadCpuUsage()
    const h0 = otherThreadsCpu()
    const result = await Effect.runPromise(
      dryRun
        ? Effect.gen(function*() {
          return yield* planCsvImport(yield* RestClient, { dryRunJournalFile: undefined }, options)
        }).pipe(Effect.provide(client))
        : Effect.gen(function*() {
          return yield* planCsvImport(yield* RestClient, yield* Journal, options)
        }).pipe(Effect.provide(Journal.layer(path.join(dir, "journal.sqlite"))), Effect.provide(client))
    )
    const figures: PlanFigures = {
      rows: result.rows,
      wallS: (performance.now() - t0) / 1000,
      cpuS: cpuOf(process.cpuUsage(c0)),
      mainCpuS: cpuOf(process.threadCpuUsage(m0)),
      ...(h0 === undefined ? {} : { helpersCpuS: otherThreadsCpu()! - h0 }),
      ops: result.plan?.ops ?? {}
    }
    process.stdout.write(`${JSON.stringify(figures)}\n`)
  } finally {
    await emulator.close()
    fs.rmSync(dir, { recursive: true, force: true })
  }
}

main().catch((e) => {
  console.error(e)
  process.exit(1)
})
