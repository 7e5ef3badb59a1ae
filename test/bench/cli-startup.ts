/**
 * How long `worksync --help` takes to start: cron starts the CLI often.
 * Prints the median and the best of several runs of the bundled CLI, and (on Linux) the
 * CPU time per run, which a loaded machine inflates far less than the wall time; a bare
 * `node -e 0` is measured the same way for scale.
 */
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"

const runs = 15

/** CPU seconds (user + system) of the waited-for children so far, from /proc; undefined elsewhere. */
const childCpu = (): number | undefined => {
  try {
    const stat = fs.readFileSync("/proc/self/stat", "utf8")
    // Fields after the command name (which may hold spaces): cutime and cstime are the 16th and 17th.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
    return (Number(fields[13]) + Number(fields[14])) / 100
  } catch {
    return undefined
  }
}

const measure = (args: ReadonlyArray<string>) => {
  const times: Array<number> = []
  const cpuBefore = childCpu()
  for (let i = 0; i < runs; i++) {
    const started = process.hrtime.bigint()
    const r = spawnSync(process.execPath, args, { encoding: "utf8" })
    const ms = Number(process.hrtime.bigint() - started) / 1e6
    if (r.status !== 0) throw new Error(`${args.join(" ")} exited ${r.status}: ${r.stderr}`)
    times.push(ms)
  }
  const cpuAfter = childCpu()
  times.sort((a, b) => a - b)
  const cpuMs = cpuBefore === undefined || cpuAfter === undefined ? undefined : ((cpuAfter - cpuBefore) * 1000) / runs
  return { median: times[Math.floor(times.length / 2)]!, best: times[0]!, cpuMs }
}

const cpuText = (cpuMs: number | undefined) => (cpuMs === undefined ? "" : `, CPU ${cpuMs.toFixed(0)} ms/run`)
const node = measure(["-e", "0"])
const help = measure(["bin/worksync.js", "--help"])
console.log(
  `worksync --help: median ${help.median.toFixed(0)} ms, best ${help.best.toFixed(0)} ms${cpuText(help.cpuMs)} over ${runs} runs (target <= 150 ms)`
)
console.log(`node -e 0:       median ${node.median.toFixed(0)} ms, best ${node.best.toFixed(0)} ms${cpuText(node.cpuMs)} (for scale)`)
