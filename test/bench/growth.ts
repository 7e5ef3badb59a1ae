/**
 * Benchmark: how each command's cost grows with the work. For each size (records in one
 * workspace of the emulator), every command runs as its own process (bin/worksync.js, under
 * /usr/bin/time for its peak RSS) against an emulator answering from this process, and one
 * table row gives: command, size, wall time, time per item, peak RSS of the command, and
 * requests per item as the emulator counted them. The emulator's own memory is not in the
 * figures. Prints the table (and, with `out=FILE`, writes it as markdown); asserts nothing.
 *
 * Per size, in this order, on one snapshot and one source workspace:
 *   backup (first), backup (incremental, after 1% of the records changed), diff,
 *   export ndjson, export csv, restore in place (1% deleted at the source first),
 *   restore --delete-missing in place, restore into a new workspace (every record
 *   created, in list order), migrate (into another organization), import-csv
 *   (generic mapping, one row per record), its delta pass (the same file with 1% of the
 *   titles changed, into the same journal) and import-csv --preset jira (a Jira export of
 *   the same size), prune (keeps the newest run), verify (integrity), copy-files (a
 *   directory of one small file for every ten records into a workspace), and the mirror's
 *   catch-up (started after 10% of the records changed: from its start to the end of the
 *   reconciling backup, when it says it mirrors; then stopped with SIGTERM).
 * Not here: verify --rehearse (bench verify-rehearse), the mirror's rate of applied
 * deliveries (bench mirror).
 *
 *   npm run bench -- growth                            (sizes 10000,100000)
 *   node --import tsx test/bench/growth.ts sizes=10000,100000,1000000 out=growth-run.md
 *   node --import tsx test/bench/growth.ts sizes=2000 only=backup,diff   (a quick look)
 *   node --import tsx test/bench/growth.ts sizes=10000 only=backup memory=1 node=--max-semi-space-size=4
 *
 * `node=FLAGS` adds to the commands' NODE_OPTIONS (not this process's); `memory=1` preloads
 * _memory-peak.cjs into each command, which prints the parts of its memory at its peak RSS.
 * `gc=1` (with `memory=1`) has V8 trace each collection of the commands; `stdout=FILE` appends each
 * command's standard output (where the trace goes) to FILE.
 * `out=FILE` appends the run's header at its start and each row as it is measured, so a run
 * of hours that is cut short keeps what it measured.
 *
 * Each value may also come from the environment (GROWTH_SIZES=..., GROWTH_ONLY=...).
 */
import { spawn, spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as net from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import { type EmulatorHandle, startEmulator } from "../../src/emulator/index.ts"
import { cleanEnv, connectionEnv } from "../support/cli.ts"
import { renameTitles, writeImportCsv } from "./_import-csv.ts"

const argv = new Map(
  process.argv.slice(2).flatMap((a) => {
    const m = /^([a-z]+)=(.*)$/.exec(a)
    return m === null ? [] : [[m[1]!, m[2]!] as const]
  })
)
const setting = (name: string): string | undefined => argv.get(name) ?? process.env[`GROWTH_${name.toUpperCase()}`]
const SIZES = (setting("sizes") ?? "10000,100000").split(",").map((s) => {
  const n = Number(s)
  if (!Number.isInteger(n) || n < 100) throw new Error(`sizes: expected whole numbers of at least 100, got ${s}`)
  return n
})
const ONLY = setting("only")?.split(",")
const OUT = setting("out")
const STDOUT = setting("stdout")
const NODE_FLAGS = [
  ...(setting("memory") === "1" ? [`--require=${new URL("./_memory-peak.cjs", import.meta.url).pathname}`] : []),
  ...(setting("node") === undefined ? [] : [setting("node")!])
].join(" ")

const BIN = new URL("../../bin/worksync.js", import.meta.url).pathname
const TIME_BIN = fs.existsSync("/usr/bin/time") ? "/usr/bin/time" : null

interface Row {
  readonly command: string
  readonly size: number
  readonly items: number
  readonly wallMs: number
  readonly rssMb: number | null
  readonly cpuS: number | null
  readonly requests: number
}

interface Account {
  readonly org: string
  readonly token: string
  readonly tokenId: string
  readonly tokenSecret: string
}

/**
 * Sends SIGTERM to the command: to the process /usr/bin/time runs (which waits for it and
 * then prints its figures; it would die of the signal itself), else to the child.
 */
const stop = (pid: number): void => {
  const children = TIME_BIN === null ? "" : fs.readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").trim()
  for (const p of children === "" ? [pid] : children.split(/\s+/).map(Number)) process.kill(p, "SIGTERM")
}

/**
 * Runs the CLI as a child; the emulator answers from this process's event loop meanwhile.
 * `until`: a command that runs until stopped (the mirror) is measured to the first stderr
 * line matching it, then sent SIGTERM.
 */
const runCli = (emu: EmulatorHandle, args: ReadonlyArray<string>, env: Record<string, string>, cwd: string, until?: RegExp) =>
  new Promise<{ wallMs: number; rssMb: number | null; cpuS: number | null; requests: number }>((resolve, reject) => {
    const before = emu.stats().total
    const argvAll = [BIN, ...args]
    const base = cleanEnv()
    const nodeOptions = [base.NODE_OPTIONS, NODE_FLAGS].filter((o) => o !== undefined && o !== "").join(" ")
    const childEnv = {
      ...base,
      ...env,
      ...(nodeOptions === "" ? {} : { NODE_OPTIONS: nodeOptions }),
      ...(setting("gc") === "1" ? { GROWTH_TRACE_GC: "1" } : {})
    }
    if (STDOUT !== undefined) fs.appendFileSync(STDOUT, `== ${args.join(" ")}\n`)
    const out = STDOUT === undefined ? "ignore" : fs.openSync(STDOUT, "a")
    const child = TIME_BIN === null
      ? spawn(process.execPath, argvAll, { env: childEnv, cwd, stdio: ["ignore", out, "pipe"] })
      : spawn(TIME_BIN, ["-f", "maxrss_kb=%M cpu_s=%U+%S", process.execPath, ...argvAll], { env: childEnv, cwd, stdio: ["ignore", out, "pipe"] })
    if (typeof out === "number") fs.closeSync(out)
    let stderr = ""
    let reachedMs: number | undefined
    child.stderr!.setEncoding("utf8").on("data", (d: string) => {
      stderr += d
      if (until !== undefined && reachedMs === undefined && until.test(stderr)) {
        reachedMs = performance.now() - t0
        stop(child.pid!)
      }
      if (stderr.length > 1 << 20) stderr = stderr.slice(-(1 << 16))
    })
    const t0 = performance.now()
    child.on("error", reject)
    child.on("close", (code) => {
      const wallMs = reachedMs ?? performance.now() - t0
      const rss = /maxrss_kb=(\d+)/.exec(stderr)
      for (const line of stderr.split("\n")) {
        if (/^(memory_peak|memory_highest|memory_live|cpu_s=|maxrss_kb=)/.test(line)) process.stderr.write(`  ${args[0]}: ${line}\n`)
      }
      // Exit 2 is "finished, with items reported" (an import's rejected rows): still a run.
      if (code !== 0 && code !== 2) {
        reject(new Error(`worksync ${args[0]} exited ${code}:\n${stderr.slice(-4000)}`))
        return
      }
      const cpu = /cpu_s=([\d.]+)\+([\d.]+)/.exec(stderr)
      resolve({
        wallMs,
        rssMb: rss === null ? null : Number(rss[1]) / 1024,
        cpuS: cpu === null ? null : Number(cpu[1]) + Number(cpu[2]),
        requests: emu.stats().total - before
      })
    })
  })

/** A Jira CSV export of `rows` issues: the columns the preset reads, as Jira writes them. */
const writeJiraCsv = (file: string, rows: number): void => {
  const fd = fs.openSync(file, "w")
  fs.writeSync(fd, "Summary,Issue key,Issue id,Issue Type,Status,Priority,Resolution,Created,Updated,Due date,Labels,Labels,Description\n")
  let buf = ""
  for (let i = 0; i < rows; i++) {
    const done = i % 3 === 0
    buf += `Issue ${i},GRW-${i + 1},${10000 + i},${i % 2 ? "Task" : "Bug"},${done ? "Done" : "To Do"},Medium,${done ? "Done" : ""},` +
      `12/Jan/24 9:${String(i % 60).padStart(2, "0")} AM,13/Jan/24 10:00 AM,${i % 5 ? "" : "20/Feb/24"},growth,${i % 2 ? "backend" : ""},"Description of issue ${i}, with a comma"\n`
    if (buf.length > 1 << 20) {
      fs.writeSync(fd, buf)
      buf = ""
    }
  }
  fs.writeSync(fd, buf)
  fs.closeSync(fd)
}

const wanted = (command: string) => ONLY === undefined || ONLY.some((o) => command.startsWith(o))

/** `count` files of 1 KB, each its own bytes, in `dir`. */
const writeSmallFiles = (dir: string, count: number): void => {
  fs.mkdirSync(dir, { recursive: true })
  for (let i = 0; i < count; i++) {
    const bytes = Buffer.alloc(1024, i % 251)
    bytes.writeUInt32BE(i, 0)
    fs.writeFileSync(path.join(dir, `file-${String(i).padStart(6, "0")}.txt`), bytes)
  }
}

const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const server = net.createServer()
    server.on("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const port = (server.address() as net.AddressInfo).port
      server.close(() => resolve(port))
    })
  })

const measureSize = async (size: number, onRow: (row: Row) => void): Promise<Array<Row>> => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "ws-bench-growth-"))
  const rows: Array<Row> = []
  process.stderr.write(`seeding ${size} records\n`)
  const emu = await startEmulator({ seed: `1x${size}` })
  try {
    const ws = emu.workspaces[0]!
    const source = connectionEnv(emu, { app: true })
    const org = emu.admin.createOrganization({ name: "Target", slug: "growth-target" })
    const owner = emu.admin.createUser({ email: "owner@target.example", firstName: "Tara", lastName: "Owner", orgLevel: "OWNER", orgId: org })
    const target: Account = { org, token: owner.token, tokenId: owner.tokenId, tokenSecret: owner.tokenSecret }
    const targetAsSource: Record<string, string> = {
      ...source,
      WORKSYNC_ORG: target.org,
      WORKSYNC_TOKEN: target.token,
      WORKSYNC_TOKEN_ID: target.tokenId,
      WORKSYNC_TOKEN_SECRET: target.tokenSecret
    }
    const targetEnv: Record<string, string> = {
      WORKSYNC_TARGET_ORG: target.org,
      WORKSYNC_TARGET_TOKEN: target.token,
      WORKSYNC_TARGET_TOKEN_ID: target.tokenId,
      WORKSYNC_TARGET_TOKEN_SECRET: target.tokenSecret
    }
    const snapshot = path.join(dir, "snapshot.sqlite")
    const step = async (command: string, items: number, args: ReadonlyArray<string>, env: Record<string, string> = source, until?: RegExp) => {
      if (!wanted(command)) return
      process.stderr.write(`${size}: ${command}\n`)
      const r = await runCli(emu, args, env, dir, until)
      const row = { command, size, items, ...r }
      rows.push(row)
      onRow(row)
    }
    const onePercent = Math.max(1, Math.floor(size / 100))

    await step("backup (first)", size, ["backup", "--snapshot", snapshot, "--workspace", ws])
    emu.admin.touchRecords(onePercent, ws)
    await step("backup (incremental, 1% changed)", size, ["backup", "--snapshot", snapshot, "--workspace", ws])
    await step("diff", size, ["diff", "--snapshot", snapshot, "--json"])
    await step("export ndjson", size, ["export", "--snapshot", snapshot, "--out", path.join(dir, "ndjson"), "--format", "ndjson"])
    await step("export csv", size, ["export", "--snapshot", snapshot, "--out", path.join(dir, "csv"), "--format", "csv"])
    emu.admin.deleteRecords(onePercent, ws)
    await step("restore in place (1% deleted)", size, ["restore", "--snapshot", snapshot, "--to", `workspace:${ws}`, "--journal", path.join(dir, "restore.sqlite")])
    await step("restore --delete-missing", size, [
      "restore", "--snapshot", snapshot, "--to", `workspace:${ws}`, "--journal", path.join(dir, "restore-dm.sqlite"), "--delete-missing"
    ])
    if (wanted("restore (into a new workspace)")) {
      // Every record created, in list order: the replay's creates queue per list.
      const fresh = emu.admin.createWorkspace({ name: "Restored" }).id
      await step("restore (into a new workspace)", size, [
        "restore", "--snapshot", snapshot, "--to", `workspace:${fresh}`, "--journal", path.join(dir, "restore-new.sqlite")
      ])
    }
    if (wanted("migrate")) {
      const to = emu.admin.createWorkspace({ name: "Migrated", orgId: target.org }).id
      await step("migrate", size, [
        "migrate", "--from", `workspace:${ws}`, "--to", `workspace:${to}`, "--journal", path.join(dir, "migrate.sqlite"), "--people", "skip"
      ], { ...source, ...targetEnv })
    }
    // Each import on its own: `only=import-csv --preset` (or `only=import-csv (generic)`) runs one of them.
    if (wanted("import-csv (generic)") || wanted("import-csv (delta pass")) {
      const csv = path.join(dir, "generic.csv")
      writeImportCsv(csv, size)
      const into = emu.admin.createWorkspace({ name: "Imported", orgId: target.org }).id
      const importArgs = [
        "import-csv", "--workspace", into, "--csv", csv, "--journal", path.join(dir, "import.sqlite"),
        "--map", "key=key", "--map", "title=title", "--map", "description=description", "--map", "list=list",
        "--map", "duedAt=duedAt", "--map", "done=done", "--map", "tags=tags"
      ]
      // The delta pass needs the first import done: run unmeasured when only the pass is wanted.
      if (wanted("import-csv (generic)")) await step("import-csv (generic)", size, importArgs, targetAsSource)
      else await runCli(emu, importArgs, targetAsSource, dir)
      // The same export again with 1% of the titles changed, into the same journal: every
      // row compared with what the first pass wrote, the changed ones updated.
      if (wanted("import-csv (delta pass")) renameTitles(csv, 0.01)
      await step("import-csv (delta pass, 1% changed)", size, importArgs, targetAsSource)
    }
    if (wanted("import-csv --preset jira")) {
      const jira = path.join(dir, "jira.csv")
      writeJiraCsv(jira, size)
      const intoJira = emu.admin.createWorkspace({ name: "From Jira", orgId: target.org }).id
      await step("import-csv --preset jira", size, [
        "import-csv", "--workspace", intoJira, "--csv", jira, "--journal", path.join(dir, "import-jira.sqlite"), "--preset", "jira"
      ], targetAsSource)
    }
    await step("prune (keep the newest run)", size, ["prune", "--snapshot", snapshot, "--keep-last", "1"])
    await step("verify", size, ["verify", "--snapshot", snapshot])
    if (wanted("copy-files")) {
      const files = Math.max(1, Math.floor(size / 10))
      const from = path.join(dir, "files")
      writeSmallFiles(from, files)
      const into = emu.admin.createWorkspace({ name: "Files" }).id
      await step("copy-files (1 KB files)", files, [
        "copy-files", "--from", `dir:${from}`, "--to", `workspace:${into}`, "--journal", path.join(dir, "copy.sqlite")
      ])
    }
    if (wanted("mirror")) {
      emu.admin.touchRecords(Math.max(1, Math.floor(size / 10)), ws)
      const port = await freePort()
      await step("mirror (catch-up, 10% changed)", size, [
        "mirror", "--snapshot", snapshot, "--listen", `127.0.0.1:${port}`, "--public-url", `http://127.0.0.1:${port}/hooks`, "--workspace", ws
      ], source, /mirroring into run/)
    }
  } finally {
    await emu.close()
    fs.rmSync(dir, { recursive: true, force: true })
  }
  return rows
}

const pad = (s: string, n: number) => s.padEnd(n)
const TABLE_HEAD = "| command | size | items | wall s | CPU s | µs per item | peak RSS MB | requests per item |\n|---|---:|---:|---:|---:|---:|---:|---:|\n"
const tableRow = (r: Row): string =>
  `| ${pad(r.command, 34)} | ${r.size} | ${r.items} | ${(r.wallMs / 1000).toFixed(1)} | ${r.cpuS === null ? "-" : r.cpuS.toFixed(1)} | ` +
  `${((r.wallMs * 1000) / r.items).toFixed(0)} | ` +
  `${r.rssMb === null ? "-" : r.rssMb.toFixed(0)} | ${(r.requests / r.items).toFixed(2)} |`
const table = (rows: ReadonlyArray<Row>): string => TABLE_HEAD + rows.map(tableRow).join("\n") + "\n"

const commit = spawnSync("git", ["rev-parse", "--short", "HEAD"], { encoding: "utf8" }).stdout?.trim() || "unknown commit"
const header = `Measured ${new Date().toISOString().slice(0, 10)} on ${os.cpus().length} cores (${os.cpus()[0]?.model ?? "unknown cpu"}), ` +
  `Node ${process.version}, ${commit}, sizes ${SIZES.join(", ")}${ONLY === undefined ? "" : `, only ${ONLY.join(",")}`}; ` +
  `load average ${os.loadavg()[0]!.toFixed(1)} at the start.\n\n`
if (OUT !== undefined) fs.appendFileSync(OUT, `\n${header}${TABLE_HEAD}`)
const all: Array<Row> = []
for (const size of SIZES) {
  all.push(...(await measureSize(size, (row) => {
    if (OUT !== undefined) fs.appendFileSync(OUT, `${tableRow(row)}\n`)
  })))
  process.stdout.write(table(all.filter((r) => r.size === size)))
}
process.stdout.write(`\n${header}${table(all)}`)
