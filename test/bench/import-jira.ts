/**
 * Benchmark: planning a Jira export with comments and attachments (the jira preset's
 * reader, the census, people resolution, the record's create plus its follow-ups: two
 * comments and one attachment per issue, every fifth issue a sub-task). Prints figures;
 * asserts nothing. Compare with import.ts (a plain CSV, same machine, same run).
 *
 *   npm run bench -- import-jira        (ROWS=50000 for a quicker run)
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

const ROWS = Number(process.env.ROWS ?? 200_000)
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "ws-bench-jira-"))
const csv = path.join(dir, "jira.csv")

const HEADER = "Summary,Issue key,Issue id,Parent id,Issue Type,Status,Priority,Resolution,Assignee,Reporter,Created,Resolved,Due date,Labels,Labels,Description,Sprint,Custom field (Story Points),Attachment,Comment,Comment\n"

const generate = () => {
  const fd = fs.openSync(csv, "w")
  fs.writeSync(fd, `\ufeff${HEADER}`)
  let buf = ""
  for (let i = 0; i < ROWS; i++) {
    const id = 10000 + i
    const parent = i % 5 === 4 ? String(id - 1) : ""
    const done = i % 3 === 0
    buf += `Issue number ${i},WS-${i},${id},${parent},${parent ? "Sub-task" : "Task"},${done ? "Done" : "In Progress"},Medium,${done ? "Fixed" : ""},` +
      `Person ${i % 50},Reporter ${i % 20},05/Nov/25 5:16 PM,${done ? "06/Nov/25 9:00 AM" : ""},24/Jan/26,backend,api,` +
      `"Steps to reproduce ${i};\nthen check.",Sprint ${i % 10},${i % 8},` +
      `05/Nov/25 5:20 PM;Reporter ${i % 20};log-${i}.txt;https://example.atlassian.net/secure/attachment/${id}/log-${i}.txt,` +
      `"05/Nov/25 5:18 PM;Person ${i % 50};First comment on ${i}; with a semicolon",06/Nov/25 9:00 AM;Reporter ${i % 20};Second comment\n`
    if (buf.length > 1 << 20) {
      fs.writeSync(fd, buf)
      buf = ""
    }
  }
  fs.writeSync(fd, buf)
  fs.closeSync(fd)
}

const mb = (n: number) => `${(n / 1024 / 1024).toFixed(0)} MB`

const main = async () => {
  generate()
  console.log(`Jira export: ${ROWS.toLocaleString("en-US")} issues, ${mb(fs.statSync(csv).size)}`)
  const emulator = await startEmulator({ seed: "empty" })
  try {
    const ws = emulator.workspaces[0]!
    let peakRss = 0
    const t0 = performance.now()
    const c0 = process.cpuUsage()
    const result = await Effect.runPromise(
      Effect.gen(function*() {
        return yield* planCsvImport(yield* RestClient, yield* Journal, {
          workspaceId: ws,
          csv: { file: csv },
          mapping: { preset: "jira" },
          onRowsRead: () => Effect.sync(() => void (peakRss = Math.max(peakRss, process.memoryUsage().rss)))
        })
      }).pipe(
        Effect.provide(Journal.layer(path.join(dir, "journal.sqlite"))),
        Effect.provide(clientLayer({ restUrl: emulator.restUrl, baseUrl: emulator.baseUrl, token: emulator.token, org: emulator.org }))
      )
    )
    const s = (performance.now() - t0) / 1000
    const d = process.cpuUsage(c0)
    const ops = Object.values(result.plan?.ops ?? {}).reduce((a, b) => a + b, 0)
    console.log(
      `plan (jira preset): ${Math.round(result.rows / s).toLocaleString("en-US")} issues/s, ${Math.round(ops / s).toLocaleString("en-US")} ops/s ` +
        `(${s.toFixed(1)} s, ${((d.user + d.system) / 1e6).toFixed(1)} s cpu), peak rss ${mb(peakRss)}`
    )
    console.log(`ops ${JSON.stringify(result.plan?.ops)}; census not carried: ${result.census?.notCarried.map((c) => c.column).join(", ")}`)
  } finally {
    await emulator.close()
    fs.rmSync(dir, { recursive: true, force: true })
  }
}

main().catch((e) => {
  console.error(e)
  process.exit(1)
})
