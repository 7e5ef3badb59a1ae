/**
 * Error messages for wrong URLs and tokens (CLI contract, "Exit codes and output": exit
 * 1 comes with one clear line on stderr naming what failed): exactly one `worksync:`
 * line, naming the operation or flag and the cause (HTTP status, connection error), with
 * no stack trace and no credential, also under --verbose. With -q that line is all of
 * stderr.
 */
import { expect, layer } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as fs from "node:fs"
import * as path from "node:path"
import { type EmulatorHandle, startEmulator } from "../../src/emulator/index.ts"
import { type CliResult, runCli } from "../support/cli.ts"
import { Emulator, emulatorLayer, tempDir } from "../support/effect.ts"
import { type Canary, canaryUser, leaksIn, STACK_LINE, wrongCanary } from "./support.ts"

type Pair = readonly [CliResult, CliResult]

interface Conn {
  restUrl?: string
  baseUrl?: string
  token?: string
  tokenSecret?: string
  org?: string
}

/** Everything the tests of the file share: the emulator, the users, the inputs, the commands and the slow runs. */
interface Setup {
  readonly emu: EmulatorHandle
  readonly owner: Canary
  readonly wrong: ReturnType<typeof wrongCanary>
  readonly commands: ReturnType<typeof commandsFor>
  readonly slow: { dead: Promise<Array<Pair>>; deadApp: Promise<Pair>; malformedApp: Promise<Pair> }
}
class ErrorsSetup extends Context.Service<ErrorsSetup, Setup>()("test/security/ErrorsSetup") {}

const commandsFor = (emu: EmulatorHandle, owner: Canary, dir: string, csv: string, src: string) => {
  const conn = (c: Conn = {}) => [
    "--rest-url", c.restUrl ?? emu.restUrl, "--base-url", c.baseUrl ?? emu.baseUrl, "--token", c.token ?? owner.token,
    "--token-id", owner.tokenId, "--token-secret", c.tokenSecret ?? owner.tokenSecret, "--org", c.org ?? emu.org
  ]
  let n = 0
  const file = (ext: string) => path.join(dir, `f${++n}.${ext}`)

  return {
    backup: (c: Conn) => ["backup", ...conn(c), "--snapshot", file("sqlite")],
    importCsv: (c: Conn) => ["import-csv", ...conn(c), "--workspace", emu.workspaces[0]!, "--csv", csv, "--map", "title=Name", "--journal", file("sqlite")],
    copyToDir: (c: Conn) => ["copy-files", ...conn(c), "--from", `workspace:${emu.workspaces[0]}`, "--to", `dir:${path.join(dir, `out${++n}`)}`, "--journal", file("sqlite")],
    copyFromDir: (c: Conn) => ["copy-files", ...conn(c), "--from", `dir:${src}`, "--to", `workspace:${emu.workspaces[1]}`, "--journal", file("sqlite")]
  }
}

const setupLayer = Layer.effect(
  ErrorsSetup,
  Effect.gen(function*() {
    /** A port nothing listens on: taken from a closed emulator. */
    const deadBase = yield* Effect.promise(async () => {
      const closed = await startEmulator({ seed: "empty" })
      const base = closed.baseUrl
      await closed.close()
      return base
    })
    const emu = yield* Emulator
    const owner = canaryUser(emu, "errors")
    const wrong = wrongCanary()
    const dir = yield* tempDir("ws-sec-")
    const csv = path.join(dir, "in.csv")
    fs.writeFileSync(csv, "Name\nOne\n")
    const src = path.join(dir, "src")
    fs.mkdirSync(src)
    fs.writeFileSync(path.join(src, "a.txt"), "a")
    const commands = commandsFor(emu, owner, dir, csv, src)
    // The client retries refused connections for several seconds: start those runs now,
    // side by side, and let the tests below await them.
    const dead = { restUrl: `${deadBase}/rest`, baseUrl: deadBase }
    const slow = yield* Effect.acquireRelease(
      Effect.sync(() => ({
        dead: Promise.all([commands.backup, commands.importCsv, commands.copyToDir].map((cmd) => both(() => cmd(dead)))),
        deadApp: both(() => commands.copyFromDir({ baseUrl: deadBase })),
        malformedApp: both(() => commands.copyFromDir({ baseUrl: "not a url" }))
      })),
      // Never leave the background runs behind, whatever failed.
      (slow) => Effect.promise(() => Promise.allSettled([slow.dead, slow.deadApp, slow.malformedApp]))
    )
    return { emu, owner, wrong, commands, slow }
  })
)

/** The one-line rule, checked on a quiet run (whole stderr) and a verbose run (the error line). */
const expectOneClearLine = (s: Setup, quiet: CliResult, verbose: CliResult, names: RegExp, code = 1) => {
  const { owner, wrong } = s
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

// The CLI runs as child processes against the emulator: real time (`excludeTestServices`).
layer(Layer.provideMerge(setupLayer, emulatorLayer({ seed: "demo" })), { timeout: 30_000, excludeTestServices: true })("one clear line for wrong URLs and tokens", (it) => {
  it.effect("R-REST-ERR-03: a wrong REST token: one line naming the operation and HTTP 401 (backup, import-csv, copy-files)", () =>
    Effect.gen(function*() {
      const s = yield* ErrorsSetup
      const { commands, wrong } = s
      const runs = yield* Effect.promise(() => Promise.all([commands.backup, commands.importCsv, commands.copyToDir].map((cmd) => both(() => cmd({ token: wrong.token })))))
      for (const [q, v] of runs) expectOneClearLine(s, q, v, /[a-z]+-[a-z-]+.*(HTTP 401|not authenticated)/)
    }))

  it.effect("R-REST-ERR-03: an organization the token cannot use: one line naming HTTP 403", () =>
    Effect.gen(function*() {
      const s = yield* ErrorsSetup
      const [q, v] = yield* Effect.promise(() => both(() => s.commands.backup({ org: "no-such-organization" })))
      expectOneClearLine(s, q, v, /[a-z]+-[a-z-]+.*HTTP 403/)
    }))

  it.effect("a wrong GraphQL/app token secret: one line naming the failed upload and HTTP 401", () =>
    Effect.gen(function*() {
      const s = yield* ErrorsSetup
      const [q, v] = yield* Effect.promise(() => both(() => s.commands.copyFromDir({ tokenSecret: s.wrong.tokenSecret })))
      expectOneClearLine(s, q, v, /a\.txt|upload/)
      expect(q.stderr).toMatch(/401/)
    }))

  it.effect("a REST URL where nothing listens: one line naming the operation and the connection failure (backup, import-csv, copy-files)", () =>
    Effect.gen(function*() {
      const s = yield* ErrorsSetup
      for (const [q, v] of yield* Effect.promise(() => s.slow.dead)) expectOneClearLine(s, q, v, /[a-z]+-[a-z-]+.*(ECONNREFUSED|connect|connection)/i)
    }), 60_000)

  it.effect("an app base URL where nothing listens (uploads): one line naming the upload and the connection failure", () =>
    Effect.gen(function*() {
      const s = yield* ErrorsSetup
      const [q, v] = yield* Effect.promise(() => s.slow.deadApp)
      expectOneClearLine(s, q, v, /upload.*(ECONNREFUSED|connect|connection)/i)
    }), 60_000)

  it.effect("a REST URL that is not http(s): one usage line naming the flag, exit 64, nothing sent", () =>
    Effect.gen(function*() {
      const s = yield* ErrorsSetup
      const [q, v] = yield* Effect.promise(() => both(() => s.commands.backup({ restUrl: "ftp://127.0.0.1/rest" })))
      expectOneClearLine(s, q, v, /--rest-url/, 64)
    }))

  it.effect("copy-files to a workspace with a malformed --base-url: one usage line naming the flag, exit 64, before any upload", () =>
    Effect.gen(function*() {
      const s = yield* ErrorsSetup
      const [q, v] = yield* Effect.promise(() => s.slow.malformedApp)
      expectOneClearLine(s, q, v, /--base-url/, 64)
    }), 60_000)

  it.effect("a URL carrying credentials in its user-info is not echoed back with them", () =>
    Effect.gen(function*() {
      const s = yield* ErrorsSetup
      const { wrong } = s
      const secretInUrl = `ftp://user:${wrong.tokenSecret}@127.0.0.1/rest`
      const [q, v] = yield* Effect.promise(() => both(() => s.commands.backup({ restUrl: secretInUrl })))
      for (const r of [q, v]) {
        expect(r.code).toBe(64)
        expect(leaksIn(r.stderr, [wrong.tokenSecret])).toEqual([])
      }
    }))
})
