/**
 * Benchmark: `worksync undo` of an import-csv that created RECORDS records (default
 * 10,000): each record is read (get-record: has it changed since?), deleted, and read
 * back. Prints the undo's wall time, records per second and the undo process's peak RSS;
 * asserts nothing.
 *
 * The emulator runs in a process of its own (on a database file), the import and the
 * undo as the CLI, each in its own process, with the default connection settings (the
 * adaptive limiter, 8 ops at once). The import is the setup; only the undo is timed.
 *
 *   RECORDS=10000 npm run bench -- undo
 */
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { type EmulatorProcess, spawnEmulator } from "./_emulator-process.ts"

const RECORDS = Number(process.env.RECORDS ?? 10_000)
const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`

/** Runs the CLI from the sources; its wall time, peak RSS (through /usr/bin/time when present) and output. */
const cli = (args: ReadonlyArray<string>, env: Record<string, string>) => {
  const timed = fs.existsSync("/usr/bin/time")
  const command = timed ? "/usr/bin/time" : process.execPath
  const full = [...(timed ? ["-f", "maxrss-kb %M", process.execPath] : []), "--import", "tsx", "src/cli/main.ts", ...args]
  const started = performance.now()
  const r = spawnSync(command, full, { env: { ...process.env, ...env }, encoding: "utf8", maxBuffer: 64 << 20 })
  const ms = performance.now() - started
  const rss = /maxrss-kb (\d+)/.exec(r.stderr ?? "")
  return { ms, status: r.status, stdout: r.stdout, stderr: r.stderr, maxRssMb: rss ? Math.round(Number(rss[1]) / 1024) : undefined }
}

console.log(`machine: ${os.cpus().length} CPUs, load average ${os.loadavg().map((l) => l.toFixed(1)).join(" ")} at the start`)
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "ws-bench-undo-"))
const emu = await spawnEmulator(["--db", path.join(dir, "emulator.sqlite")])
try {
  const env = { WORKSYNC_REST_URL: emu.restUrl, WORKSYNC_BASE_URL: emu.baseUrl, WORKSYNC_TOKEN: emu.token, WORKSYNC_ORG: emu.org }
  const listed = await fetch(`${emu.restUrl}/v1/list-workspaces`, {
    method: "POST",
    headers: { authorization: `Bearer ${emu.token}`, "content-type": "application/json", "svc-org-id": emu.org },
    body: "{}"
  })
  const workspace = ((await listed.json()) as { items: Array<{ id: string }> }).items[0]!.id
  const csv = path.join(dir, "in.csv")
  const lines = ["key,title,description,list,due,done"]
  for (let i = 0; i < RECORDS; i++) lines.push(`${i},Undo bench ${i},"line one, and a comma",${i % 2 ? "Backlog" : "Doing"},2026-0${1 + (i % 9)}-1${i % 10},${i % 3 ? "no" : "yes"}`)
  fs.writeFileSync(csv, lines.join("\n") + "\n")
  const journal = path.join(dir, "journal.sqlite")
  const imported = cli(["import-csv", "--workspace", workspace, "--csv", csv, "--journal", journal, "--json", "--quiet"], env)
  if (imported.status !== 0) throw new Error(`import-csv exited ${imported.status}: ${imported.stderr}`)
  console.log(`setup: import-csv of ${RECORDS} rows in ${seconds(imported.ms)}: ${imported.stdout.trim()}`)

  const undone = cli(["undo", "--journal", journal, "--json", "--quiet"], env)
  if (undone.status !== 0) throw new Error(`undo exited ${undone.status}: ${undone.stderr}`)
  const out = JSON.parse(undone.stdout) as { deleted: number; reverted: number; kept: Array<unknown>; failed: number }
  console.log(
    `undo of ${RECORDS} created records: ${seconds(undone.ms)} (${Math.round(out.deleted / (undone.ms / 1000))} records/s, ` +
      `3 requests each: get-record, delete-record, get-record)${undone.maxRssMb !== undefined ? `, peak RSS ${undone.maxRssMb} MB` : ""}`
  )
  console.log(`  deleted ${out.deleted}, reverted ${out.reverted}, kept ${out.kept.length}, failed ${out.failed}`)
  const again = cli(["undo", "--journal", journal, "--json", "--quiet"], env)
  console.log(`a rerun of the finished undo (sends nothing): ${seconds(again.ms)}`)
} finally {
  await emu.stop()
  fs.rmSync(dir, { recursive: true, force: true })
}
