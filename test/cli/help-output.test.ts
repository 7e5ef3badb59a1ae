/**
 * Help and usage errors are plain text when the output is not a terminal (or NO_COLOR is
 * set): effect/cli styles them with ANSI escapes otherwise. The version the CLI prints is
 * the package's.
 */
import { spawnSync } from "node:child_process"
import { readFileSync } from "node:fs"
import { describe, expect, it } from "vitest"
import { colourFor, stripStyles } from "../../src/cli/plain-text.ts"

const BIN = "bin/worksync.js"
const ESC = "\u001b"

const run = (args: ReadonlyArray<string>) => {
  const env: Record<string, string | undefined> = { ...process.env }
  delete env.NO_COLOR
  delete env.FORCE_COLOR
  return spawnSync(process.execPath, [BIN, ...args], { encoding: "utf8", env, timeout: 20_000 })
}

describe("help without a terminal", () => {
  it("worksync --help and a command's --help print no escape sequences into a pipe", () => {
    for (const args of [["--help"], ["import-csv", "--help"], ["copy-files", "--help"]]) {
      const r = run(args)
      expect(r.status).toBe(0)
      expect(r.stdout).toMatch(/USAGE/)
      expect(r.stdout).not.toContain(ESC)
    }
  })

  it("a usage error on stderr is plain too, and still exits 64", () => {
    const r = run(["backup", "--no-such-flag"])
    expect(r.status).toBe(64)
    expect(r.stderr.length).toBeGreaterThan(0)
    expect(r.stderr).not.toContain(ESC)
  })

  it("colour only on a terminal without NO_COLOR (an empty NO_COLOR does not count)", () => {
    expect(colourFor({ isTTY: true }, {})).toBe(true)
    expect(colourFor({ isTTY: false }, {})).toBe(false)
    expect(colourFor({}, {})).toBe(false)
    expect(colourFor({ isTTY: true }, { NO_COLOR: "1" })).toBe(false)
    expect(colourFor({ isTTY: true }, { NO_COLOR: "" })).toBe(true)
  })

  it("stripping keeps the text and drops only the styles", () => {
    expect(stripStyles("\u001b[0;1m\u001b[0;37;1mworksync\u001b[0;1m\u001b[0m --help")).toBe("worksync --help")
  })
})

describe("version", () => {
  it("`worksync --version` and `worksync version` print package.json's version", () => {
    const { version } = JSON.parse(readFileSync("package.json", "utf8")) as { version: string }
    const flag = run(["--version"])
    expect(flag.status).toBe(0)
    expect(flag.stdout.trim()).toBe(version)
    const command = run(["version"])
    expect(command.status).toBe(0)
    expect(command.stdout.trim()).toBe(`worksync ${version}`)
  })
})
