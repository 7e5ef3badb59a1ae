#!/usr/bin/env node
// The one-command demo (`npm run demo`): the real CLI, as users run it, against the
// embedded emulator. Starts `worksync emulator --seed demo`, backs up, changes a few
// records, backs up again and diffs, imports a sample CSV, copies a workspace's files to
// a directory and into a second workspace, exports the snapshot, says where everything
// landed, and stops the emulator (also on failure or Ctrl-C).
//
//   node scripts/demo.mjs [--out DIR] [--verbose]
//
// DIR defaults to ./demo-output; it is recreated on each run (only if a previous demo
// made it). Connection settings reach the commands through WORKSYNC_* environment
// variables, so no token is ever on a command line or in this output.
import { spawn, execFileSync } from "node:child_process"
import { createInterface } from "node:readline"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..")
const BIN = path.join(ROOT, "bin", "worksync.js")
const MARKER = ".worksync-demo"
const CSV = path.join(ROOT, "examples", "data", "generic.csv")

const args = process.argv.slice(2)
const argValue = (name) => {
  const i = args.indexOf(name)
  return i >= 0 ? args[i + 1] : undefined
}
const verbose = args.includes("--verbose")
const out = path.resolve(argValue("--out") ?? "demo-output")

const say = (line = "") => process.stdout.write(line + "\n")
const step = (n, text) => say(`\n${n}. ${text}`)
const detail = (text) => say(`   ${text}`)

class DemoFailure extends Error {}

/** A fresh output directory; never wipes a directory the demo did not create. */
const prepareOut = () => {
  if (fs.existsSync(out)) {
    const entries = fs.readdirSync(out)
    if (entries.length > 0 && !entries.includes(MARKER)) {
      throw new DemoFailure(`${out} exists and was not made by the demo; pass --out DIR to choose another directory`)
    }
    fs.rmSync(out, { recursive: true, force: true })
  }
  fs.mkdirSync(out, { recursive: true })
  fs.writeFileSync(path.join(out, MARKER), "made by scripts/demo.mjs; safe to delete\n")
}

/** The bundle `npm install` builds; built here if missing (a clone where prepare was skipped). */
const ensureBuilt = () => {
  if (!fs.existsSync(path.join(ROOT, "dist", "cli.js"))) {
    say("building the CLI bundle (first run)...")
    execFileSync(process.execPath, [path.join(ROOT, "scripts", "build.mjs")], { cwd: ROOT, stdio: "inherit" })
  }
}

let emulator
let connectionEnv = {}

const startEmulator = () =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, "emulator", "--seed", "demo", "--port", "0"], {
      cwd: ROOT,
      stdio: ["ignore", "pipe", "pipe"]
    })
    emulator = child
    let stderr = ""
    child.stderr.setEncoding("utf8").on("data", (d) => (stderr += d))
    const lines = createInterface({ input: child.stdout })
    lines.once("line", (line) => {
      try {
        resolve(JSON.parse(line))
      } catch {
        reject(new DemoFailure(`the emulator printed something unexpected: ${line.slice(0, 200)}`))
      }
    })
    child.once("exit", (code) => reject(new DemoFailure(`the emulator exited (${code}) before listening: ${stderr.trim()}`)))
    child.once("error", reject)
  })

const stopEmulator = async () => {
  const child = emulator
  emulator = undefined
  if (child === undefined || child.exitCode !== null || child.signalCode !== null) return
  const exited = new Promise((resolve) => child.once("exit", resolve))
  child.kill("SIGTERM")
  const timer = setTimeout(() => child.kill("SIGKILL"), 5_000)
  await exited
  clearTimeout(timer)
}

/** Runs `worksync <args>` and returns its --json result; any non-zero exit stops the demo. */
const worksync = (cmdArgs) =>
  new Promise((resolve, reject) => {
    if (verbose) detail(`$ worksync ${cmdArgs.join(" ")}`)
    const child = spawn(process.execPath, [BIN, ...cmdArgs], {
      cwd: ROOT,
      env: { ...process.env, ...connectionEnv },
      stdio: ["ignore", "pipe", "pipe"]
    })
    let stdout = ""
    let stderr = ""
    child.stdout.setEncoding("utf8").on("data", (d) => (stdout += d))
    child.stderr.setEncoding("utf8").on("data", (d) => {
      stderr += d
      if (verbose) process.stderr.write(d.replace(/^/gm, "     "))
    })
    child.once("error", reject)
    child.once("close", (code) => {
      if (code !== 0) {
        const last = stderr.trim().split("\n").filter((l) => l.startsWith("worksync:")).pop() ?? stderr.trim().split("\n").pop()
        return reject(new DemoFailure(`worksync ${cmdArgs[0]} exited ${code}: ${last ?? "(no message)"}`))
      }
      try {
        resolve(stdout.trim() === "" ? undefined : JSON.parse(stdout.trim().split("\n").pop()))
      } catch {
        reject(new DemoFailure(`worksync ${cmdArgs[0]} printed something that is not JSON: ${stdout.slice(0, 200)}`))
      }
    })
  })

/** One REST call to the emulator, the way any client of the service makes it. */
const rest = async (info, operation, body) => {
  const response = await fetch(`${info.restUrl}/v1/${operation}`, {
    method: "POST",
    headers: {
      authorization: `Bearer ${info.token}`,
      "svc-org-id": info.org,
      "content-type": "application/json"
    },
    body: JSON.stringify(body)
  })
  const json = await response.json()
  if (!response.ok) throw new DemoFailure(`${operation} answered HTTP ${response.status}: ${JSON.stringify(json.error ?? json)}`)
  return json
}

const plural = (n, one, many = `${one}s`) => `${n} ${n === 1 ? one : many}`
const rel = (p) => {
  const r = path.relative(process.cwd(), p)
  return r === "" ? "." : r.startsWith("..") ? p : r
}

const main = async () => {
  const started = Date.now()
  say("worksync demo: the real CLI against the embedded emulator")
  ensureBuilt()
  prepareOut()
  const snapshot = path.join(out, "snapshot.sqlite")
  const filesDir = path.join(out, "files")
  const exportDir = path.join(out, "export")

  step(1, "Starting the emulator (worksync emulator --seed demo --port 0)")
  const info = await startEmulator()
  connectionEnv = {
    WORKSYNC_REST_URL: info.restUrl,
    WORKSYNC_BASE_URL: info.baseUrl,
    WORKSYNC_TOKEN: info.token,
    WORKSYNC_TOKEN_ID: info.tokenId,
    WORKSYNC_TOKEN_SECRET: info.tokenSecret,
    WORKSYNC_ORG: info.org
  }
  const [website, mobile] = info.workspaces
  detail(`listening at ${info.baseUrl} (REST ${info.restUrl}); organization ${info.org}, ${plural(info.workspaces.length, "workspace")}`)

  step(2, "First backup into a SQLite snapshot (worksync backup)")
  const first = await worksync(["backup", "--snapshot", snapshot, "--json", "--quiet"])
  detail(
    `run ${first.runId}: ${plural(first.workspaces, "workspace")}, ${plural(first.records, "record")}, ` +
      `${plural(first.activities, "activity item")}, ${plural(first.files, "file")}`
  )

  step(3, "Changing a few records through the service's REST interface")
  const page = await rest(info, "list-records", { workspaceId: website, limit: 3 })
  const [renamed, completed, removed] = page.items
  await rest(info, "update-record", { workspaceId: website, recordId: renamed.id, title: `${renamed.title} (renamed by the demo)` })
  detail(`renamed  ${renamed.id} "${renamed.title}"`)
  await rest(info, "update-record", { workspaceId: website, recordId: completed.id, done: !completed.done })
  detail(`marked   ${completed.id} "${completed.title}" ${completed.done ? "not done" : "done"}`)
  await rest(info, "delete-record", { workspaceId: website, recordId: removed.id })
  detail(`deleted  ${removed.id} "${removed.title}"`)
  const created = await rest(info, "create-record", { workspaceId: website, title: "Record created by the demo" })
  detail(`created  ${created.id} "${created.title}"`)

  step(4, "Second backup, then the diff between the two runs (worksync backup, worksync diff)")
  const second = await worksync(["backup", "--snapshot", snapshot, "--json", "--quiet"])
  detail(
    `run ${second.runId}: records ${second.changes.created} created, ${second.changes.updated} updated, ${second.changes.deleted} deleted`
  )
  const diff = await worksync(["diff", "--snapshot", snapshot, "--json", "--quiet"])
  for (const kind of ["created", "updated", "deleted"]) {
    if (diff.records[kind].length > 0) detail(`records ${kind}: ${diff.records[kind].join(", ")}`)
  }
  detail(`files: ${diff.files.created.length} created, ${diff.files.updated.length} updated, ${diff.files.deleted.length} deleted`)

  step(5, `Importing a sample CSV into "Mobile App" (worksync import-csv --preset generic)`)
  const imported = await worksync([
    "import-csv", "--workspace", mobile, "--csv", CSV, "--preset", "generic",
    "--journal", path.join(out, "import.journal.sqlite"), "--rejects", path.join(out, "import.rejects.csv"),
    "--json", "--quiet"
  ])
  detail(`${rel(CSV)}: ${plural(imported.rows, "row")}, ${imported.created} created, ${imported.skipped} already imported, ${imported.rejected} rejected`)

  step(6, "Copying the workspace's files to a directory and into a second workspace (worksync copy-files)")
  const down = await worksync([
    "copy-files", "--from", `workspace:${website}`, "--to", `dir:${filesDir}`,
    "--journal", path.join(out, "files-down.journal.sqlite"), "--json", "--quiet"
  ])
  detail(`workspace -> ${rel(filesDir)}: ${plural(down.copied, "file")} (${down.bytes} bytes), manifest in ${rel(path.join(filesDir, "manifest.ndjson"))}`)
  const copyWorkspace = await rest(info, "create-workspace", { name: "Website Relaunch (copy)" })
  const up = await worksync([
    "copy-files", "--from", `dir:${filesDir}`, "--to", `workspace:${copyWorkspace.id}`, "--exclude", "manifest.ndjson",
    "--journal", path.join(out, "files-up.journal.sqlite"), "--json", "--quiet"
  ])
  detail(`${rel(filesDir)} -> new workspace "${copyWorkspace.name}" (${copyWorkspace.id}): ${plural(up.copied, "file")} uploaded`)

  step(7, "Exporting the latest run as CSV (worksync export)")
  const exported = await worksync(["export", "--snapshot", snapshot, "--out", exportDir, "--format", "csv", "--json", "--quiet"])
  detail(`run ${exported.runId}: records ${exported.records}, activity ${exported.activity}, files ${exported.files}, workspaces ${exported.workspaces}`)

  step(8, "Stopping the emulator")
  await stopEmulator()
  detail("stopped")

  say("\nWhere everything landed:")
  say(`   snapshot   ${rel(snapshot)}   (2 runs; try: npx worksync diff --snapshot ${rel(snapshot)} --json)`)
  say(`   export     ${rel(exportDir)}/{records,activity,files,workspaces}.csv`)
  say(`   files      ${rel(filesDir)}/   (${plural(down.copied, "file")} + manifest.ndjson)`)
  say(`   journals   ${rel(out)}/*.journal.sqlite   (rerunning an import or copy with them sends nothing twice)`)
  say(`\ndemo finished in ${((Date.now() - started) / 1000).toFixed(1)} s`)
}

const onSignal = (signal) => {
  void stopEmulator().finally(() => {
    process.stderr.write(`demo: interrupted (${signal})\n`)
    process.exit(130)
  })
}
process.once("SIGINT", onSignal)
process.once("SIGTERM", onSignal)

try {
  await main()
} catch (error) {
  await stopEmulator()
  process.stderr.write(`demo failed: ${error instanceof DemoFailure ? error.message : error instanceof Error ? error.message : String(error)}\n`)
  process.exitCode = 1
}
