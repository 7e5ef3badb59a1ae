#!/usr/bin/env node
// The one-command demo (`npm run demo`): every job of worksync, run by the real CLI as
// child processes the way users run it, against the embedded emulator (started in this
// process, so a second organization can stand in for another account). Each step prints
// one or two lines of what happened and what to try next; the demo exits 1 at the first
// step that fails.
//
//   node scripts/demo.mjs [--out DIR] [--verbose]
//
// Outputs (snapshot, journals, exports, copied files) go to a temporary directory removed
// at the end; `--out DIR` keeps them there instead (DIR is recreated on each run, only if
// a previous demo made it). Connection settings reach the commands through WORKSYNC_*
// environment variables, so no token is ever on a command line or in this output.
import { spawn, execFileSync } from "node:child_process"
import { createInterface } from "node:readline"
import * as fs from "node:fs"
import * as net from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..")
const BIN = path.join(ROOT, "bin", "worksync.js")
const DIST = path.join(ROOT, "dist")
const MARKER = ".worksync-demo"
const JIRA_CSV = path.join(ROOT, "examples", "data", "jira-export.csv")

const args = process.argv.slice(2)
const argValue = (name) => {
  const i = args.indexOf(name)
  return i >= 0 ? args[i + 1] : undefined
}
const verbose = args.includes("--verbose")
const keptOut = argValue("--out")

const say = (line = "") => process.stdout.write(line + "\n")
const detail = (text) => say(`   ${text}`)
const next = (text) => say(`   next: ${text}`)
let stepStarted = 0
const step = (n, text) => {
  if (verbose && stepStarted > 0) detail(`(${((Date.now() - stepStarted) / 1000).toFixed(1)} s)`)
  stepStarted = Date.now()
  say(`\n${n}. ${text}`)
}

class DemoFailure extends Error {}

/** The directory for every output: kept with --out (never wiping one the demo did not make), else temporary. */
const prepareOut = () => {
  if (keptOut === undefined) return fs.mkdtempSync(path.join(os.tmpdir(), "worksync-demo-"))
  const out = path.resolve(keptOut)
  if (fs.existsSync(out)) {
    const entries = fs.readdirSync(out)
    if (entries.length > 0 && !entries.includes(MARKER)) {
      throw new DemoFailure(`${out} exists and was not made by the demo; pass --out DIR to choose another directory`)
    }
    fs.rmSync(out, { recursive: true, force: true })
  }
  fs.mkdirSync(out, { recursive: true })
  fs.writeFileSync(path.join(out, MARKER), "made by scripts/demo.mjs; safe to delete\n")
  return out
}

/** The bundles `npm install` builds; built here if missing (a clone where prepare was skipped). */
const ensureBuilt = () => {
  if (!fs.existsSync(path.join(DIST, "cli.cjs")) || !fs.existsSync(path.join(DIST, "emulator.js"))) {
    say("building the CLI bundle (first run)...")
    execFileSync(process.execPath, [path.join(ROOT, "scripts", "build.mjs")], { cwd: ROOT, stdio: "inherit" })
  }
}

/** Every child process the demo started and has not seen exit, stopped on the way out. */
const children = new Set()
let emulator

/** Stops the commands still running (SIGTERM, SIGKILL after 5 s) and waits for them, so none writes into a directory being removed. */
const stopAll = async () => {
  const running = [...children].filter((child) => child.exitCode === null && child.signalCode === null)
  children.clear()
  await Promise.all(running.map((child) => {
    const exited = new Promise((resolve) => child.once("exit", resolve))
    child.kill("SIGTERM")
    const timer = setTimeout(() => child.kill("SIGKILL"), 5_000)
    return exited.finally(() => clearTimeout(timer))
  }))
  const handle = emulator
  emulator = undefined
  if (handle !== undefined) await handle.close()
}

const track = (child) => {
  children.add(child)
  child.once("exit", () => children.delete(child))
  return child
}

/**
 * The environment of every command: this one's without any WORKSYNC_* setting (a profile,
 * a config file or a connection of your own must not redirect the demo), plus `env`. The
 * emulator variant stays: a test suite run against the other reading reruns the demo too.
 */
const commandEnv = (env) => {
  const clean = {}
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith("WORKSYNC_") || k === "WORKSYNC_EMULATOR_VARIANT") clean[k] = v
  return { ...clean, ...env }
}

/** Commands run in the output directory, where no worksync.config.json of yours is found. */
let workDir = ROOT

const spawnWorksync = (cmdArgs, env) => {
  if (verbose) detail(`$ worksync ${cmdArgs.join(" ")}`)
  return track(spawn(process.execPath, [BIN, ...cmdArgs], { cwd: workDir, env: commandEnv(env), stdio: ["ignore", "pipe", "pipe"] }))
}

/** The one line a failed command ends with (`worksync: ...`), else its last line. */
const lastLine = (stderr) => {
  const lines = stderr.trim().split("\n")
  return lines.filter((l) => l.startsWith("worksync:")).pop() ?? lines.pop() ?? "(no message)"
}

/** Runs `worksync <args>` and returns its --json result; a non-zero exit stops the demo. */
const worksync = (cmdArgs, env) =>
  new Promise((resolve, reject) => {
    const child = spawnWorksync(cmdArgs, env)
    let stdout = ""
    let stderr = ""
    child.stdout.setEncoding("utf8").on("data", (d) => (stdout += d))
    child.stderr.setEncoding("utf8").on("data", (d) => {
      stderr += d
      if (verbose) process.stderr.write(d.replace(/^/gm, "     "))
    })
    child.once("error", reject)
    child.once("close", (code) => {
      if (code !== 0) return reject(new DemoFailure(`worksync ${cmdArgs[0]} exited ${code}: ${lastLine(stderr)}`))
      try {
        resolve(stdout.trim() === "" ? undefined : JSON.parse(stdout.trim().split("\n").pop()))
      } catch {
        reject(new DemoFailure(`worksync ${cmdArgs[0]} printed something that is not JSON: ${stdout.slice(0, 200)}`))
      }
    })
  })

/** One REST call to the emulator, the way any client of the service makes it. */
const rest = async (account, operation, body) => {
  const response = await fetch(`${account.WORKSYNC_REST_URL}/v1/${operation}`, {
    method: "POST",
    headers: { authorization: `Bearer ${account.WORKSYNC_TOKEN}`, "svc-org-id": account.WORKSYNC_ORG, "content-type": "application/json" },
    body: JSON.stringify(body)
  })
  const json = await response.json()
  if (!response.ok) throw new DemoFailure(`${operation} answered HTTP ${response.status}: ${JSON.stringify(json.error ?? json)}`)
  return json
}

const freePort = () =>
  new Promise((resolve, reject) => {
    const server = net.createServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address()
      server.close(() => resolve(port))
    })
  })

/** Resolves with the first line of `lines` that `match` accepts; rejects when the process exits first. */
const lineOf = (child, lines, match, what) =>
  new Promise((resolve, reject) => {
    const onLine = (line) => {
      if (!match(line)) return
      lines.off("line", onLine)
      child.off("exit", onExit)
      resolve(line)
    }
    const onExit = (code) => reject(new DemoFailure(`worksync mirror exited (${code}) before ${what}`))
    lines.on("line", onLine)
    child.once("exit", onExit)
  })

const plural = (n, one, many = `${one}s`) => `${n} ${n === 1 ? one : many}`

/** The record's title in the snapshot's latest complete run, read until it is `wanted` (10 s at most). */
const snapshotTitle = async (snapshot, recordId, wanted, mirror) => {
  const Database = (await import("better-sqlite3")).default
  const db = new Database(snapshot, { readonly: true, fileMustExist: true })
  try {
    const read = db.prepare("SELECT title FROM latest_records WHERE id = ?").pluck()
    const deadline = Date.now() + 10_000
    for (;;) {
      const title = read.get(recordId)
      if (title === wanted) return title
      if (Date.now() > deadline || mirror.exitCode !== null) {
        throw new DemoFailure(`the mirrored snapshot still holds "${title}" for ${recordId}, not "${wanted}"`)
      }
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
  } finally {
    db.close()
  }
}

const main = async (out) => {
  const started = Date.now()
  say("worksync demo: every job, by the real CLI, against the embedded emulator")
  ensureBuilt()
  workDir = out
  const file = (name) => path.join(out, name)
  const snapshot = file("backup.sqlite")

  const { startEmulator } = await import(pathToFileURL(path.join(DIST, "emulator.js")).href)
  // A tenth of the documented delays: a webhook is delivered half a second after a change.
  emulator = await startEmulator({ seed: "demo", timeScale: 0.1 })
  const source = {
    WORKSYNC_REST_URL: emulator.restUrl,
    WORKSYNC_BASE_URL: emulator.baseUrl,
    WORKSYNC_TOKEN: emulator.token,
    WORKSYNC_TOKEN_ID: emulator.tokenId,
    WORKSYNC_TOKEN_SECRET: emulator.tokenSecret,
    WORKSYNC_ORG: emulator.org
  }
  const [website, mobile] = emulator.workspaces
  say(`emulator at ${emulator.baseUrl}: organization ${emulator.org}, ${plural(emulator.workspaces.length, "workspace")}`)

  step(1, "backup: every workspace into a SQLite snapshot, files' bytes included")
  const first = await worksync(["backup", "--snapshot", snapshot, "--files", file("objects"), "--json", "--quiet"], source)
  detail(
    `run ${first.runId}: ${plural(first.workspaces, "workspace")}, ${plural(first.records, "record")}, ` +
      `${plural(first.activities, "activity item")}, ${plural(first.files, "file")} (${first.fileBytes.stored} objects stored)`
  )
  next("worksync verify --snapshot backup.sqlite, then prune --keep-daily 7 (the README's nightly cron line does both)")

  step(2, "diff: a few records changed on the service, a second backup, what changed between the runs")
  const page = await rest(source, "list-records", { workspaceId: website, limit: 3 })
  const [renamed, completed, removed] = page.items
  await rest(source, "update-record", { workspaceId: website, recordId: renamed.id, title: `${renamed.title} (renamed)` })
  await rest(source, "update-record", { workspaceId: website, recordId: completed.id, done: !completed.done })
  await rest(source, "delete-record", { workspaceId: website, recordId: removed.id })
  const created = await rest(source, "create-record", { workspaceId: website, title: "Record created by the demo" })
  const second = await worksync(["backup", "--snapshot", snapshot, "--files", file("objects"), "--json", "--quiet"], source)
  const diff = await worksync(["diff", "--snapshot", snapshot, "--json", "--quiet"], source)
  const { records } = diff
  detail(
    `run ${first.runId} -> ${second.runId}: records ${records.created.length} created, ${records.updated.length} updated, ` +
      `${records.deleted.length} deleted ("${removed.title}")`
  )
  if (records.created[0] !== created.id || records.deleted[0] !== removed.id) {
    throw new DemoFailure(`the diff does not show the demo's changes: ${JSON.stringify(records)}`)
  }
  next("worksync diff --snapshot backup.sqlite --from 1 --to 2 --json (every id, and the files too)")

  step(3, "export: the latest run as CSV files")
  const exported = await worksync(["export", "--snapshot", snapshot, "--out", file("export"), "--format", "csv", "--json", "--quiet"], source)
  detail(`run ${exported.runId}: records.csv (${exported.records}), activity.csv (${exported.activity}), files.csv (${exported.files}), workspaces.csv (${exported.workspaces})`)
  next("--format ndjson, --run N for an older run, --files DIR to lay out the files' bytes too")

  step(4, `restore: the deleted record "${removed.title}" back from run ${first.runId}`)
  const restored = await worksync([
    "restore", "--snapshot", snapshot, "--run", first.runId, "--from-workspace", website, "--record", removed.id,
    "--to", `workspace:${website}`, "--journal", file("restore.journal.sqlite"), "--json", "--quiet"
  ], source)
  const back = (await rest(source, "list-records", { workspaceId: website, limit: 100 })).items.filter((r) => r.title === removed.title)
  if (restored.created !== 1 || back.length !== 1) throw new DemoFailure(`the record did not come back: ${JSON.stringify(restored)}`)
  detail(`${restored.created} created: "${back[0].title}" is in the workspace again (new id ${back[0].id})`)
  next("without --record, the whole workspace as the run had it; --dry-run shows the plan first")

  step(5, "migrate: a workspace into another account (a second organization of the emulator)")
  const otherOrg = emulator.admin.createOrganization({ name: "Other account", slug: "other-account" })
  const owner = emulator.admin.createUser({ email: "owner@other.example", firstName: "Olga", lastName: "Owner", orgLevel: "OWNER", orgId: otherOrg })
  const targetWorkspace = emulator.admin.createWorkspace({ name: "Mobile App (migrated)", orgId: otherOrg }).id
  const target = {
    WORKSYNC_TARGET_TOKEN: owner.token,
    WORKSYNC_TARGET_TOKEN_ID: owner.tokenId,
    WORKSYNC_TARGET_TOKEN_SECRET: owner.tokenSecret,
    WORKSYNC_TARGET_ORG: otherOrg
  }
  const migrated = await worksync([
    "migrate", "--from", `workspace:${mobile}`, "--to", `workspace:${targetWorkspace}`,
    "--journal", file("migrate.journal.sqlite"), "--json", "--quiet"
  ], { ...source, ...target })
  detail(
    `${migrated.verified ? "verified" : "NOT verified"}: ${migrated.lists.created} lists, ${migrated.records.created} records, ` +
      `${migrated.files.copied} files, ${migrated.comments.created} comments, ${migrated.people.invited} people invited`
  )
  if (!migrated.verified) throw new DemoFailure(`migrate did not verify: ${JSON.stringify(migrated.notCarried)}`)
  next("the same command again, with the same --journal, sends only what changed since; --dry-run plans first")

  step(6, "mirror: the snapshot kept current from the service's webhooks")
  const port = await freePort()
  const mirror = spawnWorksync([
    "mirror", "--snapshot", snapshot, "--listen", `127.0.0.1:${port}`, "--public-url", `http://127.0.0.1:${port}/hooks`,
    "--workspace", website, "--json"
  ], source)
  let mirrorErr = ""
  mirror.stderr.setEncoding("utf8").on("data", (d) => (mirrorErr += d))
  const errLines = createInterface({ input: mirror.stderr })
  const outLines = createInterface({ input: mirror.stdout })
  await lineOf(mirror, errLines, (l) => l.includes("listening on"), "listening").catch((e) => {
    throw new DemoFailure(`${e.message}: ${lastLine(mirrorErr)}`)
  })
  const live = `${renamed.title} (renamed again, live)`
  const delivered = lineOf(mirror, outLines, (l) => JSON.parse(l).recordId === renamed.id, "the change was delivered")
  await rest(source, "update-record", { workspaceId: website, recordId: renamed.id, title: live })
  const event = JSON.parse(await delivered)
  // A delivery that does not carry the whole record has it read again a moment later:
  // the snapshot is watched until it holds the new title.
  const title = await snapshotTitle(snapshot, renamed.id, live, mirror)
  // SIGTERM: the mirror finishes the delivery at hand and exits 0.
  const exited = new Promise((resolve) => mirror.once("exit", (code, signal) => resolve(code ?? signal)))
  mirror.kill("SIGTERM")
  const code = await exited
  if (code !== 0) throw new DemoFailure(`worksync mirror exited ${code} on SIGTERM: ${lastLine(mirrorErr)}`)
  detail(`webhook ${event.event} for ${event.recordId}: the snapshot's latest run now shows "${title}"`)
  next("on a server: worksync mirror --snapshot backup.sqlite --listen 0.0.0.0:8080 --public-url https://hooks.example.com/worksync")

  step(7, "import-csv: a Jira export with the jira preset")
  const imported = await worksync([
    "import-csv", "--workspace", mobile, "--csv", JIRA_CSV, "--preset", "jira",
    "--journal", file("jira.journal.sqlite"), "--rejects", file("jira.rejects.csv"), "--json", "--quiet"
  ], source)
  detail(
    `${plural(imported.rows, "row")}: ${imported.created} records created, ${imported.rejected} rejected` +
      (imported.people.unresolved.length > 0 ? `; not in the workspace: ${imported.people.unresolved.join(", ")}` : "")
  )
  next("--dry-run lists every column, carried or not, before anything is sent; a rerun with the same --journal sends nothing twice")

  step(8, "copy-files: a workspace's files into a local directory")
  const copied = await worksync([
    "copy-files", "--from", `workspace:${website}`, "--to", `dir:${file("files")}`,
    "--journal", file("files.journal.sqlite"), "--json", "--quiet"
  ], source)
  detail(`${plural(copied.copied, "file")} (${copied.bytes} bytes) with a manifest.ndjson of their sha256`)
  next("--from dir:... --to workspace:ID uploads them into another workspace (another account: --to-profile NAME)")

  await stopAll()
  if (verbose) detail(`(${((Date.now() - stepStarted) / 1000).toFixed(1)} s)`)
  say(
    keptOut === undefined
      ? "\nEverything was written to a temporary directory, now removed (npm run demo -- --out DIR keeps it)."
      : `\nEverything is in ${out}: backup.sqlite, objects/, export/, files/ and the journals.`
  )
  say(`demo finished in ${((Date.now() - started) / 1000).toFixed(1)} s`)
}

const onSignal = (signal) => {
  void stopAll().finally(() => {
    process.stderr.write(`demo: interrupted (${signal})\n`)
    if (keptOut === undefined && out !== undefined) fs.rmSync(out, { recursive: true, force: true })
    process.exit(130)
  })
}
process.once("SIGINT", onSignal)
process.once("SIGTERM", onSignal)

let out
try {
  out = prepareOut()
  await main(out)
} catch (error) {
  await stopAll()
  process.stderr.write(`demo failed: ${error instanceof Error ? error.message : String(error)}\n`)
  process.exitCode = 1
} finally {
  if (keptOut === undefined && out !== undefined) fs.rmSync(out, { recursive: true, force: true })
}
