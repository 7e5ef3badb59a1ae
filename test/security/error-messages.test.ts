/**
 * Error messages for wrong URLs and tokens (CLI contract, "Exit codes and output": exit
 * 1 comes with one clear line on stderr naming what failed): exactly one `worksync:`
 * line, naming the operation or flag and the cause (HTTP status, connection error), with
 * no stack trace and no credential, also under --verbose. With -q that line is all of
 * stderr.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type EmulatorHandle, startEmulator } from "../../src/emulator/index.ts"
import { type CliResult, runCli } from "../support/cli.ts"
import { type Canary, canaryUser, leaksIn, STACK_LINE, tempDirs, wrongCanary } from "./support.ts"

let emu: EmulatorHandle
let owner: Canary
let wrong: ReturnType<typeof wrongCanary>
let dir: string
let csv: string
let src: string
const temp = tempDirs()
type Pair = readonly [CliResult, CliResult]
let slow: { dead: Promise<Array<Pair>>; deadApp: Promise<Pair>; malformedApp: Promise<Pair> }
/** A port nothing listens on: taken from a closed emulator. */
let deadBase: string

beforeAll(async () => {
  const closed = await startEmulator({ seed: "empty" })
  deadBase = closed.baseUrl
  await closed.close()
  emu = await startEmulator({ seed: "demo" })
  owner = canaryUser(emu, "errors")
  wrong = wrongCanary()
  dir = temp.make()
  csv = path.join(dir, "in.csv")
  fs.writeFileSync(csv, "Name\nOne\n")
  src = path.join(dir, "src")
  fs.mkdirSync(src)
  fs.writeFileSync(path.join(src, "a.txt"), "a")
  // The client retries refused connections for several seconds: start those runs now,
  // side by side, and let the tests below await them.
  const dead = { restUrl: `${deadBase}/rest`, baseUrl: deadBase }
  slow = {
    dead: Promise.all([commands.backup, commands.importCsv, commands.copyToDir].map((cmd) => both(() => cmd(dead)))),
    deadApp: both(() => commands.copyFromDir({ baseUrl: deadBase })),
    malformedApp: both(() => commands.copyFromDir({ baseUrl: "not a url" }))
  }
})
afterAll(async () => {
  // Never leave the background runs behind, whatever failed.
  await Promise.allSettled([slow?.dead, slow?.deadApp, slow?.malformedApp])
  await emu?.close()
  temp.cleanup()
})

interface Conn {
  restUrl?: string
  baseUrl?: string
  token?: string
  tokenSecret?: string
  org?: string
}
const conn = (c: Conn = {}) => [
  "--rest-url", c.restUrl ?? emu.restUrl, "--base-url", c.baseUrl ?? emu.baseUrl, "--token", c.token ?? owner.token,
  "--token-id", owner.tokenId, "--token-secret", c.tokenSecret ?? owner.tokenSecret, "--org", c.org ?? emu.org
]
let n = 0
const file = (ext: string) => path.join(dir, `f${++n}.${ext}`)

const commands = {
  backup: (c: Conn) => ["backup", ...conn(c), "--snapshot", file("sqlite")],
  importCsv: (c: Conn) => ["import-csv", ...conn(c), "--workspace", emu.workspaces[0]!, "--csv", csv, "--map", "title=Name", "--journal", file("sqlite")],
  copyToDir: (c: Conn) => ["copy-files", ...conn(c), "--from", `workspace:${emu.workspaces[0]}`, "--to", `dir:${path.join(dir, `out${++n}`)}`, "--journal", file("sqlite")],
  copyFromDir: (c: Conn) => ["copy-files", ...conn(c), "--from", `dir:${src}`, "--to", `workspace:${emu.workspaces[1]}`, "--journal", file("sqlite")]
}

/** The one-line rule, checked on a quiet run (whole stderr) and a verbose run (the error line). */
const expectOneClearLine = (quiet: CliResult, verbose: CliResult, names: RegExp, code = 1) => {
  for (const r of [quiet, verbose]) {
    expect(r.code, r.stderr).toBe(code)
    expect(r.stdout).toBe("")
    expect(STACK_LINE.test(r.stderr), `stack trace in:\n${r.stderr}`).toBe(false)
    expect(r.stderr).not.toMatch(/internal error|\[object Object\]|undefined|FiberFailure|\{"_tag"/)
    expect(leaksIn(r.stderr, [owner.token, owner.tokenSecret, wrong.token, wrong.tokenSecret])).toEqual([])
    const errorLines = r.stderr.split("\n").filter((l) => l.startsWith("worksync:"))
    expect(errorLines, r.stderr).toHaveLength(1)
    expect(errorLines[0]).toMatch(names)
    expect(errorLines[0]!.length).toBeLessThan(400)
  }
  expect(quiet.stderr.endsWith("\n")).toBe(true)
  expect(quiet.stderr.trimEnd().split("\n"), quiet.stderr).toHaveLength(1)
}

/** Runs the command twice (own journal/snapshot each): quiet and verbose. */
const both = (args: () => ReadonlyArray<string>) =>
  Promise.all([runCli([...args(), "-q"]), runCli([...args(), "--verbose"])])

describe("one clear line for wrong URLs and tokens", () => {
  it("R-REST-ERR-03: a wrong REST token: one line naming the operation and HTTP 401 (backup, import-csv, copy-files)", async () => {
    const runs = await Promise.all([commands.backup, commands.importCsv, commands.copyToDir].map((cmd) => both(() => cmd({ token: wrong.token }))))
    for (const [q, v] of runs) expectOneClearLine(q, v, /[a-z]+-[a-z-]+.*(HTTP 401|not authenticated)/)
  })

  it("R-REST-ERR-03: an organization the token cannot use: one line naming HTTP 403", async () => {
    const [q, v] = await both(() => commands.backup({ org: "no-such-organization" }))
    expectOneClearLine(q, v, /[a-z]+-[a-z-]+.*HTTP 403/)
  })

  it("a wrong GraphQL/app token secret: one line naming the failed upload and HTTP 401", async () => {
    const [q, v] = await both(() => commands.copyFromDir({ tokenSecret: wrong.tokenSecret }))
    expectOneClearLine(q, v, /a\.txt|upload/)
    expect(q.stderr).toMatch(/401/)
  })

  it("a REST URL where nothing listens: one line naming the operation and the connection failure (backup, import-csv, copy-files)", async () => {
    for (const [q, v] of await slow.dead) expectOneClearLine(q, v, /[a-z]+-[a-z-]+.*(ECONNREFUSED|connect|connection)/i)
  }, 60_000)

  it("an app base URL where nothing listens (uploads): one line naming the upload and the connection failure", async () => {
    const [q, v] = await slow.deadApp
    expectOneClearLine(q, v, /upload.*(ECONNREFUSED|connect|connection)/i)
  }, 60_000)

  it("a REST URL that is not http(s): one usage line naming the flag, exit 64, nothing sent", async () => {
    const [q, v] = await both(() => commands.backup({ restUrl: "ftp://127.0.0.1/rest" }))
    expectOneClearLine(q, v, /--rest-url/, 64)
  })

  it("copy-files to a workspace with a malformed --base-url: one usage line naming the flag, exit 64, before any upload", async () => {
    const [q, v] = await slow.malformedApp
    expectOneClearLine(q, v, /--base-url/, 64)
  }, 60_000)

  it("a URL carrying credentials in its user-info is not echoed back with them", async () => {
    const secretInUrl = `ftp://user:${wrong.tokenSecret}@127.0.0.1/rest`
    const [q, v] = await both(() => commands.backup({ restUrl: secretInUrl }))
    for (const r of [q, v]) {
      expect(r.code).toBe(64)
      expect(leaksIn(r.stderr, [wrong.tokenSecret])).toEqual([])
    }
  })
})
