/**
 * The README's code blocks, and how a test runs them as a reader would: shell blocks in
 * bash, with `npx worksync` (and `npx tsx`) going to this repository's CLI bundle and
 * loader, cron lines run with the environment cron gives them, and TypeScript blocks as
 * files of a small project that resolves `worksync` and `effect` to this repository.
 */
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { cleanEnv } from "./cli.ts"

export const ROOT = path.resolve(import.meta.dirname, "..", "..")

export interface Block {
  /** The fence's language (`sh`, `ts`, `crontab`, ...; empty for none). */
  readonly lang: string
  readonly body: string
  /** Its opening fence's line in README.md, 1-based. */
  readonly line: number
}

/** Every fenced block of `markdown`, in order. */
export const fencedBlocks = (markdown: string): ReadonlyArray<Block> => {
  const blocks: Array<Block> = []
  const lines = markdown.split("\n")
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(\S*)\s*$/.exec(lines[i]!)
    if (open === null) continue
    const start = i
    const body: Array<string> = []
    for (i++; i < lines.length && !/^```\s*$/.test(lines[i]!); i++) body.push(lines[i]!)
    blocks.push({ lang: open[1]!, body: body.join("\n"), line: start + 1 })
  }
  return blocks
}

/** The text of README.md above its first `## ` heading. */
export const firstScreen = (markdown: string): string => markdown.slice(0, markdown.indexOf("\n## "))

/**
 * `text` with every `from` replaced by its `to`; each `from` must occur, so an edit of the
 * README that drops a placeholder is noticed rather than run unreplaced.
 */
export const substitute = (text: string, replacements: ReadonlyArray<readonly [from: string, to: string]>): string => {
  let out = text
  for (const [from, to] of replacements) {
    if (!out.includes(from)) throw new Error(`the README block no longer holds ${JSON.stringify(from)}:\n${text}`)
    out = out.split(from).join(to)
  }
  return out
}

const CRON_LINE = /^([0-9*@][^\s]*(?:\s+[^\s]+){4})\s+(.*)$/
const CRON_VARIABLE = /^([A-Z_][A-Z0-9_]*)=(.*)$/

/**
 * A crontab (its `NAME=value` lines and scheduled lines) as a bash script that runs each
 * scheduled command as cron does: `sh -c` with only PATH, HOME and the crontab's variables
 * in its environment (none of the session's connection).
 */
export const cronScript = (crontab: string, dir: string): string => {
  const variables: Array<string> = []
  const script: Array<string> = []
  let n = 0
  for (const line of crontab.split("\n")) {
    if (line.trim() === "" || line.trimStart().startsWith("#")) continue
    const variable = CRON_VARIABLE.exec(line)
    if (variable !== null) {
      variables.push(`${variable[1]}=${variable[2]}`)
      continue
    }
    const job = CRON_LINE.exec(line)
    if (job === null) throw new Error(`not a crontab line: ${line}`)
    const file = path.join(dir, `cron-job-${++n}.sh`)
    fs.writeFileSync(file, job[2]! + "\n")
    script.push(`env -i PATH="$PATH" HOME="$HOME" ${variables.map((v) => `'${v}'`).join(" ")} sh ${file}`)
  }
  if (n === 0) throw new Error(`no scheduled line in:\n${crontab}`)
  return script.join("\n")
}

/**
 * A directory set up as a reader's: `npx worksync` and `npx tsx` reach this repository's
 * bundle and loader (and anything else npx is asked for is refused: the README's paths
 * need nothing from the registry), `node` is the pinned Node, and `worksync` and `effect`
 * resolve to this repository for TypeScript files written there.
 */
export const readerDir = (dir: string) => {
  const bin = path.join(dir, ".bin")
  fs.mkdirSync(bin, { recursive: true })
  const npx = [
    "#!/bin/sh",
    `if [ "$1" = worksync ]; then shift; exec "${process.execPath}" "${ROOT}/bin/worksync.js" "$@"; fi`,
    `if [ "$1" = tsx ]; then shift; exec "${process.execPath}" --import "file://${ROOT}/node_modules/tsx/dist/loader.mjs" "$@"; fi`,
    `echo "npx $1: the README's paths run only worksync and tsx" >&2; exit 127`
  ].join("\n")
  fs.writeFileSync(path.join(bin, "npx"), npx + "\n", { mode: 0o755 })
  fs.symlinkSync(process.execPath, path.join(bin, "node"))
  const modules = path.join(dir, "node_modules")
  fs.mkdirSync(path.join(modules, "@types"), { recursive: true })
  fs.symlinkSync(ROOT, path.join(modules, "worksync"))
  fs.symlinkSync(path.join(ROOT, "node_modules", "effect"), path.join(modules, "effect"))
  fs.symlinkSync(path.join(ROOT, "node_modules", "@types", "node"), path.join(modules, "@types", "node"))
  fs.writeFileSync(path.join(dir, "package.json"), JSON.stringify({ name: "reader", private: true, type: "module" }) + "\n")
  fs.writeFileSync(
    path.join(dir, "tsconfig.json"),
    JSON.stringify({
      compilerOptions: {
        target: "ES2022",
        module: "NodeNext",
        moduleResolution: "NodeNext",
        lib: ["ES2023"],
        types: ["node"],
        strict: true,
        noEmit: true,
        skipLibCheck: true
      },
      include: ["*.ts"]
    }) + "\n"
  )
  return { PATH: `${bin}:${path.dirname(process.execPath)}:/usr/local/bin:/usr/bin:/bin` }
}

export interface Run {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

export const run = (command: string, args: ReadonlyArray<string>, cwd: string, env: Record<string, string>) =>
  new Promise<Run>((resolve, reject) => {
    const child = spawn(command, args, { cwd, env: { ...cleanEnv(), ...env }, stdio: ["ignore", "pipe", "pipe"] })
    let stdout = ""
    let stderr = ""
    child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d))
    child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d))
    child.once("error", reject)
    child.once("close", (code) => resolve({ code, stdout, stderr }))
  })

/**
 * Runs `script` in bash (`-eu -o pipefail`: the first failing command ends it); background
 * jobs it started (an emulator) are stopped when it ends, however it ends.
 */
export const bash = (script: string, cwd: string, env: Record<string, string>) => {
  const file = path.join(cwd, `.script-${Date.now()}-${Math.random().toString(36).slice(2)}.sh`)
  fs.writeFileSync(file, `set -eu -o pipefail\ntrap 'kill $(jobs -p) 2>/dev/null || true' EXIT\n${script}\n`)
  return run("bash", [file], cwd, env)
}

/** Type-checks the TypeScript files of a reader's directory under strict settings. */
export const typecheck = (dir: string, env: Record<string, string>) => {
  const tsc = path.join(ROOT, "node_modules", "typescript", "bin", "tsc")
  return run(process.execPath, [tsc, "-p", path.join(dir, "tsconfig.json")], dir, env)
}

/** The JSON objects among `text`'s lines (the `--json` results of a session's commands). */
export const jsonLines = (text: string): ReadonlyArray<Record<string, unknown>> =>
  text.split("\n").flatMap((line) => {
    if (!line.startsWith("{")) return []
    try {
      return [JSON.parse(line) as Record<string, unknown>]
    } catch {
      return []
    }
  })
