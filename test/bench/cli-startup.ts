/**
 * How long `worksync --help` takes to start: cron starts the CLI often.
 * Prints the median and the best of several runs of the bundled CLI.
 */
import { spawnSync } from "node:child_process"

const runs = 15
const times: Array<number> = []
for (let i = 0; i < runs; i++) {
  const started = process.hrtime.bigint()
  const r = spawnSync(process.execPath, ["bin/worksync.js", "--help"], { encoding: "utf8" })
  const ms = Number(process.hrtime.bigint() - started) / 1e6
  if (r.status !== 0) throw new Error(`worksync --help exited ${r.status}`)
  times.push(ms)
}
times.sort((a, b) => a - b)
const median = times[Math.floor(times.length / 2)]!
console.log(`worksync --help: median ${median.toFixed(0)} ms, best ${times[0]!.toFixed(0)} ms over ${runs} runs (target <= 150 ms)`)
