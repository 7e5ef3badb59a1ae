/**
 * The package as someone else gets it: `npm pack`, then `npm install <tarball>` in a fresh
 * project outside the repository, with nothing of the repository reachable (no sources, no
 * dev dependencies, no build tools). The CLI, the three entry points and their type
 * declarations must all work from what the tarball holds.
 */
import { spawn, type ChildProcess } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { createInterface } from "node:readline"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

const root = path.resolve(import.meta.dirname, "../..")

/** The README's library example, the code block that starts with its marker comment, as written. */
const readmeLibraryExample = (): string => {
  const readme = fs.readFileSync(path.join(root, "README.md"), "utf8")
  const block = /```ts\n(\/\/ readme-library-example[\s\S]*?)```/.exec(readme)
  if (block === null) throw new Error("README.md has no code block marked readme-library-example")
  return block[1]!
}

interface Run {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

/**
 * The parent's environment without WORKSYNC_* (the package must not pick up a connection
 * or an emulator setting of the suite) and without what `npm run` exports about the
 * repository's own package, so the nested npm sees only the temporary project.
 */
const childEnv = (extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv => {
  const env: NodeJS.ProcessEnv = {}
  for (const [k, v] of Object.entries(process.env)) {
    if (k.startsWith("WORKSYNC_") || k.startsWith("npm_package_") || k.startsWith("npm_lifecycle_") || k === "npm_config_local_prefix") continue
    env[k] = v
  }
  return { ...env, ...extra }
}

const run = (command: string, args: ReadonlyArray<string>, cwd: string, extraEnv: NodeJS.ProcessEnv = {}) =>
  new Promise<Run>((resolve, reject) => {
    const child = spawn(command, args, { cwd, env: childEnv(extraEnv), stdio: ["ignore", "pipe", "pipe"] })
    let stdout = ""
    let stderr = ""
    child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d))
    child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d))
    child.on("error", reject)
    child.on("close", (code) => resolve({ code, stdout, stderr }))
  })

/** Fails with everything the command printed, which is what one needs to see when it did not work. */
const ok = (r: Run, what: string): Run => {
  if (r.code !== 0) throw new Error(`${what} exited ${r.code}\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`)
  return r
}

const waitForExit = (child: ChildProcess) =>
  new Promise<number | null>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve(child.exitCode)
    child.once("exit", (code) => resolve(code))
  })

interface PackEntry {
  readonly filename: string
  readonly size: number
  readonly unpackedSize: number
  readonly entryCount: number
  readonly files: ReadonlyArray<{ readonly path: string }>
}

let packDir: string
let project: string
let pack: PackEntry
let installed: string

/** A strict TypeScript project over the consumer's files, library declarations checked too. */
const writeStrictTsconfig = () =>
  fs.writeFileSync(
    path.join(project, "tsconfig.json"),
    JSON.stringify({
      compilerOptions: { strict: true, module: "NodeNext", moduleResolution: "NodeNext", target: "ES2022", noEmit: true, skipLibCheck: false }
    })
  )

// `--no` so that npx never downloads a package of the same name when the local bin is
// missing; `--` so that the command's own flags (`--help`, `-p`) are not taken as npx's.
const npx = (args: ReadonlyArray<string>, extraEnv: NodeJS.ProcessEnv = {}) => run("npx", ["--no", "--", ...args], project, extraEnv)

beforeAll(async () => {
  packDir = fs.mkdtempSync(path.join(os.tmpdir(), "ws-pack-"))
  project = fs.mkdtempSync(path.join(os.tmpdir(), "ws-pack-consumer-"))
  // Without the lifecycle scripts: the suite's global setup has just built dist/ from these
  // sources, and a second build would swap dist/ under the CLI tests running alongside.
  // That packing builds first is checked on package.json below.
  const packed = ok(await run("npm", ["pack", "--json", "--ignore-scripts", "--pack-destination", packDir], root), "npm pack")
  pack = (JSON.parse(packed.stdout) as ReadonlyArray<PackEntry>)[0]!
  fs.writeFileSync(path.join(project, "package.json"), JSON.stringify({ type: "module", private: true }))
  ok(
    await run(
      "npm",
      // What a new user has today: the newest effect and TypeScript, Node 22's types.
      ["install", path.join(packDir, pack.filename), "effect@latest", "typescript@latest", "@types/node@^22", "--no-audit", "--no-fund", "--prefer-offline"],
      project
    ),
    "npm install <tarball>"
  )
  installed = path.join(project, "node_modules", "worksync")
}, 600_000)

afterAll(() => {
  for (const dir of [packDir, project]) if (dir !== undefined) fs.rmSync(dir, { recursive: true, force: true })
}, 600_000)

describe("npm pack", () => {
  it("holds the bundles, their declarations, bin, docs, README and LICENSE, and nothing of the development tree", () => {
    const files = pack.files.map((f) => f.path)
    const allowed = /^(bin\/|dist\/|docs\/|README\.md$|LICENSE$|package\.json$)/
    expect(files.filter((f) => !allowed.test(f))).toEqual([])
    expect(files.filter((f) => /(^|\/)(test|tests|bench|benchmarks|\.ci|src|scripts|pipelines|examples)\//.test(f) && !f.startsWith("dist/types/"))).toEqual([])
    expect(files.filter((f) => /\.test\.|\.sqlite/.test(f))).toEqual([])
    // The code cache is keyed to the build's file times and Node version: it never fits an install.
    expect(files).not.toContain("dist/cli.cjs.cache")

    // Everything package.json points at is in the tarball.
    const manifest = JSON.parse(fs.readFileSync(path.join(root, "package.json"), "utf8")) as {
      bin: Record<string, string>
      exports: Record<string, { types: string; default: string }>
      scripts: Record<string, string>
    }
    // dist/ is git-ignored: only a script npm runs on `npm pack` and `npm publish` puts it in the tarball.
    expect(`${manifest.scripts.prepack ?? ""} ${manifest.scripts.prepare ?? ""}`).toContain("scripts/build.mjs")
    const targets = [
      ...Object.values(manifest.bin),
      ...Object.values(manifest.exports).flatMap((e) => [e.types, e.default]),
      "dist/cli.cjs",
      "dist/plan-writer.worker.cjs",
      "dist/export.worker.cjs",
      "README.md",
      "LICENSE"
    ].map((p) => p.replace(/^\.\//, ""))
    for (const target of targets) expect(files, target).toContain(target)
  })

  it("installs without building: the installed package has neither sources nor build script", () => {
    // npm runs `prepare` for a directory or git install, not for a tarball; had it run here,
    // the install would have failed, as neither the build script nor the sources ship.
    expect(fs.existsSync(path.join(installed, "dist", "cli.cjs"))).toBe(true)
    expect(fs.existsSync(path.join(installed, "src"))).toBe(false)
    expect(fs.existsSync(path.join(installed, "scripts"))).toBe(false)
    expect(fs.existsSync(path.join(project, "node_modules", "esbuild"))).toBe(false)
  })
})

/**
 * One strict type check of the consumer's files (consumer.ts, over the three entry points,
 * and the README's library example), run once for the two tests that read its answer:
 * `tsc -p .` checks every file of the project, and checking effect's and the package's
 * declarations is most of its time.
 */
let typeCheck: Promise<Run> | undefined
const typeChecked = () =>
  (typeCheck ??= (async () => {
    writeStrictTsconfig()
    fs.writeFileSync(
      path.join(project, "consumer.ts"),
      `import { Effect, Layer, Stream } from "effect"
import { backup, changesBetween, clientLayer, SnapshotStore, type BackupResult } from "worksync"
import { startEmulator, type EmulatorHandle } from "worksync/emulator"
import { connect, isWorksyncError, type Worksync } from "worksync/promise"

export const viaEffect = (emulator: EmulatorHandle, snapshot: string): Promise<{ run: BackupResult; changes: number }> => {
  const service = clientLayer({ restUrl: emulator.restUrl, baseUrl: emulator.baseUrl, token: emulator.token, org: emulator.org })
  return Effect.runPromise(
    Effect.gen(function*() {
      const run = yield* backup()
      const changes = yield* changesBetween().pipe(Stream.runCount)
      return { run, changes }
    }).pipe(Effect.provide(Layer.merge(service, SnapshotStore.layer(snapshot))))
  )
}

export const viaPromise = async (snapshot: string): Promise<number> => {
  const emulator = await startEmulator({ seed: "demo" })
  const ws: Worksync = connect({ restUrl: emulator.restUrl, baseUrl: emulator.baseUrl, token: emulator.token, org: emulator.org })
  try {
    return (await ws.backup({ snapshot })).records
  } catch (error) {
    if (isWorksyncError(error, "Unauthorized")) return 0
    throw error
  } finally {
    await ws.close()
    await emulator.close()
  }
}

// @ts-expect-error a backup's result is an object, not a string: the declarations carry real types
export const wrong: string = await connect({ restUrl: "", baseUrl: "" }).backup({ snapshot: "x" })
`
    )
    fs.writeFileSync(path.join(project, "readme-example.ts"), readmeLibraryExample())
    return npx(["tsc", "-p", "."])
  })())

describe("the installed package", () => {
  it("npx worksync --help lists the commands", async () => {
    const help = ok(await npx(["worksync", "--help"]), "worksync --help")
    for (const command of ["backup", "diff", "export", "import-csv", "copy-files", "restore", "emulator"]) {
      expect(help.stdout).toContain(`- ${command}`)
    }
  }, 600_000)

  it("worksync emulator serves a backup run by worksync backup", async () => {
    // node on the bin link rather than npx: npx does not pass a SIGTERM on, which would leave the emulator running.
    const emulator = spawn(process.execPath, [path.join(project, "node_modules", ".bin", "worksync"), "emulator", "--port", "0", "--seed", "demo"], {
      cwd: project,
      env: childEnv(),
      stdio: ["ignore", "pipe", "pipe"]
    })
    try {
      let stderr = ""
      emulator.stderr!.setEncoding("utf8").on("data", (d: string) => (stderr += d))
      const firstLine = await new Promise<string>((resolve, reject) => {
        createInterface({ input: emulator.stdout! }).once("line", resolve)
        emulator.once("exit", (code) => reject(new Error(`emulator exited ${code} before printing: ${stderr}`)))
        emulator.once("error", reject)
      })
      const info = JSON.parse(firstLine) as { restUrl: string; token: string; org: string }
      const backup = ok(
        await npx(["worksync", "backup", "--snapshot", "snap.sqlite", "--json"], {
          WORKSYNC_REST_URL: info.restUrl,
          WORKSYNC_TOKEN: info.token,
          WORKSYNC_ORG: info.org
        }),
        "worksync backup"
      )
      const result = JSON.parse(backup.stdout) as { records: number; workspaces: number }
      expect(result.records).toBeGreaterThan(0)
      expect(result.workspaces).toBeGreaterThan(0)
      expect(fs.existsSync(path.join(project, "snap.sqlite"))).toBe(true)
    } finally {
      emulator.kill("SIGTERM")
      await waitForExit(emulator)
    }
  }, 600_000)

  it("an ES module imports worksync, worksync/emulator and worksync/promise and runs a backup pipeline", async () => {
    fs.writeFileSync(
      path.join(project, "pipeline.mjs"),
      `import { Effect, Stream } from "effect"
import { clientLayer, listRecordsStream } from "worksync"
import { startEmulator } from "worksync/emulator"
import { connect } from "worksync/promise"

const emulator = await startEmulator({ seed: "demo" })
try {
  const connection = { restUrl: emulator.restUrl, baseUrl: emulator.baseUrl, token: emulator.token, org: emulator.org }
  // The Effect API, run by the consumer's own effect: the bundle's values must work with it.
  const listed = await Effect.runPromise(
    listRecordsStream({ workspaceId: emulator.workspaces[0] }).pipe(Stream.runCount, Effect.provide(clientLayer(connection)))
  )
  const ws = connect(connection)
  try {
    const run = await ws.backup({ snapshot: "pipeline.sqlite" })
    let changes = 0
    for await (const change of ws.changes({ snapshot: "pipeline.sqlite" })) if (change.entity === "record") changes++
    console.log(JSON.stringify({ listed, records: run.records, changes }))
  } finally {
    await ws.close()
  }
} finally {
  await emulator.close()
}
`
    )
    const out = ok(await run(process.execPath, ["pipeline.mjs"], project), "pipeline.mjs")
    const result = JSON.parse(out.stdout.trim().split("\n").at(-1)!) as { listed: number; records: number; changes: number }
    expect(result.listed).toBeGreaterThan(0)
    expect(result.records).toBeGreaterThan(0)
    // The first run creates every record it backed up.
    expect(result.changes).toBe(result.records)
  }, 600_000)

  it("a strict TypeScript project type-checks against the three entry points, library declarations included", async () => {
    const tsc = await typeChecked()
    expect(tsc.stdout + tsc.stderr).toBe("")
    expect(tsc.code).toBe(0)
  }, 600_000)

  it("the README's library example type-checks under strict TypeScript with effect@latest", async () => {
    const tsc = await typeChecked()
    expect(tsc.stdout + tsc.stderr).toBe("")
    expect(tsc.code).toBe(0)
  }, 600_000)

  it("the README's library example runs against the emulator", async () => {
    fs.writeFileSync(path.join(project, "readme-example.ts"), readmeLibraryExample())
    // Node runs the TypeScript file itself (type stripping, on by default from 22.18).
    const out = ok(await run(process.execPath, ["readme-example.ts"], project), "readme-example.ts")
    const said = /(\d+) records backed up; (\d+) open in the first workspace/.exec(out.stdout)
    expect(said, out.stdout.slice(-400)).not.toBeNull()
    expect(Number(said![1])).toBeGreaterThan(0)
    expect(Number(said![2])).toBeGreaterThan(0)
    expect(fs.existsSync(path.join(project, "backup.sqlite"))).toBe(true)
  }, 600_000)
})
