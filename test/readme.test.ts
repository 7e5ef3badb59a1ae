/**
 * Every command and code block of README.md is run, so none can go stale: the first
 * screen's three paths (a nightly backup, a migration from Jira, a pipeline in TypeScript)
 * exactly as written, against the emulator its first block starts; the other sections'
 * shell blocks against an emulator with its URL and token put where the README has
 * placeholders; the TypeScript blocks type-checked under strict settings and run. A block
 * run by another test file is named in CHECKS with that file; a block added to the README
 * and named nowhere fails the inventory.
 */
import Database from "better-sqlite3"
import * as fs from "node:fs"
import * as http from "node:http"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { bash, type Block, cronScript, fencedBlocks, firstScreen, jsonLines, readerDir, ROOT, substitute, typecheck } from "./support/readme-blocks.ts"

const README = fs.readFileSync(path.join(ROOT, "README.md"), "utf8")
const BLOCKS = fencedBlocks(README)

/** How a block is run: here (`here`, the test's name) or by another test file (`by`, and what it does with it). */
type Check = { readonly find: string; readonly here: string } | { readonly find: string; readonly by: string; readonly what: string }

const FIRST_SCREEN = "the first screen's paths"

const CHECKS: ReadonlyArray<Check> = [
  {
    find: "npm install && npm run demo",
    by: "test/demo.test.ts",
    what: "runs scripts/demo.mjs (npm run demo) as a newcomer does; npm install builds what every test uses and npm test is the suite itself"
  },
  { find: "npx worksync emulator --seed demo --port 8787 > /tmp/emulator.json &", here: FIRST_SCREEN },
  { find: "npx worksync verify --snapshot backup.sqlite --files files --sample 10", here: FIRST_SCREEN },
  { find: "HC=https://hc-ping.com/your-check-uuid", here: FIRST_SCREEN },
  { find: "cp examples/data/jira-export.csv jira.csv", here: FIRST_SCREEN },
  { find: "// pipeline.ts:", here: FIRST_SCREEN },
  {
    find: "npm install worksync",
    by: "test/package/pack.test.ts",
    what: "installs the packed package in a fresh project and runs npx worksync --help there"
  },
  {
    find: "npm install        # installs",
    by: "test/setup.global.ts",
    what: "builds as npm install does (scripts/build.mjs, the prepare script) before the suite that npm test runs"
  },
  { find: "npx worksync --help\nnpx worksync emulator --seed demo --port 0", here: "the command line" },
  { find: "worksync demo: every job", by: "test/demo.test.ts", what: "checks this transcript's steps against what the demo prints" },
  { find: "\"defaultProfile\": \"prod\"", here: "the config file" },
  { find: "worksync backup --profile prod", here: "the config file" },
  {
    find: "$ worksync backup --snapshot backup.sqlite            # stderr is a terminal",
    by: "test/cli/progress.test.ts",
    what: "captured output: the bar on a terminal, the plain lines elsewhere and the summary line are checked there"
  },
  { find: "npx worksync export --snapshot backup.sqlite --out export/ --files files/", here: "backups" },
  { find: "npx worksync prune --snapshot backup.sqlite --keep-daily 7 --keep-weekly 5 --keep-monthly 12 --dry-run", here: "backups" },
  { find: "npx worksync verify --snapshot backup.sqlite --rehearse --json", here: "backups" },
  { find: "--quiet --notify https://hc-ping.com/<uuid>", here: "backups" },
  { find: "npx worksync prune --snapshot /var/lib/worksync/backup.sqlite", here: "backups" },
  { find: "# m  h  dom mon dow  command", here: "ready pipelines" },
  { find: "[Service]", here: "ready pipelines" },
  { find: "import { connect, isWorksyncError, rootCause }", here: "the library" },
  { find: "// readme-library-example", here: "the library" },
  { find: "npx worksync restore --snapshot website.sqlite", here: "restore and migrate" },
  { find: "npx worksync mirror --snapshot backup.sqlite --listen 0.0.0.0:8080", here: "mirror" },
  {
    find: "scripts/postgres-cluster.sh start",
    by: "test/cli/workers.test.ts",
    what: "the same pool (PostgreSQL, three workers, a backup and an import on the pool, a worker killed mid-job, SIGTERM) run with the test's own processes; the block as written stops processes by name (pkill -f), which on a shared machine would stop others'"
  },
  { find: "$ worksync import-csv --workspace $WS --csv jira.csv --preset jira --journal import.sqlite --dry-run", here: "migrating from Jira" },
  { find: "emu.faults.inject({ route: \"create-record\"", here: "the emulator" }
]

const checkOf = (block: Block): ReadonlyArray<Check> => CHECKS.filter((c) => block.body.includes(c.find))

/** The one block holding `find`. */
const blockWith = (find: string): Block => {
  const found = BLOCKS.filter((b) => b.body.includes(find))
  expect(found.map((b) => b.line), `README blocks holding ${JSON.stringify(find)}`).toHaveLength(1)
  return found[0]!
}

/** A healthchecks.io stand-in: records every ping. */
const pingServer = async () => {
  const pings: Array<{ method: string; path: string; body: string }> = []
  const server = http.createServer((req, res) => {
    let body = ""
    req.setEncoding("utf8").on("data", (d: string) => (body += d))
    req.on("end", () => {
      pings.push({ method: req.method ?? "", path: req.url ?? "", body })
      res.end("OK")
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const { port } = server.address() as { port: number }
  return { url: `http://127.0.0.1:${port}/ping`, pings, close: () => new Promise<void>((resolve) => server.close(() => resolve())) }
}

const freePort = async () => {
  const server = http.createServer()
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const { port } = server.address() as { port: number }
  await new Promise<void>((resolve) => server.close(() => resolve()))
  return port
}

/** The first screen's block that starts the emulator and exports its connection (and WS), for `dir`. */
const emulatorPrelude = async (dir: string) =>
  substitute(blockWith("npx worksync emulator --seed demo --port 8787 > /tmp/emulator.json &").body, [
    ["/tmp/emulator.json", path.join(dir, "emulator.json")],
    ["--port 8787", `--port ${await freePort()}`]
  ])

/** `line`, a command that runs until stopped, started in the background; waits for `ready` in the file its `stream` goes to. */
const inBackground = (line: string, dir: string, name: string, ready: string, stream: "stdout" | "stderr") => {
  const out = path.join(dir, `${name}.out`)
  const err = path.join(dir, `${name}.err`)
  const watched = stream === "stdout" ? out : err
  return [
    `${line} > ${out} 2> ${err} &`,
    `${name}_pid=$!`,
    `until grep -q ${JSON.stringify(ready)} ${watched} 2>/dev/null; do kill -0 $${name}_pid || { cat ${err} >&2; exit 1; }; sleep 0.1; done`
  ].join("\n")
}

describe("README.md", () => {
  const dirs: Array<string> = []
  const tempDir = (prefix: string) => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix))
    dirs.push(dir)
    return dir
  }
  afterAll(() => {
    for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true })
  })

  /** The library section's blocks as files of `dir`: facade.ts, library.ts, emulator.ts. */
  const writeLibraryFiles = (dir: string) => {
    // The facade's block uses a connection and a workspace it does not declare: from the environment.
    const facadePrelude = [
      "const restUrl = process.env.WORKSYNC_REST_URL!, baseUrl = process.env.WORKSYNC_BASE_URL!, token = process.env.WORKSYNC_TOKEN!",
      "const tokenId = process.env.WORKSYNC_TOKEN_ID!, tokenSecret = process.env.WORKSYNC_TOKEN_SECRET!, org = process.env.WORKSYNC_ORG!",
      "const workspaceId = process.env.WS!"
    ].join("\n")
    const facade = blockWith("import { connect, isWorksyncError, rootCause }").body
    const [imports, ...rest] = facade.split("\n")
    fs.writeFileSync(path.join(dir, "facade.ts"), [imports, facadePrelude, ...rest].join("\n") + "\n")
    fs.writeFileSync(path.join(dir, "library.ts"), blockWith("// readme-library-example").body + "\n")
    fs.writeFileSync(path.join(dir, "emulator.ts"), blockWith("emu.faults.inject({ route: \"create-record\"").body + "\n")
  }

  /**
   * Every TypeScript block of the README (the first screen's pipeline.ts and the library
   * section's) type-checked under strict settings in one run of tsc, which both tests that
   * run them read: most of a check's time is loading effect's declarations, the same for each.
   */
  let typeCheck: ReturnType<typeof typecheck> | undefined
  const typeChecked = () => {
    if (typeCheck === undefined) {
      const dir = tempDir("worksync-readme-types-")
      const env = readerDir(dir)
      const pipeline = fencedBlocks(firstScreen(README)).find((b) => b.lang === "ts")!
      fs.writeFileSync(path.join(dir, /^\/\/ (\S+\.ts):/.exec(pipeline.body)![1]!), pipeline.body + "\n")
      writeLibraryFiles(dir)
      typeCheck = typecheck(dir, env)
    }
    return typeCheck
  }

  it("every code block is run, here or by the test file named for it", () => {
    const unrun = BLOCKS.filter((b) => checkOf(b).length === 0).map((b) => `line ${b.line}: ${b.body.split("\n")[0]}`)
    expect(unrun, "README blocks no test runs: add them to CHECKS").toEqual([])
    for (const block of BLOCKS) expect(checkOf(block).length, `README line ${block.line} is named by several CHECKS`).toBe(1)
    for (const check of CHECKS) {
      blockWith(check.find)
      if ("by" in check) expect(fs.existsSync(path.join(ROOT, check.by)), check.by).toBe(true)
    }
  })

  it("the first screen: a nightly backup from cron, a migration from Jira (plan, run, delta pass, undo) and a pipeline in TypeScript, as written", async () => {
    const screen = firstScreen(README)
    const blocks = fencedBlocks(screen)
    expect(blocks.map((b) => b.lang)).toEqual(["sh", "sh", "sh", "crontab", "sh", "ts"])
    for (const b of blocks.slice(1)) expect(checkOf(b).map((c) => ("here" in c ? c.here : c.by))).toEqual([FIRST_SCREEN])

    const dir = tempDir("worksync-readme-")
    const env = readerDir(dir)
    const ping = await pingServer()
    try {
      const port = await freePort()
      const [, emulator, nightly, crontab, jira, pipeline] = blocks as [Block, Block, Block, Block, Block, Block]
      const places: ReadonlyArray<readonly [string, string]> = [
        ["/tmp/emulator.json", path.join(dir, "emulator.json")],
        ["--port 8787", `--port ${port}`]
      ]
      fs.mkdirSync(path.join(dir, "etc"))
      fs.mkdirSync(path.join(dir, "srv"))
      const pipelineFile = /^\/\/ (\S+\.ts):/.exec(pipeline.body)![1]!
      fs.writeFileSync(path.join(dir, pipelineFile), pipeline.body + "\n")
      const script = [
        substitute(emulator.body, places),
        "echo '::nightly'",
        substitute(nightly.body, [["https://hc-ping.com/your-check-uuid", ping.url]]),
        // The environment file the crontab's comment speaks of, from the session's connection.
        `env | grep '^WORKSYNC_' > ${path.join(dir, "etc", "env")}`,
        "echo '::cron'",
        cronScript(
          substitute(crontab.body, [
            ["https://hc-ping.com/your-check-uuid", ping.url],
            ["/etc/worksync/env", path.join(dir, "etc", "env")],
            ["/srv/worksync", path.join(dir, "srv")],
            ["/var/lib/worksync", path.join(dir, "var")]
          ]),
          dir
        ),
        "echo '::jira'",
        substitute(jira.body, [["examples/data/", `${ROOT}/examples/data/`]]),
        "echo '::pipeline'",
        // The prose above the block: `npx tsx pipeline.ts`, with the same environment.
        `npx tsx ${pipelineFile}`
      ].join("\n")
      const result = await bash(script, dir, env)
      expect(result.code, `${result.stdout}\n${result.stderr}`).toBe(0)

      // The nightly backup by hand and from cron: every command pinged its start and its success.
      const paths = ping.pings.map((p) => `${p.method} ${p.path}`)
      expect(paths.filter((p) => p === "POST /ping/start")).toHaveLength(4)
      expect(paths.filter((p) => p === "POST /ping")).toHaveLength(4)
      expect(paths.filter((p) => p.includes("/fail"))).toEqual([])
      expect(fs.readdirSync(path.join(dir, "var"))).toEqual(expect.arrayContaining(["backup.sqlite", "files"]))

      // The Jira path: the plan, the first pass, the delta pass that updated the renamed issue, the undo.
      const jiraOut = result.stdout.slice(result.stdout.indexOf("::jira"), result.stdout.indexOf("::pipeline"))
      const results = jsonLines(jiraOut)
      // The plan, as text on stderr or, with --json, as the contract's object.
      const planned = /^plan: 3 to create, 0 to update/m.test(result.stderr) || results.some((r) => (r.plan as { create?: number } | undefined)?.create === 3)
      expect(planned, result.stderr).toBe(true)
      expect(results).toContainEqual(expect.objectContaining({ rows: 3, created: 3 }))
      expect(results).toContainEqual(expect.objectContaining({ rows: 3, created: 0, updated: 1, pass: 2 }))
      expect(result.stderr).toMatch(/undo \(dry run\): would delete 3/)
      expect(result.stderr).toMatch(/undo: 3 deleted/)

      // The pipeline ran on the same environment, and type-checks under strict settings.
      expect(result.stdout.slice(result.stdout.indexOf("::pipeline"))).toMatch(/run 1: \d+ records, \d+ changed since the previous run/)
      const types = await typeChecked()
      expect(types.code, types.stdout + types.stderr).toBe(0)
    } finally {
      await ping.close()
    }
  }, 240_000)
  it("the command line: --help, and the emulator printing its connection as one JSON line", async () => {
    const dir = tempDir("worksync-readme-")
    const env = readerDir(dir)
    const [help, emulator] = blockWith("npx worksync --help\nnpx worksync emulator --seed demo --port 0").body.split("\n") as [string, string]
    const script = [
      `${help.replace(/#.*/, "")} > help.txt`,
      inBackground(emulator.replace(/#.*/, "").trim(), dir, "emulator", "restUrl", "stdout"),
      `kill $emulator_pid`
    ].join("\n")
    const result = await bash(script, dir, env)
    expect(result.code, result.stderr).toBe(0)
    expect(fs.readFileSync(path.join(dir, "help.txt"), "utf8")).toMatch(/backup/)
    const line = JSON.parse(fs.readFileSync(path.join(dir, "emulator.out"), "utf8").split("\n")[0]!) as Record<string, unknown>
    expect(Object.keys(line)).toEqual(expect.arrayContaining(["restUrl", "baseUrl", "token", "tokenId", "tokenSecret", "org", "workspaces"]))
  }, 60_000)

  it("the config file: its prod profile, with the emulator's URLs and tokens, runs the short cron line", async () => {
    const dir = tempDir("worksync-readme-")
    const env = readerDir(dir)
    // The file as written, its example connection replaced by the emulator's (the shell fills them in).
    const config = substitute(blockWith("\"defaultProfile\": \"prod\"").body, [
      ["\"restUrl\": \"https://api.example.com\"", "\"restUrl\": \"$WORKSYNC_REST_URL\""],
      ["\"baseUrl\": \"https://app.example.com\"", "\"baseUrl\": \"$WORKSYNC_BASE_URL\""],
      ["\"token\": \"...\", \"tokenId\": \"...\", \"tokenSecret\": \"...\", \"org\": \"acme\"",
        "\"token\": \"$WORKSYNC_TOKEN\", \"tokenId\": \"$WORKSYNC_TOKEN_ID\", \"tokenSecret\": \"$WORKSYNC_TOKEN_SECRET\", \"org\": \"$WORKSYNC_ORG\""]
    ])
    const script = [
      await emulatorPrelude(dir),
      `cat > worksync.config.json <<EOF\n${config}\nEOF`,
      "chmod 600 worksync.config.json",
      // The profile alone carries the connection: none is left in the environment.
      "unset WORKSYNC_REST_URL WORKSYNC_BASE_URL WORKSYNC_TOKEN WORKSYNC_TOKEN_ID WORKSYNC_TOKEN_SECRET WORKSYNC_ORG",
      "mkdir -p var",
      substitute(blockWith("worksync backup --profile prod").body, [["worksync backup", "npx worksync backup"], ["/var/lib/worksync", path.join(dir, "var")]])
    ].join("\n")
    const result = await bash(script, dir, env)
    expect(result.code, result.stderr).toBe(0)
    expect(fs.existsSync(path.join(dir, "var", "backup.sqlite"))).toBe(true)
  }, 60_000)

  it("backups: file bytes, export, prune, verify (with a rehearsal and against the service), notifications and the nightly cron line", async () => {
    const dir = tempDir("worksync-readme-")
    const env = readerDir(dir)
    const ping = await pingServer()
    try {
      fs.mkdirSync(path.join(dir, "etc"))
      fs.mkdirSync(path.join(dir, "srv"))
      const script = [
        await emulatorPrelude(dir),
        "echo '::files'",
        blockWith("npx worksync export --snapshot backup.sqlite --out export/ --files files/").body,
        "echo '::prune'",
        blockWith("npx worksync prune --snapshot backup.sqlite --keep-daily 7 --keep-weekly 5 --keep-monthly 12 --dry-run").body,
        "echo '::verify'",
        blockWith("npx worksync verify --snapshot backup.sqlite --rehearse --json").body,
        "echo '::notify'",
        substitute(blockWith("--quiet --notify https://hc-ping.com/<uuid>").body, [["https://hc-ping.com/<uuid>", ping.url]]),
        `env | grep '^WORKSYNC_' > ${path.join(dir, "etc", "env")}`,
        "echo '::cron'",
        cronScript(
          substitute(blockWith("npx worksync prune --snapshot /var/lib/worksync/backup.sqlite").body, [
            ["/etc/worksync/env", path.join(dir, "etc", "env")],
            ["/srv/worksync", path.join(dir, "srv")],
            ["/var/lib/worksync", path.join(dir, "var")]
          ]),
          dir
        )
      ].join("\n")
      const result = await bash(script, dir, env)
      expect(result.code, `${result.stdout}\n${result.stderr}`).toBe(0)
      const results = jsonLines(result.stdout)
      expect(results).toContainEqual(expect.objectContaining({ runId: "1", fileBytes: expect.objectContaining({ stored: expect.any(Number) }) }))
      expect(results).toContainEqual(expect.objectContaining({ ok: true, checks: expect.arrayContaining([expect.objectContaining({ name: "integrity", ok: true })]) }))
      expect(fs.existsSync(path.join(dir, "export", "records.ndjson"))).toBe(true)
      expect(ping.pings.map((p) => `${p.method} ${p.path}`)).toEqual(["POST /ping/start", "POST /ping"])
      expect(fs.readdirSync(path.join(dir, "var"))).toEqual(expect.arrayContaining(["backup.sqlite", "files"]))
    } finally {
      await ping.close()
    }
  }, 300_000)

  it("ready pipelines: the cron line and the systemd service run the scheduled backup pipeline", async () => {
    const dir = tempDir("worksync-readme-")
    const env = readerDir(dir)
    fs.mkdirSync(path.join(dir, "etc"))
    const places: ReadonlyArray<readonly [string, string]> = [
      ["/etc/worksync/env", path.join(dir, "etc", "env")],
      ["/srv/worksync", ROOT],
      ["/var/lib/worksync", path.join(dir, "var")]
    ]
    const cron = substitute(blockWith("# m  h  dom mon dow  command").body, places)
    // The service as systemd runs it: in its WorkingDirectory, with its EnvironmentFile, its ExecStart.
    const unit = substitute(blockWith("[Service]").body, places)
    const setting = (key: string) => new RegExp(`^${key}=(.*)$`, "m").exec(unit)![1]!
    const service = `(cd ${setting("WorkingDirectory")} && set -a && . ${setting("EnvironmentFile")} && set +a && ${setting("ExecStart").replace(/^\/usr\/bin\/npx /, "npx ")})`
    const script = [
      await emulatorPrelude(dir),
      `env | grep '^WORKSYNC_' > ${path.join(dir, "etc", "env")}`,
      "echo '::cron'",
      cronScript(cron, dir),
      "echo '::systemd'",
      service
    ].join("\n")
    const result = await bash(script, dir, env)
    expect(result.code, `${result.stdout}\n${result.stderr}`).toBe(0)
    // One run from the cron line, one from the service.
    const db = new Database(path.join(dir, "var", "backup.sqlite"), { readonly: true })
    try {
      expect(db.prepare("SELECT status FROM runs ORDER BY id").pluck().all()).toEqual(["complete", "complete"])
    } finally {
      db.close()
    }
  }, 180_000)

  it("the library: the Promise facade's calls, the library example and the emulator's, type-checked and run", async () => {
    const dir = tempDir("worksync-readme-")
    const env = readerDir(dir)
    writeLibraryFiles(dir)
    const types = await typeChecked()
    expect(types.code, types.stdout + types.stderr).toBe(0)

    const script = [await emulatorPrelude(dir), "echo '::facade'", "npx tsx facade.ts", "echo '::library'", "mkdir library && (cd library && npx tsx ../library.ts)", "echo '::emulator'", "npx tsx emulator.ts"].join("\n")
    const result = await bash(script, dir, env)
    expect(result.code, `${result.stdout}\n${result.stderr}`).toBe(0)
    const between = (a: string, b: string) => result.stdout.slice(result.stdout.indexOf(a), b === "" ? undefined : result.stdout.indexOf(b))
    expect(between("::facade", "::library")).toMatch(/^created \w+$/m)
    expect(between("::library", "::emulator")).toMatch(/^\d+ records backed up; \d+ open in the first workspace$/m)
  }, 120_000)

  it("restore and migrate: a workspace restored in place, one record as it was, and migrated into another account", async () => {
    const dir = tempDir("worksync-readme-")
    const env = readerDir(dir)
    const other = path.join(dir, "other.json")
    const block = blockWith("npx worksync restore --snapshot website.sqlite").body
    const script = [
      await emulatorPrelude(dir),
      // The other account: a second emulator with a workspace named website, as a profile of the config file.
      inBackground(`npx worksync emulator --seed empty --port 0`, dir, "other", "restUrl", "stdout"),
      `cp ${path.join(dir, "other.out")} ${other}`,
      `node -e '
        const o = require(${JSON.stringify(other)})
        const profile = { restUrl: o.restUrl, baseUrl: o.baseUrl, token: o.token, tokenId: o.tokenId, tokenSecret: o.tokenSecret, org: o.org }
        require("fs").writeFileSync("worksync.config.json", JSON.stringify({ profiles: { "new-account": profile } }), { mode: 0o600 })
        fetch(o.restUrl + "/v1/create-workspace", { method: "POST", headers: { authorization: "Bearer " + o.token, "svc-org-id": o.org, "content-type": "application/json" },
          body: JSON.stringify({ name: "Website", slug: "website" }) }).then((r) => { if (!r.ok) process.exit(1) })'`,
      // The record of "One record as it was": the first of the run's records.
      "RECORD=unset",
      ...block.split("\n").map((line) =>
        line.includes("6650e1...")
          ? `RECORD=$(node -e 'const D = require(${JSON.stringify(path.join(ROOT, "node_modules", "better-sqlite3"))}); console.log(new D("website.sqlite", { readonly: true }).prepare("SELECT id FROM latest_records ORDER BY id LIMIT 1").pluck().get())')\n${substitute(line, [["6650e1...", "$RECORD"]])}`
          : line
      )
    ].join("\n")
    const result = await bash(script, dir, env)
    expect(result.code, `${result.stdout}\n${result.stderr}`).toBe(0)
    const results = jsonLines(result.stdout)
    expect(results).toContainEqual(expect.objectContaining({ records: expect.any(Number), failed: 0 }))
    expect(results).toContainEqual(expect.objectContaining({ verified: true }))
  }, 180_000)

  it("mirror: the command as written (listening where the service delivers) applies a change from its webhook", async () => {
    const dir = tempDir("worksync-readme-")
    const env = readerDir(dir)
    const port = await freePort()
    const line = substitute(blockWith("npx worksync mirror --snapshot backup.sqlite --listen 0.0.0.0:8080").body.replace(/\\\n\s*/g, ""), [
      ["0.0.0.0:8080", `127.0.0.1:${port}`],
      ["https://hooks.example.com/worksync", `http://127.0.0.1:${port}/worksync`]
    ])
    const script = [
      await emulatorPrelude(dir),
      inBackground(line, dir, "mirror", "listening on", "stderr"),
      // A change on the service: the record's title, through REST.
      `node -e '
        const call = (op, body) => fetch(process.env.WORKSYNC_REST_URL + "/v1/" + op, { method: "POST", headers: { authorization: "Bearer " + process.env.WORKSYNC_TOKEN,
          "svc-org-id": process.env.WORKSYNC_ORG, "content-type": "application/json" }, body: JSON.stringify(body) }).then((r) => r.json())
        call("list-records", { workspaceId: process.env.WS, limit: 1 }).then((page) => call("update-record", { workspaceId: process.env.WS, recordId: page.items[0].id, title: "Renamed while mirrored" }))'`,
      `until grep -q '"applied"' ${path.join(dir, "mirror.out")}; do kill -0 $mirror_pid; sleep 0.1; done`,
      "kill -TERM $mirror_pid; wait $mirror_pid"
    ].join("\n")
    const result = await bash(script, dir, env)
    expect(result.code, `${result.stdout}\n${result.stderr}\n${fs.readFileSync(path.join(dir, "mirror.err"), "utf8")}`).toBe(0)
    expect(jsonLines(fs.readFileSync(path.join(dir, "mirror.out"), "utf8"))).toContainEqual(expect.objectContaining({ event: expect.any(String), recordId: expect.any(String) }))
  }, 120_000)

  it("migrating from Jira: the dry run's census is the one the README shows", async () => {
    const dir = tempDir("worksync-readme-")
    const env = readerDir(dir)
    const transcript = blockWith("$ worksync import-csv --workspace $WS --csv jira.csv --preset jira --journal import.sqlite --dry-run").body.split("\n")
    const command = transcript[0]!.replace(/^\$ worksync /, "npx worksync ")
    const script = [await emulatorPrelude(dir), `cp ${path.join(ROOT, "test", "fixtures", "presets", "jira.csv")} jira.csv`, command].join("\n")
    const result = await bash(script, dir, env)
    expect(result.code, result.stderr).toBe(0)
    // Progress lines aside (rows read, operations: their rates vary), every line is the README's.
    const printed = result.stderr.split("\n").filter((l) => l !== "" && !/^(rows read|operations):/.test(l))
    const wanted = transcript.slice(1)
    expect({ missing: wanted.filter((l) => !printed.includes(l)), extra: printed.filter((l) => !wanted.includes(l)) }).toEqual({ missing: [], extra: [] })
    expect(printed).toEqual(wanted)
  }, 60_000)
})
