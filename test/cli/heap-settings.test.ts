/**
 * The CLI's heap settings (bin/worksync.js, docs/growth.md "What the commands hold"): a
 * command but import-csv runs with semi-spaces of at most 8 MB, and on Linux every command
 * with two arenas of the C allocator (MALLOC_ARENA_MAX=2), set by starting node again as
 * the same process (execve) before anything is read or written (help and the version are
 * printed without); a setting the user gives, on node's command line, in NODE_OPTIONS or
 * in the environment, wins and is not doubled.
 */
import { spawn, spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, describe, expect, it } from "vitest"

describe.runIf(process.platform !== "win32" && typeof process.execve === "function")("heap settings of the CLI", () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "worksync-heap-"))
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))
  // Preloaded: says, as the process ends, which process it was, the flags node started with
  // and the allocator's arenas it was given.
  const hook = path.join(dir, "hook.cjs")
  fs.writeFileSync(
    hook,
    `process.on("exit", () => process.stderr.write("heap " + JSON.stringify({ pid: process.pid, execArgv: process.execArgv, arenas: process.env.MALLOC_ARENA_MAX ?? null }) + "\\n"))\n`
  )
  /** The arenas a command started again is given: on Linux only. */
  const two = process.platform === "linux" ? "2" : null

  const run = (nodeArgs: ReadonlyArray<string>, args: ReadonlyArray<string>, env: NodeJS.ProcessEnv = {}) => {
    const r = spawnSync(process.execPath, [...nodeArgs, "-r", hook, "bin/worksync.js", ...args], {
      encoding: "utf8",
      env: { ...process.env, NODE_OPTIONS: "", MALLOC_ARENA_MAX: undefined, ...env },
      input: "",
      timeout: 30_000
    })
    const ends = [...r.stderr.matchAll(/^heap (.*)$/gm)].map((m) => JSON.parse(m[1]!) as { pid: number; execArgv: Array<string>; arenas: string | null })
    return { ...r, ends }
  }

  // A command that stops at once: the snapshot it names is missing (exit 64, one line).
  const missing = () => ["diff", "--snapshot", path.join(dir, "none.sqlite"), "--json"]

  it("a command runs as the same process with semi-spaces of 8 MB and two arenas, its output and exit code unchanged; import-csv with V8's young generation; help and the version as started", () => {
    const r = run([], missing())
    expect(r.status).toBe(64)
    expect(r.stderr).toMatch(/--snapshot: file not found/)
    // One end only: the process started first was replaced, not left to run beside it.
    expect(r.ends).toEqual([{ pid: r.pid, execArgv: ["--max-semi-space-size=8", "-r", hook], arenas: two }])

    // import-csv keeps V8's young generation (its planning's CPU), with two arenas.
    const csv = run([], ["import-csv", "--workspace", "w", "--csv", path.join(dir, "none.csv"), "--journal", path.join(dir, "j.sqlite")])
    expect(csv.status).toBe(64)
    expect(csv.stderr).toMatch(/--csv .*: file not found/)
    expect(csv.ends).toEqual([{ pid: csv.pid, execArgv: ["-r", hook], arenas: two }])

    // Help and the version are printed without starting node again.
    for (const args of [["--version"], ["--help"], ["backup", "--help"]]) {
      const quick = run([], args)
      expect(quick.status).toBe(0)
      expect(quick.stdout).not.toBe("")
      expect(quick.ends).toEqual([{ pid: quick.pid, execArgv: ["-r", hook], arenas: null }])
    }
  })

  it("a young generation the user sizes on node's command line or in NODE_OPTIONS, and arenas set in the environment, are left as given", () => {
    const argv = run(["--max_semi_space_size=2"], missing())
    expect(argv.status).toBe(64)
    expect(argv.ends).toEqual([{ pid: argv.pid, execArgv: ["--max_semi_space_size=2", "-r", hook], arenas: two }])

    const env = run([], missing(), { NODE_OPTIONS: "--max-semi-space-size=32" })
    expect(env.status).toBe(64)
    expect(env.ends).toEqual([{ pid: env.pid, execArgv: ["-r", hook], arenas: two }])

    // --max-heap-size cannot be given with both semi-space and old-space sizes: none is added to it.
    const heap = run([], missing(), { NODE_OPTIONS: "--max-heap-size=512" })
    expect(heap.status).toBe(64)
    expect(heap.ends).toEqual([{ pid: heap.pid, execArgv: ["-r", hook], arenas: two }])

    const arenas = run([], missing(), { MALLOC_ARENA_MAX: "4" })
    expect(arenas.status).toBe(64)
    expect(arenas.ends).toEqual([{ pid: arenas.pid, execArgv: ["--max-semi-space-size=8", "-r", hook], arenas: "4" }])
  })

  it("a command started with an IPC channel (a pool worker's job) keeps it: it is not started again", () =>
    new Promise<void>((resolve, reject) => {
      // The preloaded hook sends its line through the channel too: it reaches the parent only
      // if the process that ends still has the channel.
      const ipcHook = path.join(dir, "ipc-hook.cjs")
      fs.writeFileSync(ipcHook, `process.on("exit", () => process.send?.({ pid: process.pid, execArgv: process.execArgv }))\n`)
      const child = spawn(process.execPath, ["-r", ipcHook, "bin/worksync.js", ...missing()], {
        env: { ...process.env, NODE_OPTIONS: "" },
        stdio: ["ignore", "ignore", "pipe", "ipc"]
      })
      const messages: Array<unknown> = []
      child.on("message", (m) => messages.push(m))
      child.on("error", reject)
      child.on("close", (code) => {
        try {
          expect(code).toBe(64)
          expect(messages).toEqual([{ pid: child.pid, execArgv: ["-r", ipcHook] }])
          resolve()
        } catch (e) {
          reject(e)
        }
      })
    }))
})
